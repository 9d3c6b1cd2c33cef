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

"""``baremetal node deploy-config prepare``: set the vendor profiles that
the configs of a node's kind need, once, by manual cleaning
(``domain.bios_prepare``), then tag the node for what it can take now.

Every node is read and judged before the first write; a node in a state
prepare does not take gets its row and changes nothing.  Each wait ends on
the failure of what it waits for, or at ``--wait-timeout``; a clean that
fails returns the node to where it was (``available``) and says ironic's
error.  A rerun finds what is done from ironic's cache of the BIOS, and
does the rest.
"""

import concurrent.futures

from osc_lib import exceptions

from osc_deploy_config.domain import bios_prepare
from osc_deploy_config.domain import bios_profiles
from osc_deploy_config.domain import deploy_config
from osc_deploy_config.domain import tagging
from osc_deploy_config.domain import templates as dtemplates
from osc_deploy_config.services import versions
from osc_deploy_config.use_cases import node_tags
from osc_deploy_config.use_cases.toggle import waits

COLUMNS = ('Node', 'State', 'Profile Settings', 'Result', 'Also Governs')
# What a prepare's waits read of a node.
WAIT_FIELDS = ('uuid', 'name', 'provision_state', 'target_provision_state',
               'last_error', 'maintenance')
# The states a clean or a move passes through, towards its end.
_UNDER_WAY = ('cleaning', 'clean wait', 'verifying')


class NotPrepared(exceptions.CommandError):
    """Some nodes were not prepared; every row was printed."""


def prepare(clients, names, resource_class, configs, dry_run, wait,
            wait_timeout, say, sleep=None):
    """(columns, rows): each node's profile settings, set where missing.
    Raises ``NotPrepared`` after the rows (``rows`` attribute) when a node
    was not prepared."""
    configs = check_arguments(names, resource_class, configs, wait_timeout)
    found = node_tags.read_inventory(clients)
    nodes = select_nodes(found.nodes, names, resource_class)
    unknown = [str(c) for c in configs if not any(
        deploy_config.config_of(t['extra']) == c for t in found.templates)]
    if unknown:
        raise exceptions.CommandError(
            'No deploy template realises the deploy config %s'
            % ', '.join(unknown))
    api = found.ironic
    api.require_feature(versions.NODE_BIOS_REGISTRY)
    rows, failed, work = judge(nodes, found.templates, read_registries(
        api, nodes), configs, dry_run)
    if work:
        api.require_feature(versions.NODE_CLEANING_WITHOUT_RAMDISK)
    done = [node['uuid'] for node, todo, row, governed in work if carry_out(
        api, node, todo, row, waits.Waiter(say, sleep, seconds=wait_timeout),
        say, governed)]
    failed += [row[0] for _, _, row, _ in work
               if row[3].startswith('failed')]
    if done:
        for change in sync_nodes(clients, done, wait, wait_timeout, say):
            say('%s: %s %s (%s)' % change)
    rows = [tuple(r) for r in rows]
    if failed:
        error = NotPrepared('%d of %d node(s) not prepared: %s' % (
            len(failed), len(rows), ', '.join(failed)))
        error.rows = (COLUMNS, rows)
        raise error
    return COLUMNS, rows


def check_arguments(names, resource_class, configs, wait_timeout):
    """The configs, parsed; one line for arguments that do not go
    together."""
    configs = [deploy_config.parse_config(c) for c in configs or ()]
    if bool(names) == bool(resource_class):
        raise exceptions.CommandError(
            'Name the nodes to prepare, or give --resource-class: one of '
            'the two')
    if wait_timeout < 0:
        raise exceptions.CommandError(
            'Expected non-negative --wait-timeout, got %d' % wait_timeout)
    return configs


def carry_out(api, node, todo, row, waiter, say, governed):
    """Prepare one node; its row says how it went.  Whether it was."""
    try:
        row[3] = prepare_node(api, node, todo, waiter, say, governed)
    except exceptions.CommandError as exc:
        row[3] = 'failed: %s' % exc
        return False
    return True


def judge(nodes, templates, registries, configs, dry_run):
    """Each node's row, with what it needs (``bios_prepare.plan``): (rows,
    the nodes not prepared, [(node, the settings to set, its row, the
    configs' settings they unlock)])."""
    own = dtemplates.by_config(templates).per_class
    rows, failed, work = [], [], []
    for node in nodes:
        registry = registries[node['uuid']]
        plan = bios_prepare.plan(node, templates, registry, own, configs)
        todo = bios_prepare.pending(plan.needs, registry)
        row = [plan.node, node['provision_state'], settings_text(
            plan.needs) or '-', '', bios_prepare.governs(plan.needs)]
        why = '; '.join(plan.unpreparable)
        refusal = bios_prepare.state_refusal(node)
        if not todo:
            row[3] = ('cannot prepare: %s' % why if why
                      else 'prepared' if plan.needs else 'nothing to prepare')
        elif refusal:
            row[3] = 'not prepared: %s' % refusal
        elif dry_run:
            row[3] = 'would set %s (%s)' % (
                settings_text(todo),
                bios_prepare.BY_STATE[node['provision_state']])
        else:
            work.append((node, todo, row, plan.settings))
        if row[3].startswith(('cannot', 'not prepared')):
            failed.append(plan.node)
        rows.append(row)
    return rows, failed, work


