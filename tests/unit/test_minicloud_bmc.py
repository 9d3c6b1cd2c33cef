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

"""The mini cloud's emulated Redfish BMCs (tools/minicloud/bmc): their
BIOS model and the sushy-tools systems driver, without a network."""

import os
import shutil
import sys
import tempfile
import time
from unittest import mock

import testtools

sys.path.insert(
    0,
    os.path.join(
        os.path.dirname(__file__), '..', '..', 'tools', 'minicloud'
    ),
)
from bmc import model  # noqa: E402

try:
    from bmc import driver
except ImportError:     # without sushy-tools, the model's tests still run
    driver = None


def _read_only(bios, name):
    reg = model.live_registry(bios)
    return next(a['ReadOnly'] for a in reg['RegistryEntries']['Attributes']
                if a['AttributeName'] == name)


class TestDellModel(testtools.TestCase):

    def test_factory_profile_locks_turbo(self):
        bios = model.factory('dell')
        self.assertEqual('PerfPerWattOptimizedDapc',
                         bios['current']['SysProfile'])
        self.assertTrue(_read_only(bios, 'ProcTurboMode'))
        self.assertFalse(_read_only(bios, 'LogicalProc'))
        self.assertEqual('BiosAttributeRegistry.v1_0_3',
                         model.registry_id('dell'))

    def test_pending_applies_at_reset_and_unlocks_live(self):
        bios = model.patch(model.factory('dell'),
                           {'SysProfile': 'Custom',
                            'ProcTurboMode': 'Disabled'})
        self.assertEqual({'SysProfile': 'Custom',
                          'ProcTurboMode': 'Disabled'},
                         model.settings_view(bios))
        # nothing changes before the reset
        self.assertEqual('Enabled', bios['current']['ProcTurboMode'])
        self.assertTrue(_read_only(bios, 'ProcTurboMode'))
        bios = model.apply_pending(bios)
        self.assertEqual('Custom', bios['current']['SysProfile'])
        self.assertEqual('Disabled', bios['current']['ProcTurboMode'])
        self.assertEqual({}, bios['pending'])
        self.assertFalse(_read_only(bios, 'ProcTurboMode'))

    def test_a_second_patch_of_a_pending_setting_replaces_it(self):
        bios = model.patch(model.factory('dell'), {'SysProfile': 'Custom'})
        bios = model.patch(bios, {'SysProfile': 'PerfOptimized'})
        self.assertEqual({'SysProfile': 'PerfOptimized'},
                         model.settings_view(bios))

    def test_locked_setting_alone_is_refused_at_patch(self):
        self.assertRaisesRegex(
            model.Refused, 'ProcTurboMode is read-only under '
            'SysProfile=PerfPerWattOptimizedDapc', model.patch,
            model.factory('dell'), {'ProcTurboMode': 'Disabled'})

    def test_profile_sets_its_values(self):
        bios = model.apply_pending(model.patch(
            model.factory('dell'), {'SysProfile': 'Custom',
                                    'ProcTurboMode': 'Disabled'}))
        bios = model.apply_pending(model.patch(
            bios, {'SysProfile': 'PerfOptimized'}))
        self.assertEqual('Enabled', bios['current']['ProcTurboMode'])


