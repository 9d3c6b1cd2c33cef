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

"""A rollout: plan every server, then toggle them within an availability
budget, and report every server's outcome.

Every selected server is planned first, through the one-server toggle's
own checks (``toggle.ServerToggle.prepare``), over what ``reading`` read
for all, and nothing changes until all are: a server whose host cannot take
the configs is *skipped*, one already there is *unchanged*, one that is down
(not ACTIVE, its node in maintenance, servicing or failed, busy with
another change or held by someone else) is *unavailable*, and any other
error is a *failure*.  Planning makes no change and waits for nothing.

Then each toggle starts when the budget (``budget``) has a place for it,
read from the cloud as it is then; the toggle is prepared again on that
fresh reading, and runs in a worker (``worker``) that reports a Result
whatever happens.  An interrupted toggle of ours (a killed rollout's)
starts first.  After more than ``--max-failures`` failures, planning's
included, no new server starts; ``--wait-timeout`` bounds the whole
command: past it nothing starts, no write starts (a takeover's included),
and every wait in flight ends; the rollout's own reads (planning, the
budget) end at it, and the toggles in flight and the read-back within
``drive.GRACE_SECONDS`` after it.  Every request has a timeout of its own
(``rest.Timeouts``), --wait-timeout or not.  Servers that spend the budget
are waited for only while something moves them.

Every server gets a row whatever happens: the normal end, a stop after
failures or at the deadline, an error, Ctrl-C anywhere (no new start; the
row of each toggle in flight once it ends).  The rollout leaves in order
(the grace ran out, a second Ctrl-C, an error): its workers are told to
stop and are waited for a while (``drive.JOIN_SECONDS``), and a node a
worker left out of maintenance in the middle of a recovery gets the line
that holds it.  A server is *done* only once the cloud, read back at the
end, shows it up and on its target: nova's ACTIVE with no task, ironic's
node active, and the configs in its flavor (virtual) or its node's record
(bare metal); a server whose unlock failed is "done, left locked", with
the command that unlocks it.  A rerun of the same command finishes what
was left: no server is toggled twice.
"""

import functools
import threading
import time

from osc_lib import exceptions

from osc_deploy_config.domain.configs import config_specs
from osc_deploy_config.domain.fleet import fleet_plan
from osc_deploy_config.services import rest
from osc_deploy_config.services import versions
from osc_deploy_config.use_cases.fleet import drive as drives
from osc_deploy_config.use_cases.fleet import ending
from osc_deploy_config.use_cases.fleet import planning
from osc_deploy_config.use_cases.fleet import reading as fleet_reading
from osc_deploy_config.use_cases.fleet import signals
from osc_deploy_config.use_cases.fleet import worker
from osc_deploy_config.use_cases.toggle import claim as claims
from osc_deploy_config.use_cases.toggle import outcomes
from osc_deploy_config.use_cases.toggle import waits


