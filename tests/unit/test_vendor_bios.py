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

"""Real vendors' BIOS: each vendor and CPU of the vocabulary resolves each
config, value spelling and profile from fixtures written from the
vendors' registries (``bios_fixtures``), never from the table."""

import os

from osc_lib import exceptions
import testtools

from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.configs import steps
from osc_deploy_config.domain.hardware import bios_profiles
from osc_deploy_config.domain.hardware import bios_registry
from osc_deploy_config.domain.hardware import bios_vocabulary
from osc_deploy_config.domain.hardware import ironic_releases
from osc_deploy_config.domain.hardware import tagging
from tests.unit import bios_fixtures as fx

TURBO_OFF = deploy_config.Config('turbo', 'disabled')
MINICLOUD_VOCABULARY = os.path.join(
    os.path.dirname(__file__), '..', '..', 'tools', 'minicloud',
    'vocabulary.yaml')


def resolved(config_type, value, settings, names=None):
    """The (name, value) pairs the vocabulary sends on that BIOS; None."""
    found = bios_vocabulary.match(deploy_config.Config(config_type, value),
                                  settings, names)
    return found and bios_vocabulary.settings(found)


class TestEachVendorAndCpu(testtools.TestCase):
    def check(self, fixture):
        for config_type, (on, off) in sorted(fixture.resolves.items()):
            for value, expected in (('enabled', on), ('disabled', off)):
                self.assertEqual(
                    expected, resolved(config_type, value, fixture.settings),
                    '%s: %s=%s' % (fixture.model, config_type, value))
            found = bios_vocabulary.match(deploy_config.Config(
                config_type, 'enabled'), fixture.settings)
            if found:
                self.assertIn(fixture.cpu, found.cpu, fixture.model)
                self.assertIn(fixture.model.split()[0].rstrip(','),
                              found.vendor)

    def test_dell_intel(self):
        self.check(fx.DELL_R750)

    def test_dell_amd(self):
        self.check(fx.DELL_AMD)

    def test_hpe_intel(self):
        self.check(fx.HPE_GEN10_INTEL)

    def test_hpe_amd_has_no_virtualization_setting(self):
        self.check(fx.HPE_DL385_AMD)

    def test_lenovo_intel(self):
        self.check(fx.LENOVO_SR670_V2)

    def test_lenovo_first_xeon_scalable_spells_enable(self):
        self.check(fx.LENOVO_SR650_XEON1)

    def test_lenovo_amd(self):
        self.check(fx.LENOVO_SR665_V3_AMD)

    def test_supermicro_x13_by_stem_with_the_values_its_bios_reports(self):
        self.check(fx.SUPERMICRO_X13)

    def test_supermicro_older_firmware_hash_suffix(self):
        self.check(fx.SUPERMICRO_OLDER)

    def test_supermicro_amd(self):
        self.check(fx.SUPERMICRO_H13_AMD)

    def test_every_name_of_the_table_is_in_a_fixture(self):
        used = set()
        for fixture in fx.EVERY:
            for config_type in fixture.resolves:
                found = bios_vocabulary.match(deploy_config.Config(
                    config_type, 'enabled'), fixture.settings)
                if found:
                    used.add((config_type, found.name))
        for config_type, meanings in bios_vocabulary.NAMES.items():
            for meaning in meanings:
                self.assertTrue(any(
                    t == config_type and (n == meaning.name or (
                        meaning.by_stem and bios_vocabulary.stem(n)
                        == meaning.name.replace('_', '').lower()))
                    for t, n in used), meaning)


