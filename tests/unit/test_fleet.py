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
services, what it leaves on the cloud and what it says."""

import re
import time

import fixtures
from osc_lib import exceptions

from osc_deploy_config.domain import toggle_record
from osc_deploy_config.v1 import server_deploy_config as cmds
from tests.unit import fakes
from tests.unit.fakes import GOLD
from tests.unit.fakes import HT
from tests.unit.fakes import OFF
from tests.unit.fakes import OFF_T
from tests.unit.fakes import ON_T

ON_SPECS = {'deploy-config:hyperthreading': 'enabled',
            'trait:' + ON_T: 'required'}
IN_FLIGHT = re.compile(r'(\d+) in flight')
SLEEP = time.sleep


class FleetTestCase(fakes.TestCommand):
    """Two bare-metal servers (bm-0, bm-1) and two virtual ones, all of a
    flavor asking for hyperthreading=enabled; every host tagged for
    disabled but bm-2's, which hosts a third bare-metal server."""

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

    def baremetal(self, name, node_name, tagged):
        server = self.nova.add_server(name, self.gold)
        traits = [HT, ON_T] + ([OFF_T] if tagged else [])
        self.nodes[node_name] = self.deploy_on_node(
            server, node_name, traits, {'HyperThreading': 'Enabled'})

    def roll(self, *args):
        columns, rows = self.run_command(cmds.SetServerDeployConfig,
                                         list(args))
        return {r[0]: dict(zip(columns, r, strict=True)) for r in rows}

    def set(self, *args):
        """As cliff runs it: the rows, then a non-zero exit on failures."""
        cmd = cmds.SetServerDeployConfig(self.app, None)
        parsed = self.check_parser(cmd, list(args), [])
        self.app.stdout = fakes.io.StringIO()
        return cmd, parsed

    def max_in_flight(self):
        return max(int(n) for n in IN_FLIGHT.findall(
            self.fake_stderr.getvalue()))


