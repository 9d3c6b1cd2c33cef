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

"""A rollout's toggles under way: each starts when the budget
(``budget``), read from the cloud then, has a place for it, and runs in a
worker (``worker``) that reports a Result whatever happens; while every
place is held, the next ones are prepared ahead (``ahead``).  Servers that
spend the budget are waited for only while something moves them back."""

import queue
import threading
import time

from osc_deploy_config.domain.fleet import fleet_plan
from osc_deploy_config.services import rest
from osc_deploy_config.use_cases.fleet import ahead
from osc_deploy_config.use_cases.fleet import budget as budgets
from osc_deploy_config.use_cases.fleet import polls
from osc_deploy_config.use_cases.fleet import signals
from osc_deploy_config.use_cases.fleet import worker
from osc_deploy_config.use_cases.toggle import outcomes
from osc_deploy_config.use_cases.toggle import waits

# How often the cloud is read again while servers that spend the budget
# are waited for (or the read failed).
WATCH_SECONDS = 5
# How long past --wait-timeout the toggles in flight have to end (their
# waits end at it; a record and an unlock follow, or a failed servicing's
# recovery, whose abort has a bound of its own and which holds the node in
# maintenance again) before the rollout leaves without them: a request a
# service never answers.
GRACE_SECONDS = waits.ABORT_SECONDS + 60
# How long a rollout that leaves waits for the workers it told to stop (a
# wait ends at its next interval; a recovery holds its node, a toggle
# unlocks its server): within the grace, which the drive leaves that much
# before its end.
JOIN_SECONDS = 15


