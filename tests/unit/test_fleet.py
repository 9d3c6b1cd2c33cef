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

"""``server deploy-config set``: a rollout over a mixed fleet of the fake
services: every server's outcome, the exit status, the availability
budget, Ctrl-C, a rerun after an interruption, and what it costs."""

import os
import re
import signal
import threading
import time
import types

import fixtures
from osc_lib import exceptions
import testtools

from osc_deploy_config.domain.toggle import toggle_record
from osc_deploy_config.domain.toggle import toggle_states
from osc_deploy_config.use_cases.fleet import signals
from osc_deploy_config.v1 import server_deploy_config as cmds
from tests.unit import fakes
from tests.unit.fakes import GOLD
from tests.unit.fakes import HT
from tests.unit.fakes import OFF
from tests.unit.fakes import OFF_T
from tests.unit.fakes import ON_T

ON_SPECS = {'deploy-config:hyperthreading': 'enabled',
            'trait:' + ON_T: 'required'}
DISABLED = ('--deploy-config', 'hyperthreading=disabled')
SLEEP = time.sleep


class FleetTestCase(fakes.TestCommand):
    """Two bare-metal servers (db-0 on bm-0, db-1 on bm-1) and two virtual
    ones (web-0, web-1), all of flavors asking for hyperthreading=enabled;
    every host tagged for disabled but bm-2's, which hosts a third
    bare-metal server, db-2.  ``peak``: the most servers down at once."""

    def setUp(self):
        super().setUp()
        self.ironic.add_hyperthreading_templates()
        self.gold = self.nova.add_flavor('bm.gold', dict(GOLD, **ON_SPECS))
        self.tiny = self.nova.add_flavor('m1.tiny', ON_SPECS)
        self.nodes = {}
        for number in range(3):
            self.baremetal('db-%d' % number, 'bm-%d' % number,
                           tagged=number < 2)
        host = self.placement.add_provider('fake-compute',
                                           traits=[ON_T, OFF_T])
        for name in ('web-0', 'web-1'):
            server = self.nova.add_server(name, self.tiny)
            self.placement.allocate(server['id'], host, {'VCPU': 1})
        # servicing and resizing last a few reads, and a poll a moment:
        # toggles overlap
        self.useFixture(fixtures.MockPatch(
            'time.sleep', side_effect=lambda seconds: SLEEP(0.01)))
        self.ironic.servicing_reads = 3
        self.nova.resize_reads = 3
        self.peak = 0
        self.ironic.after_request = self.nova.after_request = self.sample

    def ctrl_c_taken(self):
        """A function that waits until the rollout's Ctrl-C handler has run
        since it last returned (at once the first time): a signal sent
        before that would be merged with the one pending.  The test fails
        where one never ran."""
        taken, real, missed = threading.Event(), signal.signal, []
        taken.set()

        def wait():
            if not taken.wait(10):
                missed.append('a Ctrl-C the rollout never took')
            taken.clear()

        self.addCleanup(lambda: self.assertEqual([], missed))

        def installing(signum, handler):
            if getattr(handler, '__module__', None) == signals.__name__:
                rollouts = handler

                def handler(*args):
                    try:
                        return rollouts(*args)
                    finally:
                        taken.set()

            return real(signum, handler)

        self.useFixture(fixtures.MockPatch('signal.signal',
                                           side_effect=installing))
        return wait

    def baremetal(self, name, node_name, tagged):
        server = self.nova.add_server(name, self.gold)
        traits = [HT, ON_T] + ([OFF_T] if tagged else [])
        self.nodes[node_name] = self.deploy_on_node(
            server, node_name, traits, {'HyperThreading': 'Enabled'})

    def down_now(self):
        """The servers unavailable now: not ACTIVE or busy, or on a node
        in maintenance or not active."""
        down = {s['id'] for s in self.nova.servers.values()
                if s['status'] != 'ACTIVE' or s['OS-EXT-STS:task_state']}
        down |= {n['instance_uuid'] for n in self.ironic.nodes.values()
                 if n['maintenance'] or n['provision_state'] != 'active'}
        return down

    def sample(self, method, path):
        with fakes.FakeService.lock:
            self.peak = max(self.peak, len(self.down_now()))

    def server(self, name):
        return next(s for s in self.nova.servers.values()
                    if s['name'] == name)

    def roll(self, *args, stdout=None):
        """As cliff runs the command: (exit status, {server: row}, what it
        said on stderr, the error line or None)."""
        cmd = cmds.SetServerDeployConfig(self.app, None)
        cmd.rows = []
        parsed = self.check_parser(cmd, list(args), [])
        self.app.stdout = stdout or fakes.io.StringIO()
        status, line = 0, None
        try:
            status = cmd.run(parsed)
        except exceptions.CommandError as exc:
            status, line = 1, str(exc)
        except KeyboardInterrupt:
            status = 130
        rows = {r[1]: dict(zip(cmd.rows and (
            'ID', 'Server', 'Host', 'From', 'To', 'How', 'Outcome',
            'Seconds'), r, strict=True)) for r in cmd.rows}
        return status, rows, self.fake_stderr.getvalue(), line

    def outcomes(self, rows):
        return {name: r['Outcome'] for name, r in rows.items()}


