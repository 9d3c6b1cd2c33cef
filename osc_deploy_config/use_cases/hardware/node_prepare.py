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
(``domain.hardware.bios_prepare``), then tag the node for what it can take
now.

Every node is read and judged before the first write; a node in a state
prepare does not take gets its row and changes nothing.  Each wait ends on
the failure of what it waits for, or at ``--wait-timeout``; a clean that
fails returns the node to where it was (``available``) and says ironic's
error.  A rerun finds what is done from ironic's cache of the BIOS, and
does the rest.
"""


from openstack import exceptions as sdk_exceptions
from osc_lib import exceptions

from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.configs import templates as dtemplates
from osc_deploy_config.domain.hardware import bios_prepare
from osc_deploy_config.domain.hardware import bios_profiles
from osc_deploy_config.domain.hardware import bmc_faults
from osc_deploy_config.domain.hardware import ironic_releases
from osc_deploy_config.domain.hardware import tagging
from osc_deploy_config.services import versions
from osc_deploy_config.use_cases.hardware import node_tags
from osc_deploy_config.use_cases.toggle import waits

COLUMNS = ('Node', 'State', 'Profile Settings', 'Result', 'Also Governs')
# What a prepare's waits read of a node.
WAIT_FIELDS = ('uuid', 'name', 'provision_state', 'target_provision_state',
               'last_error', 'maintenance')
# The states a clean or a move passes through, towards its end.
_UNDER_WAY = ('cleaning', 'clean wait', 'verifying')
# The node's extra that marks a preparation started from available.
FROM = 'deploy_config_prepare_from'
# The bound of the move back to manageable after a failed clean.
RECOVERY_SECONDS = 120
settings_text = bios_prepare.settings_text


class NotPrepared(exceptions.CommandError):
    """Some nodes were not prepared; every row was printed."""


def prepare(clients, names, resource_class, configs, dry_run, wait,
            wait_timeout, say, sleep=None, clear_queue=False):
    """(columns, rows): each node's profile settings, set where missing
    (``clear_queue``: after its iDRAC's jobs are deleted, in the same
    clean).  Raises ``NotPrepared`` after the rows (``rows`` attribute)
    when a node was not prepared."""
    configs = check_arguments(names, resource_class, configs, wait_timeout)
    found = node_tags.read_inventory(clients)
    nodes = select_nodes(found.nodes, names, resource_class)
    refuse_unknown(configs, found.templates)
    refuse_unclearable(nodes if clear_queue else ())
    api = found.ironic
    api.require_feature(versions.NODE_BIOS_REGISTRY)
    registries = api.bios_registries(n['uuid'] for n in nodes)
    rows, failed, work = judge(with_marks(api, nodes), found.templates,
                               registries, configs, dry_run, api.release(),
                               clear_queue)
    require_features(api, work)     # a dry run's refusal is the run's
    work = [] if dry_run else work

    def waiter_of(seconds):
        return waits.Waiter(say, sleep, seconds=seconds or wait_timeout)

    done = [node['uuid'] for node, todo, row, governed in work
            if carry_out(api, node, todo, row, waiter_of, say, governed,
                         clear_queue)]
    failed += [row[0] for _, _, row, _ in work
               if row[3].startswith('failed') and row[0] not in failed]
    problems = ['%d of %d node(s) not prepared: %s' % (
        len(failed), len(rows), ', '.join(failed))] if failed else []
    if done:
        try:
            for change in sync_nodes(clients, done, wait, wait_timeout, say):
                say('%s: %s %s (%s)' % change)
        except (exceptions.CommandError, sdk_exceptions.HttpException) as exc:
            problems.append('the prepared nodes\' tags were not synced: %s; '
                            'rerun openstack baremetal node deploy-config '
                            'sync' % (getattr(exc, 'details', None) or exc))
    rows = [tuple(r) for r in rows]
    if problems:
        error = NotPrepared('; '.join(problems))
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


def refuse_unknown(configs, templates):
    """One line for a config no template realises."""
    unknown = [str(c) for c in configs if not any(
        deploy_config.config_of(t['extra']) == c for t in templates)]
    if unknown:
        raise exceptions.CommandError(
            'No deploy template realises the deploy config %s'
            % ', '.join(unknown))


def require_features(api, work):
    """One line, before any write, where ironic cannot clean without the
    ramdisk, or end a BIOS step without the agent that some node needs."""
    if work:
        api.require_feature(versions.NODE_CLEANING_WITHOUT_RAMDISK)
    if any(todo for _, todo, _, _ in work):
        api.require_feature(versions.BIOS_STEPS_WITHOUT_AGENT)


def refuse_unclearable(nodes):
    """One line for the nodes (those of ``--clear-job-queue``) whose jobs
    ironic cannot clear."""
    unclearable = list(filter(None, map(bmc_faults.cannot_clear, nodes)))
    if unclearable:
        raise exceptions.CommandError('; '.join(unclearable))


def carry_out(api, node, todo, row, waiter_of, say, governed,
              clear_queue=False):
    """Prepare one node; its row says how it went.  Whether it was."""
    try:
        row[3] = joined(Preparation(api, node, waiter_of, say).run(
            todo, governed, clear_queue), row[3])
    except (exceptions.CommandError, sdk_exceptions.HttpException) as exc:
        row[3] = joined('failed: %s' % (getattr(exc, 'details', None) or exc),
                        row[3])
        return False
    return True


def judge(nodes, templates, registries, configs, dry_run,
          release=tagging.NEWEST, clear_queue=False):
    """Each node's row, with what it needs (``bios_prepare.plan``): (rows,
    the nodes not prepared, [(node, the settings to set, its row, the
    configs' settings they unlock)]); ``release``: ironic's
    (``ironic_releases``), which may never end a BIOS step there;
    ``clear_queue``: every node is cleaned, for that at least; a dry
    run's work is what the run would do)."""
    own = dtemplates.by_config(templates).per_class
    rows, failed, work = [], [], []
    for node in nodes:
        registry = registries[node['uuid']]
        plan = bios_prepare.plan(node, templates, registry, own, configs)
        todo = bios_prepare.pending(plan.needs, registry)
        row = [plan.node, node['provision_state'], settings_text(
            plan.needs) or '-', '', bios_prepare.governs(plan.needs)]
        why = '; '.join(plan.unpreparable) or (
            todo and (tagging.bios_step_unfit(node, registry, release) or
                      tagging.futile_prepare(plan.settings, registry,
                                             release)))
        refusal = bios_prepare.state_refusal(node)
        unfinished = start_of(node) != node['provision_state']
        if why and not ((clear_queue or unfinished) and not refusal):
            row[3] = 'cannot prepare: %s' % why
        elif not (todo or unfinished or clear_queue):
            row[3] = 'prepared' if plan.needs else 'nothing to prepare'
        elif refusal:
            row[3] = 'not prepared: %s' % refusal
        else:
            # a node it cannot prepare has its jobs deleted all the same,
            # and is provided where an interrupted run left it manageable
            todo, settings = ((), ()) if why else (todo, plan.settings)
            row[3] = 'cannot prepare: %s' % why if why else ''
            if dry_run:
                row[3] = joined(would(todo, clear_queue, node), row[3])
            work.append((node, todo, row, settings))
        if 'cannot prepare' in row[3] or row[3].startswith('not prepared'):
            failed.append(plan.node)
        rows.append(row)
    return rows, failed, work


def would(todo, clear_queue, node):
    """A dry run's result for a node it would clean."""
    steps = (['clear the job queue'] * bool(clear_queue) +
             ['set ' + settings_text(todo)] * bool(todo))
    return 'would %s (%s)' % (' and '.join(steps), bios_prepare.BY_STATE[
        start_of(node)]) if steps else 'would provide it'


def joined(*results):
    """One row's results, in order, those there are."""
    return '; '.join(filter(None, results))


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


def with_marks(api, nodes):
    """The nodes, those manageable with their extra: the mark of a
    preparation an interruption stopped (``FROM``)."""
    return [dict(n, extra=api.node(n['uuid'], ('uuid', 'extra'))['extra'])
            if n['provision_state'] == 'manageable' else n for n in nodes]


class Preparation:
    """One node's preparation by manual cleaning, from ``available``
    (marked in its extra until it is available again, so that a rerun
    after an interruption provides it) or ``manageable``.
    ``waiter_of(seconds)``: a new ``waits.Waiter``, each wait its own
    bound (None: the command's)."""

    def __init__(self, api, node, waiter_of, say):
        self.api, self.node, self.say = api, node, say
        self.waiter_of = waiter_of
        self.label, self.uuid = tagging.node_label(node), node['uuid']
        self.start = start_of(node)

    def run(self, todo, governed=(), clear_queue=False):
        """Set ``todo`` (``clear_queue``: after the iDRAC's jobs are
        deleted); the row's result, read back from ironic's cache, where
        each setting of ``governed`` (the configs' settings) must now be
        writable."""
        if self.node['provision_state'] == 'available':
            self.api.patch_node(self.uuid, [{'op': 'add', 'path': '/extra/'
                                             + FROM, 'value': 'available'}])
            self.move('manage', 'manageable')
        if todo or clear_queue:
            self.clean(todo, clear_queue)
        did = joined('cleared the job queue' if clear_queue else '',
                     'set ' + settings_text(todo) if todo else '')
        if self.start == 'available':
            self.provide(did)
        done = self.read_back(todo, governed)
        return joined(did, done if not did else '')

    def provide(self, did):
        """Back to available (``did``: what the run did before): the mark
        goes once ironic took the request, however the wait ends (ironic's
        automated clean goes on without us)."""
        self.say('%s: provide' % self.label)
        self.api.set_provision_state(self.uuid, 'provide')
        try:
            state = settle(self.api, self.node, 'available',
                           self.waiter_of(None), 'clean failed')
        finally:
            self.unmark()
        if state['provision_state'] != 'available':
            raise exceptions.CommandError(
                '%sthe automated cleaning of "provide" failed: %s; %s is in '
                '"clean failed"' % (did and did + ', but ',
                                    state.get('last_error'), self.label))

    def unmark(self):
        """Remove the mark of a preparation from available; a line, with
        the command that removes it, where ironic refuses."""
        try:
            self.api.patch_node(self.uuid, [{'op': 'remove',
                                             'path': '/extra/' + FROM}])
        except (exceptions.CommandError,
                sdk_exceptions.HttpException) as exc:
            self.say('%s: the mark %s stays in its extra (%s): openstack '
                     'baremetal node unset --extra %s %s' % (
                         self.label, FROM, getattr(exc, 'details', None)
                         or exc, FROM, self.label))

    def move(self, target, wanted, failed=None, seconds=None):
        self.say('%s: %s' % (self.label, target))
        self.api.set_provision_state(self.uuid, target)
        return settle(self.api, self.node, wanted, self.waiter_of(seconds),
                      failed)

    def clean(self, todo, clear_queue=False):
        """The clean steps; a failure leaves the node manageable (ironic
        holds it in maintenance then: the operator looks at the BIOS
        before it goes back to nova)."""
        self.say('%s: clean, %s' % (self.label, ', '.join(
            ['clearing the job queue'] * bool(clear_queue) +
            ['setting ' + settings_text(todo)] * bool(todo))))
        try:
            self.api.clean(self.uuid, [bmc_faults.CLEAR_JOB_QUEUE] * bool(
                clear_queue) + bios_prepare.clean_steps(todo))
        except sdk_exceptions.HttpException as exc:
            raise exceptions.CommandError(
                'ironic refused to clean %s: %s; it is manageable%s' % (
                    self.label, exc.details or exc, self.advice(
                        False))) from None
        try:
            state = settle(self.api, self.node, 'manageable',
                           self.waiter_of(None), failed='clean failed')
        except waits.TimedOut as exc:
            raise exceptions.CommandError(self.still_waiting(exc)) from None
        if state['provision_state'] == 'clean failed':
            held = self.move('manage', 'manageable',
                             seconds=RECOVERY_SECONDS)['maintenance']
            error = state.get('last_error')
            cause = bmc_faults.explain(error)
            raise exceptions.CommandError(
                'ironic failed to %s on %s: %s; it is manageable%s' % (
                    ' and '.join(['clear the job queue'] * bool(clear_queue)
                                 + ['set ' + settings_text(todo)] * bool(
                                     todo)), self.label, cause or error,
                    self.advice(held, cause and bmc_faults.free_node_remedy(
                        self.node, clear_queue))))

    def still_waiting(self, timed_out):
        """The line of a clean the bound ended, with what its BIOS step
        waits for (a blank disk's never ends)."""
        waiting = ironic_releases.waiting_step(
            self.api.node(self.uuid, node_tags.WAIT_FIELDS),
            self.api.release())
        return '%s; %s' % (timed_out, waiting) if waiting else str(
            timed_out)

    def advice(self, held, rerun=None):
        """What to do with a node a failed clean left manageable
        (``rerun``: how to rerun, where the failure needs more than a
        rerun)."""
        provides = self.start == 'available'
        rerun = rerun or ('rerun' if provides else '')
        then = rerun and ', then %s%s' % (
            rerun, ' (the rerun provides the node)' if provides else '')
        if held:
            return (', and ironic holds it in maintenance for the failed '
                    'clean: check its BIOS, then openstack baremetal node '
                    'maintenance unset %s%s' % (self.label, then))
        return then and ': check it%s' % then

    def read_back(self, todo, governed):
        registry = self.api.bios_registry(self.uuid)
        left = bios_prepare.pending(todo, registry)
        if left:
            raise exceptions.CommandError(
                'ironic reports the clean done, but its cache of %s\'s BIOS '
                'does not show %s' % (self.label, settings_text(left)))
        # before 36.0 ironic does not judge a step by its cache
        stale = self.api.release().validates and (
            bios_profiles.stale_read_only(governed, registry))
        if stale:
            raise exceptions.CommandError('%s, but %s' % (
                'set ' + settings_text(todo) if todo else 'nothing to set',
                bios_profiles.describe_stale(stale)))
        return 'set %s' % settings_text(todo) if todo else (
            'provided again')


def start_of(node):
    """Where a node's preparation started: ``available``, marked in its
    extra by a run that an interruption stopped, or its state."""
    return (node.get('extra') or {}).get(FROM) or node['provision_state']


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
        waiter.poll('%s is still in "%s"; ironic goes on: rerun once it ends'
                    % (label, now))


def sync_nodes(clients, uuids, wait, wait_timeout, say):
    """The tag changes of these nodes, made, and (``wait``) seen in
    placement: the rows as sync prints them."""
    found = node_tags.read_inventory(clients)
    nodes = [n for n in found.nodes if n['uuid'] in uuids]
    registries = found.ironic.bios_registries(n['uuid'] for n in nodes)
    changes = tagging.plan_sync(
        nodes, found.templates, registries, found.templates,
        found.ironic.release())
    rows, written = node_tags.write_changes(found.ironic, changes, False)
    if written and wait:
        node_tags.wait_until_scheduler_sees(clients, written, wait_timeout,
                                            say)
    return rows
