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

"""The states a toggle starts from, holds, and waits through: every rule
in one place.

A toggle starts only on an ACTIVE server with no task under way, and on bare
metal only on a node that is ``active`` and not in maintenance; it may also
finish its own interrupted change (a resize awaiting confirmation to the
target flavor, a servicing its pending record names).  Any other state is
refused in one line that names it and what to do, before anything changes.

While it runs, nova holds the server locked, with a reason that names the
toggle and the process holding it (compute API 2.73): its host, its PID,
the PID namespace and boot it runs in, and a nonce of its own (``Holder``),
so that two containers that share a host name never take each other's
live lock for a dead one.  The owner cannot reboot, stop or delete the
server meanwhile, and a second toggle sees it.  A lock of ours whose
process is gone (killed) is an interrupted toggle's, taken over by a rerun;
anyone else's lock is refused.

Every wait ends on the failure of what it waits for: an error event of
nova's action, a server back on its flavor or in ERROR, a confirmation that
failed and left the server in VERIFY_RESIZE (no action of nova's will move
it), ironic's ``service failed`` or a node that left servicing for any state
but ``active``.  Plain functions over the dicts of the APIs.
"""

import collections
import re

from osc_lib import exceptions

# The prefix of the lock reasons of our toggles, and the holder they name.
LOCK_PREFIX = 'osc-deploy-config:'
_HOLDER = re.compile(r'\(held by ([^\s()]+) pid (\d+)'
                     r'(?: ns (\S+) boot (\S+) nonce (\S+))?\)')
# The process that holds a lock: its host, PID, PID namespace and boot
# (or '' where not known: a lock of an older release), and a nonce of the
# lock's own.
Holder = collections.namedtuple('Holder', ['host', 'pid', 'ns', 'boot',
                                           'nonce'])
NOBODY = Holder('', 0, '', '', '')
# What to do about a server in each status a toggle does not start from.
_SERVER_FIXES = {
    'SHUTOFF': 'start it (openstack server start {id})',
    'PAUSED': 'unpause it (openstack server unpause {id})',
    'SUSPENDED': 'resume it (openstack server resume {id})',
    'SHELVED': 'unshelve it (openstack server unshelve {id})',
    'SHELVED_OFFLOADED': 'unshelve it (openstack server unshelve {id})',
    'RESCUE': 'unrescue it (openstack server unrescue {id})',
    'ERROR': 'repair it (openstack server show {id} says its fault), and '
             'reset it once it runs (openstack server set --state active '
             '{id})',
    'VERIFY_RESIZE': 'confirm or revert its resize (openstack server resize '
                     'confirm|revert {id})',
}
# ... and about a node in each provision state (besides active).
_NODE_FIXES = {
    'service hold': 'a servicing step holds it: release it (openstack '
                    'baremetal node unhold {node})',
    'service failed': 'its servicing failed: abort it (openstack baremetal '
                      'node abort {node}) once the hardware is checked',
    'servicing': 'another servicing is under way',
    'service wait': 'another servicing is under way',
    'rescue': 'unrescue the server (openstack server unrescue {server})',
    'rescue failed': 'unrescue the server (openstack server unrescue '
                     '{server})',
    'deploy failed': 'its deploy failed: rebuild or delete the server',
}


class Unavailable(exceptions.CommandError):
    """The server (or its node) is in a state a toggle does not start
    from, or busy with another change: nothing was changed.  ``state``
    says which, in a few words."""

    def __init__(self, message, state):
        super().__init__(message)
        self.state = state


class Incapable(exceptions.CommandError):
    """The server's host cannot take the configs (the scheduler check):
    nothing was changed."""


def refuse_server(server):
    """Raise the one line (Unavailable) unless the server is ACTIVE with no
    task under way."""
    status = server['status']
    task = server.get('OS-EXT-STS:task_state')
    if status == 'ACTIVE' and not task:
        return
    if task:
        raise Unavailable(
            'Server %s is busy (%s, %s): another change is under way. '
            'Nothing was changed; rerun when it ends.'
            % (server['name'], status, task), 'busy (%s)' % task)
    fix = _SERVER_FIXES.get(status, 'bring it back to ACTIVE').format(
        id=server['id'])
    raise Unavailable(
        'Server %s is %s: a toggle starts only on an ACTIVE server. Nothing '
        'was changed; %s, then rerun.' % (server['name'], status, fix),
        status)