class TestOutcomes(FleetTestCase):
    def test_a_mixed_fleet_gets_there_and_exits_0(self):
        status, rows, said, line = self.roll('db-0', 'db-1', 'web-0',
                                             'web-1', *DISABLED,
                                             '--max-unavailable', '2')
        self.assertEqual(0, status, line)
        self.assertEqual({'db-0': 'done', 'db-1': 'done', 'web-0': 'done',
                          'web-1': 'done'}, self.outcomes(rows))
        self.assertEqual(self.server('db-0')['id'], rows['db-0']['ID'])
        for name in ('bm-0', 'bm-1'):
            self.assertEqual({'HyperThreading': 'Disabled'},
                             self.nodes[name]['bios'])
        self.assertEqual('m1.tiny+hyperthreading=disabled',
                         self.server('web-0')['flavor']['original_name'])
        self.assertFalse(any(s['locked'] for s in self.nova.servers.values()))

    def test_an_incapable_server_is_skipped_and_the_fleet_got_there(self):
        status, rows, _, _ = self.roll('--flavor', 'bm.gold',
                                       '--all-projects', *DISABLED)
        self.assertEqual(0, status)
        self.assertRegex(rows['db-2']['Outcome'], '^skipped: Server db-2 '
                         'cannot take hyperthreading=disabled on its host: '
                         'node bm-2 lacks %s' % OFF_T)
        self.assertEqual({'HyperThreading': 'Enabled'},
                         self.nodes['bm-2']['bios'])

    def test_a_rerun_is_unchanged_and_toggles_no_server_twice(self):
        self.roll('--flavor', 'bm.gold', '--all-projects', *DISABLED)
        serviced = list(self.ironic.provision_requests)
        status, rows, _, _ = self.roll('--flavor', 'bm.gold',
                                       '--all-projects', *DISABLED)
        self.assertEqual((0, 'unchanged'), (status, rows['db-0']['Outcome']))
        self.assertEqual(serviced, self.ironic.provision_requests)

    def test_an_http_error_of_one_toggle_is_a_counted_failure(self):
        self.ironic.service_http_errors['bm-0'] = 409
        status, rows, _, line = self.roll('db-0', 'db-1', 'web-0',
                                          *DISABLED)
        self.assertEqual(1, status)
        self.assertRegex(rows['db-0']['Outcome'],
                         '^failed: 409 Node .* is locked by host conductor-1')
        # --max-failures 0: no new start after it
        self.assertEqual(['not started: more than --max-failures 0 failures']
                         * 2, [rows[n]['Outcome'] for n in ('db-1', 'web-0')])
        self.assertIn('3 of 3 server(s) do not run the configs', line)
        self.assertFalse(self.server('db-0')['locked'])

    def test_failures_up_to_the_limit_let_the_others_go_on(self):
        self.ironic.failing_nodes.add('bm-0')
        status, rows, _, _ = self.roll('db-0', 'db-1', 'web-0', *DISABLED,
                                       '--max-failures', '1',
                                       '--max-unavailable', '2')
        self.assertEqual(1, status)
        self.assertRegex(rows['db-0']['Outcome'], '^failed: Servicing node '
                         'bm-0 failed')
        self.assertEqual(('done', 'done'), (rows['db-1']['Outcome'],
                                            rows['web-0']['Outcome']))

    def test_a_planning_error_is_a_failure_not_a_skip(self):
        image = self.glance.add_image('ht-on', **ON_SPECS)
        self.server('db-0')['image'] = {'id': image['id']}
        status, rows, _, _ = self.roll('db-0', 'db-1', *DISABLED)
        self.assertEqual(1, status)
        self.assertRegex(rows['db-0']['Outcome'],
                         '^failed: Server db-0 cannot toggle hyperthreading')
        self.assertEqual('not started: more than --max-failures 0 failures',
                         rows['db-1']['Outcome'])
        self.assertEqual([], self.ironic.provision_requests)

    def test_dry_run_plans_every_server_and_changes_nothing(self):
        self.nodes['bm-1']['maintenance'] = True
        status, rows, _, _ = self.roll('--flavor', 'bm.gold',
                                       '--all-projects', *DISABLED,
                                       '--dry-run')
        self.assertEqual(0, status)
        self.assertEqual('planned: service node bm-0 with '
                         'bios.apply_configuration (reboots)',
                         rows['db-0']['Outcome'])
        self.assertEqual('unavailable: node bm-1 in maintenance',
                         rows['db-1']['Outcome'])
        self.assertTrue(rows['db-2']['Outcome'].startswith('skipped: '))
        self.assertEqual([], self.ironic.writes + self.nova.writes)

    def test_bad_input_before_any_request(self):
        for args, why in (
                (('db-0',), 'Give the configs'),
                (('db-0', '--deploy-config', 'a=b', '--deploy-config',
                  'a=c'), 'Two values'),
                (('db-0', *DISABLED, '--max-unavailable', '0'),
                 '--max-unavailable of 1'),
                (('db-0', *DISABLED, '--wait-timeout', '-5'),
                 'non-negative --wait-timeout')):
            status, _, _, line = self.roll(*args)
            self.assertEqual(1, status)
            self.assertIn(why, line)
        self.assertEqual([], self.nova.requests + self.ironic.requests)


