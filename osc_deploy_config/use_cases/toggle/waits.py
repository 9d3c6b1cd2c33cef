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

"""The waits of a toggle: each ends on the success or the failure of what
it waits for (``toggle_states`` says which), or at the toggle's one
deadline (``--wait-timeout``), with a line that says what still runs.

Polls come soon at first, so that a fast step is seen ending early, and
back off towards one every few seconds.  A rollout's servicings of the
same steps take about as long each: once some were seen ending, the first
polls of the next come when those ended (``Pace``).
"""

import threading
import time

from osc_lib import exceptions

from osc_deploy_config.domain.toggle import toggle_states
from osc_deploy_config.services import ironic as ironic_api

# the first interval of each wait, and the longest, after backing off
FIRST_POLL_SECONDS = 0.25
POLL_SECONDS = 3
# the default bound of a toggle's whole wait
WAIT_SECONDS = 1800
# how long ironic may take to return an aborted node to active
ABORT_SECONDS = 120


# how closely ``Pace`` must know when servicings end for one poll to be
# aimed there; after how many servicings in a row found ended at that poll
# the next is polled first sooner (at that share of the time one was last
# seen under way), then halfway from there, then at the end, to find
# whether they got faster
PACE_CLOSE_SECONDS = 0.2
PACE_PROBE_AFTER = 8
PACE_PROBE_SOONER = 0.8
# how much older than a poll of a rollout's servicing a listing of the
# nodes may be for the poll to take it (``Waits.look``), as a share of the
# time since the poll before (at most POLL_SECONDS): the polls of
# servicings under way at once then share one listing, each about as soon
# as its own read would be
POLL_SHARE = 0.25
# before an aim further away, a poll every so often (or every tenth of the
# aim's time, if longer), so that a servicing that fails early is seen
PACE_COARSE_SECONDS = 10


class Pace:
    """When a rollout's servicings of the same steps on the same kind of
    node (``key``) end: each seen ending ended after the last poll that
    found it under way (``lo``, seconds after its request was answered;
    0 when none did) and by the one that found it ended (``hi``).  What is
    known is where they all ended, narrowed by each that agrees, and
    started again from one that does not (the hardware got slower or
    faster).  The first polls of the next are aimed there: at its end once
    known that closely, else halfway (then at the end), so that each
    servicing narrows it; and after PACE_PROBE_AFTER in a row found ended
    at the aimed poll, once sooner, then halfway from there, then at the
    end, in case they got faster (by a tenth or more: one that ended
    before the aim starts it again).  Only servicings that ended in
    ``active`` are learnt from."""

    def __init__(self):
        self._lock = threading.Lock()
        self._known = {}        # key: [lo, hi, found ended at once]

    def aims(self, key):
        """The seconds after the request at which the first polls come:
        none before a servicing of ``key`` was seen ending."""
        with self._lock:
            known = self._known.get(key)
            if known is None:
                return []
            lo, hi, at_once = known
            if at_once >= PACE_PROBE_AFTER:
                known[2] = 0
                sooner = PACE_PROBE_SOONER * lo
                return [sooner, (sooner + hi) / 2, hi]
        if hi - lo <= PACE_CLOSE_SECONDS:
            return [hi]
        return [(lo + hi) / 2, hi]

    def ended(self, key, lo, hi):
        with self._lock:
            known = self._known.get(key)
            if known is None or not (lo < known[1] and hi > known[0]):
                self._known[key] = [lo, hi, 0]
                return
            # found ended at the aim: no poll saw it under way past it
            at_once = lo <= known[0]
            known[0], known[1] = max(lo, known[0]), min(hi, known[1])
            known[2] = known[2] + 1 if at_once else 0


def coarse(aims):
    """``aims``, after a poll every PACE_COARSE_SECONDS (or a tenth of the
    first aim) until shortly before the first."""
    if not aims:
        return aims
    every = max(PACE_COARSE_SECONDS, aims[0] / 10)
    last = aims[0] - max(POLL_SECONDS, every / 2)
    polls = []
    while (len(polls) + 1) * every <= last:
        polls.append((len(polls) + 1) * every)
    return polls + list(aims)


class TimedOut(exceptions.CommandError):
    """A wait reached the toggle's deadline; what it waited for goes on."""


PAST_DEADLINE = '--wait-timeout reached'


class PastDeadline(exceptions.CommandError):
    """A rollout's deadline passed before the toggle changed anything."""


class Left(TimedOut):
    """The rollout is leaving (its grace ran out, a second Ctrl-C, an
    error): the wait ends; what it waited for goes on."""