class Rollout:
    """Toggle many servers within an availability budget.

    ``say``: progress lines (a line a call, from several threads);
    ``max_unavailable``: the servers down at once, those down for any cause
    included; ``max_failures``: the failures tolerated before no new server
    starts; ``wait_seconds``: the bound of the whole command (None: none,
    each wait bounded by waits.WAIT_SECONDS); ``allowed_steps``,
    ``retry_failed``: as each toggle's.
    """

    def __init__(self, clients, say, max_unavailable=1, max_failures=0,
                 wait_seconds=None, allowed_steps=(), clock=time.monotonic,
                 retry_failed=False):
        if max_unavailable < 1 or max_failures < 0:
            raise exceptions.CommandError(
                'Expected --max-unavailable of 1 or more and --max-failures '
                'of 0 or more, got %d and %d'
                % (max_unavailable, max_failures))
        self.clients = clients
        self.say = say
        self.max_unavailable = max_unavailable
        self.max_failures = max_failures
        self.clock = clock
        self.deadline = None if wait_seconds is None else (
            clock() + wait_seconds)
        # by when the command ends: the deadline, and the grace after it
        self.end = None if self.deadline is None else (
            self.deadline + drives.GRACE_SECONDS)
        self.retry_failed = retry_failed
        self.configs = []
        # set when the rollout leaves: every wait of its workers ends
        self.leaving = threading.Event()
        self.wait_seconds = waits.WAIT_SECONDS if wait_seconds is None \
            else wait_seconds
        self.allowed_steps = allowed_steps
        self.fleet = None
        self.drive = None
        # when its servicings end: their polls are aimed at it
        self.pace = waits.Pace()
        self.lock = threading.Lock()
        self.count = fleet_plan.Count(0)
        self.failures = []
        self.results = {}           # server ID: worker.Result
        self.left_locked = {}       # server ID: why, of a lock not cleared
        self.spent_by = ''          # the servers that spent the budget
        self.interrupted = False    # Ctrl-C: no new start
        self.interrupt_said = False
        self.left_at_once = False   # a second Ctrl-C
        # for ``signals``: whether a toggle may have started; the sections
        # a Ctrl-C waits for (a count); whether one waits
        self.started, self.shielded, self.deferred = False, 0, False
        self.planned = []

    # ------------------------------------------------------------ run

    def run(self, planned):
        """Toggle the planned servers within the budget: a row per server
        (fleet_plan.COLUMNS), whatever happens."""
        for one in planned:
            if one.verdict:
                self.said(one.server['name'], '%s: %s' % (one.verdict,
                                                         one.why))
        todo = [p for p in planned if p.to_toggle]
        todo.sort(key=lambda p: not p.ours)     # ours first: already down
        self.count = fleet_plan.Count(len(todo))
        drive = self.drive = drives.Drive(
            self, todo, {p.server['id']: p.server['name'] for p in planned})
        self.planned, self.started = planned, True
        ending.carry_out(self, drive, planned)
        return self.rows()

    def rows(self):
        """The row of each planned server, from what the rollout did;
        from here on, no Ctrl-C cuts them or their table."""
        signals.hold_off(self)
        if self.interrupted and not self.drive.why_not:     # before its go
            self.drive.why_not = 'interrupted'
        return [self.row(p, self.drive) for p in self.planned]

    def clear_left_locks(self, planned):
        """Unlock the servers no toggle of this run will hold that an
        interrupted toggle left locked (each taken over first): those that
        run the configs already, or that it will not toggle (unavailable,
        skipped, failed at planning).  Nothing past the deadline."""
        if not self.clients.is_admin():
            return
        nova = self.clients.nova(versions.SERVER_LOCKS)
        for one in planned:
            if one.to_toggle and not one.verdict:
                continue
            claim = claims.Claim(nova, one.server, [], self.say)
            if not claim.interrupted():
                continue
            if self.stopping():
                self.said(one.server['name'], 'left locked by an '
                          'interrupted toggle (%s): a rerun unlocks it'
                          % self.stopping())
                continue
            try:
                with rest.bounded(self.deadline):
                    claim.clear_interrupted()
            except KeyboardInterrupt:
                self.left_locked[one.server['id']] = (
                    'interrupted while clearing it')
                raise
            except Exception as exc:    # noqa: BLE001 - said, not fatal
                self.left_locked[one.server['id']] = outcomes.one_line(exc)
                self.said(one.server['name'], 'left locked: %s'
                          % outcomes.one_line(exc))

    def toggle_one(self, one, fresh):
        """One server's toggle, in a worker: prepared again on its
        ``fresh`` (server, node), then carried out; a worker.Result.  Its
        reads end with the grace after the deadline."""
        with rest.bounded(self.end, ending.grace_ran_out()):
            toggle_ = one.prepared.strategy.toggle
            toggle_.say.on = True
            waits_, server_id = toggle_.waits, one.server['id']
            waits_.on_up = functools.partial(self.drive.up, server_id)
            self.drive.polls.hook(waits_, server_id)
            waits_.pace = self.pace
            self.drive.gates.hook(waits_, server_id)
            prepared = toggle_.prepare(self.fleet.reading(*fresh))
            if prepared.unchanged:
                toggle_.leave_unchanged(prepared)
                return unchanged(prepared)
            outcome = toggle_.carry_out(prepared)
        result = worker.toggled(one.server['id'], outcome)
        if prepared.claim and prepared.claim.left_locked and (
                result.outcome == fleet_plan.DONE):
            result = worker.Result(
                one.server['id'], fleet_plan.LEFT_LOCKED,
                'openstack server unlock %s' % one.server['id'])
        return result

    def ended(self, one, result, placed=True):
        """Count and say how a toggle ended (``placed``: in flight)."""
        self.results[result.server_id] = result
        with self.lock:
            self.count.ended(result.server_id, result.outcome, placed)
        if result.failed:
            self.failures.append('%s: %s' % (one.server['name'], result.why))
        self.said(one.server['name'], '%s in %.0f s%s' % (
            result.outcome, result.seconds,
            ': ' + result.why if result.why else ''))

    def say_interrupted(self, in_flight):
        """The line of a first Ctrl-C, once."""
        if self.interrupted and not self.interrupt_said:
            self.interrupt_said = True
            self.say('Interrupted: no new server starts; %d in flight end '
                     'first (Ctrl-C again to leave).' % in_flight)

    def row(self, one, drive):
        """The result row of one server."""
        if one.verdict:
            return fleet_plan.row(one, one.verdict, one.why)
        if not one.to_toggle:
            left = self.left_locked.get(one.server['id'])
            if not left:
                return fleet_plan.row(one, fleet_plan.UNCHANGED)
            return fleet_plan.row(
                one, fleet_plan.UNCHANGED_LEFT_LOCKED, 'by an interrupted '
                'toggle (%s): openstack server unlock %s' % (
                    left, one.server['id']))
        found = self.results.get(one.server['id']) or unseen(
            drive, one.server['id'])
        if found:
            return fleet_plan.row(one, found.outcome, found.why,
                                  found.seconds)
        if one.server['id'] in drive.running:
            return fleet_plan.row(one, fleet_plan.INTERRUPTED, drive.left or (
                'in flight when the rollout left: rerun to finish it'))
        if one.server['id'] in drive.gates:     # its worker, left
            return fleet_plan.row(one, fleet_plan.NOT_STARTED, (
                '%s; prepared ahead, it may stay locked: a rerun takes the '
                'lock over' % drive.why_not))
        return fleet_plan.row(one, fleet_plan.NOT_STARTED, drive.why_not)

    def stopping(self):
        """Why no new toggle may start now, or ''."""
        if self.interrupted:
            return 'interrupted'
        if self.deadline is not None and self.clock() > self.deadline:
            return waits.PAST_DEADLINE
        if len(self.failures) > self.max_failures:
            return 'more than --max-failures %d failures' % self.max_failures
        return ''

    def said(self, name, text):
        with self.lock:     # a worker moves a toggle up again meanwhile
            count = str(self.count)
        self.say('%s: %s %s' % (name, text, count))