class TestHpeModel(testtools.TestCase):

    def test_static_flags(self):
        bios = model.factory('hpe')
        self.assertEqual('GeneralPowerEfficientCompute',
                         bios['current']['WorkloadProfile'])
        for name in ('ProcAMDBoost', 'ProcSMT', 'Sriov', 'WorkloadProfile'):
            self.assertFalse(_read_only(bios, name), name)

    def test_locked_change_refuses_the_whole_set(self):
        bios = model.patch(model.factory('hpe'), {'ProcAMDBoost': 'Disabled',
                                                  'Sriov': 'Disabled'})
        bios = model.apply_pending(bios)
        self.assertEqual('Enabled', bios['current']['ProcAMDBoost'])
        self.assertEqual('Enabled', bios['current']['Sriov'])
        self.assertEqual({}, bios['pending'])
        (message,) = bios['messages']
        self.assertEqual('Critical', message['Severity'])
        self.assertEqual('Base.1.8.PropertyNotWritable', message['MessageId'])
        self.assertIn('ProcAMDBoost', message['Message'])
        self.assertIn('WorkloadProfile=GeneralPowerEfficientCompute',
                      message['Message'])

    def test_unlocked_change_applies(self):
        # Sriov is not locked under the default profile
        bios = model.apply_pending(model.patch(model.factory('hpe'),
                                               {'Sriov': 'Disabled'}))
        self.assertEqual('Disabled', bios['current']['Sriov'])
        self.assertEqual('Base.1.0.Success', bios['messages'][0]['MessageId'])

    def test_profile_and_setting_together_apply(self):
        bios = model.apply_pending(model.patch(
            model.factory('hpe'), {'WorkloadProfile': 'Custom',
                                   'ProcAMDBoost': 'Disabled'}))
        self.assertEqual('Disabled', bios['current']['ProcAMDBoost'])

    def test_second_profile_locks_smt(self):
        bios = model.apply_pending(model.patch(
            model.factory('hpe'), {'WorkloadProfile': 'Custom'}))
        bios = model.apply_pending(model.patch(
            bios, {'AMDPerformanceWorkloadProfile': 'HPCOptimized',
                   'ProcSMT': 'Disabled'}))
        self.assertIn('AMDPerformanceWorkloadProfile=HPCOptimized',
                      bios['messages'][0]['Message'])
        self.assertEqual('Enabled', bios['current']['ProcSMT'])

    def test_settings_view_lists_every_setting(self):
        bios = model.patch(model.factory('hpe'), {'Sriov': 'Disabled'})
        view = model.settings_view(bios)
        self.assertEqual('Disabled', view['Sriov'])
        self.assertEqual('Enabled', view['ProcSMT'])


class TestDriver(testtools.TestCase):
    """The systems driver sushy-tools' app runs."""

    def setUp(self):
        super().setUp()
        if driver is None:
            self.skipTest('sushy-tools is not installed')
        state = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, state)
        config = {'SUSHY_EMULATOR_STATE_DIR': state,
                  'SUSHY_EMULATOR_FAKE_SYSTEMS': [{
                      'uuid': 'u-1', 'name': 'bm-6', 'power_state': 'On',
                      'vendor': 'hpe', 'nics': []}],
                  'MINICLOUD_BMC_POWER_DELAY': 0,
                  'MINICLOUD_BMC_BOOT_DELAY': 0}
        self.systems = driver.BmcDriver.initialize(config, mock.Mock())()

    def test_pending_applies_at_restart(self):
        self.systems.set_bios('u-1', {'WorkloadProfile': 'Custom'})
        self.assertEqual('GeneralPowerEfficientCompute',
                         self.systems.get_bios('u-1')['WorkloadProfile'])
        self.systems.set_power_state('u-1', 'ForceRestart')
        time.sleep(0.01)
        self.assertEqual('On', self.systems.get_power_state('u-1'))
        self.assertEqual('Custom',
                         self.systems.get_bios('u-1')['WorkloadProfile'])
        self.assertEqual('OSRunning', self.systems.get_boot_progress('u-1'))

    def test_refusal_is_kept_in_messages(self):
        self.systems.set_bios('u-1', {'ProcAMDBoost': 'Disabled'})
        self.systems.set_power_state('u-1', 'ForceRestart')
        time.sleep(0.01)
        bios = self.systems.get_bios_state('u-1')
        self.assertEqual('Enabled', bios['current']['ProcAMDBoost'])
        self.assertEqual('Critical', bios['messages'][0]['Severity'])

    def test_a_blank_disk_boots_no_os_until_one_is_installed(self):
        self.systems.set_disk('u-1', driver.BLANK)
        self.systems.set_power_state('u-1', 'ForceRestart')
        time.sleep(0.01)
        self.assertEqual('SystemHardwareInitializationComplete',
                         self.systems.get_boot_progress('u-1'))
        # installed, the OS boots at the next reset, not before
        self.systems.set_disk('u-1', 'OS')
        self.assertEqual('SystemHardwareInitializationComplete',
                         self.systems.get_boot_progress('u-1'))
        self.systems.set_power_state('u-1', 'ForceRestart')
        time.sleep(0.01)
        self.assertEqual('OSRunning', self.systems.get_boot_progress('u-1'))

    def test_off_reports_no_boot(self):
        self.systems.set_power_state('u-1', 'ForceOff')
        time.sleep(0.01)
        self.assertEqual('None', self.systems.get_boot_progress('u-1'))

    def test_a_graceful_shutdown_is_the_running_os_s_and_recorded(self):
        self.systems.set_power_state('u-1', 'GracefulShutdown')
        time.sleep(0.01)
        self.assertEqual('Off', self.systems.get_power_state('u-1'))
        # an OS that does not run (yet) makes no shutdown
        self.systems.set_power_state('u-1', 'On')
        time.sleep(0.01)
        self.systems._config['MINICLOUD_BMC_BOOT_DELAY'] = 60
        self.systems.set_power_state('u-1', 'ForceRestart')
        time.sleep(0.01)
        self.systems.set_power_state('u-1', 'GracefulShutdown')
        time.sleep(0.01)
        self.assertEqual('On', self.systems.get_power_state('u-1'))
        self.assertEqual([('GracefulShutdown', True), ('On', False),
                          ('ForceRestart', False),
                          ('GracefulShutdown', False)],
                         [(r['ResetType'], r['OsRunning'])
                          for r in self.systems.get_resets('u-1')])