class Waiter:
    """Polls until a wait ends, every wait of one toggle by one deadline
    (``seconds`` from the first poll: the whole wait; never past
    ``until``, a deadline on ``clock`` shared by a rollout's toggles);
    says each new state once (``say``: a line at a time).  ``leaving``: a
    threading.Event a rollout sets when it leaves: every wait then ends at
    its next interval, the abort's included (its node is held next)."""

    def __init__(self, say, sleep=None, seconds=WAIT_SECONDS,
                 clock=time.monotonic, until=None, leaving=None):
        self.say = say
        self.leaving = leaving
        self.sleep = sleep or time.sleep
        self.seconds = seconds
        self.clock = clock
        self.until = until
        self.deadline = None
        self.began = None
        self._last = None
        self._interval = FIRST_POLL_SECONDS

    def begin(self):
        """A wait begins: its first polls come soon."""
        self._interval = FIRST_POLL_SECONDS
        if self.deadline is None:
            self.began = self.clock()
            self.deadline = self.began + self.seconds
            if self.until is not None:
                self.deadline = min(self.deadline, self.until)

    def progress(self, text):
        if text != self._last:
            self._last = text
            self.say('  ' + text)

    def past_until(self):
        """Whether the rollout's deadline has passed."""
        return self.until is not None and self.clock() > self.until

    def expired(self):
        return self.deadline is not None and self.clock() >= self.deadline

    def left(self):
        """Whether the rollout this wait is part of is leaving."""
        return self.leaving is not None and self.leaving.is_set()

    def poll(self, still, at=None):
        """One interval (or until ``at``, on ``clock``: the interval is
        then left as it was), or TimedOut with the line of what ``still``
        runs (it goes on: ``still`` says how to finish it); Left once the
        rollout leaves."""
        if self.left():
            raise Left('%s (the rollout left)' % still)
        if self.expired():
            raise TimedOut('%s after %ds of waiting (--wait-timeout)' % (
                still, round(self.clock() - self.began)))
        self.pause(at)

    def pause(self, at=None):
        """One interval, whatever the deadline (a wait with a bound of its
        own); or until ``at`` on ``clock``, but no later than the
        deadline, and sleeping no longer than POLL_SECONDS at a time: a
        rollout that leaves ends it then."""
        if at is None:
            self.sleep(self._interval)
            self._interval = min(2 * self._interval, POLL_SECONDS)
            return
        if self.deadline is not None:
            at = min(at, self.deadline)
        while not self.left():
            left = at - self.clock()
            if left <= 0:
                return
            self.sleep(min(left, POLL_SECONDS))


