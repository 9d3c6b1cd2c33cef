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

"""Templates on real vendors' BIOS, through the commands: a profile's
custom value sent with what it locks, an explicit locked setting refused,
nodes without a registry named with the settings that cover them, and the
operator's vocabulary file."""

import os

import fixtures
from osc_lib import exceptions

from osc_deploy_config.v1 import deploy_template as template_cmds
from tests.unit import bios_fixtures as fx
from tests.unit import fakes
from tests.unit.fakes import HT

COPPER_OFF = 'CUSTOM_DEPLOY_CONFIG_TURBO_DISABLED_FOR_BAREMETAL_COPPER'


def enrol(ironic, name, fixture, resource_class, traits=(HT,),
          bios_interface='redfish'):
    """A node whose BIOS is ``fixture`` (None: it reports no registry)."""
    node = ironic.add_node(name, list(traits), resource_class=resource_class,
                           bios_interface=bios_interface)
    for setting in fixture.settings if fixture else ():
        node['bios'][setting['name']] = setting['value']
        ironic.bios_registries.setdefault(node['uuid'], {})[
            setting['name']] = {k: v for k, v in setting.items()
                                if k not in ('name', 'value')}
    return node


class VendorsTestCase(fakes.TestCommand):
    def setUp(self):
        super().setUp()
        self.logged = self.useFixture(fixtures.FakeLogger(
            name='osc_deploy_config', format='%(levelname)s %(message)s'))

    def create(self, *args):
        columns, data = self.run_command(template_cmds.CreateDeployTemplate,
                                         list(args))
        return dict(zip(columns, data, strict=True))


class TestProfilePrerequisite(VendorsTestCase):
    """An ironic before 36.0 (API 1.111, 35.0) passes a step to the BMC,
    which takes a profile and the setting it locks in one request."""

    def setUp(self):
        super().setUp()
        self.ironic.max_version = (1, 111)
        enrol(self.ironic, 'bm-5', fx.DELL_R750, 'baremetal-copper')
        enrol(self.ironic, 'bm-6', fx.HPE_DL385_AMD, 'baremetal-tin')

    def test_the_profile_comes_with_the_setting_it_locks(self):
        planned = self.create('--config', 'turbo=disabled', '--dry-run')
        self.assertEqual({}, self.ironic.templates)
        self.assertEqual(
            {'baremetal-copper': 'SysProfile=Custom, ProcTurboMode=Disabled '
                                 '(Dell iDRAC, Intel)',
             'baremetal-tin': 'WorkloadProfile=Custom, ProcAMDBoost=Disabled '
                              '(HPE iLO, AMD)'}, planned['settings'])
        self.assertTrue(planned['notes']['baremetal-copper'].startswith(
            "SysProfile=Custom unlocks ProcTurboMode; it also ends the "
            "profile's control of ProcCStates, ProcC1E"), planned['notes'])
        self.create('--config', 'turbo=disabled')
        made = {t['name']: t for t in self.ironic.templates.values()}
        self.assertEqual(
            [{'name': 'SysProfile', 'value': 'Custom'},
             {'name': 'ProcTurboMode', 'value': 'Disabled'}],
            made[COPPER_OFF]['steps'][0]['args']['settings'])

    def test_an_explicit_locked_setting_without_its_profile_is_refused(self):
        exc = self.assertRaises(
            exceptions.CommandError, self.create, '--config',
            'turbo=disabled', '--resource-class', 'baremetal-copper',
            '--bios-setting', 'ProcTurboMode=Disabled')
        self.assertEqual(
            "ProcTurboMode is locked by Dell iDRAC's SysProfile unless "
            "SysProfile=Custom: set SysProfile=Custom in the same step "
            "(--bios-setting SysProfile=Custom)", str(exc))
        self.assertEqual({}, self.ironic.templates)
        # with it, the read-only setting is writable: no warning either
        self.create('--config', 'turbo=disabled', '--resource-class',
                    'baremetal-copper', '--bios-setting', 'SysProfile=Custom',
                    '--bios-setting', 'ProcTurboMode=Disabled')
        self.assertEqual([COPPER_OFF], [
            t['name'] for t in self.ironic.templates.values()])
        self.assertEqual('', self.logged.output)


