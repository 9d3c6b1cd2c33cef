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

"""After a failed servicing: the node back to active, the server running,
and one line that says what happened and what the hardware shows.

Ironic puts a node whose service step failed in ``service failed`` and in
maintenance (fault "service failure", its error for the reason), and
refuses to abort while it is in maintenance.  So the node leaves
maintenance for the abort, which returns it to ``active`` (ironic 32.0 and
later), and goes back to it after,
whatever happens, for a reason that names the toggle (``HOLD_PREFIX``), so
that its hardware is checked before anything else runs on it (also where an
interrupted recovery had lifted ironic's hold: a rerun knows its own hold).
The abort's worker holds the node's lock a while after the node shows
``active``: the abort's wait waits for it where ironic shows it, and the
client retries a hold the lock refuses.  A node in maintenance for another
reason (an operator's, given after the failure), for none, or for one these
credentials cannot read, is not the toggle's to lift.  An older ironic
cannot abort: the line gives the commands that recover the node.

Before it lifts ironic's maintenance, the recovery marks the pending record
as recovering (``toggle_record.recovering_patch``), and names the node in
``UNHELD`` until it is held again: a rollout that leaves a worker there
says how to hold it, and a rerun that finds the mark holds the node and
refuses (``refuse_failed``) instead of servicing it again, unless the
operator says so (``--retry-failed``)."""

import json
import threading

from openstack import exceptions as sdk_exceptions
from osc_lib import exceptions

from osc_deploy_config.domain.hardware import effects
from osc_deploy_config.domain.toggle import toggle_record
from osc_deploy_config.domain.toggle import toggle_states
from osc_deploy_config.services import rest
from osc_deploy_config.use_cases.toggle import outcomes
from osc_deploy_config.use_cases.toggle import waits

# ironic's fault on a node whose service step failed (API 1.42): its own
# hold, for the reason of its last error; and the reason of the toggle's
SERVICE_FAILURE = 'service failure'
HOLD_PREFIX = 'osc-deploy-config: '
FAULT_FIELDS = ('maintenance', 'maintenance_reason', 'fault', 'last_error')


class Unheld:
    """The nodes whose recovery lifted (or is about to lift) their
    maintenance and has not held them again: {node UUID: (label, the
    reason of their hold)}, for the whole process (a rollout's workers
    share it)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._nodes = {}

    def add(self, node, reason):
        with self._lock:
            self._nodes[node['uuid']] = (outcomes.label(node), reason)

    def discard(self, node):
        with self._lock:
            self._nodes.pop(node['uuid'], None)

    def lines(self):
        """A line per node left unheld, with the command that holds it."""
        with self._lock:
            found = sorted(self._nodes.items())
        return [hold_line(uuid, label, reason)
                for uuid, (label, reason) in found]


UNHELD = Unheld()


def hold_line(uuid, label, reason):
    return ('Node %s was left in the middle of the recovery of a failed '
            'servicing, which lifts its maintenance: hold it before anything '
            'runs on it: openstack baremetal node maintenance set %s '
            '--reason "%s"' % (label, uuid, reason))


def held_by_toggle(node):
    """Whether the node's maintenance is the hold of a failed servicing: a
    toggle's own, or ironic's (its fault, and its error for the reason;
    an operator's ``maintenance set --reason`` keeps the fault and changes
    the reason).  A reason that is empty, or that ironic hides from these
    credentials, is no one's known: not lifted."""
    reason = node.get('maintenance_reason') or ''
    if reason.startswith(HOLD_PREFIX):
        return True
    if node.get('fault') != SERVICE_FAILURE or not reason or (
            toggle_states.unredacted(reason) is None):
        return False
    return reason == toggle_states.unredacted(node.get('last_error'))


