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

"""A bare-metal toggle's clean shutdown: before a step that reboots the
node (a BIOS step: ironic's reboot is a hard one, ``ForceOff`` then
``On``), ironic asks the OS to shut down (``soft power off``: the BMC's
``GracefulShutdown``), for at most ``SOFT_OFF_SECONDS``, as nova's own
stop does; an OS that does not shut down in time is reset by the step, as
before.  A powered-off node's BIOS step powers it on; a step ironic skips
(every value already set) leaves it off, so the node is powered on after
the servicing, whatever powered it off.

Ironic tells nova of each power change (``power-update`` events), so the
server shows SHUTOFF meanwhile and ACTIVE once the node runs again; the
toggle waits for that, for at most ``NOVA_SECONDS``.
"""

from openstack import exceptions as sdk_exceptions
from osc_lib import exceptions

from osc_deploy_config.domain.configs import step_safety
from osc_deploy_config.services import ironic as ironic_api
from osc_deploy_config.use_cases.toggle import outcomes

# As nova's [DEFAULT] shutdown_timeout: what the OS is given.
SOFT_OFF_SECONDS = 60
# Less than this, and the OS is not asked to shut down.
MIN_SOFT_OFF_SECONDS = 5
# The bound of a wait for ironic to end a power change it took.
POWER_SECONDS = SOFT_OFF_SECONDS + 60
# The bound of the wait for nova to show the server running again.
NOVA_SECONDS = 120
OFF, ON = 'power off', 'power on'
# nova's power state of a running server
NOVA_RUNNING = 1


def reboots(steps):
    """Whether any step takes effect at a reboot ironic makes."""
    return any(step_safety.risk(s).kind == step_safety.REBOOTS
               for s in steps)


def shut_down(servicing, node, steps):
    """The node's OS shut down cleanly before steps that reboot it (the
    node as read, with its power state); a line where it could not be, and
    the step resets it.  A node of fake power has no OS to shut down."""
    if not reboots(steps) or node.get('power_interface') == 'fake':
        return
    label = outcomes.label(node)
    if node.get('power_state') != ON or node.get('target_power_state'):
        return
    seconds = soft_off_seconds(servicing.waits.waiter)
    if seconds < MIN_SOFT_OFF_SECONDS:
        servicing.say('  node %s: no time left to shut its OS down first; '
                      'the step resets it' % label)
        return
    servicing.say('  node %s: shutting its OS down first (at most %d s)'
                  % (label, seconds))
    try:
        servicing.ironic.set_power_state(node['uuid'], 'soft power off',
                                         timeout=seconds)
    except (exceptions.CommandError, sdk_exceptions.HttpException) as exc:
        servicing.say('  node %s: not shut down first (%s); the step '
                      'resets it' % (label, getattr(exc, 'details', None)
                                     or exc))
        return
    state = powered(servicing, node)
    if state.get('power_state') != OFF:
        servicing.say('  node %s: its OS did not shut down in time (%s); '
                      'the step resets it' % (label, state.get(
                          'last_error') or state.get('power_state')))


def soft_off_seconds(waiter):
    """What the OS is given to shut down: SOFT_OFF_SECONDS, or half of
    what the toggle's deadline leaves, the step needing the rest."""
    waiter.begin()
    return int(min(SOFT_OFF_SECONDS, (waiter.deadline - waiter.clock()) / 2))


def bring_up(servicing, server, node, state=None):
    """The node powered on again where a servicing left it off (``state``:
    its last read, with its power, if any), and the server running in
    nova's view; a line where nova does not show it."""
    label = outcomes.label(node)
    if state is None or state.get('target_power_state') or (
            'power_state' not in state):
        state = powered(servicing, node)
    if state.get('power_state') == OFF:
        servicing.say('  node %s: powering it on again' % label)
        servicing.ironic.set_power_state(node['uuid'], ON)
        state = powered(servicing, node)
        if state.get('power_state') != ON:
            raise exceptions.CommandError(
                'Node %s was serviced, but did not power on again: %s; '
                'power it on (openstack baremetal node power on %s)' % (
                    label, state.get('last_error') or state.get(
                        'power_state'), label))
    found = running(servicing, server)
    if found['status'] == 'SHUTOFF' and not found.get(
            'OS-EXT-STS:task_state'):
        # nova's power sync stopped it, from a state it read meanwhile
        servicing.say('  server %s: nova stopped it meanwhile; starting it'
                      % server['name'])
        try:
            servicing.waits.nova.start(server['id'])
        except (exceptions.CommandError, sdk_exceptions.HttpException) as exc:
            raise exceptions.CommandError(
                'Node %s was serviced, but nova stopped server %s meanwhile '
                'and did not start it: %s; start it (openstack server start '
                '%s)' % (label, server['name'], getattr(
                    exc, 'details', None) or exc, server['name'])) from None
        found = running(servicing, server)
    if found['status'] != 'ACTIVE':
        servicing.say('  server %s: nova still shows %s while node %s is '
                      'on' % (server['name'], found['status'], label))


def restore_mid_step(servicing, state):
    """A node nova powered off while ironic waits for its BIOS step's boot
    (its power sync, from a state it read meanwhile) is powered on again:
    else ironic waits for ever.  The operator's polls only (a project's
    do not read what the step waits for)."""
    bios_state = (state.get('driver_internal_info') or {}).get(
        'redfish_bios_state') or {}
    if not (state.get('provision_state') == 'service wait'
            and bios_state.get('reboot_requested')
            and state.get('power_state') == OFF
            and not state.get('target_power_state')):
        return
    servicing.say('  node %s: powered off while ironic waits for its BIOS '
                  'step; powering it on' % outcomes.label(state))
    try:
        servicing.ironic.set_power_state(state['uuid'], ON)
    except (exceptions.CommandError, sdk_exceptions.HttpException) as exc:
        servicing.say('  node %s: not powered on (%s)' % (
            outcomes.label(state), getattr(exc, 'details', None) or exc))


def powered(servicing, node):
    """Until ironic has ended the node's power change, for at most
    POWER_SECONDS whatever the toggle's deadline: the node then."""
    return _until(servicing.waits.waiter, POWER_SECONDS, lambda: (
        servicing.ironic.node(node['uuid'], ironic_api.POWER_FIELDS)),
        lambda state: not state.get('target_power_state'))


def running(servicing, server):
    """Until nova shows the server ACTIVE and running with no task, for at
    most NOVA_SECONDS: the server then."""
    return _until(servicing.waits.waiter, NOVA_SECONDS, lambda: (
        servicing.waits.nova.find_server(server['id'])),
        lambda found: found['status'] == 'ACTIVE' and not found.get(
            'OS-EXT-STS:task_state') and found.get(
                'OS-EXT-STS:power_state') in (None, NOVA_RUNNING))


def _until(waiter, seconds, read, done):
    deadline = waiter.clock() + seconds
    waiter.begin()
    while True:
        found = read()
        if done(found) or waiter.clock() > deadline or waiter.left():
            return found
        waiter.pause()
