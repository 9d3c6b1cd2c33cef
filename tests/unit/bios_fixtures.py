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

"""Real vendors' BIOS, as ironic's BIOS API lists it (``GET
/v1/nodes/{node}/bios?detail=True``): hand-written from what each source
shows (names, values, the live ``read_only``), never from the vocabulary's
table, so that a wrong name in the table fails the tests.

The captured registries are NVIDIA/libredfish's ``tests/mockups`` (MIT,
commit c094c9e6), also in ``../shared/registries``.  Ironic keeps, of
each setting the BIOS reports, its value and the registry's type, allowed
value names (``ValueName``), bounds and ``ReadOnly``; never the
Dependencies.
"""

import collections

# One model's BIOS: what it is, its CPU, where its names come from, its
# settings, and what each config resolves to there ({config type: (the
# settings sent for enabled, for disabled)}).
Fixture = collections.namedtuple('Fixture', [
    'model', 'cpu', 'source', 'settings', 'resolves'])
SWITCH = ('Enabled', 'Disabled')


def enum(name, value, allowed=SWITCH, read_only=False):
    return {'name': name, 'value': value, 'attribute_type': 'Enumeration',
            'allowable_values': list(allowed), 'read_only': read_only,
            'lower_bound': None, 'upper_bound': None, 'min_length': None,
            'max_length': None, 'reset_required': True, 'unique': False}


def both(*pairs):
    """The settings sent for enabled and for disabled: ``pairs`` of
    (name, enabled spelling, disabled spelling), profiles first."""
    return ([(n, on) for n, on, _ in pairs],
            [(n, off) for n, _, off in pairs])


DELL_PROFILES = ('PerfPerWattOptimizedDapc', 'PerfPerWattOptimizedOs',
                 'PerfOptimized', 'Custom')
DELL_R750 = Fixture(
    'Dell PowerEdge R750, BIOS 1.8.2', 'Intel',
    'captured registry (dell-r750): SysProfile=PerfOptimized, and the iDRAC '
    'reports ProcTurboMode, ProcCStates ReadOnly under it', [
        enum('LogicalProc', 'Enabled'),
        enum('ProcVirtualization', 'Enabled'),
        enum('SriovGlobalEnable', 'Enabled'),
        enum('ProcTurboMode', 'Enabled', read_only=True),
        enum('ProcCStates', 'Disabled', SWITCH + ('Autonomous',),
             read_only=True),
        enum('SysProfile', 'PerfOptimized', DELL_PROFILES),
        {'name': 'SystemServiceTag', 'value': 'ABC1234',
         'attribute_type': 'String', 'read_only': True, 'max_length': 7},
    ], {
        'hyperthreading': both(('LogicalProc', 'Enabled', 'Disabled')),
        'virtualization': both(('ProcVirtualization', 'Enabled',
                                'Disabled')),
        'sriov': both(('SriovGlobalEnable', 'Enabled', 'Disabled')),
        'turbo': both(('SysProfile', 'Custom', 'Custom'),
                      ('ProcTurboMode', 'Enabled', 'Disabled')),
    })
DELL_AMD = Fixture(
    'Dell PowerEdge AMD EPYC (R6525, R7525)', 'AMD',
    "issue 33 and DESIGN.md (LogicalProc, ProcVirtualization and "
    "SriovGlobalEnable serve Dell's AMD models too); Metal3 bmc/idrac.go; "
    "SysProfile at Dell's default, PerfPerWattOptimizedDapc", [
        enum('LogicalProc', 'Enabled'),
        enum('ProcVirtualization', 'Enabled'),
        enum('SriovGlobalEnable', 'Disabled'),
        enum('SysProfile', 'PerfPerWattOptimizedDapc', DELL_PROFILES),
    ], {
        'hyperthreading': both(('LogicalProc', 'Enabled', 'Disabled')),
        'virtualization': both(('ProcVirtualization', 'Enabled',
                                'Disabled')),
        'sriov': both(('SriovGlobalEnable', 'Enabled', 'Disabled')),
    })
HPE_PROFILES = ('GeneralPowerEfficientCompute', 'LowLatency',
                'Virtualization-MaxPerformance', 'Custom')
