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

"""Vendor profiles lock by value, decided from each node's current values
in ironic's cache; and what ironic 36 and later refuse of a step that sets
a profile beside what it locks (``same_step_unlocks=False``)."""

import testtools

from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.hardware import bios_profiles
from osc_deploy_config.domain.hardware import bios_registry
from osc_deploy_config.domain.hardware import bios_vocabulary
from tests.unit import bios_fixtures as fx

TURBO_OFF = deploy_config.Config('turbo', 'disabled')
WORKLOAD = ('GeneralPowerEfficientCompute', 'GeneralPeakFrequencyCompute',
            'GeneralThroughputCompute', 'Virtualization-PowerEfficient',
            'Virtualization-MaxPerformance', 'LowLatency', 'MissionCritical',
            'TransactionalApplicationProcessing',
            'HighPerformanceCompute(HPC)', 'DecisionSupport',
            'GraphicProcessing', 'I/OThroughput', 'Custom')
AMD_WORKLOAD = ('Disabled', 'CPUIntensive', 'VMwareVSphereOptimized',
                'LinuxKVMOptimized', 'ContainerOptimized',
                'BigDataAnalyticsOptimized', 'IOTGateway', 'HPCOptimized',
                'OpenStackNFV', 'OpenStackForRealTimeKernel')


def dell(**values):
    """Dell's R750 at ``values``, each setting read-only while a profile
    locks it, as its iDRAC reports it."""
    settings = [dict(s, value=values.get(s['name'], s['value']))
                for s in fx.DELL_R750.settings]
    locked = bios_profiles.locks_now(settings)
    return [dict(s, read_only=s['name'] in locked)
            if s['name'] in bios_profiles.lockable('SysProfile') else s
            for s in settings]


def hpe(workload='GeneralPowerEfficientCompute', amd='Disabled'):
    """HPE's DL385 (AMD) at its two profiles' values."""
    return fx.HPE_DL385_AMD.settings[:-1] + [
        fx.enum('WorkloadProfile', workload, WORKLOAD),
        fx.enum('AMDPerformanceWorkloadProfile', amd, AMD_WORKLOAD)]


def locked_under(profile, setting):
    return [v for v in bios_profiles.BY_VALUE[profile]
            if setting in bios_profiles.governed(profile, v)]


class TestKeptReadOnly(testtools.TestCase):
    """What ironic 36 to 39 keep read-only once a profile is unlocked."""

    def entries(self, profile, read_only):
        return [{'name': 'SysProfile', 'value': profile},
                {'name': 'ProcTurboMode', 'value': 'Enabled',
                 'read_only': read_only},
                {'name': 'WorkloadProfile',
                 'value': 'GeneralPowerEfficientCompute',
                 'allowable_values': ['GeneralPowerEfficientCompute',
                                      'Custom']},
                {'name': 'ProcAMDBoost', 'value': 'Enabled',
                 'read_only': True}]

    def test_a_dell_setting_cached_read_only_under_its_profile(self):
        entries = self.entries('PerfPerWattOptimizedDapc', True)
        self.assertEqual(['ProcTurboMode'], bios_profiles.kept_read_only(
            {'ProcTurboMode': 'Disabled'}, entries))
        # cached writable (first read under Custom): prepare helps
        self.assertEqual([], bios_profiles.kept_read_only(
            {'ProcTurboMode': 'Disabled'}, self.entries(
                'PerfPerWattOptimizedDapc', False)))
        # not locked now: the stale case, not this one
        self.assertEqual([], bios_profiles.kept_read_only(
            {'ProcTurboMode': 'Disabled'}, self.entries('Custom', True)))

    def test_a_static_read_only_is_not_blamed_on_a_profile(self):
        # HPE's iLO reports no live ReadOnly: its profile is not why
        self.assertEqual([], bios_profiles.kept_read_only(
            {'ProcAMDBoost': 'Disabled'}, self.entries('Custom', False)))


