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
the configs is *skipped*, one already there is *unchanged*, one already down
(not ACTIVE, its node in maintenance, servicing or failed, busy with
another change or held by someone else) is *unavailable*, and any other
error is a *failure*.

``--max-unavailable`` is an availability budget, as Kubernetes'
``maxUnavailable``: the servers already down spend it first, each toggle
holds a place until its server is up again (a toggle that timed out while
ironic still services the node keeps its place until the node has left
servicing), and when the servers already down spend it all, nothing
starts.  An interrupted toggle of ours (a killed rollout's) is already
down: it is finished first.  After more than ``--max-failures`` failures,
planning's included, no new server starts.  Every server gets a row
whatever happens: the normal end, a stop after failures, an error, Ctrl-C
(no new start; the row of each toggle in flight once it ends; a second
Ctrl-C leaves at once).  A rerun of the same command finishes what was
left: no server is toggled twice.
"""

import contextlib
import queue
import signal
import threading
import time

from openstack import exceptions as sdk_exceptions
from osc_lib import exceptions

from osc_deploy_config.domain import config_specs
from osc_deploy_config.domain import fleet_plan
from osc_deploy_config.domain import toggle_states
from osc_deploy_config.services import ironic as ironic_api
from osc_deploy_config.services import versions
from osc_deploy_config.use_cases.fleet import reading as fleet_reading
from osc_deploy_config.use_cases.toggle import outcomes
from osc_deploy_config.use_cases.toggle import toggle
from osc_deploy_config.use_cases.toggle import waits

# How often a server left down by a timed-out toggle is looked at again,
# while others wait for its place in the budget.
WATCH_SECONDS = 5


class Voice:
    """A toggle's progress lines: silent while it is planned, said (with
    the server's name) once it runs."""

    def __init__(self, say, name):
        self.said, self.name, self.on = say, name, False

    def __call__(self, text):
        if self.on:
            self.said('%s: %s' % (self.name, text.strip()))


class Rollout:
    """Toggle many servers within an availability budget.

    ``say``: progress lines (a line a call, from several threads);
    ``max_unavailable``: the servers down at once, those already down
    included; ``max_failures``: the failures tolerated before no new server
    starts; ``wait_seconds``, ``allowed_steps``: as each toggle's.
    """

    def __init__(self, clients, say, max_unavailable=1, max_failures=0,
                 wait_seconds=waits.WAIT_SECONDS, allowed_steps=()):
        if max_unavailable < 1 or max_failures < 0:
            raise exceptions.CommandError(
                'Expected --max-unavailable of 1 or more and --max-failures '
                'of 0 or more, got %d and %d'
                % (max_unavailable, max_failures))
        self.clients = clients
        self.say = say
        self.max_unavailable = max_unavailable
        self.max_failures = max_failures
        self.wait_seconds = wait_seconds
        self.allowed_steps = allowed_steps
        self.nova = clients.nova(versions.SERVER_LOCKS)
        self.lock = threading.Lock()
        self.count = fleet_plan.Count(0)
        self.failures = []
        self.results = {}           # server ID: (outcome, why, seconds)
        self.spent_by = []          # the servers that spent the budget
        self.interrupted = False    # Ctrl-C: no new start
        self.left_at_once = False   # a second Ctrl-C

    # ------------------------------------------------------------ plan

    def templates(self, configs):
        """The config templates (ConfigTemplates), read once for the whole
        rollout; a config no template realises is refused."""
        found = self.clients.ironic().config_templates(
            fields=ironic_api.TEMPLATE_STEP_FIELDS)
        config_specs.refuse_missing_templates(
            [c for c in configs if not found.realises(c)], found)
        return found

    def plan(self, servers, configs, templates):
        """[fleet_plan.Planned], one per server, changing nothing; from
        one reading for all."""
        fleet = fleet_reading.FleetReading(self.clients, servers, templates,
                                           configs)
        return [self.plan_one(fleet, s, configs) for s in servers]

    def plan_one(self, fleet, server, configs):
        """One server's dry run of the toggle, and what it is."""
        one = toggle.ServerToggle(
            self.clients, configs, Voice(self.say, server['name']),
            auto_confirm=True, wait_seconds=self.wait_seconds,
            templates_by_config=fleet.templates_by_config,
            allowed_steps=self.allowed_steps,
            placement_view=fleet.providers, fresh_reading=False)
        try:
            prepared = one.prepare(fleet.reading(server))
        except toggle_states.Unavailable as exc:
            return fleet_plan.Planned(server, verdict=fleet_plan.UNAVAILABLE,
                                      why=exc.state, down=True)
        except toggle_states.Incapable as exc:
            return fleet_plan.Planned(server, verdict=fleet_plan.SKIPPED,
                                      why=str(exc))
        except (exceptions.CommandError, sdk_exceptions.HttpException) as exc:
            return self.failed_at_plan(server, exc)
        if isinstance(prepared, outcomes.Outcome):
            return fleet_plan.Planned(server, prepared)
        ours = bool(prepared.finishing) or bool(
            prepared.claim and prepared.claim.interrupted())
        return fleet_plan.Planned(
            server, prepared.outcome(outcomes.PLANNED,
                                     prepared.strategy.describe(prepared)),
            prepared, down=ours, ours=ours)

    def failed_at_plan(self, server, exc):
        why = one_line(exc)
        self.failures.append('%s: %s' % (server['name'], why))
        return fleet_plan.Planned(server, verdict=fleet_plan.FAILED, why=why)

    # ------------------------------------------------------------ run

    def run(self, planned):
        """Toggle the planned servers within the budget: a row per server
        (fleet_plan.COLUMNS), whatever happens."""
        self.spent_by = fleet_plan.spent_before_start(planned,
                                                      self.max_unavailable)
        todo = [p for p in planned if p.to_toggle and not self.spent_by]
        todo.sort(key=lambda p: not p.ours)     # ours first: already down
        self.count = fleet_plan.Count(len(todo), down=sum(
            1 for p in planned if p.down and not p.ours))
        for one in planned:
            if one.verdict:
                self.said(one.server['name'], '%s: %s' % (one.verdict,
                                                         one.why))
        drive = Drive(self, todo, [p for p in planned
                                   if p.down and not p.ours])
        with self.interrupts(drive):
            try:
                drive.go()
            except KeyboardInterrupt:
                self.left_at_once = True
        return [self.row(p, drive) for p in planned]

    @contextlib.contextmanager
    def interrupts(self, drive):
        """Meanwhile, a first Ctrl-C stops new starts (those in flight end
        first), a second one leaves at once (KeyboardInterrupt)."""
        def interrupt(signum, frame):
            if self.interrupted:
                raise KeyboardInterrupt()
            self.interrupted = True
            self.say('Interrupted: no new server starts; %d in flight end '
                     'first (Ctrl-C again to leave now).'
                     % len(drive.running))

        try:
            previous = signal.signal(signal.SIGINT, interrupt)
        except ValueError:      # not the main thread: no signals here
            previous = None
        try:
            yield
        finally:
            if previous is not None:
                signal.signal(signal.SIGINT, previous)

    def row(self, one, drive):
        """The result row of one server."""
        if one.verdict:
            return fleet_plan.row(one, one.verdict, one.why)
        if one.outcome.result == outcomes.UNCHANGED:
            return fleet_plan.row(one, fleet_plan.UNCHANGED)
        found = self.results.get(one.server['id'])
        if found:
            return fleet_plan.row(one, *found)
        if one.server['id'] in drive.running:
            return fleet_plan.row(one, fleet_plan.INTERRUPTED,
                                  'in flight when the rollout left')
        return fleet_plan.row(one, fleet_plan.NOT_STARTED, drive.why_not)

    def toggle(self, one, done):
        """One server's toggle, in a worker thread; puts (server ID,
        outcome, why, seconds, still down) on ``done``, whatever happens."""
        name = one.server['name']
        one.prepared.strategy.toggle.say.on = True
        self.said(name, 'started: %s' % one.outcome.detail)
        start = time.monotonic()
        ended = (one.server['id'], fleet_plan.FAILED, 'not known', 0.0, True)
        try:
            one.prepared.strategy.toggle.carry_out(one.prepared)
            ended = (one.server['id'], fleet_plan.DONE, '',
                     time.monotonic() - start, False)
        except Exception as exc:    # noqa: BLE001 - any error: a failure
            why = one_line(exc)
            ended = (one.server['id'], fleet_plan.FAILED, why,
                     time.monotonic() - start,
                     isinstance(exc, waits.TimedOut) or self.still_down(
                         one.server))
        finally:
            self.ended(name, ended)
            done.put(ended)

    def ended(self, name, ended):
        """Count and say how a toggle ended."""
        _, outcome, why, seconds, _ = ended
        with self.lock:
            self.count.in_flight -= 1
            if outcome == fleet_plan.DONE:
                self.count.done += 1
            else:
                self.count.failed += 1
                self.failures.append('%s: %s' % (name, why))
        self.said(name, '%s in %.0f s%s' % (outcome, seconds,
                                            ': ' + why if why else ''))

    def still_down(self, server):
        """Whether a server is unavailable now (after a failed toggle): its
        state, or False."""
        try:
            found = self.nova.find_server(server['id'])
            toggle_states.refuse_server(found)
            node = self.clients.ironic(versions.NODE_TRAITS).node_of_instance(
                server['id'], ironic_api.PROVISION_FIELDS)
            if node is not None:
                toggle_states.refuse_node(found, node)
        except toggle_states.Unavailable as exc:
            return exc.state
        except Exception:   # noqa: BLE001 - not known: taken as down
            return 'not known'
        return False

    def said(self, name, text):
        self.say('%s: %s %s' % (name, text, self.count))


class Drive:
    """The toggles of a rollout under way: at most ``max_unavailable``
    servers down at once, those already down (``held``) included."""

    def __init__(self, rollout, todo, already_down):
        self.rollout = rollout
        self.waiting = list(todo)
        self.running = {}
        self.held = {p.server['id']: (p, False) for p in already_down}
        self.done = queue.Queue()
        self.why_not = ''
        self.watched_at = 0.0

    def go(self):
        """Until every toggle that may start has started and ended."""
        try:
            while self.waiting or self.running:
                self.start_what_fits()
                if not self.running and not self.watch():
                    break
                try:
                    self.ended(*self.done.get(timeout=1))
                except queue.Empty:
                    pass
        finally:
            self.why_not = self.stopped_by()

    def start_what_fits(self):
        rollout = self.rollout
        while self.waiting and not rollout.interrupted and (
                len(rollout.failures) <= rollout.max_failures):
            one = self.waiting[0]
            if not one.ours and (len(self.running) + len(self.held)
                                 >= rollout.max_unavailable):
                return
            self.waiting.pop(0)
            with rollout.lock:
                rollout.count.in_flight += 1
            self.running[one.server['id']] = one
            threading.Thread(target=rollout.toggle, args=(one, self.done),
                             daemon=True).start()

    def ended(self, server_id, outcome, why, seconds, down):
        one = self.running.pop(server_id)
        self.rollout.results[server_id] = (outcome, why, seconds)
        if down:
            # a timed-out toggle's server settles by itself: watched
            self.held[server_id] = (one, why.endswith('(--wait-timeout)'))

    def watch(self):
        """With nothing running and servers waiting for a place: look at
        the held servers that settle by themselves (at most every
        WATCH_SECONDS); whether some may yet free a place."""
        watched = [p for p, settles in self.held.values() if settles]
        if not self.waiting or not watched or self.rollout.interrupted:
            return False
        if time.monotonic() - self.watched_at >= WATCH_SECONDS:
            self.watched_at = time.monotonic()
            for one in watched:
                if not self.rollout.still_down(one.server):
                    del self.held[one.server['id']]
        time.sleep(1)
        return True

    def stopped_by(self):
        """Why the servers still waiting did not start."""
        rollout = self.rollout
        if not self.waiting:
            return ''
        if rollout.interrupted:
            return 'interrupted'
        if len(rollout.failures) > rollout.max_failures:
            return 'more than --max-failures %d failures' % (
                rollout.max_failures)
        return '--max-unavailable %d spent by %s' % (
            rollout.max_unavailable, ', '.join(sorted(
                p.server['name'] for p, _ in self.held.values())))


def one_line(exc):
    """An error in one line: a CommandError's text, an HTTP error's status
    and detail."""
    if isinstance(exc, sdk_exceptions.HttpException):
        return ('%s %s' % (exc.status_code or '', ' '.join(
            str(exc.details or exc).split()))).strip()
    return ' '.join(str(exc).split()) or type(exc).__name__


def roll_out(rollout, refs=(), configs=(), flavor=None, project=None,
             all_projects=False, dry_run=False):
    """Select, plan, and (unless ``dry_run``) toggle: (COLUMNS, rows).
    The configs given, or those the flavor asks for now."""
    if not configs and not flavor:
        raise exceptions.CommandError(
            'Give the configs (--deploy-config TYPE=VALUE), or --flavor to '
            'roll out what the flavor asks for now')
    config_specs.refuse_doubled_types(configs)
    servers, found = fleet_reading.select(
        rollout.clients, rollout.nova, refs, flavor, project, all_projects)
    configs = list(configs) or fleet_plan.flavor_target(found)
    templates = rollout.templates(configs)
    rollout.say('Planning %s on %d server(s)...' % (
        ', '.join(str(c) for c in configs), len(servers)))
    try:
        planned = rollout.plan(servers, configs, templates)
    except KeyboardInterrupt:
        rollout.interrupted = True
        return fleet_plan.COLUMNS, [fleet_plan.row(
            fleet_plan.Planned(s), fleet_plan.NOT_STARTED, 'interrupted')
            for s in servers]
    if dry_run:
        return fleet_plan.COLUMNS, [planned_row(p) for p in planned]
    return fleet_plan.COLUMNS, rollout.run(planned)


def planned_row(one):
    """The row of one server in a dry run: its plan, or what it is."""
    if one.verdict:
        return fleet_plan.row(one, one.verdict, one.why)
    return fleet_plan.row(one, one.outcome.result, one.outcome.detail)