def whose_hold(node):
    """Why a node's maintenance is not known for a failed servicing's
    hold, in words."""
    reason = node.get('maintenance_reason')
    if not reason:
        return 'for no reason given, which may be anyone\'s'
    if toggle_states.unredacted(reason) is None:
        return 'for a reason ironic hides from these credentials'
    if node.get('fault') == SERVICE_FAILURE and toggle_states.unredacted(
            node.get('last_error')) is None:
        return ('(%s), and ironic hides its last error from these '
                'credentials: whether that hold is its own cannot be told'
                % reason)
    return 'for a reason of someone else\'s (%s)' % reason


def refuse_failed(strategy, prepared, under_way, failed_servicing):
    """Hold the node and refuse, in one line, a toggle on a node whose
    servicing by a toggle of ours failed (``failed_servicing``: ironic's
    history says so) or whose recovery was interrupted (the pending
    record's mark): no one has looked at its hardware since.  Nothing is
    serviced again unless the operator says so (--retry-failed)."""
    if not (under_way.recovering or failed_servicing):
        return
    node = prepared.reading.node
    why = ('its recovery was interrupted' if under_way.recovering
           else 'ironic\'s history shows it failed')
    reason = '%san earlier servicing failed and %s: check the hardware' % (
        HOLD_PREFIX, why)
    Recovery(strategy).hold(node, reason)
    raise exceptions.CommandError(
        'Node %s, under server %s, is held in maintenance: an earlier '
        'servicing of it by a toggle failed, and %s. Nothing was serviced; '
        'once its hardware is checked: openstack baremetal node maintenance '
        'unset %s, then rerun with --retry-failed.' % (
            outcomes.label(node), prepared.server['name'], why,
            outcomes.label(node)))