class TestProfilePrepared(VendorsTestCase):
    """Ironic 36.0 and later refuse a setting their cache records
    read-only even beside its profile: a template sends the setting alone,
    and the node is prepared once (its profile set ahead)."""

    def setUp(self):
        super().setUp()
        enrol(self.ironic, 'bm-5', fx.DELL_R750, 'baremetal-copper')
        enrol(self.ironic, 'bm-6', fx.HPE_DL385_AMD, 'baremetal-tin')

    def test_the_template_sends_the_setting_and_the_plan_says_prepare(self):
        planned = self.create('--config', 'turbo=disabled', '--dry-run')
        self.assertEqual(
            {'baremetal-copper': 'ProcTurboMode=Disabled (Dell iDRAC, '
                                 'Intel)',
             'baremetal-tin': 'ProcAMDBoost=Disabled (HPE iLO, AMD)'},
            planned['settings'])
        self.assertIn('SysProfile=Custom', planned['notes'][
            'baremetal-copper'])
        self.create('--config', 'turbo=disabled')
        made = {t['name']: t for t in self.ironic.templates.values()}
        self.assertEqual([{'name': 'ProcTurboMode', 'value': 'Disabled'}],
                         made[COPPER_OFF]['steps'][0]['args']['settings'])

    def test_an_explicit_locked_setting_is_made_and_the_node_named(self):
        self.create('--config', 'turbo=disabled', '--resource-class',
                    'baremetal-copper', '--bios-setting',
                    'ProcTurboMode=Disabled')
        self.assertEqual([COPPER_OFF], [
            t['name'] for t in self.ironic.templates.values()])
        # the R750 reports turbo read-only under its profile, as ironic
        # caches it and keeps it (36 to 39): preparing would not help
        self.assertIn(
            'bm-5: ironic caches ProcTurboMode read-only under the profile '
            'that locks it, and ironic 36 to 39 keep it so once the profile '
            'is unlocked', self.logged.output)
        self.assertNotIn('takes it once prepared', self.logged.output)


class TestWithoutRegistry(VendorsTestCase):
    def test_a_class_without_registry_gets_the_settings_that_cover_it(self):
        enrol(self.ironic, 'bm-5', fx.DELL_R750, 'baremetal-copper')
        enrol(self.ironic, 'ilo-1', None, 'hpe-gen10', bios_interface='ilo')
        enrol(self.ironic, 'ipmi-1', None, 'old', bios_interface='no-bios')
        planned = self.create('--config', 'turbo=disabled', '--dry-run')
        self.assertEqual({
            'hpe-gen10': 'hpe-gen10: no BIOS registry reported (bios '
                         'interface ilo) (nodes ilo-1); give its setting: '
                         'openstack baremetal deploy template create '
                         '--config turbo=disabled --resource-class hpe-gen10 '
                         '--bios-setting WorkloadProfile=Custom '
                         '--bios-setting ProcTurbo=Disabled (Intel) or '
                         '--bios-setting WorkloadProfile=Custom '
                         '--bios-setting ProcAMDBoost=Disabled (AMD)',
            'old': 'old: bios interface no-bios (nodes ipmi-1): ironic '
                   'cannot change their BIOS, and a BIOS step does nothing '
                   'there'}, planned['unmatched'])


class TestVocabularyFile(VendorsTestCase):
    def setUp(self):
        super().setUp()
        enrol(self.ironic, 'bm-0', fx.Fixture('mini cloud kind a', 'fake', '',
                                              [fx.enum('HyperThreading',
                                                       'Enabled')], {}),
              'baremetal-gold')

    def test_the_clouds_vocabulary_file_adds_names(self):
        exc = self.assertRaises(exceptions.CommandError, self.create,
                                '--config', 'hyperthreading=enabled')
        self.assertIn('no setting of hyperthreading in the BIOS registry '
                      'of bm-0', str(exc))
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'v.yaml')
        with open(path, 'w') as f:
            f.write('hyperthreading:\n- {name: HyperThreading, vendor: '
                    'Acme, cpu: RISC-V}\n')
        self.cloud_settings['deploy_config_vocabulary'] = path
        planned = self.create('--config', 'hyperthreading=enabled',
                              '--dry-run')
        self.assertEqual({'baremetal-gold': 'HyperThreading=Enabled (Acme, '
                                            'RISC-V)'}, planned['settings'])

    def test_a_file_that_cannot_be_read_is_one_line(self):
        self.cloud_settings['deploy_config_vocabulary'] = '/nonexistent.yaml'
        exc = self.assertRaises(exceptions.CommandError, self.create,
                                '--config', 'hyperthreading=enabled')
        self.assertTrue(str(exc).startswith(
            'Cannot read vocabulary file /nonexistent.yaml: '), exc)
        self.assertEqual({}, self.ironic.templates)
