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

"""The toggle where ironic's redfish BIOS interface judges each step
against its cache (36.0 and later): a setting the node's vendor profile
locks gets the profile in a step of its own first (the operator), or is
refused (a project, whose runbooks cannot); a value ironic would refuse is
named before any write."""

from osc_lib import exceptions

from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.configs import steps
from osc_deploy_config.use_cases.toggle import toggle as server_toggle
from osc_deploy_config.v1 import project_deploy_config
from tests.unit import fakes
from tests.unit.fakes import GOLD
from tests.unit.test_node_prepare import DELL
from tests.unit.test_node_prepare import FACTORY

BM = dict(GOLD, **{'resources:VCPU': '0', 'resources:MEMORY_MB': '0',
                   'resources:DISK_GB': '0'})
ON, OFF = (deploy_config.parse_config('turbo=%s' % v)
           for v in ('enabled', 'disabled'))
ON_T, OFF_T = (deploy_config.template_trait(c) for c in (ON, OFF))
SWITCH = {'attribute_type': 'Enumeration', 'read_only': False,
          'allowable_values': ['Enabled', 'Disabled']}
# an HPE iLO's (AMD): its default WorkloadProfile locks ProcAMDBoost in
# its Dependencies only; the registry's ReadOnly stays false
HPE = {'WorkloadProfile': {'attribute_type': 'Enumeration',
                           'read_only': False, 'allowable_values': [
                               'GeneralPowerEfficientCompute',
                               'HighPerformanceCompute(HPC)', 'Custom']},
       'ProcAMDBoost': dict(SWITCH)}
HPE_FACTORY = {'WorkloadProfile': 'GeneralPowerEfficientCompute',
               'ProcAMDBoost': 'Enabled'}


def bios_step(name, value):
    return {'interface': 'bios', 'step': 'apply_configuration',
            'args': {'settings': [{'name': name, 'value': value}]}}


class RedfishToggleCase(fakes.TestCommand):
    """A server on bm-5, whose BIOS (``registry``, ``bios``) names turbo
    ``setting``; the node carries ``tags``."""

    setting, registry, bios = 'ProcAMDBoost', HPE, HPE_FACTORY
    tags = (ON_T, OFF_T)

    def setUp(self):
        super().setUp()
        for config, name in ((ON, ON_T), (OFF, OFF_T)):
            self.ironic.add_template(name, steps=[steps.bios_step(
                [(self.setting, config.value.title())])],
                extra=deploy_config.template_extra(config, []))
        flavor = self.nova.add_flavor('bm.copper', dict(BM, **{
            'deploy-config:turbo': 'enabled', 'trait:' + ON_T: 'required'}))
        self.server = self.nova.add_server('db-1', flavor)
        self.node = self.deploy_on_node(self.server, 'bm-5',
                                        list(self.tags), self.bios)
        self.ironic.bios_registries[self.node['uuid']] = {
            k: dict(v) for k, v in self.registry.items()}
        self.said = []

    def toggle(self, *configs, dry_run=False):
        return server_toggle.ServerToggle(
            self.app.client_manager.deploy_config, configs, self.said.append,
            sleep=lambda _: None).run(self.server['id'], dry_run)