def refuse_node(server, node, ours_under_way=False):
    """Raise the one line (Unavailable) unless the node is active and not in
    maintenance, or busy with our own interrupted servicing
    (``ours_under_way``)."""
    label = node.get('name') or node['uuid']
    state = node['provision_state']
    if ours_under_way and state in ('servicing', 'service wait',
                                    'service failed'):
        return
    if node.get('maintenance'):
        raise Unavailable(
            'Server %s runs on node %s, which is in maintenance (%s): a '
            'toggle starts only on a node out of maintenance. Nothing was '
            'changed; once the hardware is checked: openstack baremetal node '
            'maintenance unset %s' % (
                server['name'], label,
                node.get('maintenance_reason') or 'no reason given', label),
            'node %s in maintenance' % label)
    if state == 'active' and not node.get('target_provision_state'):
        return
    fix = _NODE_FIXES.get(state, 'wait until it is active').format(
        node=label, server=server['id'])
    raise Unavailable(
        'Server %s runs on node %s, which is in "%s": a toggle starts only '
        'on an active node. Nothing was changed; %s, then rerun.'
        % (server['name'], label, state, fix),
        'node %s %s' % (label, state))


def lock_reason(configs, holder):
    """The reason of the lock a toggle holds (nova keeps 255
    characters)."""
    held_by = '(held by %s pid %d ns %s boot %s nonce %s)' % (
        holder.host[:64], holder.pid, holder.ns or '-', holder.boot or '-',
        holder.nonce or '-')
    reason = '%s toggling %s %s' % (
        LOCK_PREFIX, ', '.join(str(c) for c in configs), held_by)
    if len(reason) <= 255:
        return reason
    return '%s toggling deploy configs %s' % (LOCK_PREFIX, held_by)


def lock_holder(server):
    """The Holder of the toggle that holds the server's lock (NOBODY where
    its reason names none); None when the server is not locked by a
    toggle of ours."""
    reason = server.get('locked_reason') or ''
    if not server.get('locked') or not reason.startswith(LOCK_PREFIX):
        return None
    found = _HOLDER.search(reason)
    if not found:
        return NOBODY
    ns, boot, nonce = (('' if v in (None, '-') else v)
                       for v in found.group(3, 4, 5))
    return Holder(found.group(1), int(found.group(2)), ns, boot, nonce)


def refuse_foreign_lock(server):
    """Raise the one line (Unavailable) when someone else locked the
    server: an operator, its owner, or nova's user of another tool."""
    if server.get('locked') and lock_holder(server) is None:
        raise Unavailable(
            'Server %s is locked (by %s: %s): a toggle does not act on a '
            'server someone else holds. Nothing was changed; rerun once it '
            'is unlocked (openstack server unlock %s).' % (
                server['name'], server.get('locked_by') or 'someone',
                server.get('locked_reason') or 'no reason given',
                server['id']), 'locked by %s' % (
                server.get('locked_by') or 'someone'))


def lock_reason_unnamed():
    """The reason of a toggle's lock whose holder is not known (a
    concurrent toggle wrote over it)."""
    return '%s toggling (held by a concurrent toggle)' % LOCK_PREFIX


def refuse_live_toggle(server, holder):
    """The one line (Unavailable) for a server another running toggle
    holds (``holder``: a Holder, NOBODY when not known)."""
    by = ' (pid %d on %s)' % (holder.pid, holder.host) if holder.pid else ''
    return Unavailable(
        'Server %s is being toggled by another command%s. Nothing was '
        'changed; rerun when it ends (if that command is gone, unlock the '
        'server first: openstack server unlock %s).' % (
            server['name'], by, server['id']), 'held by another toggle')


def newest_action(actions):
    """The request ID of the newest of a server's instance actions (newest
    first, as nova lists them), or None: where a takeover starts."""
    return actions[0]['request_id'] if actions else None


def _since(actions, after):
    """A server's instance actions in their order, after the action
    ``after`` (all of them where it is not listed)."""
    found = list(reversed(actions))
    ids = [a['request_id'] for a in found]
    return found[ids.index(after) + 1:] if after in ids else found


