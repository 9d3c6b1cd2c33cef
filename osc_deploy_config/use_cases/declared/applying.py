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

"""``apply``: plan, write, then list (or, with ``--rollout``, roll out)
the running servers whose flavor or image now asks for other configs."""

from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.declared import changes as dchanges
from osc_deploy_config.domain.fleet import fleet_plan
from osc_deploy_config.use_cases.declared import locking
from osc_deploy_config.use_cases.declared import planning
from osc_deploy_config.use_cases.declared import writing
from osc_deploy_config.use_cases.fleet import rollout as rollouts
from osc_deploy_config.use_cases.fleet import signals

# How long the node sync waits for placement, unless --wait-timeout says.
SYNC_TIMEOUT = 300


class Applied:
    """One ``apply``; ``say``: progress lines.  With ``rollout``, the
    outdated servers are toggled as ``server deploy-config set`` does,
    with its budget (``max_unavailable``), ``max_failures`` and the
    toggle options (``retry_failed`` among them)."""

    def __init__(self, clients, say, rollout=False, max_unavailable=1,
                 max_failures=0, allowed_steps=(), wait_seconds=None,
                 retry_failed=False):
        self.clients, self.say = clients, say
        self.retry_failed = retry_failed
        self.rollout = rollout
        self.max_unavailable = max_unavailable
        self.max_failures = max_failures
        self.allowed_steps = allowed_steps
        self.wait_seconds = wait_seconds
        self.rollouts = []      # (fleet Rollout, its rows)
        # the one under way, for Ctrl-C (``signals.interrupts``, which the
        # command holds from the start to its table's end)
        self.current = signals.Current()

    def apply(self, path, prune=False, prune_all=False, dry_run=False,
              break_lock=False):
        """(columns, rows): what was written (``dry_run``: would be), or
        with ``rollout`` the rollout's rows.  The file is read first; then
        (but for a dry run) the lock is taken (``locking``; ``break_lock``:
        the one held is broken) until the end, the rollout's included."""
        parsed = planning.read_file(path)
        if dry_run:
            plan = planning.plan(self.clients, path, prune, prune_all,
                                 parsed)
            return dchanges.COLUMNS, [
                (k, n, 'would %s' % a, f, b, af) for k, n, a, f, b, af in
                dchanges.rows(plan.changes)]
        lock = locking.Lock(self.clients, self.say)
        try:
            lock.take(break_lock)
            # each node's BIOS registry read once, until the rollout
            with self.clients.registries_remembered():
                plan = planning.plan(self.clients, path, prune, prune_all,
                                     parsed)
                if not plan.changes:    # a pending sync mark is a change
                    self.say('No changes: the cloud is equal to %s' % path)
                rows = writing.Apply(self.clients, self.say, SYNC_TIMEOUT if
                                     self.wait_seconds is None else
                                     self.wait_seconds).run(plan)
            return self.rolled_out(plan, rows)
        finally:
            lock.release()

    def rolled_out(self, plan, rows):
        """The running servers not in line with the file, listed with the
        commands that bring them in line, or (``rollout``) rolled out:
        (columns, rows) as ``apply`` returns them."""
        outdated = writing.outdated(plan)
        commands = dchanges.rollout_commands(outdated, self.max_unavailable)
        if not self.rollout:
            self.tell(outdated, commands)
            return dchanges.COLUMNS, rows
        for row in rows:
            self.say('%s %s: %s %s' % row[:4])
        return fleet_plan.COLUMNS, self.roll_out(outdated)

    def tell(self, outdated, commands):
        """The servers left running what their flavor or image no longer
        asks for, and the commands that bring them in line."""
        if not outdated:
            return
        self.say('%d running server(s) run other configs than their flavor '
                 'or image now asks for:' % len(outdated))
        for server, kind, owner, configs, _id in outdated:
            self.say('  %s (%s %s: %s)' % (server, kind, owner,
                                           ', '.join(configs) or 'none'))
        for line in commands:
            self.say('Bring them in line: %s' % line)

    def roll_out(self, outdated):
        """Each flavor's outdated servers (every project), to what the
        file gives the flavor, as ``server deploy-config set`` rolls them
        out: the rows of all.  An image's are said, with their rebuild:
        its configs are applied by a deploy, never toggled."""
        rows = []
        flavors = sorted({o[2] for o in outdated if o[1] == dchanges.FLAVOR})
        if not flavors:
            self.say('No running server to roll out')
        for name in flavors:
            of_flavor = [o for o in outdated if o[1] == dchanges.FLAVOR
                         and o[2] == name]
            rows += self.one_rollout(name, [o[4] for o in of_flavor], [
                deploy_config.parse_config(c) for c in of_flavor[0][3]])
        for server, kind, image, configs, _id in outdated:
            if kind == dchanges.IMAGE:
                self.say('Not rolled out: %s (image %s asks for %s, which a '
                         'deploy applies: openstack server rebuild --image '
                         '%s %s)' % (server, image, ', '.join(configs),
                                     image, server))
        return rows

    def one_rollout(self, flavor, servers, configs):
        """One flavor's rollout (``servers``: the IDs of its outdated
        ones): its rows; none once an earlier one was interrupted
        (Ctrl-C), said."""
        if any(r.interrupted for r, _ in self.rollouts):
            self.say('Not rolled out (interrupted): flavor %s' % flavor)
            return []
        options = {'allowed_steps': self.allowed_steps,
                   'retry_failed': self.retry_failed}
        if self.wait_seconds is not None:
            options['wait_seconds'] = self.wait_seconds
        rollout = rollouts.Rollout(self.clients, self.say,
                                   self.max_unavailable, self.max_failures,
                                   **options)
        self.current.rollout = rollout
        _, rows = rollouts.roll_out(rollout, servers, configs,
                                    all_projects=True)
        self.rollouts.append((rollout, rows))
        return rows

    def failed_rollout(self):
        """Why the rollout did not get there, or ''; KeyboardInterrupt
        after Ctrl-C (exit 130), as ``server deploy-config set``."""
        for rollout, rows in self.rollouts:
            if rollout.interrupted:
                raise KeyboardInterrupt()
            if rollout.spent_by:
                return ('--max-unavailable %d is spent before any server '
                        'starts, by %s: rerun once they are back, or allow '
                        'more down at once' % (rollout.max_unavailable,
                                               rollout.spent_by))
            if not fleet_plan.arrived(rows):
                return '%d of %d server(s) do not run the configs: %s' % (
                    sum(1 for r in rows if not fleet_plan.arrived([r])),
                    len(rows), '; '.join(
                        '%s: %s' % (r[1], r[-2]) for r in rows
                        if not fleet_plan.arrived([r])))
        return ''