class TestBudget(FleetTestCase):
    def test_never_more_down_than_the_budget(self):
        self.roll('db-0', 'db-1', 'web-0', 'web-1', *DISABLED,
                  '--max-unavailable', '2')
        self.assertEqual(2, self.peak)

    def test_one_at_a_time_by_default(self):
        self.roll('db-0', 'db-1', 'web-0', 'web-1', *DISABLED)
        self.assertEqual(1, self.peak)

    def test_a_server_already_down_spends_the_budget(self):
        # bm-2's server is down already: with a budget of 2, one toggle at
        # a time
        self.nodes['bm-2']['maintenance'] = True
        status, rows, _, _ = self.roll('db-0', 'db-1', 'db-2', 'web-0',
                                       *DISABLED, '--max-unavailable', '2')
        self.assertEqual(2, self.peak)
        self.assertEqual(1, status)
        self.assertEqual('unavailable: node bm-2 in maintenance',
                         rows['db-2']['Outcome'])
        self.assertEqual(['done'] * 3, [rows[n]['Outcome'] for n in (
            'db-0', 'db-1', 'web-0')])

    def test_a_budget_spent_before_the_start_changes_nothing(self):
        self.nodes['bm-1']['maintenance'] = True
        status, rows, _, line = self.roll('db-0', 'db-1', *DISABLED)
        self.assertEqual(1, status)
        self.assertEqual({'db-0': 'not started', 'db-1': 'unavailable: node '
                          'bm-1 in maintenance'}, {
                              n: o.split(': --max')[0]
                              for n, o in self.outcomes(rows).items()})
        self.assertEqual('--max-unavailable 1 is spent before any server '
                         'starts, by db-1 (node bm-1 in maintenance): nothing '
                         'was changed. Rerun once they are back, or allow '
                         'more down at once.', line)
        self.assertEqual([], self.ironic.writes + self.nova.writes)

    def test_a_server_left_down_keeps_its_place(self):
        # a failed servicing leaves bm-0 in maintenance: still down, it
        # keeps its place, and with a budget of 1 nothing else starts
        self.ironic.failing_nodes.add('bm-0')
        status, rows, _, _ = self.roll('db-0', 'db-1', *DISABLED,
                                       '--max-failures', '1')
        self.assertEqual(1, status)
        self.assertEqual('not started: --max-unavailable 1 spent by db-0 '
                         '(node bm-0 in maintenance), which nothing under '
                         'way brings back', rows['db-1']['Outcome'])
        self.assertEqual({'HyperThreading': 'Enabled'},
                         self.nodes['bm-1']['bios'])

    def test_in_flight_counts_the_places_held(self):
        # db-0's and db-1's unlocks run beside the next starts: a toggle
        # whose server is up again gave its place back, and is done
        db = {self.server('db-%d' % n)['id'] for n in (0, 1)}
        resized = threading.Event()

        def unlock_after_a_resize(path, method, json):
            if isinstance(json, dict) and 'resize' in json:
                resized.set()
            if isinstance(json, dict) and 'unlock' in json and (
                    path.split('/')[2] in db):
                self.assertTrue(resized.wait(5))
            return None

        fakes.intercept(self.nova, unlock_after_a_resize)
        status, _, said, _ = self.roll('db-0', 'db-1', 'web-0', 'web-1',
                                       *DISABLED, '--max-unavailable', '2')
        self.assertEqual(0, status, said)
        counts = [[int(n) for n in c] for c in re.findall(
            r'\[(\d+) done, (\d+) in flight, (\d+) left, (\d+) failed',
            said)]
        self.assertEqual(2, max(c[1] for c in counts), said)
        self.assertEqual({4}, {sum(c) for c in counts}, said)
        self.assertEqual([4, 0, 0, 0], counts[-1], said)

    def test_a_server_that_goes_down_meanwhile_spends_the_budget(self):
        # web-1 is stopped by its owner once db-0 and db-1 have started:
        # with a budget of 2, web-0 then waits until both have ended
        at_start = []

        def count_at(server_id):
            with fakes.FakeService.lock:
                at_start.append(len(self.down_now() | {server_id}))
                if len(at_start) == 2:
                    self.server('web-1')['status'] = 'SHUTOFF'

        def at_service(path, method, json):
            if isinstance(json, dict) and json.get('target') == 'service':
                count_at(self.ironic.nodes[path.split('/')[2]][
                    'instance_uuid'])

        def at_resize(path, method, json):
            if isinstance(json, dict) and 'resize' in json:
                count_at(path.split('/')[2])

        # each toggle's first change (locks may come ahead of a place)
        fakes.intercept(self.ironic, at_service)
        fakes.intercept(self.nova, at_resize)
        status, rows, _, _ = self.roll('db-0', 'db-1', 'web-0', 'web-1',
                                       *DISABLED, '--max-unavailable', '2')
        self.assertEqual(1, status)
        # web-0 started once db-0 and db-1 were up again: web-1 and itself
        self.assertEqual((3, 2), (len(at_start), at_start[2]))
        self.assertLessEqual(max(at_start), 2, at_start)
        self.assertEqual(('done', 'done', 'done', 'unavailable: SHUTOFF'),
                         tuple(rows[n]['Outcome'] for n in (
                             'db-0', 'db-1', 'web-0', 'web-1')))

    def test_a_server_that_comes_back_frees_its_place(self):
        # web-1 is resized by someone else when the rollout starts: it
        # spends the budget of 1 until it is back, then db-0 goes
        self.nova.transitions[self.server('web-1')['id']] = [
            ('RESIZE', 'resize_migrating')] * 3 + [('ACTIVE', None)]
        self.server('web-1').update(status='RESIZE', **{
            'OS-EXT-STS:task_state': 'resize_migrating'})
        self.useFixture(fixtures.MockPatch(
            'osc_deploy_config.use_cases.fleet.drive.WATCH_SECONDS', 0))
        real_look = []

        def back_after_three_reads(method, path):
            self.sample(method, path)
            if path.startswith('/servers/detail'):
                real_look.append(path)
                if len(real_look) == 4:
                    self.server('web-1').update(
                        status='ACTIVE', **{'OS-EXT-STS:task_state': None})

        self.nova.after_request = back_after_three_reads
        status, rows, _, _ = self.roll('db-0', 'web-1', *DISABLED)
        self.assertEqual('done', rows['db-0']['Outcome'])
        self.assertEqual(1, self.peak)

    def test_an_interrupted_toggle_of_ours_takes_its_place_too(self):
        # db-0 was left locked by a killed rollout, but it runs: with
        # bm-1 in maintenance, the budget of 1 is spent, and nothing starts
        self.server('db-0').update(
            locked=True, locked_by='admin', locked_reason=(
                toggle_states.lock_reason([OFF], fakes.mine(
                    pid=fakes.gone_pid()))))
        self.nodes['bm-1']['maintenance'] = True
        status, rows, _, line = self.roll('db-0', 'db-1', *DISABLED)
        self.assertEqual(1, status)
        self.assertIn('spent by db-1 (node bm-1 in maintenance)',
                      rows['db-0']['Outcome'])
        self.assertEqual([], self.ironic.provision_requests)