class TestProfiles(testtools.TestCase):
    def test_a_read_only_setting_without_its_profile_is_no_match(self):
        without = [s for s in fx.DELL_R750.settings
                   if s['name'] != 'SysProfile']
        self.assertIsNone(resolved('turbo', 'disabled', without))

    def test_the_profile_unlocks_it_in_the_registry_check(self):
        registry = {'bm-5': fx.DELL_R750.settings}
        self.assertEqual([], bios_registry.problems(
            {'SysProfile': 'Custom', 'ProcTurboMode': 'Disabled'}, registry))
        (problem,) = bios_registry.problems({'ProcTurboMode': 'Disabled'},
                                            registry)
        self.assertEqual(('ProcTurboMode=Disabled',
                          'locked by SysProfile unless SysProfile=Custom'),
                         problem[:2])
        # a setting read-only for another reason stays refused
        (problem,) = bios_registry.problems(
            {'SysProfile': 'Custom', 'SystemServiceTag': 'X'}, registry)
        self.assertEqual('the setting is read-only', problem.reason)

    def test_hpe_locks_only_in_dependencies(self):
        # the static ReadOnly is false: the table knows the lock
        (problem,) = bios_registry.problems(
            {'ProcAMDBoost': 'Disabled'}, {'n': fx.HPE_DL385_AMD.settings})
        self.assertEqual('locked by WorkloadProfile unless '
                         'WorkloadProfile=Custom', problem.reason)

    def test_a_node_at_its_custom_profile_takes_the_setting_alone(self):
        custom = [dict(s, value='Custom') if s['name'] == 'SysProfile' else
                  dict(s, read_only=False) for s in fx.DELL_R750.settings
                  if s['name'] != 'SystemServiceTag']
        self.assertEqual([], bios_registry.problems(
            {'ProcTurboMode': 'Disabled'}, {'n': custom}))

    def test_an_explicit_locked_setting_without_its_profile(self):
        dell = {'bm-5': fx.DELL_R750.settings}
        (lock,) = bios_profiles.missing({'ProcTurboMode': 'Disabled'}, dell)
        self.assertEqual(('ProcTurboMode', 'SysProfile', 'Custom'),
                         (lock.setting, lock.profile.setting,
                          lock.profile.custom))
        self.assertEqual(
            "ProcTurboMode is locked by Dell iDRAC's SysProfile unless "
            "SysProfile=Custom: set SysProfile=Custom in the same step "
            "(--bios-setting SysProfile=Custom)",
            bios_profiles.describe_missing([lock]))
        self.assertEqual([], bios_profiles.missing(
            {'ProcTurboMode': 'Disabled', 'SysProfile': 'Custom'}, dell))
        # another value of the profile does not unlock it
        self.assertEqual(['ProcTurboMode'], [lock.setting for lock in (
            bios_profiles.missing({'ProcTurboMode': 'Disabled',
                                   'SysProfile': 'PerfOptimized'}, dell))])
        # hardware without the profile; and no registry at all: the name
        self.assertEqual([], bios_profiles.missing(
            {'ProcTurboMode': 'Disabled'}, {'x': fx.HPE_DL385_AMD.settings}))
        self.assertEqual(['ProcTurboMode'], [lock.setting for lock in (
            bios_profiles.missing({'ProcTurboMode': 'Disabled'},
                                  {'ilo': []}))])

    def test_the_plan_names_what_else_the_profile_governs(self):
        found = bios_vocabulary.match(TURBO_OFF, fx.DELL_R750.settings)
        self.assertEqual(
            'SysProfile=Custom, ProcTurboMode=Disabled (Dell iDRAC, Intel)',
            bios_vocabulary.describe(found))
        self.assertEqual(
            "SysProfile=Custom unlocks ProcTurboMode; it also ends the "
            "profile's control of ProcCStates, ProcC1E, ProcPwrPerf, "
            "CollaborativeCpuPerfCtrl and 11 more (each keeps its value)",
            bios_profiles.governs(found.unlock, found.name))

    def test_tagging_asks_the_same(self):
        node = {'uuid': 'n5', 'name': 'bm-5', 'traits': [],
                'resource_class': 'baremetal-copper'}

        def template(*settings):
            return {'name': 'CUSTOM_T', 'steps': [steps.bios_step(settings)],
                    'extra': deploy_config.template_extra(TURBO_OFF, [])}
        before_36 = ironic_releases.of_api((1, 111))
        self.assertIsNone(tagging.why_incapable(node, template(
            ('SysProfile', 'Custom'), ('ProcTurboMode', 'Disabled')),
            fx.DELL_R750.settings, before_36))
        self.assertEqual(
            'its BIOS refuses ProcTurboMode=Disabled (locked by SysProfile '
            'unless SysProfile=Custom)', tagging.why_incapable(
                node, template(('ProcTurboMode', 'Disabled')),
                fx.DELL_R750.settings, before_36))


