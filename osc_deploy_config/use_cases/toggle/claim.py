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
the toggle and the process holding it (``toggle_states.Holder``: host,
PID, PID namespace, boot, and a nonce of the lock's own).

Nova's lock is no compare-and-swap: two admins may both lock one server.
So a toggle locks, then reads the server's instance actions: nova records
each lock in order, and the toggle whose lock is the oldest since the last
unlock holds the server; another gives up in one line, leaving the lock to
the holder.  A lock of ours whose process is gone (a toggle killed on this
host, in this PID namespace, or in a boot of this machine before this one,
which the machine recorded: a machine cloned from its image shares its
host name and machine ID, but not its later boots) is taken over without
an unlock: the takeover locks over it, and the oldest lock after the
takeover began holds the server, so that of two processes that find one
dead lock exactly one goes on, and the other leaves the lock to it.
Nova records a lock over a lock only from another project: the server's
own project (its admin, a project's toggle) can lock it only while it is
unlocked.  There each takeover unlocks first, and the first unlock after
the takeovers began decides: the others lock it again for the holder, and
give up.  The holder unlocks when it ends, however it ends; a lock whose
request got no answer is found by its nonce, or said to be left.
"""

import os
import secrets
import socket

from osc_lib import exceptions

from osc_deploy_config.domain.toggle import toggle_states
from osc_deploy_config.use_cases.toggle import outcomes


def _read(path):
    try:
        with open(path) as found:
            return found.read().strip()
    except OSError:
        return ''


def _namespace():
    """This process's PID namespace (its inode), or ''."""
    try:
        return str(os.stat('/proc/self/ns/pid').st_ino)
    except OSError:
        return ''


def _boot():
    """This machine and its boot: the first parts of its machine ID and
    of its boot ID (``MACHINE.BOOT``), or '' where either is not known.
    Two machines of one host name differ in the first, unless cloned from
    one image; a reboot of this one, in the second only."""
    machine_id = _read('/etc/machine-id')
    machine = '' if machine_id == 'uninitialized' else machine_id[:8]
    boot = _read('/proc/sys/kernel/random/boot_id').split('-')[0]
    return '%s.%s' % (machine, boot) if machine and boot else ''


def boots_path():
    """The file of this machine's boots in which a toggle ran, under the
    user's state directory (``$XDG_STATE_HOME``, or ``~/.local/state``)."""
    state = os.environ.get('XDG_STATE_HOME') or ''
    if not os.path.isabs(state):    # as the XDG spec says: ignored
        state = os.path.join(os.path.expanduser('~'), '.local', 'state')
    return os.path.join(state, 'osc-deploy-config', 'boots')


def past_boots():
    """The boots (``MACHINE.BOOT``) recorded on this machine."""
    return frozenset(_read(boots_path()).split())


def record_boot():
    """Record this boot, before a lock names it, among this machine's:
    once it rebooted, a lock of this boot is proven dead.  Nothing where
    it cannot be written (such a lock is then cleared by hand)."""
    boot = _boot()
    if not boot or boot in past_boots():
        return
    try:
        os.makedirs(os.path.dirname(boots_path()), exist_ok=True)
        with open(boots_path(), 'a') as record:
            record.write(boot + '\n')
    except OSError:
        pass


def me(nonce=''):
    """The Holder this process writes in its locks' reasons."""
    return toggle_states.Holder(socket.gethostname(), os.getpid(),
                                _namespace(), _boot(), nonce)


def new_holder():
    """The Holder of a lock about to be taken: a nonce of its own, its
    boot recorded first."""
    record_boot()
    return me(secrets.token_hex(6))


def alive(holder):
    """Whether the process a lock names may still run.  It is dead only
    where that can be proven: a boot before this one that this machine
    recorded (``record_boot``), or this boot, this PID namespace and no
    such process.  Another machine of the same host name (even one cloned
    from this one's image, machine ID and all, whose boots this machine
    never recorded), another container, or a holder whose machine and
    boot are not known (an older release's lock, a system without
    ``/proc``) may still run: its lock is cleared by hand."""
    mine = me()
    if (holder.host != mine.host[:64] or holder.pid <= 0
            or not holder.boot or not mine.boot):
        return True
    machine, _, boot = holder.boot.partition('.')
    if machine != mine.boot.partition('.')[0]:
        return True
    if boot != mine.boot.partition('.')[2]:
        return holder.boot not in past_boots()
    if holder.ns != mine.ns:
        return True
    try:
        os.kill(holder.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def own_lock(nova, server, reason):
    """The request ID of our lock (``reason``: its nonce is ours alone),
    when a lock request got no answer but the server's reason is ours:
    then ours is the newest lock.  None when that cannot be read or
    told."""
    try:
        actions = nova.instance_actions(server['id'])
        found = nova.find_server(server['id'])
    except Exception:   # noqa: BLE001 - then not known
        return None
    if found.get('locked_reason') != reason:
        return None
    return next((a['request_id'] for a in actions
                 if a['action'] == 'lock'), None)


class Claim:
    """The lock a toggle of ``configs`` holds on ``server``, from
    ``take()`` to ``release()``.  ``server``: as read when the toggle was
    planned, maybe minutes ago: what changes anything is decided on a
    fresh read."""

    def __init__(self, nova, server, configs, say):
        self.nova = nova
        self.server = server
        self.holder = new_holder()
        self.reason = toggle_states.lock_reason(configs, self.holder)
        self.say = say
        self.held = False
        # whether it took over the lock of an interrupted toggle
        self.took_over = False
        # the request ID of our lock, sent but not yet known to hold
        self.undecided = None
        # the newest instance action when a takeover began: the locks
        # (the owners' unlocks) after it decide who holds the server
        self.anchor = None
        # a lock request whose answer was lost: ours may hold the server
        self.unknown = False
        # whether the server stays locked after release (an unlock failed)
        self.left_locked = False
        # a takeover kept for the rerun: the interrupted toggle's server
        # may be mid-change, and no new write starts past the deadline
        self.kept = False

    def refuse_held(self):
        """Refuse (Unavailable) a server that someone else holds: a lock not
        ours, or one of ours whose process runs."""
        toggle_states.refuse_foreign_lock(self.server)
        holder = toggle_states.lock_holder(self.server)
        if holder is not None and holder != self.holder and alive(holder):
            raise toggle_states.refuse_live_toggle(self.server, holder)

    def interrupted(self):
        """Whether the server, as read, holds the lock of an interrupted
        toggle of ours (its process gone)."""
        holder = toggle_states.lock_holder(self.server)
        return holder is not None and holder != self.holder and (
            not alive(holder))

    def take(self, takeover_only=False):
        """Lock the server; Unavailable when another toggle locked it
        first (its lock left to it).  A lock an interrupted toggle left is
        taken over only if the server, read again now, still has it: this
        toggle locks over it, and holds the server if its lock is the
        first after the dead one.  ``takeover_only``: lock nothing but
        such a lock (whether it did)."""
        server_id = self.server['id']
        if takeover_only and not self.interrupted():
            return False
        if self.interrupted():
            # the actions first: a lock that comes after this read and
            # before the server's is the server's reason, and alive
            actions = self.nova.instance_actions(server_id)
            self.server = self.nova.find_server(server_id)
            self.refuse_held()
            if self.interrupted():
                self.anchor = toggle_states.newest_action(actions)
                self.say('  taking over the lock of an interrupted toggle')
                self.took_over = True
            elif takeover_only:
                return False
        try:
            self.undecided = self.nova.lock(server_id, self.reason)
        except KeyboardInterrupt:
            # the lock may have been sent: released, or said to be left
            self.unknown = True
            raise
        except Exception:
            self.undecided = own_lock(self.nova, self.server, self.reason)
            if self.undecided is None:
                self.unknown = True
                raise
        try:
            actions = self.nova.instance_actions(server_id)
            if self.took_over and self.undecided not in (
                    a['request_id'] for a in actions):
                # nova ignored the lock: the server's own project's
                self.take_over_as_owner()
            else:
                self.decide(actions)
        except BaseException:
            self.release()
            raise
        return True

    def decide(self, actions):
        """Hold the server if our lock is the oldest since the last unlock
        (and since the takeover began); otherwise leave the lock to its
        holder (Unavailable)."""
        server_id = self.server['id']
        first = toggle_states.first_unmatched_lock(actions, after=self.anchor)
        if first != self.undecided:
            self.undecided = None
            holder = self.nova.find_server(server_id)
            self.leave_holder_unnamed(holder)
            raise toggle_states.refuse_live_toggle(
                holder, toggle_states.lock_holder(holder) or (
                    toggle_states.NOBODY))
        self.undecided = None
        self.held = True

    def take_over_as_owner(self):
        """The takeover of a dead lock by the server's own project, which
        nova lets lock the server only while it is unlocked: unlock it,
        and go on if ours is the first unlock since the takeovers began;
        otherwise lock it again for the one that goes on (ours may have
        undone its lock), and give up.  A toggle that locked it in
        between (it found it unlocked) holds it."""
        server_id = self.server['id']
        self.undecided = None
        unlocked = self.nova.unlock(server_id)
        if toggle_states.first_unlock(self.nova.instance_actions(server_id),
                                      self.anchor) != unlocked:
            self.nova.lock(server_id, toggle_states.lock_reason_unnamed())
            raise toggle_states.refuse_live_toggle(self.server,
                                                   toggle_states.NOBODY)
        self.held = True
        self.nova.lock(server_id, self.reason)
        found = self.nova.find_server(server_id)
        holder = toggle_states.lock_holder(found)
        if found.get('locked') and holder not in (self.holder,
                                                  toggle_states.NOBODY):
            self.held = False
            raise toggle_states.refuse_live_toggle(found, holder)

    def leave_holder_unnamed(self, server):
        """An admin's lock replaces the reason: the one this toggle wrote
        over the holder's names no running process, so it says none."""
        if server.get('locked_reason') == self.reason:
            self.nova.lock(server['id'], toggle_states.lock_reason_unnamed())

    def clear_interrupted(self):
        """Unlock a server an interrupted toggle left locked, with nothing
        left to do: taken over as any takeover (only if, read again now, it
        still holds that lock; of two processes that clear it, one does),
        then released."""
        try:
            if not self.take(takeover_only=True):
                return
        except toggle_states.Unavailable:
            return      # someone else holds it now: theirs to unlock
        self.say('  unlocking server %s, which an interrupted toggle left '
                 'locked' % self.server['name'])
        if not self.let_go():
            raise exceptions.CommandError(self.left_locked_line())

    def release(self):
        """Unlock what this toggle holds; a lock sent but not known to hold
        (a failure, Ctrl-C, between the lock and its check) is unlocked if
        it is the holder's, and left otherwise."""
        if self.unknown:
            self.unknown = False
            self.left_locked = True
            self.say('  server %s may stay locked by this toggle: its lock '
                     'request got no answer. Once no toggle runs on it: '
                     'openstack server unlock %s' % (self.server['name'],
                                                      self.server['id']))
            return
        if self.undecided:
            request_id, self.undecided = self.undecided, None
            try:
                first = toggle_states.first_unmatched_lock(
                    self.nova.instance_actions(self.server['id']),
                    after=self.anchor)
            except Exception:   # noqa: BLE001 - the lock names this process
                self.left_locked = True
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
            self.left_locked = True
            self.say('  server %s stays locked: unlocking it failed (%s); '
                     'a rerun, once this command has ended, takes the lock '
                     'over, or: openstack server unlock %s' % (
                         self.server['name'], outcomes.one_line(exc),
                         self.server['id']))
            return False
        return not self.left_locked

    def left_locked_line(self):
        """The one line of a server this toggle left locked."""
        return ('Server %s stays locked: unlocking it failed. Once no toggle '
                'runs on it: openstack server unlock %s' % (
                    self.server['name'], self.server['id']))


def still_held(claim, server):
    """After a wait for a rollout's place: the server as read then
    (``server``), or read again now where that read does not show the
    claim's lock (it may be older); Unavailable, and the lock left to its
    holder, where another replaced it."""
    if server.get('locked_reason') != claim.reason:
        server = claim.nova.find_server(server['id'])
    if server.get('locked') and server['locked_reason'] == claim.reason:
        return server
    claim.held = False
    toggle_states.refuse_foreign_lock(server)
    raise toggle_states.refuse_live_toggle(
        server, toggle_states.lock_holder(server) or toggle_states.NOBODY)