def select_nodes(nodes, names, resource_class):
    """The nodes named (name or UUID), or those of the resource class;
    one line for a name or class that matches none."""
    if resource_class:
        chosen = [n for n in nodes if n.get('resource_class') ==
                  resource_class]
        if not chosen:
            raise exceptions.CommandError(
                'No node of resource class %s' % resource_class)
        return sorted(chosen, key=tagging.node_label)
    by_ref = {}
    for node in nodes:
        by_ref[node['uuid']] = node
        by_ref.setdefault(node.get('name'), node)
    missing = [n for n in names if n not in by_ref]
    if missing:
        raise exceptions.CommandError('Node %s not found' % ', '.join(
            missing))
    return list({by_ref[n]['uuid']: by_ref[n] for n in names}.values())


def read_registries(api, nodes):
    """{node UUID: its detailed BIOS settings}, read concurrently."""
    uuids = [n['uuid'] for n in nodes]
    with concurrent.futures.ThreadPoolExecutor(node_tags.READERS) as pool:
        return dict(zip(uuids, pool.map(api.bios_registry, uuids),
                        strict=True))


def settings_text(needs):
    return ', '.join('%s=%s' % pair for pair in needs)


def prepare_node(api, node, todo, waiter, say, governed=()):
    """Set ``todo`` on one node by manual cleaning, and return it to its
    state; the row's result, read back from ironic's cache, where each
    setting of ``governed`` (the configs' settings) must now be
    writable."""
    label, start = tagging.node_label(node), node['provision_state']
    uuid = node['uuid']
    if start == 'available':
        say('%s: manage' % label)
        api.set_provision_state(uuid, 'manage')
        settle(api, node, 'manageable', waiter)
    say('%s: clean, setting %s' % (label, settings_text(todo)))
    api.clean(uuid, bios_prepare.clean_steps(todo))
    state = settle(api, node, 'manageable', waiter, failed='clean failed')
    if state['provision_state'] == 'clean failed':
        held = recover(api, node, start, waiter)['maintenance']
        raise exceptions.CommandError(
            'ironic failed to set %s on %s: %s; the node is %s again%s' % (
                settings_text(todo), label, state.get('last_error'), start,
                ', and ironic holds it in maintenance for the failed clean: '
                'check its BIOS, then openstack baremetal node maintenance '
                'unset %s' % label if held else ''))
    if start == 'available':
        say('%s: provide' % label)
        api.set_provision_state(uuid, 'provide')
        settle(api, node, 'available', waiter, failed='clean failed')
    registry = api.bios_registry(uuid)
    left = bios_prepare.pending(todo, registry)
    if left:
        raise exceptions.CommandError(
            'ironic reports the clean done, but its cache of %s\'s BIOS '
            'does not show %s' % (label, settings_text(left)))
    stale = bios_profiles.stale_read_only(governed, registry)
    if stale:
        raise exceptions.CommandError('set %s, but %s' % (
            settings_text(todo), bios_profiles.describe_stale(stale)))
    return 'set %s' % settings_text(todo)


def recover(api, node, start, waiter):
    """After a failed clean, the node back to manageable, then to where
    it was: its state then.  Ironic's hold (maintenance, for the failed
    clean) stays: the operator looks at the BIOS first."""
    api.set_provision_state(node['uuid'], 'manage')
    state = settle(api, node, 'manageable', waiter)
    if start == 'available':
        api.set_provision_state(node['uuid'], 'provide')
        state = settle(api, node, 'available', waiter, failed='clean failed')
    return state


def settle(api, node, wanted, waiter, failed=None):
    """Until the node is in ``wanted`` (or ``failed``) with no move under
    way: its state then.  One line when it ends elsewhere, or at the
    wait's bound."""
    label = tagging.node_label(node)
    waiter.begin()
    waiter.pause()
    while True:
        state = api.node(node['uuid'], WAIT_FIELDS)
        now = state['provision_state']
        if not state.get('target_provision_state') and now in (
                wanted, failed):
            return state
        if not state.get('target_provision_state') and (
                now not in _UNDER_WAY):
            raise exceptions.CommandError(
                '%s went to %s, not %s: %s' % (
                    label, now, wanted, state.get('last_error') or
                    'ironic says no more'))
        waiter.progress('%s: %s' % (label, now))
        waiter.poll('%s is still %s; ironic goes on: rerun once it ends'
                    % (label, now))


def sync_nodes(clients, uuids, wait, wait_timeout, say):
    """The tag changes of these nodes, made, and (``wait``) seen in
    placement: the rows as sync prints them."""
    found = node_tags.read_inventory(clients)
    nodes = [n for n in found.nodes if n['uuid'] in uuids]
    registries = read_registries(found.ironic, nodes)
    changes = tagging.plan_sync(
        nodes, found.templates, registries, found.templates,
        not found.ironic.validates_bios_steps())
    rows, written = node_tags.write_changes(found.ironic, changes, False)
    if written and wait:
        node_tags.wait_until_scheduler_sees(clients, written, wait_timeout,
                                            say)
    return rows
