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

from osc_lib import exceptions

from osc_deploy_config.v1 import owner_deploy_config as cmds
from tests.unit import fakes
from tests.unit.fakes import GOLD
from tests.unit.fakes import HT
from tests.unit.fakes import OFF_T
from tests.unit.fakes import ON_T

# bm.gold as the mini cloud seeds it: a whole node, nothing else.
BM_GOLD = dict(GOLD, **{'resources:VCPU': '0', 'resources:MEMORY_MB': '0',
                        'resources:DISK_GB': '0'})


def annotation(config_type, value, traits=HT):
    return {'deploy_config_type': config_type,
            'deploy_config_value': value,
            'deploy_config_requires_traits': traits}


class FlavorCommandTest(fakes.TestCommand):
    def setUp(self):
        super().setUp()
        self.ironic.add_template(ON_T, extra=annotation('hyperthreading',
                                                      'enabled'))
        self.ironic.add_template(OFF_T, extra=annotation('hyperthreading',
                                                       'disabled'))
        self.gold = self.nova.add_flavor('bm.gold', BM_GOLD)

    def rows(self, command, *args):
        columns, rows = self.run_command(command, list(args))
        return [dict(zip(columns, r, strict=True)) for r in rows]


class TestSet(FlavorCommandTest):
    def test_writes_config_and_template_trait(self):
        rows = self.rows(cmds.SetFlavorDeployConfig, 'bm.gold',
                         'hyperthreading=enabled')
        self.assertEqual(dict(BM_GOLD, **{
            'deploy-config:hyperthreading': 'enabled',
            'trait:%s' % ON_T: 'required'}), self.gold['extra_specs'])
        self.assertEqual({'set'}, {r['Action'] for r in rows})
        self.assertEqual([('POST', '/flavors/%s/os-extra_specs'
                           % self.gold['id'])], self.nova.writes)
        self.assertEqual({'2.61'}, {r[2] for r in self.nova.requests})
        self.assertEqual(1, len(self.ironic.requests),
                         'one template listing')

    def concurrent_writer(self, specs):
        """Another command writes these specs right after ours."""
        handle = self.nova.handle

        def then_theirs(path, method, **kwargs):
            answer = handle(path, method, **kwargs)
            if method == 'POST':
                self.gold['extra_specs'].update(specs)
            return answer

        self.nova.proxy.request.side_effect = then_theirs

    def test_a_concurrent_set_that_won_is_repaired_and_reported(self):
        self.concurrent_writer({'deploy-config:hyperthreading': 'disabled',
                                'trait:%s' % OFF_T: 'required'})
        exc = self.assertRaises(
            exceptions.CommandError, self.rows, cmds.SetFlavorDeployConfig,
            'bm.gold', 'hyperthreading=enabled')
        self.assertEqual('A concurrent change of flavor bm.gold won for '
                         'hyperthreading: it now asks for '
                         'hyperthreading=disabled', str(exc))
        # our trait, stray beside theirs, is gone
        self.assertEqual(dict(BM_GOLD, **{
            'deploy-config:hyperthreading': 'disabled',
            'trait:%s' % OFF_T: 'required'}), self.gold['extra_specs'])

    def test_toggle_replaces(self):
        self.rows(cmds.SetFlavorDeployConfig, self.gold['id'],
                  'hyperthreading=enabled')
        rows = self.rows(cmds.SetFlavorDeployConfig, 'bm.gold',
                         'hyperthreading=disabled')
        self.assertEqual(dict(BM_GOLD, **{
            'deploy-config:hyperthreading': 'disabled',
            'trait:%s' % OFF_T: 'required'}), self.gold['extra_specs'])
        self.assertIn(('unset', 'trait:%s' % ON_T, 'required'),
                      [(r['Action'], r['Extra Spec'], r['Value'])
                       for r in rows])

    def test_dry_run_writes_nothing(self):
        rows = self.rows(cmds.SetFlavorDeployConfig, 'bm.gold',
                         'hyperthreading=enabled', '--dry-run')
        self.assertEqual({'would set'}, {r['Action'] for r in rows})
        self.assertEqual(BM_GOLD, self.gold['extra_specs'])
        self.assertEqual([], self.nova.writes)

    def test_refusals_write_nothing(self):
        for config_type, level in (('disks', '1'), ('layout', '0')):
            self.ironic.add_template(
                'CUSTOM_%s' % config_type.upper(), steps=[{
                    'interface': 'raid', 'step': 'apply_configuration',
                    'args': {'raid_config': {'logical_disks': [
                        {'raid_level': level, 'size_gb': 'MAX'}]}},
                    'priority': 150}],
                extra=annotation(config_type, 'raid' + level, ''))
        self.nova.add_flavor('twin')
        self.nova.add_flavor('twin')
        for args, why in (
                (['nope', 'hyperthreading=enabled'], 'No flavor'),
                (['twin', 'hyperthreading=enabled'], 'More than one'),
                (['bm.gold', 'hyperthreading=auto'], 'No deploy template'),
                (['bm.gold', 'hyperthreading=enabled',
                  'hyperthreading=disabled'], 'Two values'),
                (['bm.gold', 'disks=raid1', 'layout=raid0'],
                 'Deploy configs disks=raid1 and layout=raid0 both run '
                 'raid.apply_configuration, differently'),
                (['bm.gold', 'hyperthreading'], 'TYPE=VALUE')):
            exc = self.assertRaises(exceptions.CommandError, self.rows,
                                    cmds.SetFlavorDeployConfig, *args)
            self.assertIn(why, str(exc))
        self.assertEqual([], self.nova.writes)
        self.assertEqual([], self.ironic.writes)