class TestLocksByValue(testtools.TestCase):
    def test_dell_turbo_locked_under_perf_per_watt_optimized_dapc(self):
        dapc = dell(SysProfile='PerfPerWattOptimizedDapc')
        self.assertEqual(('SysProfile', 'PerfPerWattOptimizedDapc'),
                         bios_profiles.locks_now(dapc)['ProcTurboMode'])
        self.assertEqual({}, bios_profiles.locks_now(
            dell(SysProfile='Custom')))
        self.assertEqual(['Custom'], [
            v for v in bios_profiles.BY_VALUE['SysProfile']
            if 'ProcTurboMode' not in bios_profiles.governed('SysProfile',
                                                             v)])

    def test_hpe_boost_locked_under_general_power_efficient_compute(self):
        # the default locks ProcAMDBoost, and not Sriov
        now = bios_profiles.locks_now(hpe())
        self.assertEqual(('WorkloadProfile', 'GeneralPowerEfficientCompute'),
                         now['ProcAMDBoost'])
        self.assertNotIn('Sriov', now)
        self.assertEqual([], bios_registry.problems(
            {'Sriov': 'Disabled'}, {'n': hpe()}))

    def test_hpe_sriov_locked_under_eight_other_workload_profiles(self):
        self.assertEqual([
            'Virtualization-PowerEfficient', 'Virtualization-MaxPerformance',
            'LowLatency', 'TransactionalApplicationProcessing',
            'HighPerformanceCompute(HPC)', 'DecisionSupport',
            'GraphicProcessing', 'I/OThroughput'],
            locked_under('WorkloadProfile', 'Sriov'))
        (problem,) = bios_registry.problems(
            {'Sriov': 'Disabled'}, {'n': hpe('LowLatency')})
        self.assertEqual('locked by WorkloadProfile unless '
                         'WorkloadProfile=Custom', problem.reason)

    def test_hpe_smt_locked_under_six_amd_performance_values(self):
        self.assertEqual({
            'VMwareVSphereOptimized', 'LinuxKVMOptimized',
            'ContainerOptimized', 'BigDataAnalyticsOptimized', 'IOTGateway',
            'HPCOptimized'},
            set(locked_under('AMDPerformanceWorkloadProfile', 'ProcSMT')))
        self.assertEqual(['OpenStackNFV', 'OpenStackForRealTimeKernel'],
                         locked_under('AMDPerformanceWorkloadProfile',
                                      'Sriov'))
        self.assertEqual([], locked_under('WorkloadProfile', 'ProcSMT'))

    def test_hpe_amd_profile_locked_unless_workload_profile_custom(self):
        self.assertEqual(['Custom'], [
            v for v in bios_profiles.BY_VALUE['WorkloadProfile']
            if v not in locked_under('WorkloadProfile',
                                     'AMDPerformanceWorkloadProfile')])

    def test_a_profile_governs_nothing_at_its_custom_value(self):
        self.assertEqual((), bios_profiles.governed('SysProfile', 'Custom'))
        self.assertEqual((), bios_profiles.governed('LogicalProc', 'x'))
        self.assertIn('ProcCStates', bios_profiles.governed(
            'SysProfile', 'PerfOptimized'))

    def test_a_value_no_registry_showed_locks_what_any_value_does(self):
        self.assertEqual(bios_profiles.lockable('SysProfile'),
                         bios_profiles.governed('SysProfile', 'NewProfile'))

    def test_dells_own_workload_profile_is_not_hpes(self):
        settings = fx.DELL_R750.settings + [fx.enum(
            'WorkloadProfile', 'NotConfigured', ('NotConfigured',
                                                 'HpcProfile'))]
        self.assertEqual({'SysProfile'}, {
            p for p, _ in bios_profiles.locks_now(settings).values()})


class TestPrerequisites(testtools.TestCase):
    def test_dell_at_its_factory_profile_needs_custom(self):
        self.assertEqual([('SysProfile', 'Custom')],
                         bios_profiles.prerequisites(
                             {'ProcTurboMode': 'Disabled'},
                             dell(SysProfile='PerfPerWattOptimizedDapc')))

    def test_in_effect_already_on_a_prepared_node(self):
        self.assertEqual([('SysProfile', 'Custom')],
                         bios_profiles.prerequisites(
                             {'ProcTurboMode': 'Disabled'},
                             dell(SysProfile='Custom')))

    def test_empty_where_no_profile_governs_the_setting(self):
        self.assertEqual([], bios_profiles.prerequisites(
            {'LogicalProc': 'Disabled'}, fx.DELL_R750.settings))
        self.assertEqual([], bios_profiles.prerequisites(
            {'ProcSMT': 'Disabled'}, hpe()))

    def test_hpe_sriov_keeps_a_workload_profile_that_leaves_it_free(self):
        self.assertEqual(
            [('WorkloadProfile', 'GeneralPowerEfficientCompute')],
            bios_profiles.prerequisites({'Sriov': 'Disabled'}, hpe()))
        self.assertEqual([('WorkloadProfile', 'Custom')],
                         bios_profiles.prerequisites(
                             {'Sriov': 'Disabled'}, hpe('LowLatency')))

    def test_the_nested_prerequisite_outermost_first(self):
        # ProcSMT locked by the AMD profile, itself locked unless
        # WorkloadProfile=Custom
        for workload in ('Custom', 'GeneralPowerEfficientCompute'):
            self.assertEqual(
                [('WorkloadProfile', 'Custom'),
                 ('AMDPerformanceWorkloadProfile', 'Disabled')],
                bios_profiles.prerequisites(
                    {'ProcSMT': 'Disabled'}, hpe(workload, 'HPCOptimized')),
                workload)

    def test_a_kept_profile_changes_when_an_inner_one_must(self):
        # WorkloadProfile first kept for MemRefreshRate, then needed Custom
        # for the AMD profile that ProcSMT needs changed
        self.assertEqual(
            [('WorkloadProfile', 'Custom'),
             ('AMDPerformanceWorkloadProfile', 'Disabled')],
            bios_profiles.prerequisites(
                {'MemRefreshRate': 'x', 'ProcSMT': 'Disabled'},
                hpe(amd='HPCOptimized')))

    def test_the_value_the_step_gives_a_profile_where_it_unlocks(self):
        self.assertEqual(
            [('WorkloadProfile', 'Custom'),
             ('AMDPerformanceWorkloadProfile', 'CPUIntensive')],
            bios_profiles.prerequisites(
                {'ProcSMT': 'Disabled',
                 'AMDPerformanceWorkloadProfile': 'CPUIntensive'},
                hpe('Custom', 'HPCOptimized')))

    def test_what_else_a_prepare_changes(self):
        self.assertEqual(
            ('ProcAMDBoost', 'AMDPerformanceWorkloadProfile'),
            bios_profiles.governed('WorkloadProfile',
                                   'GeneralPowerEfficientCompute')[:2])


