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

"""A rollout: many servers toggled to deploy configs, at most N at once.

Every selected server is planned first, through the one-server toggle's own
reads and checks (the templates read once for all), and nothing changes
until all are: a server that cannot
take the configs is reported and skipped, one that already runs them is
left alone.  Then the servers are toggled, each through the one-server
toggle with every check it makes (``server_toggle.ServerToggle``), at most
``max_unavailable`` at a time; after more than ``max_failures`` failures no
new one starts, and those in flight finish.  A rerun of the same command
finishes what an interrupted one left in flight (the toggle waits for a
change under way, and a node that already shows the target is recorded,
not serviced again) and does the rest: no server is toggled twice.
"""

import concurrent.futures
import threading
import time

from osc_lib import exceptions

from osc_deploy_config.domain import config_specs
from osc_deploy_config.domain import fleet_plan
from osc_deploy_config.domain import toggle_states
from osc_deploy_config.services import ironic as ironic_api
from osc_deploy_config.services import versions
from osc_deploy_config.use_cases.toggle import outcomes
from osc_deploy_config.use_cases.toggle import toggle as server_toggle

COLUMNS = ('Server', 'Host', 'From', 'To', 'How', 'Outcome', 'Seconds')
NOT_STARTED = 'not started'
# How many servers are planned at once (reads only).
PLANNERS = 8


class Rollout:
    """Toggle many servers, with bounded disruption.

    ``say``: progress lines (a line a call, from several threads);
    ``max_unavailable``: servers toggling at once; ``max_failures``: the
    failures tolerated before no new server starts.
    """

    def __init__(self, clients, say, max_unavailable=1, max_failures=0):
        if max_unavailable < 1 or max_failures < 0:
            raise exceptions.CommandError(
                'Expected --max-unavailable of 1 or more and --max-failures '
                'of 0 or more, got %d and %d'
                % (max_unavailable, max_failures))
        self.clients = clients
        self.say = say
        self.max_unavailable = max_unavailable
        self.max_failures = max_failures
        self.nova = clients.nova(versions.SERVER_FLAVOR_DETAILS)
        self.lock = threading.Lock()
        self.count = None
        self.failures = []
        # the config templates, read once for every toggle of the rollout
        self.templates = None

    def select(self, refs=(), flavor=None, project=None, all_projects=False):
        """(the servers named, and those of the flavor or project; the
        flavor, or None)."""
        by_ref = [self.nova.find_server(ref, all_projects or bool(project))
                  for ref in refs]
        project_id = self.clients.project_id(project) if project else None
        found, listed = None, []
        if flavor:
            found = self.nova.find_flavor(flavor)
            listed = fleet_plan.of_flavor(self.nova.servers(
                all_projects, project_id), found['name'])
        elif project or all_projects:
            listed = self.nova.servers(all_projects, project_id)
        servers = fleet_plan.merge_selected(by_ref, listed)
        if not servers:
            raise exceptions.CommandError(
                'No server selected: name servers, or give --flavor, '
                '--project or --all-projects')
        return servers, found

    def plan(self, servers, configs):
        """[fleet_plan.Planned], one per server, changing nothing (the
        servers read a few at a time)."""
        with concurrent.futures.ThreadPoolExecutor(PLANNERS) as pool:
            return list(pool.map(lambda s: self.plan_one(s, configs),
                                 servers))

    def plan_one(self, server, configs):
        """One server's dry run of the toggle."""
        toggle = server_toggle.ServerToggle(
            self.clients, configs, lambda text: None,
            templates_by_config=self.templates)
        try:
            done = toggle.run(server['id'], dry_run=True)
        except toggle_states.Unavailable as exc:
            done = outcomes.Outcome(
                server['name'], server['id'], outcomes.host_of(
                    server, None), '', '', '', outcomes.PLANNED, str(exc))
        except exceptions.CommandError as exc:
            return fleet_plan.Planned(server, configs, None, str(exc))
        return fleet_plan.Planned(server, configs, done, None)

    def run(self, planned):
        """Toggle the planned servers; a row per server (COLUMNS)."""
        todo = [p for p in planned if p.refusal is None
                and p.outcome.result != outcomes.UNCHANGED]
        self.count = fleet_plan.Count(len(todo))
        results = {}
        for one in planned:
            if one.refusal is not None:
                self.said(one.server['name'], 'skipped: ' + one.refusal)
        with concurrent.futures.ThreadPoolExecutor(
                self.max_unavailable) as pool:
            try:
                self._drive(pool, todo, results)
            except KeyboardInterrupt:
                self.say('Interrupted: no new server starts; those in '
                         'flight finish. Rerun the same command to do the '
                         'rest.')
                raise
        return [self.row(p, *results.get(p.server['id'], (None, 0.0)))
                for p in planned]

    def _drive(self, pool, todo, results):
        """Keep at most max_unavailable toggles running until all ran, or
        until failures pass max_failures."""
        waiting, running = list(todo), {}
        while waiting or running:
            while (waiting and len(running) < self.max_unavailable
                   and len(self.failures) <= self.max_failures):
                one = waiting.pop(0)
                running[pool.submit(self.toggle, one)] = one
            if not running:
                break
            done, _ = concurrent.futures.wait(
                running, return_when=concurrent.futures.FIRST_COMPLETED)
            for future in done:
                one = running.pop(future)
                results[one.server['id']] = future.result()
        if waiting:
            self.say('%d failure(s), more than --max-failures %d: %d '
                     'server(s) not started' % (
                         len(self.failures), self.max_failures,
                         len(waiting)))

    def toggle(self, one):
        """One server's toggle, in a worker: (its Outcome or the failure
        line, seconds)."""
        name = one.server['name']
        with self.lock:
            self.count.in_flight += 1
        self.said(name, 'started: %s' % (one.outcome.detail or 'toggle'))
        start = time.monotonic()
        try:
            outcome = server_toggle.ServerToggle(
                self.clients, one.configs,
                lambda text: self.say('%s: %s' % (name, text.strip())),
                auto_confirm=True,
                templates_by_config=self.templates).run(one.server['id'])
        except exceptions.CommandError as exc:
            seconds = time.monotonic() - start
            with self.lock:
                self.count.in_flight -= 1
                self.count.failed += 1
                self.failures.append('%s: %s' % (name, exc))
            self.said(name, 'failed after %.0f s: %s' % (seconds, exc))
            return str(exc), seconds
        seconds = time.monotonic() - start
        with self.lock:
            self.count.in_flight -= 1
            self.count.done += 1
        self.said(name, '%s in %.0f s' % (outcome.result, seconds))
        return outcome, seconds

    def said(self, name, text):
        self.say('%s: %s %s' % (name, text, self.count))

    def row(self, one, result, seconds):
        """The result row of one server."""
        planned = one.outcome
        if one.refusal is not None:
            return plan_row(one)
        if planned.result == outcomes.UNCHANGED:
            result = planned
        if isinstance(result, outcomes.Outcome):
            outcome = result.result
        else:
            outcome = NOT_STARTED if result is None else 'failed: ' + result
        return (planned.server, planned.host, planned.before, planned.after,
                planned.how, outcome, round(seconds, 1))