class Recovery:
    """The recovery of a failed servicing, by the ``servicing.Servicing``
    strategy that ran it."""

    def __init__(self, strategy):
        self.strategy = strategy
        self.ironic = strategy.ironic
        self.waits = strategy.waits

    def recover(self, prepared, steps, why):
        """Abort the failed servicing and drop its pending record; the node
        held in maintenance whatever happens; the one line."""
        node = prepared.reading.node
        failed = 'Servicing node %s failed: %s.' % (outcomes.label(node),
                                                     why)
        now = self.ironic.node(node['uuid'], FAULT_FIELDS)
        if now['maintenance'] and not held_by_toggle(now):
            return self.held_by_another(prepared, failed, now)
        if self.waits.waiter.left():
            # the rollout is leaving: no recovery starts that it might not
            # finish; the node stays as ironic holds it, the record pending
            return ('%s The rollout is leaving: no recovery was started; '
                    'the node stays in "%s"%s. A rerun holds it and says '
                    'how to go on.' % (failed, now['provision_state'],
                                       ', in maintenance' if
                                       now['maintenance'] else ''))
        # ironic's hold of a failed step, or (an earlier recovery lifted it
        # and was interrupted) none: the hardware is checked first
        state = self.abort_held(prepared, now, '%sservicing failed: %s' % (
            HOLD_PREFIX, why))
        if state is None:
            return self.cannot_abort(prepared, steps, failed)
        self.ironic.patch_node(node['uuid'], toggle_record.drop_pending(
            node, bool(self.strategy.project)))
        if state['provision_state'] != 'active':
            return ('%s Aborting it did not return the node to active (%s): '
                    'it is in "%s". Nothing was recorded.' % (
                        failed, toggle_states.unredacted(
                            state['last_error']) or 'ironic does not say why',
                        state['provision_state']))
        return ('%s Ironic returned the node to active and server %s runs '
                'on%s; the node is held in maintenance until its hardware '
                'is checked (openstack baremetal node maintenance unset %s). '
                'Nothing was recorded; fix the cause, then rerun.' % (
                    failed, prepared.server['name'],
                    self.now_shows(prepared, steps), outcomes.label(node)))

    def abort_held(self, prepared, now, reason):
        """Mark the pending record as recovering, lift the node's
        maintenance, abort the failed servicing and wait for the node; the
        node held again for ``reason`` whatever happens: the node then, or
        None where ironic cannot abort."""
        node = prepared.reading.node
        # listed from the first write: a rollout that leaves meanwhile
        # says how to hold it, whichever write this worker is stuck in
        UNHELD.add(node, reason)
        try:
            # a rerun that finds the mark holds the node: it is never
            # serviced again before its hardware is checked, wherever this
            # stops
            self.ironic.patch_node(node['uuid'],
                                   toggle_record.recovering_patch(
                                       node, prepared.server['id'],
                                       bool(self.strategy.project)))
            if self.waits.waiter.left():
                # the rollout left while the mark was written: nothing is
                # lifted behind the lines it said
                raise waits.Left('the rollout left before the recovery '
                                 'lifted the node\'s maintenance; a rerun '
                                 'holds it and says how to go on')
            if now['maintenance']:
                self.ironic.set_maintenance(node['uuid'], False)
            try:
                self.ironic.abort(node['uuid'])
            except sdk_exceptions.BadRequestException:
                return None
            return self.waits.abort(node)
        finally:
            # whatever happens (a timeout, Ctrl-C, the rollout leaving),
            # the node is held again, or stays listed with the line that
            # says how to hold it (a second Ctrl-C in the hold included)
            try:
                self.hold(node, reason)
            except exceptions.CommandError:
                UNHELD.discard(node)    # its line says how to hold it
                raise
            UNHELD.discard(node)

    def held_by_another(self, prepared, failed, now):
        """The line of a failed servicing on a node someone put in
        maintenance for a reason of their own: ironic refuses to abort
        there, and the hold is not the toggle's to lift.  The pending record
        stays: a rerun, once the hold is lifted, recovers the node as any
        other failed servicing."""
        node = prepared.reading.node
        return ('%s The node is in maintenance %s, where ironic refuses to '
                'abort it: nothing was recorded. Once the hardware is '
                'checked: openstack baremetal node maintenance unset %s, then '
                'rerun.' % (failed, whose_hold(now), outcomes.label(node)))

    def cannot_abort(self, prepared, steps, failed):
        """The line of an ironic before 32.0, which cannot abort: only a
        servicing that succeeds takes the node out of "service failed"."""
        node = prepared.reading.node
        return (
            '%s This ironic cannot take a node out of "service failed" '
            '(abort needs ironic 32.0 or later): nova still shows server %s '
            'ACTIVE, but ironic manages its node again only after a '
            'servicing succeeds. Nothing was recorded; once the cause is '
            'fixed, run: openstack baremetal node maintenance unset %s && '
            "openstack baremetal node service %s --service-steps '%s'" % (
                failed, prepared.server['name'], node['uuid'], node['uuid'],
                json.dumps(steps)))

    def hold(self, node, reason):
        """Put the node in maintenance, for ``reason`` (a write the
        conductor's lock refuses, as it does right after an abort, is
        retried: past the command's bound too, as the node is not safe
        until it is held; a rollout that leaves meanwhile says how to hold
        it); one line when it cannot be."""
        try:
            with rest.bounded(None):
                self.ironic.set_maintenance(node['uuid'], True, reason)
        except Exception as exc:    # noqa: BLE001 - said, with the command
            raise exceptions.CommandError(
                'Node %s could not be put back in maintenance after a failed '
                'servicing (%s): put it there before anything runs on it: '
                'openstack baremetal node maintenance set %s --reason "%s"'
                % (outcomes.label(node), outcomes.one_line(exc),
                   node['uuid'], reason)) from None

    def now_shows(self, prepared, steps):
        """What the node shows of the steps' effect, read back, in words."""
        bios, raid_config = self.strategy.read_again(prepared)
        shown = effects.shown(steps, bios, raid_config)
        if not shown:
            return ''
        return ': its hardware shows %s (as ironic read it at %s)' % (
            ', '.join(shown), effects.read_at(steps, prepared.bios,
                                              raid_config)
            or 'an unknown time')
