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

"""The sets' templates (``domain/configs/config_sets``): made where a
flavor, an image or a toggle asks for configs whose templates share a
step, built again where a member changed, deleted where nothing needs them
(``domain/servers/set_holders``).

A set is made, and its nodes tagged (``hardware.node_tags``), before an
owner asks for its trait, so that nothing asks for a template that does
not exist; a rerun finds what an interrupted one made, and a set made by a
concurrent run is taken as it is when it is built from the same members.
"""

import datetime

from openstack import exceptions as sdk_exceptions
from osc_lib import exceptions

from osc_deploy_config.domain.configs import config_sets
from osc_deploy_config.domain.configs import templates as dtemplates
from osc_deploy_config.domain.servers import set_holders
from osc_deploy_config.services import versions

# What deciding whether a node holds a set reads of it.
HOLDER_NODE_FIELDS = ('uuid', 'name', 'instance_uuid', 'instance_info',
                      'resource_class', 'properties', 'extra')


def make(ironic, known, servings, dry_run=False, now=None):
    """Make each set of ``servings`` (``config_sets.Serving``) that has no
    template, and build again each whose members changed since: the lines
    that say what was (or would be) done.  ``known``: ConfigTemplates,
    with the steps, which then holds them.  A current set an owner is
    about to ask for is marked asked for ``now``, where older than a
    prune's grace: a prune keeps it (``config_sets.just_written``)."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    lines = []
    for serving in servings:
        if not config_sets.is_set(serving):
            continue
        have = known.sets.get(serving.name)
        refuse_other(have, serving)
        if have is not None and config_sets.current(have, serving.members):
            if not dry_run and not config_sets.just_written(have, now):
                _mark_asked(ironic, known, have, now)
            continue
        what = config_sets.members_text(serving.members)
        if dry_run:
            known.sets[serving.name] = dict(
                have or {'uuid': None},
                **config_sets.set_body(serving.members))
            lines.append('Would %s set %s of %s' % (
                'make' if have is None else 'build again', serving.name,
                what))
            continue
        known.sets[serving.name] = _write(ironic, have, serving)
        lines.append('%s set %s of %s' % (
            'Made' if have is None else 'Built again', serving.name, what))
    return lines


def refuse_other(have, serving):
    """One line when the template of a set's name is being deleted, or
    is the set of other configs (names made alike by their spelling):
    never taken, nor built again in its place."""
    if have is None:
        return
    if (have.get('extra') or {}).get(dtemplates.DELETING):
        raise exceptions.CommandError(
            'Set %s is being deleted: finish the delete first (openstack '
            'baremetal deploy template delete %s), then rerun'
            % (have['name'], have['name']))
    if set(config_sets.members_of(have) or ()) != set(serving.members):
        raise exceptions.CommandError(
            'Cannot make the set of %s: deploy template %s is the set of %s; '
            'rename a config of one of them' % (
                config_sets.members_text(serving.members), have['name'],
                (have.get('extra') or {}).get(config_sets.EXTRA_MEMBERS)))


def _mark_asked(ironic, known, have, now):
    try:
        ironic.patch_deploy_template(have['uuid'],
                                     config_sets.asked_patch(now))
    except sdk_exceptions.NotFoundException:
        raise exceptions.CommandError(
            'Set %s was deleted meanwhile (a concurrent prune?); nothing '
            'asks for it yet: rerun' % have['name']) from None
    known.sets[have['name']] = dict(have, extra=dict(
        have.get('extra') or {}, **{config_sets.EXTRA_ASKED:
                                    now.isoformat()}))


def _write(ironic, have, serving):
    """The set's template, made or built again: as ironic holds it."""
    if have is None:
        body = config_sets.set_body(serving.members)
        try:
            return ironic.create_deploy_template(body)
        except sdk_exceptions.ConflictException:
            have = ironic.deploy_template(body['name'])    # made meanwhile
            if config_sets.members_of(have) is None:
                raise exceptions.CommandError(
                    'Cannot make the set of %s: deploy template %s exists '
                    'and is not a set of configs; rename it, then rerun' % (
                        config_sets.members_text(serving.members),
                        body['name'])) from None
            refuse_other(have, serving)
            if config_sets.current(have, serving.members):
                return have
    ironic.patch_deploy_template(
        have['uuid'], config_sets.rebuild_patch(have, serving.members))
    return dict(have, steps=config_sets.merged_steps(serving.members),
                extra=dict(have.get('extra') or {},
                           **config_sets.set_extra(serving.members)))


def rebuild_stale(ironic, known, dry_run=False, names=None):
    """Build again every set (of ``names``, when given) whose members
    changed since it was made: the lines that say so.  A set that cannot
    be built again (a member gone, served otherwise now, or clashing)
    stays as it is, said."""
    lines = []
    for template in known.every_set():
        if names and not {template['name'], template['uuid']} & set(names):
            continue
        members = known.set_members(template)
        why = stale_reason(template, members)
        if why is None:
            continue
        if why:
            lines.append('Set %s is stale: %s' % (template['name'], why))
            continue
        try:
            lines += make(ironic, known, [config_sets.Serving(
                template['name'], members)], dry_run)
        except exceptions.CommandError as exc:
            lines.append('Set %s is stale, and cannot be built again: %s'
                         % (template['name'], exc))
    return lines


def stale_reason(template, members):
    """None when a set is current; '' when it is stale and its members
    can build it again; otherwise why they cannot."""
    if members is None:
        return ('a member has no template on its kind any more; delete '
                'the set once nothing needs it (sync --prune)')
    if config_sets.current(template, members):
        return None
    if config_sets.set_name(members) != template['name']:
        return ('its members serve another kind now (%s): ask for them '
                'again where they are asked' % config_sets.set_name(members))
    return ''


def read_holders(clients):
    """set_holders.Holders: every flavor, image (hidden ones and other
    projects' community ones too), server (of every project) and node, in
    pages.  One line where ironic would show only a project's nodes."""
    ironic = clients.ironic(versions.NODE_TRAITS)
    if ironic.scope != 'system':
        raise exceptions.CommandError(
            'ironic shows a project-scoped token only its nodes: a role on '
            'the system is needed to tell which instances run a set')
    nova = clients.nova(versions.SERVER_FLAVOR_DETAILS)
    return set_holders.Holders(
        nova.flavors(), list(clients.glance().images(every=True).values()),
        nova.servers(all_projects=True), ironic.nodes(HOLDER_NODE_FIELDS))


def unneeded(clients, known, now=None):
    """The sets' templates nothing needs (``set_holders``), but those made
    or built again within ``config_sets.PRUNE_GRACE`` of ``now`` (whose
    owner may be about to ask for them), and {set name: what needs it} of
    the others."""
    held = set_holders.needs(known.sets, read_holders(clients), known)
    now = now or datetime.datetime.now(datetime.timezone.utc)
    return [t for t in known.every_set() if t['name'] not in held
            and not config_sets.just_written(t, now)], held


def still_unneeded(ironic, template):
    """Whether a set found unneeded is still to delete, read again right
    before: gone meanwhile, or asked for since, it is not."""
    try:
        found = ironic.deploy_template(template['uuid'])
    except sdk_exceptions.NotFoundException:
        return False
    return not config_sets.just_written(
        found, datetime.datetime.now(datetime.timezone.utc))
