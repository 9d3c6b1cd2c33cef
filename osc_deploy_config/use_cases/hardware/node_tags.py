#   Licensed under the Apache License, Version 2.0 (the "License"); you may
#   not use this file except in compliance with the License. You may obtain
#   a copy of the License at
#
#        http://www.apache.org/licenses/LICENSE-2.0
#
#   Unless required by applicable law or agreed to in writing, software
#   distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
#   WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
#   License for the specific language governing permissions and limitations
#   under the License.

"""Which nodes can take which config, and the template traits (tags) that
tell the scheduler: list them, and sync them until placement shows it.

``sync`` tags nodes in ironic; nova's ironic compute copies node traits to
the nodes' resource providers in placement on its periodic task (every 60 s
by default), and only then does the scheduler land on them.  We wait for
that copy rather than write placement ourselves: nova owns those providers
and sets their traits from ironic on every run of the task, so a write of
ours would race its generation-checked updates, and would be undone
wherever it disagreed with ironic.  Nodes that are not resource providers
(nova does not manage them) are not waited for.
"""

import collections
import logging
import time

from openstack import exceptions as sdk_exceptions
from osc_lib import exceptions

from osc_deploy_config.domain.configs import config_sets
from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.configs import templates as dtemplates
from osc_deploy_config.domain.hardware import ironic_releases
from osc_deploy_config.domain.hardware import tagging
from osc_deploy_config.services import ironic as ironic_api
from osc_deploy_config.services import versions
from osc_deploy_config.use_cases.configs import set_templates

LOG = logging.getLogger(__name__)
STATUS_COLUMNS = ('Node', 'Template', 'Config', 'Capable', 'Tagged',
                  'In Use', 'Maintenance', 'Provision State', 'Schedulable',
                  'Reason')
SYNC_COLUMNS = ('Node', 'Template', 'Action', 'Reason')
# The states a step holds a node in, and what ``list`` reads of such a node.
WAITS = ('clean wait', 'service wait', 'deploy wait')
WAIT_FIELDS = ('uuid', 'name', 'provision_state', 'driver_internal_info',
               'properties', 'bios_interface')
POLL_SECONDS = 1

# What both commands read of ironic: the config templates (by name), the
# names of every template, every node, the wrapper that read them, and
# the ConfigTemplates (with the sets).
Inventory = collections.namedtuple('Inventory', [
    'templates', 'template_names', 'nodes', 'ironic', 'known'])


def read_inventory(clients):
    """Two listings: every template (with its steps) and every node."""
    api = clients.ironic(versions.DEPLOY_TEMPLATES, versions.NODE_TRAITS,
                         versions.NODE_RETIREMENT)
    every = api.deploy_templates(fields=[
        'uuid', 'name', 'extra', 'steps', 'created_at', 'updated_at'],
        limit=0)
    nodes = api.nodes(ironic_api.TAGGING_FIELDS)
    api.warn_if_nodes_hidden(nodes, LOG)
    known = dtemplates.by_config(every)
    return Inventory(known.every(), {t['name'] for t in every}, nodes, api,
                     known)


def tagged_templates(found):
    """The templates nodes are tagged for: the configs' and the sets'."""
    return found.known.every() + found.known.every_set()


def read_registries(found, templates):
    """{node UUID: its detailed BIOS settings} of the nodes whose registry
    decides whether they can take a template (they pass every other check,
    and it sets BIOS settings), read concurrently; {} from an ironic before
    the BIOS registry (API 1.74)."""
    wanted = [n for n in found.nodes if any(
        tagging.wants_registry(n, t) for t in templates)]
    if not wanted:
        return {}
    api = found.ironic
    try:
        api.require_feature(versions.NODE_BIOS_REGISTRY)
    except exceptions.CommandError as exc:
        LOG.warning('BIOS settings not checked against the nodes\' BIOS '
                    'registry: %s', exc)
        return {}
    return api.bios_registries(n['uuid'] for n in wanted)