def first_unmatched_lock(actions, after=None):
    """The request ID of the oldest lock since the last unlock, from a
    server's instance actions (newest first, as nova lists them), or None;
    ``after``: only the locks after that action (where a takeover started:
    the dead lock's are not the holder's)."""
    first = None
    for action in _since(actions, after):
        if action['action'] == 'unlock':
            first = None
        elif action['action'] == 'lock' and first is None:
            first = action['request_id']
    return first


def first_unlock(actions, after):
    """The request ID of the first unlock after the action ``after``, or
    None: of the owners' takeovers of one dead lock (nova lets a server's
    own project lock it only while it is unlocked, so each unlocks it
    first), the one that goes on."""
    return next((a['request_id'] for a in _since(actions, after)
                 if a['action'] == 'unlock'), None)


# ------------------------------------------------------------ waits


def failed_event(action):
    """'event: details' of the first failed event of a nova instance
    action; 'Error' when nova shows the failure but not its events (a
    non-admin); None when nothing failed (yet)."""
    for event in action.get('events') or ():
        if (event.get('result') or '').lower() == 'error':
            return '%s: %s' % (event['event'], event.get('details') or (
                'error (nova 2.84 tells more)'))
    if (action.get('message') or '').lower() == 'error':
        return 'Error'
    return None


def resize_settled(server):
    """Whether nova's resize of the server has ended (in VERIFY_RESIZE, or
    back, or in ERROR)."""
    return not server.get('OS-EXT-STS:task_state')


def stuck_confirmation(server, failure):
    """The one line of a server a failed confirmation left in
    VERIFY_RESIZE, where no action of nova's will move it."""
    return (
        'Nova failed to confirm the resize of server %s (%s): it stays in '
        'VERIFY_RESIZE, and no action of nova\'s will move it. Nothing more '
        'was changed; reset it (openstack server set --state active %s), '
        'then rerun to check.' % (server['name'], failure, server['id']))


def node_settled(node):
    """Whether ironic's servicing of the node has ended, one way or
    another."""
    state = node['provision_state']
    if state in ('servicing', 'service wait'):
        return False
    return state != 'active' or not node.get('target_provision_state')


def unredacted(value):
    """A node's field as ironic shows it, or None where its policy hides
    it from these credentials (``last_error``, ``reservation``: a lessee
    reads a banner)."""
    if isinstance(value, str) and value.startswith('** ') and (
            'Redacted' in value):
        return None
    return value


def servicing_failure(node):
    """Why a settled servicing did not return the node to active, or
    None."""
    state = node['provision_state']
    error = unredacted(node.get('last_error'))
    if state == 'active':
        return None
    if state == 'service failed':
        if error or not node.get('last_error'):
            return error or 'service failed'
        return 'service failed (ironic shows why to its operators only)'
    if state == 'service hold':
        return ('a step put the node in "service hold" (openstack baremetal '
                'node unhold %s)' % (node.get('name') or node['uuid']))
    return 'the node went to "%s"%s' % (state, (': %s' % error) if error
                                        else '')


def still_servicing(node, state):
    """What a servicing that goes on past the wait is doing, in words, and
    what to do.  A redfish BIOS step waits for the BMC to show its values
    (``driver_internal_info``, where the credentials read it); ironic 35
    to 39 go on waiting for a BMC that refused them at its reset while it
    reports its boot progress (each poll touches the node, so
    ``service_callback_timeout`` does not end it), and cannot abort the
    step."""
    label = node.get('name') or node['uuid']
    waiting = ((state.get('driver_internal_info') or {}).get(
        'redfish_bios_state') or {}).get('requested_bios_attrs')
    if waiting:
        return ('Node %s is still in "%s": ironic waits for its BMC to '
                'apply %s, and goes on waiting where the BMC refused them '
                'while the BMC reports its boot progress (ironic cannot abort '
                'the step; the BIOS resource\'s @Redfish.Settings.Messages '
                'say why): set them at the BMC, and rerun to finish '
                'the toggle' % (
                    label, state['provision_state'], ', '.join(
                        '%s=%s' % item for item in sorted(waiting.items()))))
    return ('Node %s is still in "%s"; ironic goes on: rerun to finish the '
            'toggle once it ends' % (label, state['provision_state']))