class TestInterrupted(FleetTestCase):
    def interrupt(self, times, when):
        """Ctrl-C once ``when(method, path)``, then ``times - 1`` more,
        each a few requests later, once the rollout said it took the one
        before (two signals the process has not yet taken are one)."""
        sampled = self.ironic.after_request
        self.sent = []
        taken = self.ctrl_c_taken()

        def hook(method, path):
            sampled(method, path)
            if self.sent:
                self.sent.append(path)
            elif when(method, path):
                self.sent.append(path)
            else:
                return
            if len(self.sent) % 3 == 1 and len(self.sent) < 3 * times:
                taken()
                os.kill(os.getpid(), signal.SIGINT)

        self.ironic.after_request = hook

    def test_ctrl_c_twice_while_the_table_prints_prints_it_whole(self):
        class Interrupted(fakes.io.StringIO):
            def write(self, text):
                if not self.getvalue():
                    for _ in range(2):  # each taken at once: this thread
                        os.kill(os.getpid(), signal.SIGINT)
                return super().write(text)

        printed = Interrupted()
        status, rows, _, _ = self.roll('db-0', 'web-0', *DISABLED, '-f',
                                       'value', '-c', 'Server', '-c',
                                       'Outcome', stdout=printed)
        self.assertEqual(130, status)
        self.assertEqual(['db-0 done', 'web-0 done'],
                         sorted(printed.getvalue().splitlines()))

    def test_a_ctrl_c_that_leaves_waits_for_a_row_being_recorded(self):
        rollout = types.SimpleNamespace(interrupted=False, started=True,
                                        shielded=0, deferred=False)
        recorded = []
        with signals.interrupts(rollout):
            with testtools.ExpectedException(KeyboardInterrupt):
                with signals.shielded(rollout):
                    for _ in range(2):  # each taken at once: this thread
                        os.kill(os.getpid(), signal.SIGINT)
                    recorded.append('row')
            self.assertEqual(['row'], recorded)
            with signals.shielded(rollout, final=True):     # the table
                os.kill(os.getpid(), signal.SIGINT)
                recorded.append('table')
        self.assertEqual(['row', 'table'], recorded)

    def test_a_third_ctrl_c_as_the_rollout_leaves_keeps_the_rows_true(self):
        self.ironic.servicing_reads = 10 ** 6     # in flight as it leaves
        self.interrupt(2, lambda method, path: method == 'PUT')
        real, leaving = cmds.SetServerDeployConfig.say, []

        def say(cmd, text):
            if text.startswith('Leaving:'):
                leaving.append(text)
                os.kill(os.getpid(), signal.SIGINT)
            real(cmd, text)

        self.patch(cmds.SetServerDeployConfig, 'say', say)
        status, rows, said, _ = self.roll('db-0', 'db-1', *DISABLED)
        self.assertEqual(130, status)
        # db-0's servicing was asked for: in flight, not "not started"
        self.assertEqual(1, len(leaving))
        self.assertEqual([('bm-0', 'service')],
                         self.ironic.provision_requests)
        self.assertRegex(rows['db-0']['Outcome'], '^(interrupted|failed): ')
        self.assertEqual('not started: interrupted', rows['db-1']['Outcome'])

    def test_rollouts_in_turn_take_ctrl_c_as_the_one_under_way(self):
        # apply --rollout: before the first, at once; between two, it
        # marks the last (held off: its rows made) and waits
        current = signals.Current()
        with signals.interrupts(current):
            with testtools.ExpectedException(KeyboardInterrupt):
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0)
            rollout = types.SimpleNamespace(interrupted=False, started=True,
                                            shielded=0, deferred=False)
            current.rollout = rollout
            signals.hold_off(current)
            for _ in range(2):
                os.kill(os.getpid(), signal.SIGINT)
        self.assertEqual((True, True, 1), (
            rollout.interrupted, rollout.deferred, rollout.shielded))

    def test_ctrl_c_before_any_toggle_starts_prints_every_row(self):
        # the planning's lines said, the drive not begun: nothing started
        real = cmds.SetServerDeployConfig.say

        def say(cmd, text):
            real(cmd, text)
            if text.startswith('Planning '):
                os.kill(os.getpid(), signal.SIGINT)

        self.patch(cmds.SetServerDeployConfig, 'say', say)
        status, rows, _, _ = self.roll('db-0', 'web-0', *DISABLED)
        self.assertEqual(130, status)
        self.assertEqual({'db-0': 'not started: interrupted',
                          'web-0': 'not started: interrupted'},
                         self.outcomes(rows))
        self.assertEqual([], self.ironic.writes + self.nova.writes)

    def test_a_first_ctrl_c_lets_those_in_flight_end(self):
        self.interrupt(1, lambda method, path: method == 'PUT')
        status, rows, said, _ = self.roll('db-0', 'db-1', 'web-0', *DISABLED)
        self.assertEqual(130, status)
        self.assertEqual(['done', 'not started: interrupted',
                          'not started: interrupted'],
                         [rows[n]['Outcome'] for n in ('db-0', 'db-1',
                                                       'web-0')])
        self.assertIn('Rerun the same command to finish: openstack ', said)
        # those prepared ahead of their place too
        self.assertEqual([False] * 3, [self.server(n)['locked'] for n in (
            'db-0', 'db-1', 'web-0')])

    def test_a_second_ctrl_c_leaves_in_order(self):
        # the worker is told to stop: its wait ends, and it unlocks
        self.ironic.servicing_reads = 10 ** 6
        self.interrupt(2, lambda method, path: method == 'PUT')
        status, rows, said, _ = self.roll('db-0', 'db-1', *DISABLED)
        self.assertEqual(130, status)
        self.assertEqual(
            'failed: Node bm-0 is still in "servicing"; ironic goes on: '
            'rerun to finish the toggle once it ends (the rollout left)',
            rows['db-0']['Outcome'])
        self.assertEqual('not started: interrupted', rows['db-1']['Outcome'])
        self.assertIn('Leaving: 1 toggle(s) in flight are told to stop, and '
                      'waited for up to 15 s (Ctrl-C again to leave now).',
                      said)
        self.assertIn('Rerun the same command to finish', said)
        self.assertEqual([False] * 2, [self.server(n)['locked'] for n in (
            'db-0', 'db-1')])

    def test_a_rerun_finishes_a_toggle_interrupted_mid_way(self):
        # killed while ironic serviced bm-0: the lock of a gone process,
        # the pending record, the node servicing
        db0, node = self.server('db-0'), self.nodes['bm-0']
        process = fakes.gone_pid()
        db0.update(locked=True, locked_by='admin', locked_reason=(
            toggle_states.lock_reason([OFF], fakes.mine(pid=process))))
        node['properties'][toggle_record.PENDING] = \
            toggle_record.pending_patch(node, db0['id'], [OFF])[0]['value']
        self.ironic.set_state(node, 'servicing', 'active',
                              service_reads_left=2, service_steps=[
                                  {'interface': 'bios',
                                   'step': 'apply_configuration',
                                   'args': {'settings': [{
                                       'name': 'HyperThreading',
                                       'value': 'Disabled'}]}}])
        status, rows, _, _ = self.roll('db-0', 'db-1', *DISABLED)
        self.assertEqual(0, status)
        self.assertEqual({'db-0': 'done', 'db-1': 'done'},
                         self.outcomes(rows))
        self.assertEqual([('bm-1', 'service')],
                         self.ironic.provision_requests)
        self.assertEqual({'hyperthreading': OFF},
                         toggle_record.applied(node, db0['id']))
        self.assertFalse(db0['locked'])