def statuses(clients, node=None, config=None):
    """(columns, rows): per node and config template, whether the node is
    capable, tagged, in use, in maintenance, and schedulable now."""
    config = deploy_config.parse_config(config) if config else None
    found = read_inventory(clients)
    templates, nodes = tagged_templates(found), found.nodes
    if config:
        templates = [t for t in templates if config in (
            config_sets.members_of(t) or [deploy_config.config_of(
                t['extra'])])]
        if not templates:
            raise exceptions.CommandError(
                'No deploy template realises the deploy config %s' % config)
    if node:
        nodes = [n for n in nodes if node in (n['uuid'], n.get('name'))]
        if not nodes:
            raise exceptions.CommandError('Node %s not found' % node)
    view = free_providers(clients, nodes)
    registries = read_registries(found._replace(nodes=nodes), templates)
    waiting = waiting_steps(found.ironic, nodes)
    rows = tagging.statuses(nodes, templates, view, registries,
                            tagged_templates(found),
                            release=found.ironic.release())
    return STATUS_COLUMNS, [tuple(s._replace(reason='; '.join(filter(None, (
        s.reason, waiting.get(s.node)))))) for s in rows]


def waiting_steps(api, nodes):
    """{node label: what its BIOS step waits for} of the nodes a step
    holds in a wait: one listing per such state.  A token that may not
    read ``driver_internal_info`` sees none."""
    labels = {n['uuid']: tagging.node_label(n) for n in nodes}
    states = sorted({n.get('provision_state') for n in nodes} & set(WAITS))
    release = api.release() if states else None
    found = {}
    for state in states:
        for detail in api.nodes_in(state, WAIT_FIELDS):
            text = detail['uuid'] in labels and ironic_releases.waiting_step(
                detail, release)
            if text:
                found[labels[detail['uuid']]] = text
    return found


def free_providers(clients, nodes):
    """{provider UUID: traits} of the providers placement has free for the
    nodes' resource classes (one request per class); None, with a warning,
    when placement cannot be read."""
    classes = {tagging.resource_class(n) for n in nodes} - {None}
    try:
        return clients.placement().free_providers(classes)
    except (exceptions.CommandError, sdk_exceptions.HttpException) as exc:
        LOG.warning('Schedulable is unknown: placement could not be read '
                    '(%s)', getattr(exc, 'details', None) or exc)
        return None


def sync(clients, names, dry_run, prune, wait, wait_timeout, say):
    """Tag the capable nodes, untag the others (and with ``prune`` remove
    the traits of deleted templates); then, with ``wait``, wait until
    placement shows it.  The rows of what was done."""
    if prune and names:
        raise exceptions.CommandError(
            '--prune removes the traits of deleted templates from every '
            'node: give it no template names')
    if wait_timeout < 0:
        raise exceptions.CommandError(
            'Expected non-negative --wait-timeout, got %d' % wait_timeout)
    found = read_inventory(clients)
    select_templates(tagged_templates(found), names)    # before any write
    for line in set_templates.rebuild_stale(found.ironic, found.known,
                                            dry_run, names):
        say(line)
    rows = prune_sets(clients, found, dry_run) if prune else []
    every = tagged_templates(found)
    chosen = select_templates(every, names)
    registries = read_registries(found, chosen)
    release = found.ironic.release()
    changes = tagging.plan_sync(found.nodes, chosen, registries, every,
                                release)
    changes += tagging.left_out(found.nodes, chosen, registries, every,
                                release)
    if not names:
        changes += tagging.plan_prune(found.nodes, found.template_names - {
            row[1] for row in rows}, prune)
    more, written = write_changes(found.ironic, changes, dry_run)
    rows += more
    if written and wait:
        wait_until_scheduler_sees(clients, written, wait_timeout, say)
    return rows


def prune_sets(clients, found, dry_run):
    """Delete the sets' templates nothing needs (``set_holders``), from
    ``found`` too: a row each.  Their traits go from the nodes with the
    other traits of deleted templates (``tagging.plan_prune``)."""
    if not found.known.sets:
        return []
    try:
        unneeded, _ = set_templates.unneeded(clients, found.known)
    except (exceptions.CommandError, sdk_exceptions.HttpException) as exc:
        LOG.warning('Sets not pruned: what needs them cannot be read (%s)',
                    getattr(exc, 'details', None) or exc)
        return []
    rows = []
    for template in unneeded:
        if not dry_run:
            if not set_templates.still_unneeded(found.ironic, template):
                continue
            try:
                found.ironic.delete_deploy_template(template['uuid'])
            except sdk_exceptions.NotFoundException:
                pass    # deleted meanwhile
        del found.known.sets[template['name']]
        rows.append(('', template['name'], 'would delete' if dry_run
                     else 'deleted', 'a set nothing needs any more'))
    return rows