class TestHpeToggle(RedfishToggleCase):
    def test_the_profile_goes_first_in_a_step_of_its_own(self):
        self.toggle(OFF)
        ((node, sent),) = self.ironic.serviced
        self.assertEqual([bios_step('WorkloadProfile', 'Custom'),
                          bios_step('ProcAMDBoost', 'Disabled')], sent)
        self.assertEqual(('Custom', 'Disabled'), (
            self.node['bios']['WorkloadProfile'],
            self.node['bios']['ProcAMDBoost']))
        self.assertIn('node bm-5: WorkloadProfile=Custom first', '\n'.join(
            self.said))

    def test_a_prepared_node_gets_the_setting_alone(self):
        self.node['bios']['WorkloadProfile'] = 'Custom'
        self.toggle(OFF)
        ((node, sent),) = self.ironic.serviced
        self.assertEqual([bios_step('ProcAMDBoost', 'Disabled')], sent)

    def test_a_value_ironic_would_refuse_is_named_before_any_write(self):
        self.node['bios']['WorkloadProfile'] = 'Custom'
        self.ironic.bios_registries[self.node['uuid']]['ProcAMDBoost'][
            'allowable_values'] = ['Enabled']
        exc = self.assertRaises(exceptions.CommandError, self.toggle, OFF)
        self.assertIn('ironic would refuse it on node bm-5: '
                      'ProcAMDBoost=Disabled', str(exc))
        self.assertEqual([], self.ironic.writes)
        self.assertEqual([], self.nova.locks(self.server))

    def test_a_setting_the_bios_reports_read_only_is_refused(self):
        self.node['bios']['WorkloadProfile'] = 'Custom'
        self.ironic.bios_registries[self.node['uuid']]['ProcAMDBoost'][
            'read_only'] = True
        exc = self.assertRaises(exceptions.CommandError, self.toggle, OFF)
        self.assertIn('ironic caches ProcAMDBoost read-only on node bm-5 '
                      'and refuses it before any write; the BIOS reports it '
                      'read-only', str(exc))
        self.assertEqual([], self.ironic.writes)

    def test_a_project_cannot_set_the_profile_through_its_runbooks(self):
        self.run_command(project_deploy_config.SetProjectDeployConfig,
                         ['demo', 'turbo=disabled'])
        granted = len(self.ironic.writes + self.nova.writes)
        self.as_project('manager', 'member', 'reader')
        exc = self.assertRaises(exceptions.CommandError, self.toggle, OFF)
        self.assertIn("its node bm-5's BIOS profile locks it "
                      "(WorkloadProfile=Custom needed first)", str(exc))
        self.assertEqual(granted, len(self.ironic.writes + self.nova.writes))


class TestHpeHeld(RedfishToggleCase):
    """The server's flavor asks turbo off, but the node's BIOS has it on,
    where its factory profile holds it: ironic skips a step of the values
    the node has, so a toggle on needs no profile first (nor a step),
    a project's included."""

    def setUp(self):
        super().setUp()
        self.server['flavor'] = self.nova.embedded(self.nova.add_flavor(
            'bm.copper-off', dict(BM, **{'deploy-config:turbo': 'disabled',
                                         'trait:' + OFF_T: 'required'})))

    def test_a_toggle_to_the_held_value_sets_nothing(self):
        self.run_command(project_deploy_config.SetProjectDeployConfig,
                         ['demo', 'turbo=enabled'])
        self.as_project('manager', 'member', 'reader')
        self.assertEqual('toggled', self.toggle(ON).result)
        self.assertIn('  node bm-5 already shows turbo=enabled: recording it',
                      self.said)
        self.assertEqual([], self.ironic.serviced)
        self.assertEqual(HPE_FACTORY, self.node['bios'])


class TestHpeNotTagged(RedfishToggleCase):
    """Sync keeps a node a profile locks untagged: the operator's toggle,
    which sets the profile first, takes it all the same."""

    tags = (ON_T,)

    def test_the_scheduler_check_excuses_what_the_toggle_unlocks(self):
        self.toggle(OFF)
        self.assertEqual('Disabled', self.node['bios']['ProcAMDBoost'])


class TestDellToggle(RedfishToggleCase):
    """A Dell reports the setting its profile locks read-only, and ironic
    37 and later cache that: a profile step before it would not help."""

    setting, bios = 'ProcTurboMode', FACTORY
    registry = DELL

    def setUp(self):
        super().setUp()
        self.ironic.locked_by = {'ProcTurboMode': ('SysProfile', 'Custom')}

    def test_ironic_37_refuses_it_before_any_write(self):
        exc = self.assertRaises(exceptions.CommandError, self.toggle, OFF)
        self.assertIn('ironic caches ProcTurboMode read-only on node bm-5 '
                      'and refuses it before any write; its profile locks it '
                      '(SysProfile=PerfPerWattOptimizedDapc)', str(exc))
        self.assertEqual([], self.ironic.writes)

    def test_ironic_35_takes_the_profile_first(self):
        self.ironic.max_version = (1, 111)
        self.toggle(OFF)
        ((node, sent),) = self.ironic.serviced
        self.assertEqual([bios_step('SysProfile', 'Custom'),
                          bios_step('ProcTurboMode', 'Disabled')], sent)
        self.assertEqual('Disabled', self.node['bios']['ProcTurboMode'])