class TestCaptures(testtools.TestCase):
    """How each vendor's BMC takes a change, as captured."""

    def test_the_ilo_lists_no_apply_time_and_tags_with_etags(self):
        self.assertEqual([], model.apply_times('hpe'))
        self.assertTrue(model.uses_etags('hpe'))
        self.assertIn('OnReset', model.apply_times('dell'))
        self.assertFalse(model.uses_etags('dell'))

    def test_an_etag_follows_the_values(self):
        bios = model.factory('hpe')['current']
        self.assertEqual(model.etag(bios), model.etag(dict(bios)))
        self.assertNotEqual(model.etag(bios), model.etag(dict(
            bios, ProcSMT='Disabled')))


class TestIdracJobs(testtools.TestCase):
    """The iDRAC's configuration jobs: a change asked OnReset is one, and
    another change is refused until the reset runs it or the queue is
    cleared."""

    def test_a_scheduled_job_refuses_changes_until_it_runs(self):
        bios = model.schedule_job(model.patch(model.factory('dell'), {
            'LogicalProc': 'Disabled'}))
        self.assertEqual('IDRAC.2.8.SYS011',
                         model.job_refusal(bios)['MessageId'])
        bios = model.apply_pending(bios)
        self.assertIsNone(model.job_refusal(bios))
        self.assertEqual('Disabled', bios['current']['LogicalProc'])

    def test_clearing_the_queue_deletes_the_job_and_its_settings(self):
        bios = model.clear_job_queue(model.schedule_job(model.patch(
            model.factory('dell'), {'LogicalProc': 'Disabled'})))
        self.assertIsNone(model.job_refusal(bios))
        self.assertEqual({}, model.settings_view(bios))
        self.assertEqual('Enabled', model.apply_pending(bios)['current'][
            'LogicalProc'])


class TestResetBios(testtools.TestCase):

    def test_factory_reset_applies_whatever_the_profile(self):
        bios = model.apply_pending(model.patch(
            model.factory('hpe'), {'WorkloadProfile': 'Custom',
                                   'ProcAMDBoost': 'Disabled'}))
        bios = model.apply_pending(model.reset_to_defaults(bios))
        self.assertEqual(model.factory('hpe')['current'], bios['current'])