def wait_until_scheduler_sees(clients, written, wait_timeout, say):
    """``wait_for_placement``, or a warning where placement refuses these
    credentials."""
    try:
        wait_for_placement(clients.placement(), written, wait_timeout, say)
    except sdk_exceptions.ForbiddenException:
        # e.g. a system-scoped token: placement wants a project
        LOG.warning('Placement refused these credentials (403): it cannot '
                    'be told when the scheduler sees the tags; a '
                    'project-scoped admin can (openstack baremetal node '
                    'deploy-config list, column Schedulable).')


def select_templates(templates, names):
    """The templates named (by name or UUID); all when none is named."""
    if not names:
        return templates
    known = {t['name']: t for t in templates}
    known.update((t['uuid'], t) for t in templates)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise exceptions.CommandError(
            'No deploy template with a deploy config named %s'
            % ', '.join(unknown))
    return list({known[n]['uuid']: known[n] for n in names}.values())


def write_changes(api, changes, dry_run):
    """Make the trait changes (or say what they would be): (a row per
    change, the changes written).  Every write is tried; a failure of any
    fails the whole in one line, after the others were made."""
    rows, failures, written = [], [], []
    for change in changes:
        action = change.action
        if action in (tagging.KEEP, tagging.STALE, tagging.LEFT_OUT):
            pass
        elif dry_run:
            action = 'would %s' % action
        else:
            write = (api.add_node_trait if action == tagging.ADD
                     else api.remove_node_trait)
            try:
                write(change.node_uuid, change.template)
            except sdk_exceptions.HttpException as exc:
                failures.append('%s %s on %s: %s' % (
                    action, change.template, change.node,
                    exc.details or exc))
                action = 'failed to %s' % action
            else:
                written.append(change)
                action = 'added' if action == tagging.ADD else 'removed'
        rows.append((change.node, change.template, action, change.reason))
    if failures:
        for failure in failures:
            LOG.error('Failed to %s', failure)
        raise exceptions.CommandError(
            '%d of %d trait changes failed; rerun to retry' % (
                len(failures), sum(1 for c in changes if c.action in (
                    tagging.ADD, tagging.REMOVE))))
    return rows, written


def wait_for_placement(api, changes, timeout, say):
    """Wait until placement shows every one of these trait changes (one
    request per template a poll); ``say`` gets lines of progress.
    CommandError, naming what is missing, after ``timeout`` seconds."""
    providers = api.providers()
    outside = sorted({c.node for c in changes
                      if c.node_uuid not in providers})
    if outside:
        say('Not waiting for %s: not resource providers in placement '
            '(not managed by nova)' % ', '.join(outside))
    changes = [c for c in changes if c.node_uuid in providers]
    if not changes:
        return
    say('Waiting for placement to show %d trait change(s) (nova copies '
        'node traits on its periodic task)...' % len(changes))
    start = time.monotonic()
    left = changes
    while True:
        left = tagging.unseen(left, {t: api.providers(required=t) for t in
                                     sorted({c.template for c in left})})
        waited = time.monotonic() - start
        if not left:
            say('Placement shows all %d trait change(s) after %.0f s'
                % (len(changes), waited))
            return
        if waited > timeout:
            raise exceptions.CommandError(
                'Placement does not show %d of %d trait change(s) after '
                '%d s: %s. Ironic has them; nova\'s ironic compute copies '
                'them on its periodic task (is it running?). See openstack '
                'baremetal node deploy-config list, column Schedulable.'
                % (len(left), len(changes), timeout,
                   ', '.join(tagging.describe(c) for c in left)))
        time.sleep(POLL_SECONDS)