class TestCost(FleetTestCase):
    def requests(self):
        return len(self.nova.requests + self.ironic.requests
                   + self.placement.requests + self.glance.requests)

    def planning(self):
        """The requests of a dry run of the whole flavor: planning's."""
        before = self.requests()
        status, rows, _, _ = self.roll('--flavor', 'bm.gold',
                                       '--all-projects', *DISABLED,
                                       '--dry-run')
        self.assertEqual(0, status)
        return self.requests() - before, len(rows)

    def test_planning_costs_pages_and_each_toggle_its_own_requests(self):
        self.ironic.servicing_reads = 1
        few = self.planning()
        for number in range(3, 9):
            self.baremetal('db-%d' % number, 'bm-%d' % number, tagged=True)
        many = self.planning()
        self.assertEqual((few[0], 3, 9), (many[0], few[1], many[1]))
        before = self.requests()
        status, rows, _, _ = self.roll('--flavor', 'bm.gold',
                                       '--all-projects', *DISABLED,
                                       '--max-unavailable', '3')
        toggled = sum(1 for r in rows.values() if r['Outcome'] == 'done')
        self.assertEqual((0, 8), (status, toggled))
        per_server = (self.requests() - before - many[0]) / toggled
        self.assertLessEqual(per_server, 10)

    def test_servers_of_another_project_are_read_in_its_listing(self):
        # an admin names four servers of project-2: each look at the
        # budget lists project-2 once, with its own scope's listing
        names = []
        for number in range(4):
            server = self.nova.add_server('vm-%d' % number, self.tiny)
            server['tenant_id'] = 'project-2'
            names.append(server['name'])
        ids = {self.server(n)['id'] for n in names}
        before = len(self.nova.requests)
        status, rows, _, _ = self.roll(*ids, *DISABLED)
        self.assertEqual((0, ['done'] * 4), (
            status, [rows[n]['Outcome'] for n in names]))
        made = self.nova.requests[before:]
        looks = sum(1 for _, path, _ in made if 'project_id=project-2' in path)
        self.assertGreaterEqual(looks, 4)
        # a listing of the admin's own scope with each, and the selection's
        self.assertEqual(looks + 1, sum(
            1 for _, path, _ in made if path.startswith('/servers/detail')
            and 'project_id' not in path))

    def test_planning_virtual_servers_costs_pages_whatever_the_hosts(self):
        costs = []
        for servers, hosts in ((3, 1), (9, 3)):
            names = []
            for number in range(servers):
                host = 'compute-%d' % (number % hosts)
                if host not in self.nova.hypervisors:
                    self.nova.hypervisors[host] = 'fake'
                    self.placement.add_provider(host, traits=[ON_T, OFF_T])
                server = self.nova.add_server(
                    'vm-%d-%d' % (servers, number), self.tiny,
                    hypervisor=host)
                names.append(server['name'])
            before = self.requests()
            status, rows, _, _ = self.roll(*names, *DISABLED, '--dry-run')
            self.assertEqual(
                ['planned'] * servers,
                [rows[n]['Outcome'].split(':')[0] for n in names])
            costs.append(self.requests() - before)
        self.assertEqual(costs[0], costs[1])