def roll_out(rollout, refs=(), configs=(), flavor=None, project=None,
             all_projects=False, dry_run=False):
    """Select, plan, and (unless ``dry_run``) toggle: (COLUMNS, rows).
    The configs given, or those the flavor asks for now.  Once the
    servers are selected, each gets a row whatever happens (Ctrl-C before
    any toggle started: not started); planning's reads end at the
    deadline."""
    if not configs and not flavor:
        raise exceptions.CommandError(
            'Give the configs (--deploy-config TYPE=VALUE), or --flavor to '
            'roll out what the flavor asks for now')
    config_specs.refuse_doubled_types(configs)
    with rest.bounded(rollout.deadline):
        selection = fleet_reading.select(rollout.clients, refs, flavor,
                                         project, all_projects)
    configs = list(configs) or fleet_plan.flavor_target(selection.flavor)
    rollout.configs = configs
    try:
        return fleet_plan.COLUMNS, planned_and_run(rollout, selection,
                                                   configs, dry_run)
    except KeyboardInterrupt:
        rollout.interrupted = True
        if rollout.started:     # a toggle may have: its row says
            return fleet_plan.COLUMNS, rollout.rows()
        return fleet_plan.COLUMNS, not_started(selection.servers,
                                               'interrupted')


def planned_and_run(rollout, selection, configs, dry_run):
    """The rows of the selected servers, planned, then (unless
    ``dry_run``) toggled."""
    servers = selection.servers
    try:
        with rest.bounded(rollout.deadline):
            templates = planning.templates(rollout.clients)
    except Exception as exc:    # noqa: BLE001 - the rows first
        return planning_failed(rollout, servers, exc)
    planning.refuse_missing(templates, configs)
    rollout.say('Planning %s on %d server(s)...' % (
        ', '.join(str(c) for c in configs), len(servers)))
    try:
        with rest.bounded(rollout.deadline):
            rollout.fleet = fleet_reading.FleetReading(
                rollout.clients, selection, templates, configs)
            planned = planning.plan(rollout, rollout.fleet, configs)
    except Exception as exc:    # noqa: BLE001 - the rows first
        return planning_failed(rollout, servers, exc)
    if dry_run:
        return [planned_row(p) for p in planned]
    return rollout.run(planned)


def planning_failed(rollout, servers, exc):
    """The rows of a rollout whose planning failed: each server not
    started, for that reason."""
    why = outcomes.one_line(exc)
    rollout.failures.append('planning: %s' % why)
    return not_started(servers, 'planning failed: %s' % why)


def not_started(servers, why):
    return [fleet_plan.row(fleet_plan.Planned(s), fleet_plan.NOT_STARTED,
                           why) for s in servers]


def planned_row(one):
    """The row of one server in a dry run: its plan, or what it is."""
    if one.verdict:
        return fleet_plan.row(one, one.verdict, one.why)
    return fleet_plan.row(one, one.outcome.result, one.outcome.detail)


def unchanged(prepared):
    """The Result of a toggle whose server runs the configs already (a
    dead lock on it left past the deadline said)."""
    claim = prepared.claim
    if claim and claim.left_locked:
        return worker.Result(
            prepared.server['id'], fleet_plan.UNCHANGED_LEFT_LOCKED,
            'by an interrupted toggle, past --wait-timeout: a rerun unlocks '
            'it')
    return worker.Result(prepared.server['id'], fleet_plan.UNCHANGED)


def unseen(drive, server_id):
    """The Result a toggle in flight reported that the drive never took
    in (a Ctrl-C took it off the queue), or None: not read back, where
    it says done."""
    found = drive.done.reported.get(server_id) \
        if server_id in drive.running else None
    if found and found.outcome == fleet_plan.DONE:
        return worker.Result(server_id, fleet_plan.NOT_READ_BACK,
                             'interrupted', found.seconds)
    return found
