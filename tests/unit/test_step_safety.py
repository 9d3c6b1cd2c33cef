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

"""What each step does to a running server: every table, and the
allowlist a toggle applies."""

import testtools

from osc_deploy_config.domain.configs import step_safety


def step(name, priority=100):
    interface, _, name = name.partition('.')
    return {'interface': interface, 'step': name, 'args': {},
            'priority': priority}


class TestTables(testtools.TestCase):
    def test_every_data_destroying_step_is_refused_with_what_it_destroys(self):
        for key, at_risk in step_safety.DESTROYS_DATA.items():
            name = '%s.%s' % key
            self.assertEqual([step_safety.Risk(name, step_safety.DESTROYS,
                                               at_risk)],
                             step_safety.destroying([step(name)]), name)
            # naming it does not allow it: it is no unknown step
            self.assertEqual([], step_safety.unknown([step(name)]), name)

    def test_the_vendor_steps_that_destroy_data_are_in_the_table(self):
        for name in ('management.import_configuration',
                     'management.erase_devices',
                     'management.clear_secure_boot_keys'):
            self.assertEqual(step_safety.DESTROYS,
                             step_safety.risk(step(name)).kind, name)

    def test_every_rebooting_step_is_known_and_said(self):
        for key in step_safety.REBOOTING:
            name = '%s.%s' % key
            self.assertEqual(([], []), (step_safety.destroying([step(name)]),
                                        step_safety.unknown([step(name)])))
            self.assertEqual('%s (reboots)' % name,
                             step_safety.describe([step(name)]))

    def test_every_step_that_leaves_the_host_alone_is_known(self):
        for key in step_safety.HOST_UNTOUCHED:
            name = '%s.%s' % key
            self.assertEqual(([], [], name), (
                step_safety.destroying([step(name)]),
                step_safety.unknown([step(name)]),
                step_safety.describe([step(name)])))

    def test_the_tables_do_not_overlap(self):
        tables = [set(step_safety.DESTROYS_DATA),
                  set(step_safety.RISKS_BOOT), step_safety.REBOOTING,
                  step_safety.HOST_UNTOUCHED]
        for number, table in enumerate(tables):
            for other in tables[number + 1:]:
                self.assertEqual(set(), table & other)

    def test_steps_that_touch_the_instance_or_its_boot_are_not_rebooting(
            self):
        # inject_files writes into the instance's partitions; a BIOS reset
        # may change the boot mode and Secure Boot
        self.assertEqual(step_safety.DESTROYS, step_safety.risk(
            step('deploy.inject_files')).kind)
        for name in ('bios.factory_reset',
                     'management.reset_bios_to_default'):
            found = step_safety.risk(step(name))
            self.assertEqual(step_safety.AT_RISK, found.kind, name)
            self.assertIn('boot mode and Secure Boot', found.at_risk)


class TestAllowlist(testtools.TestCase):
    def test_a_step_no_table_knows_is_refused_unless_named(self):
        steps = [step('bios.apply_configuration'), step('vendor.tune_fans'),
                 step('management.mystery')]
        self.assertEqual(['vendor.tune_fans', 'management.mystery'],
                         [r.step for r in step_safety.unknown(steps)])
        self.assertEqual(['management.mystery'], [
            r.step for r in step_safety.unknown(steps, {'vendor.tune_fans'})])
        self.assertEqual([], step_safety.unknown(
            steps, {'vendor.tune_fans', 'management.mystery'}))

    def test_a_step_that_risks_the_boot_is_taken_only_when_named(self):
        steps = [step('bios.factory_reset')]
        self.assertEqual(['bios.factory_reset'],
                         [r.step for r in step_safety.unknown(steps)])
        self.assertEqual([], step_safety.unknown(steps,
                                                 {'bios.factory_reset'}))
        self.assertIn('bios.factory_reset risks the boot mode',
                      step_safety.why_not_known_safe(
                          step_safety.unknown(steps)))
        self.assertFalse(step_safety.grantable(steps))
        self.assertTrue(step_safety.grantable(
            [step('bios.apply_configuration')]))

    def test_bios_settings_of_the_boot_mode_risk_the_boot(self):
        def bios(*names):
            found = step('bios.apply_configuration')
            found['args'] = {'settings': [{'name': n, 'value': 'x'}
                                          for n in names]}
            return found

        # as Dell, HPE, Lenovo and Supermicro name them
        for name in ('BootMode', 'SecureBoot', 'SecureBootPolicy',
                     'BootModes_SystemBootMode', 'SecureBootEnable_0122',
                     'SecureBootConfiguration_SecureBootSetting',
                     'BootModeSelect_0021', 'Boot Mode', 'CSMSupport',
                     'Secure Boot Control'):
            (found,) = step_safety.unknown([bios('LogicalProc', name)])
            self.assertEqual(
                'bios.apply_configuration risks the boot mode and Secure '
                'Boot, which %s=x sets (the server may not boot again)'
                % name, step_safety.why_not_known_safe([found]))
        for name in ('LogicalProc', 'BootModes_InfiniteBootRetry',
                     'BootSeqRetry'):
            self.assertEqual([], step_safety.unknown([bios(name)]))
            self.assertTrue(step_safety.grantable([bios(name)]))
        self.assertFalse(step_safety.grantable([bios('BootMode')]))
        # settings of a shape ironic would refuse are no boot setting
        for settings in (['BootMode'], {'name': 'BootMode'}, None):
            found = step('bios.apply_configuration')
            found['args'] = {'settings': settings}
            self.assertEqual([], step_safety.unknown([found]))
        self.assertEqual([], step_safety.unknown(
            [bios('BootMode')], {'bios.apply_configuration'}))

    def test_an_allowed_step_is_said_as_not_known(self):
        self.assertEqual(
            'bios.apply_configuration (reboots), vendor.tune_fans (allowed: '
            'its effect on a running server is not known)',
            step_safety.describe([step('bios.apply_configuration'),
                                  step('vendor.tune_fans')]))

    def test_a_disabled_step_does_not_run(self):
        steps = [step('vendor.tune_fans', priority=0),
                 step('bios.factory_reset', priority='150')]
        self.assertEqual([steps[1]], step_safety.enabled(steps))

    def test_a_template_that_destroys_data_is_said_deploy_only(self):
        self.assertIn('runs raid.apply_configuration, which destroys the RAID '
                      'volumes', step_safety.deploy_only_warning(
                          'CUSTOM_X', [step('raid.apply_configuration')]))
        self.assertIsNone(step_safety.deploy_only_warning(
            'CUSTOM_X', [step('bios.apply_configuration')]))