class TestTrust(FleetTestCase):
    def test_a_projects_record_alone_never_makes_a_server_unchanged(self):
        # a member of db-0's project writes the node's extra: a record of
        # disabled, granted or not, while the BIOS runs enabled
        node = self.nodes['bm-0']
        node['extra'][toggle_record.PROJECT_APPLIED] = {
            'instance_uuid': self.server('db-0')['id'],
            'project_id': 'project-1',
            'configs': {'hyperthreading': 'disabled'}}
        for template in self.ironic.templates.values():
            fakes.grant(template, 'project-1')
        status, rows, _, _ = self.roll('db-0', *DISABLED)
        self.assertEqual((0, 'done'), (status, rows['db-0']['Outcome']))
        self.assertEqual([('bm-0', 'service')],
                         self.ironic.provision_requests)


class TestAlwaysEnds(FleetTestCase):
    def test_the_timeout_bounds_the_whole_rollout(self):
        # resizes that never end, a budget of 2: both time out, the third
        # never starts, and every row is there (2 s: planning these takes
        # milliseconds, even on a busy machine)
        self.nova.resize_reads = -1
        web_2 = self.nova.add_server('web-2', self.tiny)
        self.placement.allocate(web_2['id'], next(iter(
            self.placement.providers.values())), {'VCPU': 1})
        status, rows, _, line = self.roll(
            'web-0', 'web-1', 'web-2', *DISABLED, '--max-unavailable', '2',
            '--wait-timeout', '2')
        self.assertEqual(1, status)
        self.assertEqual(3, len(rows))
        self.assertEqual(['failed', 'failed'], [
            rows[n]['Outcome'].split(':')[0] for n in ('web-0', 'web-1')])
        self.assertIn('(--wait-timeout)', rows['web-0']['Outcome'])
        self.assertEqual('not started: --wait-timeout reached',
                         rows['web-2']['Outcome'])
        self.assertFalse(any(s['locked'] for s in self.nova.servers.values()))

    def test_no_change_starts_once_its_checks_passed_the_deadline(self):
        # its lock, in its worker, outlasts --wait-timeout: the server is
        # unlocked, and nothing else changes
        real = self.nova.handle

        def slow_lock_in_a_worker(path, method, **kwargs):
            answer = real(path, method, **kwargs)
            if (threading.current_thread() is not threading.main_thread()
                    and 'lock' in (kwargs.get('json') or {})):
                SLEEP(2.5)
            return answer

        self.nova.proxy.request.side_effect = slow_lock_in_a_worker
        status, rows, _, _ = self.roll('db-0', *DISABLED,
                                       '--wait-timeout', '2')
        self.assertEqual(1, status)
        self.assertEqual('not started: --wait-timeout reached',
                         rows['db-0']['Outcome'])
        self.assertEqual([], self.ironic.writes)
        self.assertEqual(['lock', 'unlock'],
                         self.nova.locks(self.server('db-0')))
        self.assertFalse(self.server('db-0')['locked'])

    def test_a_toggle_whose_request_raises_anything_is_reported(self):
        real = self.ironic.handle

        def broken(path, method, **kwargs):
            if method == 'PUT' and path.endswith('/states/provision'):
                raise ConnectionResetError('reset by peer')
            return real(path, method, **kwargs)

        self.ironic.proxy.request.side_effect = broken
        status, rows, _, _ = self.roll('db-0', 'db-1', *DISABLED,
                                       '--max-failures', '1')
        self.assertEqual(1, status)
        self.assertEqual(['failed: reset by peer'] * 2,
                         [rows[n]['Outcome'] for n in ('db-0', 'db-1')])
        self.assertFalse(any(s['locked'] for s in self.nova.servers.values()))

    def test_an_unexpected_planning_error_still_prints_every_row(self):
        def broken(path, method, **kwargs):
            raise ValueError('glance sent no JSON')

        self.glance.proxy.request.side_effect = broken
        self.server('db-0')['image'] = {'id': 'some-image'}
        status, rows, _, line = self.roll('db-0', 'web-0', *DISABLED)
        self.assertEqual(1, status)
        self.assertEqual(['not started: planning failed: glance sent no '
                          'JSON'] * 2, [rows[n]['Outcome'] for n in (
                              'db-0', 'web-0')])
        self.assertEqual([], self.ironic.writes + self.nova.writes)

    def test_a_confirmation_that_ends_in_error_is_not_done(self):
        self.nova.confirm_leaves = 'ERROR'
        status, rows, _, _ = self.roll('web-0', *DISABLED)
        self.assertEqual(1, status)
        self.assertRegex(rows['web-0']['Outcome'], '^failed: Nova ended the '
                         'resize of server web-0 with it ERROR')

    def test_done_is_read_back_from_the_cloud_at_the_end(self):
        # nova's power sync stops db-0 once its servicing is over
        real = self.ironic.after_request

        def stopped_by_nova(method, path):
            real(method, path)
            if method == 'PATCH' and self.ironic.serviced:
                self.server('db-0')['status'] = 'SHUTOFF'

        self.ironic.after_request = stopped_by_nova
        status, rows, _, _ = self.roll('db-0', *DISABLED)
        self.assertEqual((1, 'failed: toggled, but the server is SHUTOFF '
                          'now'), (status, rows['db-0']['Outcome']))

    def listings_fail(self, when):
        """Nova's listings of servers fail (a reset) while ``when()``."""
        real = self.nova.handle

        def reset(path, method, **kwargs):
            if path.startswith('/servers/detail') and when():
                raise ConnectionResetError('reset by peer')
            return real(path, method, **kwargs)

        self.nova.proxy.request.side_effect = reset

    def test_a_budget_not_read_starts_nothing_until_it_is(self):
        # the selection's listing passes, the budget's first one fails
        self.useFixture(fixtures.MockPatch(
            'osc_deploy_config.use_cases.fleet.drive.WATCH_SECONDS', 0))
        listings = []

        def second():
            listings.append(1)
            return len(listings) == 2

        self.listings_fail(second)
        status, rows, said, _ = self.roll('db-0', *DISABLED)
        self.assertEqual((0, 'done'), (status, rows['db-0']['Outcome']))
        self.assertIn('The cloud could not be read for the budget (reset by '
                      'peer): nothing starts until it can.', said)
        self.assertEqual(1, said.count('could not be read'))

    def test_done_that_cannot_be_read_back_is_not_done(self):
        self.listings_fail(lambda: bool(self.ironic.serviced))
        status, rows, _, _ = self.roll('db-0', *DISABLED)
        self.assertEqual((1, 'not read back: reset by peer'), (
            status, rows['db-0']['Outcome']))
        # what ironic did stands: the rerun finds it done
        self.nova.proxy.request.side_effect = self.nova.handle
        status, rows, _, _ = self.roll('db-0', *DISABLED)
        self.assertEqual((0, 'unchanged'), (status, rows['db-0']['Outcome']))


class TestOutdated(FleetTestCase):
    def test_lists_only_the_servers_their_flavor_moved_from(self):
        self.nova.flavors[self.tiny['id']]['extra_specs'] = {
            'deploy-config:hyperthreading': 'disabled',
            'trait:' + OFF_T: 'required'}
        columns, rows = self.run_command(cmds.ListServerDeployConfig,
                                         ['--all-projects', '--outdated'])
        self.assertEqual(['web-0', 'web-1'], sorted(r[0] for r in rows))