def roll_out(rollout, refs=(), configs=(), flavor=None, project=None,
             all_projects=False, dry_run=False):
    """Select, plan, and (unless ``dry_run``) toggle: (COLUMNS, rows).
    The configs given, or those the flavor asks for now."""
    if not configs and not flavor:
        raise exceptions.CommandError(
            'Give the configs (--deploy-config TYPE=VALUE), or --flavor to '
            'roll out what the flavor asks for now')
    config_specs.refuse_doubled_types(configs)
    servers, found = rollout.select(refs, flavor, project, all_projects)
    configs = list(configs) or fleet_plan.flavor_target(found)
    rollout.templates = rollout.clients.ironic().config_templates(
        fields=ironic_api.TEMPLATE_STEP_FIELDS)
    config_specs.refuse_missing_templates(configs, rollout.templates)
    rollout.say('Planning %s on %d server(s)...' % (
        ', '.join(str(c) for c in configs), len(servers)))
    planned = rollout.plan(servers, configs)
    if dry_run:
        return COLUMNS, [plan_row(one) for one in planned]
    return COLUMNS, rollout.run(planned)


def plan_row(one):
    """The row of one server in a dry run: its plan, or why it is
    skipped."""
    if one.refusal is not None:
        return (one.server['name'], outcomes.host_of(one.server, None),
                '', '', '', 'skipped: %s' % one.refusal, 0.0)
    planned = one.outcome
    return (planned.server, planned.host, planned.before, planned.after,
            planned.how, planned.result + (
                ': %s' % planned.detail if planned.detail else ''), 0.0)
