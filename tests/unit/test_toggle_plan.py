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

"""Planning a deploy-config toggle, and the hook's parser."""

import io
from unittest import mock

from openstackclient.compute.v2 import server as osc_server
from osc_lib import exceptions
from osc_lib.test import base as osc_base
import testtools

from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.toggle import toggle_plan
from osc_deploy_config.v1 import server_hooks as hook
from tests.unit.fakes import GOLD
from tests.unit.fakes import OFF
from tests.unit.fakes import OFF_T
from tests.unit.fakes import ON
from tests.unit.fakes import ON_T

STEP = {'interface': 'bios', 'step': 'apply_configuration',
        'args': {'settings': [{'name': 'HyperThreading', 'value': 'Off'}]},
        'priority': 150}
TEMPLATES = {ON: {'name': ON_T, 'steps': [STEP]},
             OFF: {'name': OFF_T, 'steps': [STEP]}}
ON_SPECS = dict(GOLD, **{'deploy-config:hyperthreading': 'enabled',
                         'trait:' + ON_T: 'required'})
OFF_SPECS = dict(GOLD, **{'deploy-config:hyperthreading': 'disabled',
                          'trait:' + OFF_T: 'required'})


def server(specs=ON_SPECS, name='bm.gold', metadata=None):
    return {'id': 'srv', 'name': 's', 'metadata': metadata or {},
            'flavor': {'original_name': name, 'vcpus': 4, 'ram': 8192,
                       'disk': 40, 'ephemeral': 0, 'swap': 0,
                       'extra_specs': dict(specs)}}


def listed(name, specs, **sizes):
    flavor = {'id': name + '-id', 'name': name, 'vcpus': 4, 'ram': 8192,
              'disk': 40, 'OS-FLV-EXT-DATA:ephemeral': 0, 'swap': '',
              'extra_specs': dict(specs)}
    flavor.update(sizes)
    return flavor


class TestPlan(testtools.TestCase):
    def test_new_flavor_with_a_derived_stable_name(self):
        plan = toggle_plan.plan(server(), [OFF], TEMPLATES,
                           [listed('bm.gold', ON_SPECS)])
        self.assertTrue(plan.changed)
        self.assertEqual(OFF_SPECS, plan.target_specs)
        self.assertIsNone(plan.target_flavor)
        self.assertEqual('bm.gold+hyperthreading=disabled',
                         plan.new_flavor_name)

    def test_reuses_an_identical_flavor(self):
        twin = listed('gold-off', OFF_SPECS)
        plan = toggle_plan.plan(server(), [OFF], TEMPLATES,
                           [listed('bm.gold', ON_SPECS), twin,
                            listed('bigger', OFF_SPECS, ram=16384)])
        self.assertEqual(twin, plan.target_flavor)
        self.assertIsNone(plan.new_flavor_name)

    def test_back_to_the_original_flavor(self):
        original = listed('bm.gold', ON_SPECS)
        plan = toggle_plan.plan(
            server(OFF_SPECS, name='bm.gold+hyperthreading=disabled'), [ON],
            TEMPLATES, [original])
        self.assertEqual(original, plan.target_flavor)

    def test_derived_name_does_not_grow(self):
        self.assertEqual(
            'bm.gold+hyperthreading=enabled',
            toggle_plan.derived_flavor_name('bm.gold+hyperthreading=disabled',
                                       ON_SPECS))

    def test_already_in_that_config(self):
        self.assertFalse(
            toggle_plan.plan(server(), [ON], TEMPLATES, []).changed)

    def test_recorded_bare_metal_toggle_counts(self):
        applied = {'hyperthreading': OFF}
        self.assertFalse(toggle_plan.plan(server(), [OFF], TEMPLATES, [],
                                          applied).changed)
        self.assertTrue(toggle_plan.plan(server(), [ON], TEMPLATES, [],
                                         applied).changed)

    def test_the_servers_metadata_is_no_record(self):
        owned = server(metadata={'deploy-config:hyperthreading': 'disabled'})
        self.assertTrue(toggle_plan.plan(owned, [OFF], TEMPLATES,
                                         []).changed)

    def test_refusals_of_the_translation(self):
        for configs, why in (([deploy_config.Config('hyperthreading', 'auto')],
                              'No deploy template'),
                             ([ON, OFF], 'Two values')):
            exc = self.assertRaises(exceptions.CommandError, toggle_plan.plan,
                                    server(), configs, TEMPLATES, [])
            self.assertIn(why, str(exc))

    def test_a_different_flavor_with_the_derived_name_is_refused(self):
        taken = listed('bm.gold+hyperthreading=disabled', GOLD)
        plan = toggle_plan.plan(server(), [OFF], TEMPLATES, [taken])
        exc = self.assertRaises(exceptions.CommandError,
                                toggle_plan.refuse_taken_name, plan, [taken])
        self.assertIn('exists but differs', str(exc))

    def test_our_half_made_flavor_is_finished_not_refused(self):
        # an interrupted toggle created the flavor, not yet its extra specs
        plan = toggle_plan.plan(server(), [OFF], TEMPLATES, [])
        ours = dict(listed(plan.new_flavor_name, {}),
                    description=toggle_plan.derived_description('bm.gold'))
        sizes = toggle_plan.sizes_of(server()['flavor'])
        self.assertEqual(ours,
                         toggle_plan.unfinished_flavor(plan, [ours], sizes))
        for other in (dict(ours, description='an operator\'s'),
                      dict(ours, ram=16384),
                      dict(ours, name='bm.gold+other')):
            self.assertIsNone(
                toggle_plan.unfinished_flavor(plan, [other], sizes))