class TestSupermicroValues(testtools.TestCase):
    def test_a_display_string_is_not_refused_for_want_of_a_number(self):
        registry = {'n': fx.SUPERMICRO_X13.settings}
        self.assertEqual([], bios_registry.problems(
            {'TurboMode_3D06': 'Disable'}, registry))
        (problem,) = bios_registry.problems({'TurboMode_3D06': '7'},
                                            registry)
        self.assertEqual('allowed values are 0, 1', problem.reason)

    def test_a_value_the_bios_does_not_report_is_no_match(self):
        unknown = [fx.enum('TurboMode_3D06', 'Auto', ('0', '1'))]
        self.assertIsNone(resolved('turbo', 'enabled', unknown))

    def test_a_stem_two_settings_share_is_no_match(self):
        twice = [fx.enum('TurboMode_3D06', 'Enable', ('0', '1')),
                 fx.enum('TurboMode_3D07', 'Enable', ('0', '1'))]
        self.assertIsNone(resolved('turbo', 'enabled', twice))

    def test_no_suffix_no_stem(self):
        self.assertIsNone(bios_vocabulary.stem('TurboMode'))
        self.assertEqual('hyperthreadingall', bios_vocabulary.stem(
            'Hyper_Threading_ALL__F27F'))
        self.assertEqual('sriovsupport', bios_vocabulary.stem(
            'SR-IOVSupport#0048'))


class TestNoRegistry(testtools.TestCase):
    def test_the_vendors_settings_by_its_bios_interface(self):
        self.assertEqual(
            '--bios-setting WorkloadProfile=Custom --bios-setting '
            'ProcTurbo=Disabled (Intel) or --bios-setting '
            'WorkloadProfile=Custom --bios-setting ProcAMDBoost=Disabled '
            '(AMD)', bios_vocabulary.suggestion(
                TURBO_OFF, bios_vocabulary.INTERFACE_VENDORS['ilo']))
        self.assertIsNone(bios_vocabulary.suggestion(TURBO_OFF, 'Acme'))


class TestVocabularyFile(testtools.TestCase):
    KIND_A = [fx.enum('HyperThreading', 'Enabled')]

    def test_the_product_table_has_no_test_only_name(self):
        self.assertIsNone(resolved('hyperthreading', 'enabled', self.KIND_A))

    def test_the_mini_clouds_names_live_in_its_own_file(self):
        import yaml

        with open(MINICLOUD_VOCABULARY) as f:
            names = bios_vocabulary.extend(yaml.safe_load(f), 'minicloud')
        self.assertEqual([('HyperThreading', 'Disabled')], resolved(
            'hyperthreading', 'disabled', self.KIND_A, names))
        # the table's own names come first, and stay
        self.assertEqual([('LogicalProc', 'Enabled')], resolved(
            'hyperthreading', 'enabled', fx.DELL_R750.settings, names))

    def test_a_new_type_and_a_malformed_file(self):
        names = bios_vocabulary.extend({'cstates': ['ProcCStates']}, 'f')
        self.assertTrue(bios_vocabulary.knows(
            deploy_config.Config('cstates', 'enabled'), names))
        for data, line in (
                (['x'], 'Vocabulary file f must map config types to lists '
                        'of BIOS names'),
                ({'turbo': []}, 'Vocabulary file f, turbo: expected a list '
                                'of names'),
                ({'turbo': [{'vendor': 'x'}]}, 'Vocabulary file f, '
                                               'turbo[0]: each entry needs '
                                               'a "name"'),
                ({'turbo': [{'name': 'T', 'colour': 'red'}]},
                 'Vocabulary file f, turbo[0]: unknown keys colour (known: '
                 'name, vendor, cpu, source, by_stem)')):
            exc = self.assertRaises(exceptions.CommandError,
                                    bios_vocabulary.extend, data, 'f')
            self.assertEqual(line, str(exc))