class TestUnset(FlavorCommandTest):
    def test_restores_exactly(self):
        self.gold['extra_specs']['trait:CUSTOM_MINE'] = 'required'
        before = dict(self.gold['extra_specs'])
        self.rows(cmds.SetFlavorDeployConfig, 'bm.gold',
                  'hyperthreading=enabled')
        rows = self.rows(cmds.UnsetFlavorDeployConfig, 'bm.gold',
                         'hyperthreading')
        self.assertEqual(before, self.gold['extra_specs'])
        self.assertEqual(2, len(rows))

    def test_type_not_set(self):
        exc = self.assertRaises(exceptions.CommandError, self.rows,
                                cmds.UnsetFlavorDeployConfig, 'bm.gold',
                                'hyperthreading')
        self.assertIn('nothing to unset', str(exc))
        self.assertEqual([], self.nova.writes)


class TestShowList(FlavorCommandTest):
    def node(self, name, traits, in_placement=(), reserved=0, **options):
        """An ironic node and its resource provider, whose traits are those
        nova copied (``in_placement``)."""
        node = self.ironic.add_node(name, traits, **options)
        self.placement.add_provider(
            node['uuid'], traits=in_placement, uuid_=node['uuid'],
            reserved=reserved, resource_class='CUSTOM_BAREMETAL_GOLD')
        return node

    def show(self):
        columns, data = self.run_command(cmds.ShowFlavorDeployConfig,
                                         ['bm.gold'])
        return dict(zip(columns, data, strict=True))

    def test_show_asks_placement_what_the_scheduler_asks(self):
        self.node('bm-0', [HT, ON_T], in_placement=[HT, ON_T])
        self.node('bm-1', [HT, ON_T], in_placement=[HT])
        self.node('bm-3', [HT, ON_T], in_placement=[HT, ON_T], reserved=1,
                  maintenance=True)
        self.node('bm-2', [HT], in_placement=[HT])
        self.rows(cmds.SetFlavorDeployConfig, 'bm.gold',
                  'hyperthreading=enabled')
        self.placement.requests.clear()
        shown = self.show()
        self.assertEqual(['hyperthreading=enabled'],
                         list(shown['deploy_configs'].machine_readable()))
        self.assertEqual({'hyperthreading=enabled': ON_T},
                         shown['templates'].machine_readable())
        self.assertEqual({'hyperthreading=enabled': 3},
                         shown['tagged_nodes'].machine_readable())
        self.assertEqual(1, shown['schedulable_nodes'])
        self.assertEqual(
            ['hyperthreading=enabled: 3 node(s) tagged in ironic, 1 '
             'schedulable: bm-1 tag not yet copied to placement; bm-3 '
             'reserved (maintenance)'],
            list(shown['drift'].machine_readable()))
        self.assertEqual(
            ['/allocation_candidates?resources=CUSTOM_BAREMETAL_GOLD%3A1&'
             'required=' + ON_T,
             '/allocation_candidates?resources=CUSTOM_BAREMETAL_GOLD%3A1'],
            [r[1] for r in self.placement.requests])

    def test_show_warns_when_no_node_can_take_it(self):
        self.node('bm-0', [HT, ON_T], in_placement=[HT, ON_T])
        self.rows(cmds.SetFlavorDeployConfig, 'bm.gold',
                  'hyperthreading=disabled')
        shown = self.show()
        self.assertEqual(0, shown['schedulable_nodes'])
        (warning,) = shown['drift'].machine_readable()
        self.assertIn('no node is schedulable for this flavor', warning)

    def test_hidden_extra_specs_are_said_not_guessed(self):
        # nova leaves extra specs out for a token its policy refuses them
        del self.gold['extra_specs']
        for command, args in ((cmds.ShowFlavorDeployConfig, ['bm.gold']),
                              (cmds.ListFlavorDeployConfig, [])):
            exc = self.assertRaises(exceptions.CommandError,
                                    self.run_command, command, args)
            self.assertIn('Nova does not show flavor extra specs to these '
                          'credentials', str(exc))

    def test_list_is_one_request_for_any_number_of_flavors(self):
        for n in range(150):
            self.nova.add_flavor('f%03d' % n, {
                'deploy-config:hyperthreading': 'enabled'} if n % 2 else {})
        rows = self.rows(cmds.ListFlavorDeployConfig)
        self.assertEqual(75, len(rows))
        self.assertEqual(1, len(self.nova.requests))
        # nor a version discovery (which the SDK has not made for nova)
        self.nova.proxy.get_endpoint_data.assert_not_called()
        self.assertEqual(151, len(self.rows(cmds.ListFlavorDeployConfig,
                                            '--all')))

    def test_nova_older_than_2_61(self):
        # nova's 406 says its maximum
        self.nova.max_version = (2, 60)
        exc = self.assertRaises(exceptions.CommandError, self.rows,
                                cmds.ListFlavorDeployConfig)
        self.assertIn('compute service at http://nova.test supports API '
                      'version 2.60 at most; flavor extra specs in listings '
                      'need 2.61 or later', str(exc))

    def test_list_follows_pages(self):
        self.nova.page_size = 1
        self.nova.add_flavor('x', {'deploy-config:a': 'b'})
        self.assertEqual(1, len(self.rows(cmds.ListFlavorDeployConfig)))
        self.assertEqual(2, len(self.nova.requests))