class TestSchedulerProblems(testtools.TestCase):
    def provider(self, traits=(), reserved=0):
        return {'uuid': 'rp', 'name': 'fake-compute', 'traits': list(traits),
                'inventories': {'VCPU': {'total': 8, 'reserved': reserved}},
                'resources': {'VCPU': 1}}

    def test_capable_host(self):
        self.assertEqual([], toggle_plan.scheduler_problems(
            [self.provider([OFF_T])], OFF_SPECS))

    def test_missing_trait_named(self):
        self.assertEqual(['fake-compute lacks %s' % OFF_T],
                         toggle_plan.scheduler_problems([self.provider()],
                                                   OFF_SPECS))

    def test_reserved_host(self):
        (problem,) = toggle_plan.scheduler_problems(
            [self.provider([OFF_T], reserved=8)], OFF_SPECS)
        self.assertIn('fake-compute is reserved', problem)

    def test_bare_metal_maintenance_from_ironic_not_reservation(self):
        node_rp = dict(self.provider([OFF_T], reserved=8), uuid='n1')
        node = {'uuid': 'n1', 'name': 'bm-0', 'maintenance': False}
        self.assertEqual([], toggle_plan.scheduler_problems(
            [node_rp], OFF_SPECS, node))
        node['maintenance'] = True
        self.assertEqual(['node bm-0 is in maintenance'],
                         toggle_plan.scheduler_problems([node_rp], OFF_SPECS,
                                                   node))
        self.assertEqual(['node bm-0 lacks %s' % OFF_T],
                         toggle_plan.scheduler_problems(
                             [dict(node_rp, traits=[])], OFF_SPECS,
                             dict(node, maintenance=False)))


class TestServiceSteps(testtools.TestCase):
    def test_priority_order_without_priority(self):
        first = dict(STEP, interface='raid', priority=200)
        steps = toggle_plan.service_steps({'steps': [STEP, first]})
        self.assertEqual(['raid', 'bios'], [s['interface'] for s in steps])
        self.assertNotIn('priority', steps[0])


class TestHookParser(osc_base.TestCommand):
    def setUp(self):
        super().setUp()
        self.cmd = osc_server.ResizeServer(self.app, None)
        self.hook = hook.ResizeDeployConfigHook(self.cmd)
        self.cmd._hooks = [mock.Mock(obj=self.hook)]

    def parse(self, *args):
        return self.check_parser(self.cmd, list(args), [])

    def test_deploy_config_alone_is_enough(self):
        parsed = self.parse('--deploy-config', 'hyperthreading=off',
                            '--deploy-config', 'raid=r1', '--dry-run', 's')
        self.assertEqual(['hyperthreading=off', 'raid=r1'],
                         parsed.deploy_configs)
        self.assertTrue(parsed.dry_run)

    def test_not_with_flavor_confirm_or_revert(self):
        for other in (['--flavor', 'f'], ['--confirm'], ['--revert']):
            with mock.patch('sys.stderr', io.StringIO()) as err:
                self.assertRaises(osc_base.ParserException, self.parse,
                                  '--deploy-config', 'a=b', *other, 's')
            self.assertIn('argument %s: not allowed with argument '
                          '--deploy-config' % other[0], err.getvalue())

    def refused_by_before(self, *args):
        parsed = self.parse(*args)
        with mock.patch('sys.stderr', io.StringIO()) as err:
            self.assertRaises(SystemExit, self.hook.before, parsed)
        return err.getvalue()

    def test_osc_requirement_kept_without_deploy_config(self):
        self.assertIn('one of the arguments --flavor --confirm --revert '
                      '--deploy-config is required', self.refused_by_before(
                          's'))

    def test_dry_run_and_auto_confirm_need_deploy_config(self):
        for option in ('--dry-run', '--auto-confirm'):
            self.assertIn('go with --deploy-config', self.refused_by_before(
                '--flavor', 'f', option, 's'))

    def test_argument_errors_in_one_line(self):
        with mock.patch('sys.stderr', io.StringIO()) as err:
            self.assertRaises(osc_base.ParserException, self.parse,
                              '--deploy-config', 'a=b', '--flavor', 'f', 's')
        self.assertEqual(1, len(err.getvalue().splitlines()),
                         err.getvalue())
        self.assertIn('not allowed with argument', err.getvalue())

    def test_plain_resize_left_to_osc(self):
        parsed = self.parse('--flavor', 'f', 's')
        self.assertIs(parsed, self.hook.before(parsed))
        self.assertNotIn('take_action', vars(self.cmd))