class TestIronic37(testtools.TestCase):
    def test_read_only_with_the_profile_in_the_same_step_is_refused(self):
        dapc = {'bm-5': dell(SysProfile='PerfPerWattOptimizedDapc')}
        wanted = {'SysProfile': 'Custom', 'ProcTurboMode': 'Disabled'}
        self.assertEqual([], bios_registry.problems(wanted, dapc))
        (problem,) = bios_registry.problems(wanted, dapc,
                                            same_step_unlocks=False)
        self.assertEqual(
            ('ProcTurboMode=Disabled', 'locked by SysProfile='
             'PerfPerWattOptimizedDapc; ironic 36 and later refuse it even '
             'with SysProfile=Custom in the same step: prepare the node '
             'first (SysProfile=Custom)', ['bm-5']), problem)

    def test_a_prepared_node_takes_the_setting_alone(self):
        custom = {'bm-5': dell(SysProfile='Custom')}
        self.assertEqual([], bios_registry.problems(
            {'ProcTurboMode': 'Disabled'}, custom, same_step_unlocks=False))

    def test_a_lock_only_in_the_dependencies_is_refused_too(self):
        (problem,) = bios_registry.problems(
            {'WorkloadProfile': 'Custom', 'ProcAMDBoost': 'Disabled'},
            {'n': hpe()}, same_step_unlocks=False)
        self.assertEqual(
            "locked by WorkloadProfile=GeneralPowerEfficientCompute; in the "
            "BMC's Dependencies, which ironic does not cache: prepare the "
            "node first (WorkloadProfile=Custom)", problem.reason)

    def test_the_nested_lock_names_both_profiles(self):
        (problem,) = bios_registry.problems(
            {'ProcSMT': 'Disabled'}, {'n': hpe('LowLatency', 'IOTGateway')},
            same_step_unlocks=False)
        self.assertTrue(problem.reason.endswith(
            'prepare the node first (WorkloadProfile=Custom, '
            'AMDPerformanceWorkloadProfile=Disabled)'), problem.reason)

    def test_an_explicit_setting_is_not_asked_for_its_profile(self):
        dell = {'bm-5': fx.DELL_R750.settings}
        self.assertEqual([], bios_profiles.missing(
            {'ProcTurboMode': 'Disabled'}, dell, same_step_unlocks=False))

    def test_supermicro_no_value_can_be_applied(self):
        registry = {'x13': fx.SUPERMICRO_X13.settings}
        for value in ('Disable', '0'):
            self.assertEqual([], bios_registry.problems(
                {'TurboMode_3D06': 'Disable'}, registry))
            (problem,) = bios_registry.problems(
                {'TurboMode_3D06': value}, registry, same_step_unlocks=False)
            self.assertEqual(
                "ironic 36 and later accept only the registry's value names "
                "(0, 1) and read back the BIOS's display strings (Enable): "
                "no value of TurboMode_3D06 can be applied through ironic's "
                "redfish BIOS interface", problem.reason)

    def test_the_vocabulary_leaves_the_profile_out_of_the_step(self):
        dell = fx.DELL_R750.settings
        found = bios_vocabulary.match(TURBO_OFF, dell,
                                      same_step_unlocks=False)
        self.assertEqual(([('ProcTurboMode', 'Disabled')], 'SysProfile'), (
            bios_vocabulary.settings(found), found.unlock.setting))
        self.assertEqual(
            [('SysProfile', 'Custom'), ('ProcTurboMode', 'Disabled')],
            bios_vocabulary.settings(bios_vocabulary.match(TURBO_OFF, dell)))

    def test_the_vocabulary_names_supermicros_limit(self):
        plan = bios_vocabulary.per_class(
            TURBO_OFF, {'x13': {'sm-1': fx.SUPERMICRO_X13.settings}},
            same_step_unlocks=False)
        self.assertEqual(
            ({}, "TurboMode_3D06: ironic 36 and later accept only the "
                 "registry's value names (0, 1) and read back the BIOS's "
                 "display strings (Enable): no value of TurboMode_3D06 can "
                 "be applied through ironic's redfish BIOS interface "
                 "(sm-1)"), (plan.matched, plan.unmatched[0].why))