class Waits:
    """What a toggle waits for, over nova and (bare metal) ironic."""

    def __init__(self, waiter, nova, ironic=None):
        self.waiter = waiter
        self.nova = nova
        self.ironic = ironic
        # a rollout's: when its servicings end (Pace); a read of the node
        # from a listing of the nodes (``look(uuid, since)``: the node, or
        # None): for the polls aimed at the end, one that serves its
        # budget too, and for the others, one the polls of its other
        # servicings share (begun since ``since``), told while the toggle
        # polls a servicing (``polling(bool)``); what it is told once the
        # server is up again (``on_up``: ``up``); and the wait of a toggle
        # prepared ahead for its place (``place()``: ``placed``)
        self.pace = None
        self.look = None
        self.polling = None
        self.on_up = None
        self.place = None
        # and what it is told when the toggle waits on nova's or
        # ironic's own work (``on_waiting``: ``begin``)
        self.on_waiting = None
        # whether the last read of the node was the look's (which reads
        # less of it)
        self.looked = False

    def up(self):
        """The server is up again, its change made and recorded (its node
        active after its servicing, read back; its unlock follows): a
        rollout frees its place in the budget."""
        if self.on_up is not None:
            self.on_up()

    def begin(self):
        """A wait on nova's or ironic's own work begins (the toggle's
        change asked for): a rollout prepares its next toggles
        meanwhile."""
        self.waiter.begin()
        if self.on_waiting is not None:
            self.on_waiting()

    def placed(self):
        """A rollout's toggle prepared ahead: once it has its place in the
        budget, its Reading on the server and node as read then; None for
        any other."""
        return None if self.place is None else self.place()

    def resize(self, server):
        """Until nova's resize of the server has ended: the server then
        (VERIFY_RESIZE, back on its flavor, or ERROR)."""
        self.begin()
        while True:
            found = self.nova.find_server(server['id'])
            if toggle_states.resize_settled(found):
                return found
            self.waiter.progress('%s (%s)' % (
                found['status'], found['OS-EXT-STS:task_state']))
            self.waiter.poll(
                'The resize of server %s is still under way (%s); nova goes '
                'on: rerun to finish the toggle' % (
                    server['name'], found['OS-EXT-STS:task_state']))

    def confirmation(self, server, request_id):
        """Until nova has confirmed the resize (the server then), or one
        line when the confirmation failed: nova answers it before it runs,
        and a failed one leaves the server in VERIFY_RESIZE for good."""
        self.begin()
        while True:
            found = self.nova.find_server(server['id'])
            task = found.get('OS-EXT-STS:task_state')
            if found['status'] != 'VERIFY_RESIZE' and not task:
                return found
            if not task:
                failure = toggle_states.failed_event(
                    self.nova.instance_action(server['id'], request_id))
                if failure:
                    raise exceptions.CommandError(
                        toggle_states.stuck_confirmation(found, failure))
            self.waiter.progress('%s (%s)' % (found['status'],
                                              task or 'confirming'))
            self.waiter.poll(
                'The confirmation of server %s\'s resize is still under way; '
                'nova goes on: rerun to finish the toggle' % server['name'])

    def servicing(self, node, requested=True, fields=ironic_api.POLL_FIELDS,
                  pace=None):
        """Until ironic's servicing of the node has settled: the node then
        (``toggle_states.servicing_failure`` tells how it ended).  Ironic
        answers a service request before it starts: after one
        (``requested``), the first read comes after the first interval,
        or when the servicings of the same steps (``pace``: a key, with
        ``self.pace``) ended.  ``fields``: what each poll reads (the
        operator's, with what a BIOS step waits for)."""
        if self.polling is not None:
            self.polling(True)
        try:
            return self.serviced(node, requested, fields, pace)
        finally:
            if self.polling is not None:
                self.polling(False)

    def serviced(self, node, requested, fields, pace):
        """``servicing``, but for the rollout's count of the servicings
        polled."""
        self.begin()
        began = self.waiter.clock()
        learn = requested and self.pace is not None and pace is not None
        aims = coarse(self.pace.aims(pace)) if learn else []
        aims = [began + a for a in aims]
        # the poll at the last aim, where it should have ended, is the one
        # whose read may serve the budget too
        at_last = len(aims) == 1
        if requested:
            self.waiter.pause(aims.pop(0) if aims else None)
        under_way, last = 0.0, began
        while True:
            asked = self.waiter.clock()
            since = max(began, asked - POLL_SHARE * min(asked - last,
                                                        POLL_SECONDS))
            state = self.read_node(node, fields, at_last, since)
            last = asked
            if toggle_states.node_settled(state):
                if learn and state['provision_state'] == 'active':
                    self.pace.ended(pace, under_way,
                                    self.waiter.clock() - began)
                return state
            # seen under way when its read began: a shared listing's, at
            # ``since`` or after
            under_way = (since if self.looked and not at_last
                         else asked) - began
            self.waiter.progress('node %s %s' % (
                node.get('name') or node['uuid'], state['provision_state']))
            if self.looked and (self.waiter.expired() or self.waiter.left()):
                state = self.read_node(node, fields)    # all it waits for
                if toggle_states.node_settled(state):
                    return state
            at_last = len(aims) == 1
            self.waiter.poll(toggle_states.still_servicing(node, state),
                             aims.pop(0) if aims else None)

    def read_node(self, node, fields, at_end=False, since=None):
        """The node as a poll reads it: through the rollout's ``look``
        where it reads it, for a poll aimed at the end (``at_end``), or
        from a listing begun since ``since``."""
        self.looked = False
        if (at_end or since is not None) and self.look is not None:
            found = self.look(node['uuid'], None if at_end else since)
            if found is not None:
                self.looked = True
                return found
        return self.ironic.node(node['uuid'], fields)

    def abort(self, node):
        """Until ironic has taken an aborted servicing's node out of
        "service failed", for at most ABORT_SECONDS whatever the toggle's
        deadline (the node's hold waits on it): the node then."""
        deadline = self.waiter.clock() + ABORT_SECONDS
        self.waiter.begin()
        while True:
            state = self.ironic.node(node['uuid'], ironic_api.POLL_FIELDS + (
                'reservation',))
            # ironic shows active at once, and its worker then holds the
            # node (its reservation, where ironic shows it to these
            # credentials) while it tears the servicing down
            if (state['provision_state'] != 'service failed'
                    and toggle_states.node_settled(state)
                    and not toggle_states.unredacted(
                        state.get('reservation'))) or (
                    self.waiter.clock() > deadline) or self.waiter.left():
                return state
            self.waiter.pause()

    def rebuild(self, server):
        """Until nova has rebuilt the server: ACTIVE, or SHUTOFF for a
        server that was stopped (nova keeps it so); one line for ERROR."""
        self.waiter.begin()
        while True:
            found = self.nova.find_server(server['id'])
            task = found.get('OS-EXT-STS:task_state')
            if found['status'] == 'ERROR':
                raise exceptions.CommandError(
                    'Rebuilding server %s failed: %s' % (
                        server['name'], (found.get('fault') or {}).get(
                            'message') or 'ERROR'))
            if found['status'] in ('ACTIVE', 'SHUTOFF') and not task:
                return found
            self.waiter.progress('%s (%s)' % (found['status'], task))
            self.waiter.poll('The rebuild of server %s is still under way '
                             '(%s)' % (server['name'], task))