class Drive:
    """The toggles of a rollout under way: each starts when the budget,
    read from the cloud then, has a place for it."""

    def __init__(self, rollout, todo, names):
        self.rollout = rollout
        self.waiting = list(todo)
        self.running = {}
        self.threads = {}           # the workers, those prepared ahead too
        self.gates = ahead.Gates(rollout.leaving, rollout.fleet.reading)
        self.budget = budgets.Budget(rollout.max_unavailable,
                                     rollout.fleet.look, rollout.clock)
        self.names = names
        self.done = worker.Reports()
        self.why_not = ''
        self.left = ''              # why the rollout left toggles in flight
        self.unread = ''            # why the last read of the cloud failed
        # a place freed since the last read (that read no longer serves),
        # or by a server the last read found up again (it serves)
        self.stale = True
        self.fresh = False
        self.retry_at = float('-inf')   # after a read that failed
        self.polls = polls.Polls(
            self.budget, rollout.fleet, rollout.clock,
            lambda: bool(self.waiting) and not rollout.stopping(),
            rollout.deadline)
        self.blocked_since = None
        self.started = 0

    def go(self):
        """Until every toggle that may start has started and ended, or
        past --wait-timeout by GRACE_SECONDS."""
        try:
            while self.waiting or self.running:
                if self.rollout.stopping():
                    self.gates.close(stopped_by(self))
                elif self.waiting:
                    self.start_what_fits()
                    if self.budget.full():  # the next, ahead of a place
                        self.gates.prepare(
                            self.waiting, self.running, self.budget.limit,
                            self.budget.seen, self.run)
                if not self.running and not self.worth_waiting():
                    break
                if self.past_grace():
                    break
                self.collect()
        finally:    # the gates still shut close as the rollout leaves
            self.why_not = stopped_by(self)

    def start_what_fits(self):
        """Start the waiting toggles the budget has places for, read from
        the cloud now (when a toggle ended since the last read, or every
        WATCH_SECONDS), or as read when a toggle's server was found up
        again (with its poll's listing, ``polls``); a read that fails
        starts nothing, and is tried again in WATCH_SECONDS."""
        now = self.rollout.clock()
        if self.budget.full():
            return
        if self.stale or self.budget.read_at is None or (
                now - self.budget.read_at >= WATCH_SECONDS):
            self.fresh = False
            if now < self.retry_at or not self.read_budget(now):
                return
            self.stale = False
        elif not self.fresh:
            return
        self.fresh = False
        seen = self.budget.seen
        self.rollout.count.down = len(self.budget.down(seen))
        for one in list(self.waiting):
            if self.rollout.stopping():
                return
            if self.budget.acquire(one.server['id'], seen):
                self.start(one, seen.get(one.server['id']) or (
                    one.server, one.prepared.reading.node))

    def read_budget(self, now):
        """Read the cloud for the budget: whether it could be."""
        try:
            with rest.bounded(self.rollout.deadline):
                self.budget.read()
        except Exception as exc:    # noqa: BLE001 - said, tried again
            self.retry_at = now + WATCH_SECONDS
            if not self.unread:
                self.rollout.say('The cloud could not be read for the '
                                 'budget (%s): nothing starts until it can.'
                                 % outcomes.one_line(exc))
            self.unread = outcomes.one_line(exc)
            return False
        self.unread = ''
        return True

    def up(self, server_id):
        """A toggle's server is up again (in its worker): its place is the
        cloud's to say, as the poll that found it up read it (``polls``)."""
        self.polls.read_budget(server_id)
        with self.rollout.lock:     # done, but its unlock
            self.rollout.count.up(server_id)
        self.done.put(worker.Up(server_id))

    def start(self, one, fresh):
        """The toggle has a place: its gate opens (``fresh``: its server
        and node as read then), or it starts."""
        rollout = self.rollout
        with signals.shielded(rollout):     # in flight once, and started
            self.running[one.server['id']] = one
            self.waiting.remove(one)
            with rollout.lock:
                rollout.count.in_flight += 1
            self.started += 1
            self.blocked_since = None
            if not self.gates.open(one.server['id'], fresh):
                self.run(one, fresh)
        rollout.said(one.server['name'], 'started: %s' % one.outcome.detail)

    def run(self, one, fresh):
        """The toggle's worker, started (what an earlier one reported, on
        an older read, no longer stands)."""
        self.done.reported.pop(one.server['id'], None)
        # a daemon (its requests time out): one left cannot keep the process
        thread = threading.Thread(target=worker.work, args=(
            self.rollout.toggle_one, one, fresh, self.done), daemon=True,
            name='toggle %s' % one.server['name'])
        self.threads[one.server['id']] = thread
        thread.start()

    def collect(self):
        """The next Result, if one comes within a second; with nothing
        running, a second's wait.  A Ctrl-C taken meanwhile is said."""
        self.rollout.say_interrupted(len(self.running))
        if not self.threads:
            time.sleep(1)
            return
        try:
            result = self.done.get(timeout=1)
            while True:     # and those that came with it: one read serves
                self.ended(result)
                result = self.done.get_nowait()
        except queue.Empty:
            return

    def ended(self, result):
        """A toggle's Result, or its server up again (worker.Up)."""
        with signals.shielded(self.rollout):   # its row, whole
            found_up = self.polls.found_up(result.server_id)
            if result.server_id in self.budget.running:
                self.budget.release(result.server_id)
                if found_up:
                    self.fresh = True
                else:
                    self.stale = True
            if isinstance(result, worker.Up):
                return
            self.threads.pop(result.server_id, None)
            self.gates.ended(result.server_id)
            one = self.running.pop(result.server_id, None)
            placed = one is not None
            if not placed:      # prepared ahead, ended before its place
                if result.outcome == fleet_plan.UNAVAILABLE:
                    return  # on an older read: it waits, judged at its place
                one = next(o for o in self.waiting
                           if o.server['id'] == result.server_id)
                self.waiting.remove(one)
            self.rollout.ended(one, result, placed)

    def worth_waiting(self):
        """With nothing running: whether a server still waiting may yet
        start (a server that spends the budget is under way back, or the
        cloud could not be read), within the command's bound."""
        if not self.waiting or self.rollout.stopping():
            return False
        now = self.rollout.clock()
        if self.blocked_since is None:
            self.blocked_since = now
        return (self.unread or self.budget.moving()) and (
            now - self.blocked_since < self.rollout.wait_seconds)

    def past_grace(self):
        """Whether the toggles in flight had their time past the deadline
        (the grace, but the time to join them): the rollout leaves them
        (rows said so)."""
        end = self.rollout.end
        if end is None or self.rollout.clock() <= end - JOIN_SECONDS:
            return False
        self.left = ('in flight %d s past --wait-timeout (a request a '
                     'service does not answer?): rerun to finish it'
                     % (GRACE_SECONDS - JOIN_SECONDS))
        return True


def join(drive, seconds):
    """The Results of the drive's toggles in flight (told to stop), for up to
    ``seconds``: those still running then are left."""
    until = time.monotonic() + seconds
    while drive.threads:
        left = until - time.monotonic()
        if left <= 0:
            return
        try:
            result = drive.done.get(timeout=min(1, left))
        except queue.Empty:
            if not any(t.is_alive() for t in drive.threads.values()):
                return      # each reported (``Reports``)
            continue
        drive.ended(result)


def drain(drive):
    """Take in the Results the workers put that the drive has not."""
    while True:
        try:
            drive.ended(drive.done.get_nowait())
        except queue.Empty:
            return


def stopped_by(drive):
    """Why the drive's servers still waiting did not start."""
    if not drive.waiting:
        return ''
    why = drive.rollout.stopping()
    if why:
        return why
    if drive.unread:
        return 'the cloud could not be read: %s' % drive.unread
    spent = drive.budget.spent_by(drive.names) or 'toggles in flight'
    if not drive.started:
        drive.rollout.spent_by = spent
    return '--max-unavailable %d spent by %s%s' % (
        drive.rollout.max_unavailable, spent, '' if drive.budget.moving()
        else ', which nothing under way brings back')
