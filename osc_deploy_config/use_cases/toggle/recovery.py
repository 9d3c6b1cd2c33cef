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
maintenance (fault "service failure"), and refuses to abort while it is in
maintenance.  So the node leaves maintenance for the abort, which returns it
to ``active`` (ironic 32.0 and later), and goes back to it after, so that its
hardware is checked before anything else runs on it.  An older ironic
cannot abort: the line gives the commands that recover the node."""

import json

from openstack import exceptions as sdk_exceptions

from osc_deploy_config.domain import effects
from osc_deploy_config.domain import toggle_record
from osc_deploy_config.use_cases.toggle import outcomes

# ironic's fault on a node whose service step failed (API 1.42), and what
# to read of that
SERVICE_FAILURE = 'service failure'
FAULT_FIELDS = ('maintenance', 'maintenance_reason', 'fault')


class Recovery:
    """The recovery of a failed servicing, by the ``servicing.Servicing``
    strategy that ran it."""

    def __init__(self, strategy):
        self.strategy = strategy
        self.ironic = strategy.ironic
        self.waits = strategy.waits

    def recover(self, prepared, steps, why):
        """Abort the failed servicing and drop its pending record; the one
        line."""
        node = prepared.reading.node
        failed = 'Servicing node %s failed: %s.' % (outcomes.label(node),
                                                     why)
        held = self.ironic.node(node['uuid'], FAULT_FIELDS)
        held = held if held['fault'] == SERVICE_FAILURE else None
        if held:
            self.ironic.set_maintenance(node['uuid'], False)
        try:
            try:
                self.ironic.abort(node['uuid'])
            except sdk_exceptions.BadRequestException:
                return self.cannot_abort(prepared, steps, failed, held)
            state = self.waits.abort(node)
        finally:
            # whatever happens (a timeout, Ctrl-C), the node is held again
            self.hold(node, held)
        self.ironic.patch_node(node['uuid'], toggle_record.drop_pending(
            node, bool(self.strategy.project)))
        if state['provision_state'] != 'active':
            return ('%s Aborting it did not return the node to active (%s): '
                    'it is in "%s". Nothing was recorded.' % (
                        failed, state['last_error'],
                        state['provision_state']))
        kept = ('; the node stays in maintenance, where ironic put it for the '
                'failed step (openstack baremetal node maintenance unset %s '
                'once the hardware is checked)' % outcomes.label(node)
                ) if held else ''
        return ('%s Ironic returned the node to active and server %s runs '
                'on%s%s. Nothing was recorded; fix the cause, then rerun.'
                % (failed, prepared.server['name'],
                   self.now_shows(prepared, steps), kept))

    def cannot_abort(self, prepared, steps, failed, held):
        """The line of an ironic before 32.0, which cannot abort."""
        node = prepared.reading.node
        unset = ('openstack baremetal node maintenance unset %s && '
                 % node['uuid']) if held else ''
        return (
            '%s This ironic cannot take a node out of "service failed" '
            '(abort needs ironic 32.0 or later): nova still shows server %s '
            'ACTIVE, but ironic manages its node again only after a '
            'servicing succeeds. Nothing was recorded; once the cause is '
            'fixed, rerun this toggle or run: %sopenstack baremetal node '
            "service %s --service-steps '%s'" % (
                failed, prepared.server['name'], unset, node['uuid'],
                json.dumps(steps)))

    def hold(self, node, held):
        """Put the node back in the maintenance ironic had set."""
        if held:
            self.ironic.set_maintenance(node['uuid'], True,
                                        held['maintenance_reason'])

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