HPE_GEN10_INTEL = Fixture(
    'HPE ProLiant Gen10 (Intel), iLO 5', 'Intel',
    "Metal3 bmc/ilo5.go (ProcHyperthreading, ProcVirtualization, Sriov); "
    "iLO 5's BIOS attributes (ProcTurbo, WorkloadProfile at its default)", [
        enum('ProcHyperthreading', 'Enabled'),
        enum('ProcVirtualization', 'Enabled'),
        enum('Sriov', 'Enabled'),
        enum('ProcTurbo', 'Enabled'),
        enum('WorkloadProfile', 'GeneralPowerEfficientCompute',
             HPE_PROFILES),
    ], {
        'hyperthreading': both(('ProcHyperthreading', 'Enabled',
                                'Disabled')),
        'virtualization': both(('ProcVirtualization', 'Enabled',
                                'Disabled')),
        'sriov': both(('WorkloadProfile', 'Custom', 'Custom'),
                      ('Sriov', 'Enabled', 'Disabled')),
        'turbo': both(('WorkloadProfile', 'Custom', 'Custom'),
                      ('ProcTurbo', 'Enabled', 'Disabled')),
    })
HPE_DL385_AMD = Fixture(
    'HPE ProLiant DL385 Gen10 Plus v2', 'AMD',
    'captured registry (hpe-dl385-gen10plus-v2): WorkloadProfile at '
    'GeneralPowerEfficientCompute, every static ReadOnly false; no AMD-V '
    'setting (ProcAmdIoVt is the IOMMU)', [
        enum('ProcSMT', 'Enabled'),
        enum('ProcAmdIoVt', 'Enabled'),
        enum('Sriov', 'Enabled'),
        enum('ProcAMDBoost', 'Enabled', ('Disabled', 'Enabled')),
        enum('WorkloadProfile', 'GeneralPowerEfficientCompute',
             HPE_PROFILES),
    ], {
        'hyperthreading': both(('ProcSMT', 'Enabled', 'Disabled')),
        'virtualization': (None, None),
        'sriov': both(('WorkloadProfile', 'Custom', 'Custom'),
                      ('Sriov', 'Enabled', 'Disabled')),
        'turbo': both(('WorkloadProfile', 'Custom', 'Custom'),
                      ('ProcAMDBoost', 'Enabled', 'Disabled')),
    })
LENOVO_MODES = ('MinimalPower', 'Efficiency_FavorPower',
                'Efficiency_FavorPerformance', 'CustomMode',
                'MaximumPerformance')
LENOVO_SR670_V2 = Fixture(
    'Lenovo ThinkSystem SR670 V2', 'Intel',
    'captured registry (lenovo-sr670-v2): '
    'OperatingModes_ChooseOperatingMode at Efficiency_FavorPerformance', [
        enum('Processors_HyperThreading', 'Enabled'),
        enum('Processors_IntelVirtualizationTechnology', 'Enabled',
             ('Disabled', 'Enabled')),
        enum('DevicesandIOPorts_SRIOV', 'Enabled', ('Disabled', 'Enabled')),
        enum('Processors_TurboMode', 'Enabled', ('Disabled', 'Enabled')),
        enum('OperatingModes_ChooseOperatingMode',
             'Efficiency_FavorPerformance', LENOVO_MODES),
    ], {
        'hyperthreading': both(('Processors_HyperThreading', 'Enabled',
                                'Disabled')),
        'virtualization': both(('Processors_IntelVirtualizationTechnology',
                                'Enabled', 'Disabled')),
        'sriov': both(('DevicesandIOPorts_SRIOV', 'Enabled', 'Disabled')),
        'turbo': both(('OperatingModes_ChooseOperatingMode', 'CustomMode',
                       'CustomMode'),
                      ('Processors_TurboMode', 'Enabled', 'Disabled')),
    })
LENOVO_SR650_XEON1 = Fixture(
    'Lenovo ThinkSystem SR650, 1st-generation Xeon Scalable', 'Intel',
    'Lenovo Press LP1477: Enable/Disable on that UEFI', [
        enum('Processors_HyperThreading', 'Enable', ('Enable', 'Disable')),
    ], {
        'hyperthreading': both(('Processors_HyperThreading', 'Enable',
                                'Disable')),
    })
