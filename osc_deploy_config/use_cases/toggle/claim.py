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

"""A toggle's hold on its server: nova's lock, with a reason that names
the toggle and the process holding it (``toggle_states``).

Nova's lock is no compare-and-swap: two admins may both lock one server.
So a toggle locks, then reads the server's instance actions: nova records
each lock in order, and the toggle whose lock is the oldest since the last
unlock holds the server; another gives up in one line, leaving the lock to
the holder.  A lock of ours whose process is gone (a toggle killed on this
host) is taken over: unlocked and locked again, so that the order decides
once more.  The holder unlocks when it ends, however it ends.
"""

import os
import socket

from osc_deploy_config.domain.toggle import toggle_states
from osc_deploy_config.use_cases.toggle import outcomes


def alive(holder):
    """Whether the process a lock names may still run: on another host,
    it may."""
    host, pid = holder
    if host != socket.gethostname() or pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def me():
    return socket.gethostname(), os.getpid()


class Claim:
    """The lock a toggle of ``configs`` holds on ``server``, from
    ``take()`` to ``release()``.  ``server``: as read when the toggle was
    planned, maybe minutes ago: what changes anything is decided on a
    fresh read."""

    def __init__(self, nova, server, configs, say):
        self.nova = nova
        self.server = server
        self.reason = toggle_states.lock_reason(configs, *me())
        self.say = say
        self.held = False
        # whether it took over the lock of an interrupted toggle
        self.took_over = False
        # the request ID of our lock, sent but not yet known to hold
        self.undecided = None

    def refuse_held(self):
        """Refuse (Unavailable) a server that someone else holds: a lock not
        ours, or one of ours whose process runs."""
        toggle_states.refuse_foreign_lock(self.server)
        holder = toggle_states.lock_holder(self.server)
        if holder is not None and holder != me() and alive(holder):
            raise toggle_states.refuse_live_toggle(self.server, holder)

    def interrupted(self):
        """Whether the server, as read, holds the lock of an interrupted
        toggle of ours (its process gone)."""
        holder = toggle_states.lock_holder(self.server)
        return holder is not None and (holder == me() or not alive(holder))

    def take(self):
        """Lock the server; Unavailable when another toggle locked it
        first (its lock left to it).  A lock an interrupted toggle left is
        taken over only if the server, read again now, still has it."""
        server_id = self.server['id']
        if self.interrupted():
            self.server = self.nova.find_server(server_id)
            self.refuse_held()
            if self.interrupted():
                self.say('  taking over the lock of an interrupted toggle')
                self.nova.unlock(server_id)
                self.took_over = True
        self.undecided = self.nova.lock(server_id, self.reason)
        try:
            self.decide()
        except BaseException:
            self.release()
            raise

    def decide(self):
        """Hold the server if our lock is the oldest since the last unlock;
        otherwise leave the lock to its holder (Unavailable)."""
        server_id = self.server['id']
        first = toggle_states.first_unmatched_lock(
            self.nova.instance_actions(server_id))
        if first != self.undecided:
            self.undecided = None
            holder = self.nova.find_server(server_id)
            self.leave_holder_unnamed(holder)
            raise toggle_states.refuse_live_toggle(
                holder, toggle_states.lock_holder(holder) or ('', 0))
        self.undecided = None
        self.held = True

    def leave_holder_unnamed(self, server):
        """An admin's lock replaces the reason: the one this toggle wrote
        over the holder's names no running process, so it says none."""
        if server.get('locked_reason') == self.reason:
            self.nova.lock(server['id'], toggle_states.lock_reason_unnamed())

    def clear_interrupted(self):
        """Unlock a server an interrupted toggle left locked, with nothing
        left to do: only if, read again now, it still holds that lock."""
        if not self.interrupted():
            return
        self.server = self.nova.find_server(self.server['id'])
        if self.interrupted():
            self.say('  unlocking server %s, which an interrupted toggle '
                     'left locked' % self.server['name'])
            self.nova.unlock(self.server['id'])

    def release(self):
        """Unlock what this toggle holds; a lock sent but not known to hold
        (a failure, Ctrl-C, between the lock and its check) is unlocked if
        it is the holder's, and left otherwise."""
        if self.undecided:
            request_id, self.undecided = self.undecided, None
            try:
                first = toggle_states.first_unmatched_lock(
                    self.nova.instance_actions(self.server['id']))
            except Exception:   # noqa: BLE001 - the lock names this process
                self.say('  server %s stays locked: whether by this toggle '
                         'could not be read; a rerun once this command has '
                         'ended takes the lock over' % self.server['name'])
                return
            self.held = first == request_id
        if self.held:
            self.held = False
            self.nova.unlock(self.server['id'])

    def let_go(self):
        """``release``, whatever happens: whether the server is unlocked.
        An unlock that fails is said, and hides neither the toggle's
        outcome nor its error."""
        try:
            self.release()
        except Exception as exc:    # noqa: BLE001 - said, not fatal
            self.say('  server %s stays locked: unlocking it failed (%s); '
                     'a rerun, once this command has ended, takes the lock '
                     'over, or: openstack server unlock %s' % (
                         self.server['name'], outcomes.one_line(exc),
                         self.server['id']))
            return False
        return True