class TestRollout(FleetTestCase):
    def test_a_mixed_fleet_at_most_two_at_once(self):
        # servicing lasts a few polls, each a moment: toggles overlap
        self.ironic.servicing_reads = 5
        self.useFixture(fixtures.MockPatch(
            'time.sleep', side_effect=lambda seconds: SLEEP(0.01)))
        rows = self.roll('db-0', 'db-1', 'web-0', 'web-1',
                         '--deploy-config', 'hyperthreading=disabled',
                         '--max-unavailable', '2')
        self.assertEqual({'db-0': 'toggled', 'db-1': 'toggled',
                          'web-0': 'toggled', 'web-1': 'toggled'},
                         {n: r['Outcome'] for n, r in rows.items()})
        self.assertEqual(2, self.max_in_flight())
        for name in ('bm-0', 'bm-1'):
            self.assertEqual({'HyperThreading': 'Disabled'},
                             self.nodes[name]['bios'])
        self.assertEqual('m1.tiny+hyperthreading=disabled',
                         self.nova_server('web-0')['flavor']['original_name'])

    def test_one_at_a_time_by_default(self):
        self.ironic.servicing_reads = 5
        self.useFixture(fixtures.MockPatch(
            'time.sleep', side_effect=lambda seconds: SLEEP(0.01)))
        self.roll('db-0', 'db-1', 'web-0', '--deploy-config',
                  'hyperthreading=disabled')
        self.assertEqual(1, self.max_in_flight())

    def test_the_templates_are_read_once_for_every_server(self):
        for number in range(3, 8):
            self.baremetal('db-%d' % number, 'bm-%d' % number, tagged=True)
        self.roll('--flavor', 'bm.gold', '--all-projects',
                  '--deploy-config', 'hyperthreading=disabled')
        self.assertEqual(1, len([r for r in self.ironic.requests
                                 if r[1].startswith('/deploy_templates')]))

    def test_an_incapable_server_is_skipped_and_untouched(self):
        rows = self.roll('--flavor', 'bm.gold', '--all-projects',
                         '--deploy-config', 'hyperthreading=disabled')
        self.assertIn('skipped: Server db-2 cannot take '
                      'hyperthreading=disabled on its host: node bm-2 lacks '
                      '%s' % OFF_T, rows['db-2']['Outcome'])
        self.assertEqual({'HyperThreading': 'Enabled'},
                         self.nodes['bm-2']['bios'])
        self.assertNotIn(('bm-2', 'service'),
                         self.ironic.provision_requests)

    def test_a_flavor_change_rolled_out_to_its_servers(self):
        # the flavor now asks for disabled: its servers follow
        self.nova.flavors[self.tiny['id']]['extra_specs'] = {
            'deploy-config:hyperthreading': 'disabled',
            'trait:' + OFF_T: 'required'}
        rows = self.roll('--flavor', 'm1.tiny', '--all-projects')
        self.assertEqual(['web-0', 'web-1'], sorted(rows))
        self.assertEqual({'toggled'}, {r['Outcome'] for r in rows.values()})
        self.assertEqual(('hyperthreading=enabled', 'hyperthreading=disabled'),
                         (rows['web-0']['From'], rows['web-0']['To']))

    def test_dry_run_plans_every_server_and_changes_nothing(self):
        rows = self.roll('--flavor', 'bm.gold', '--all-projects',
                         '--deploy-config', 'hyperthreading=disabled',
                         '--dry-run')
        self.assertEqual(
            'planned: service node bm-0 with bios.apply_configuration '
            '(reboots)', rows['db-0']['Outcome'])
        self.assertTrue(rows['db-2']['Outcome'].startswith('skipped: '))
        self.assertEqual([], self.ironic.writes + self.nova.writes)

    def test_a_rerun_toggles_no_server_twice(self):
        args = ('--flavor', 'bm.gold', '--all-projects', '--deploy-config',
                'hyperthreading=disabled')
        self.roll(*args)
        serviced = list(self.ironic.provision_requests)
        rows = self.roll(*args)
        self.assertEqual(serviced, self.ironic.provision_requests)
        self.assertEqual('unchanged', rows['db-0']['Outcome'])

    def test_a_rerun_finishes_what_was_left_in_flight(self):
        # killed after ironic serviced bm-0, before the record
        self.nodes['bm-0']['bios'] = {'HyperThreading': 'Disabled'}
        rows = self.roll('db-0', '--deploy-config', 'hyperthreading=disabled')
        self.assertEqual('toggled', rows['db-0']['Outcome'])
        self.assertEqual([], self.ironic.provision_requests)
        self.assertEqual({'hyperthreading': OFF}, toggle_record.applied(
            self.nodes['bm-0'], self.nova_server('db-0')['id']))

    def test_failures_stop_new_starts_and_exit_non_zero(self):
        self.ironic.failing_nodes.add('bm-0')
        cmd, parsed = self.set('db-0', 'db-1', 'web-0', '--deploy-config',
                               'hyperthreading=disabled')
        exc = self.assertRaises(exceptions.CommandError, cmd.run, parsed)
        self.assertTrue(str(exc).startswith('1 server(s) failed: db-0: '
                                            'Servicing node bm-0 failed'))
        table = self.app.stdout.getvalue()
        self.assertIn('not started', table)
        self.assertEqual([('bm-0', 'service'), ('bm-0', 'abort')],
                         self.ironic.provision_requests)
        self.assertEqual('active', self.nodes['bm-0']['provision_state'])
        self.assertEqual('m1.tiny',
                         self.nova_server('web-0')['flavor']['original_name'])

    def test_bad_input_before_any_request(self):
        for args, why in (
                (('db-0',), 'Give the configs'),
                (('db-0', '--deploy-config', 'a=b', '--deploy-config',
                  'a=c'), 'Two values'),
                (('db-0', '--deploy-config', 'ht=on',
                  '--max-unavailable', '0'), '--max-unavailable of 1')):
            exc = self.assertRaises(exceptions.CommandError, self.roll,
                                    *args)
            self.assertIn(why, str(exc))
        self.assertEqual([], self.nova.requests + self.ironic.requests)

    def nova_server(self, name):
        return next(s for s in self.nova.servers.values()
                    if s['name'] == name)


class TestOutdated(FleetTestCase):
    def test_lists_only_the_servers_their_flavor_moved_from(self):
        self.nova.flavors[self.tiny['id']]['extra_specs'] = {
            'deploy-config:hyperthreading': 'disabled',
            'trait:' + OFF_T: 'required'}
        columns, rows = self.run_command(cmds.ListServerDeployConfig,
                                         ['--all-projects', '--outdated'])
        self.assertEqual(['web-0', 'web-1'], sorted(r[0] for r in rows))