LENOVO_SR665_V3_AMD = Fixture(
    'Lenovo ThinkSystem SR665 V3 (AMD EPYC 9004)', 'AMD',
    'names: Lenovo Press LP1977, NVIDIA/libredfish src/lenovo.rs '
    '(Processors_SVMMode=Enabled); values Enabled/Disabled as on the Intel '
    'models (not in a captured registry)', [
        enum('Processors_SMTMode', 'Enabled'),
        enum('Processors_SVMMode', 'Enabled'),
        enum('Processors_CorePerformanceBoost', 'Enabled'),
        enum('OperatingModes_ChooseOperatingMode', 'MaximumPerformance',
             ('MaximumEfficiency', 'MaximumPerformance', 'CustomMode')),
    ], {
        'hyperthreading': both(('Processors_SMTMode', 'Enabled',
                                'Disabled')),
        'virtualization': both(('Processors_SVMMode', 'Enabled',
                                'Disabled')),
        'turbo': both(('OperatingModes_ChooseOperatingMode', 'CustomMode',
                       'CustomMode'),
                      ('Processors_CorePerformanceBoost', 'Enabled',
                       'Disabled')),
    })
# Supermicro's registry names values by number, and the meaning of "0"
# flips between attributes: its BIOS reports (and takes) display strings.
SUPERMICRO_X13 = Fixture(
    'Supermicro SYS-821GE-TNHR (X13)', 'Intel',
    'captured registry (supermicro-x13): per-board suffixes, values named '
    '"0"/"1", display strings reported (Enable; SR-IOV: Enabled)', [
        enum('Hyper_Threading_ALL__F27F', 'Enable', ('0', '1')),
        enum('IntelVirtualizationTechnology_3C6F', 'Enable', ('0', '1')),
        enum('SR_IOVSupport_0047', 'Enabled', ('0', '1')),
        enum('TurboMode_3D06', 'Enable', ('0', '1')),
        enum('PowerTechnology_FF77', 'Custom', ('0', '1', '2')),
        enum('SpeedStep_P_States__FF12', 'Enable', ('0', '1')),
    ], {
        'hyperthreading': both(('Hyper_Threading_ALL__F27F', 'Enable',
                                'Disable')),
        'virtualization': both(('IntelVirtualizationTechnology_3C6F',
                                'Enable', 'Disable')),
        'sriov': both(('SR_IOVSupport_0047', 'Enabled', 'Disabled')),
        'turbo': both(('TurboMode_3D06', 'Enable', 'Disable')),
    })
SUPERMICRO_OLDER = Fixture(
    'Supermicro, older firmware (# suffixes)', 'Intel',
    'issue 33 (SR-IOVSupport#0048); NVIDIA/libredfish src/supermicro.rs '
    '(QuietBoot#002E, writes SR-IOV Support as Enabled)', [
        enum('SR-IOVSupport#0048', 'Enabled', ('0', '1')),
    ], {
        'sriov': both(('SR-IOVSupport#0048', 'Enabled', 'Disabled')),
    })
SUPERMICRO_H13_AMD = Fixture(
    'Supermicro H13 (AMD EPYC 9004)', 'AMD',
    "the BIOS setup's names (SMT Control, SVM Mode, Core Performance "
    "Boost) as X13's registry spells setup names; the suffixes are "
    "invented (not in a captured registry)", [
        enum('SMTControl_1A2B', 'Enable', ('0', '1')),
        enum('SVMMode_1A2C', 'Enabled', ('0', '1')),
        enum('CorePerformanceBoost_1A2D', 'Enable', ('0', '1')),
    ], {
        'hyperthreading': both(('SMTControl_1A2B', 'Enable', 'Disable')),
        'virtualization': both(('SVMMode_1A2C', 'Enabled', 'Disabled')),
        'turbo': both(('CorePerformanceBoost_1A2D', 'Enable', 'Disable')),
    })
# Every vendor and CPU of the vocabulary, each name of its table in one.
EVERY = (DELL_R750, DELL_AMD, HPE_GEN10_INTEL, HPE_DL385_AMD,
         LENOVO_SR670_V2, LENOVO_SR650_XEON1, LENOVO_SR665_V3_AMD,
         SUPERMICRO_X13, SUPERMICRO_OLDER, SUPERMICRO_H13_AMD)
