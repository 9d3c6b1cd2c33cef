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

"""Vendor profiles that lock BIOS settings.

A vendor's BIOS groups its power and performance settings under one
profile: Dell's ``SysProfile``, HPE's ``WorkloadProfile``, Lenovo's
``OperatingModes_ChooseOperatingMode``.  While the profile has any value
but its custom one, the BIOS sets the settings it governs itself and
refuses a change to them; at its custom value each keeps its value and can
be changed, and the BMC takes the profile and the setting in one request.
So a setting a profile locks is sent with the profile's custom value, in
the same step.

The registries say so in their Dependencies section (``SysProfile NEQ
Custom`` makes ``ProcTurboMode`` ``ReadOnly``), which ironic's BIOS
registry API does not carry (sushy leaves it out on purpose): the locks
are listed here, read from captured registries (NVIDIA/libredfish
``tests/mockups``, MIT).  Dell's iDRAC also reports a locked setting
``ReadOnly`` live; HPE's static ``ReadOnly`` stays false, the lock being in
Dependencies only; Lenovo's registry greys it out (``GrayOut``), which
ironic does not keep.  Plain functions over the detailed BIOS settings
ironic lists.
"""

import collections

# A profile: its setting, the value that unlocks what it governs, whose it
# is, the settings it locks (the registry's Dependencies), and where that
# comes from.
Profile = collections.namedtuple('Profile', [
    'setting', 'custom', 'vendor', 'locks', 'source'])
# A setting a profile locks, and the profile.
Lock = collections.namedtuple('Lock', ['setting', 'profile'])

_LIBREDFISH = 'NVIDIA/libredfish tests/mockups'
PROFILES = (
    Profile('SysProfile', 'Custom', 'Dell iDRAC', (
        'ProcTurboMode', 'ProcCStates', 'ProcC1E', 'ProcPwrPerf',
        'CollaborativeCpuPerfCtrl', 'CpuInterconnectBusLinkPower',
        'EnergyPerformanceBias', 'MemFrequency', 'MemPatrolScrub',
        'MemRefreshRate', 'MonitorMwait', 'OsAcpiCx', 'PcieAspmL1',
        'ProcessorEist', 'UncoreFrequency', 'WriteDataCrc'),
        'Dell PowerEdge R750 (BIOS 1.8.2) attribute registry, '
        'Dependencies "SysProfile NEQ Custom" (%s)' % _LIBREDFISH),
    Profile('WorkloadProfile', 'Custom', 'HPE iLO', (
        'ProcAMDBoost', 'Sriov', 'AMDPerformanceWorkloadProfile',
        'AmdL1Prefetcher', 'AmdL2Prefetcher', 'ApplicationPowerBoost',
        'CStateEfficiencyMode', 'CollabPowerControl',
        'DataFabricCStateEnable', 'InfinityFabricPstate',
        'MemPatrolScrubbing', 'MemRefreshRate', 'MinProcIdlePower',
        'NumaGroupSizeOpt', 'NumaMemoryDomainsPerSocket', 'PowerRegulator',
        'ProcAmdIoVt', 'ProcX2Apic', 'XGMIForceLinkWidth',
        # Intel models: their turbo, as the AMD registry locks its own
        # (not in a captured registry)
        'ProcTurbo'),
        'HPE ProLiant DL385 Gen10 Plus v2 (AMD) attribute registry, '
        'Dependencies on WorkloadProfile (%s); ProcTurbo by analogy'
        % _LIBREDFISH),
    Profile('OperatingModes_ChooseOperatingMode', 'CustomMode',
            'Lenovo XCC', (
                'Processors_TurboMode', 'Processors_C1EnhancedMode',
                'Processors_CPUPstateControl', 'Processors_CStates',
                'Processors_EnergyEfficientTurbo', 'Processors_L0p',
                'Processors_L1', 'Processors_MONITORMWAIT',
                'Processors_UPILinkDisable', 'Processors_UPILinkFrequency',
                'Memory_ADDDCSparing', 'Memory_MemoryPowerManagement',
                'Memory_MemorySpeed', 'Memory_PagePolicy',
                'Power_PlatformControlledType', 'Power_PowerPerformanceBias',
                # AMD models: their turbo (not in a captured registry)
                'Processors_CorePerformanceBoost'),
            'Lenovo ThinkSystem SR670 V2 attribute registry, Dependencies '
            '"OperatingModes_ChooseOperatingMode NEQ CustomMode" (%s); '
            'Processors_CorePerformanceBoost by analogy' % _LIBREDFISH),
)
# How many of the other settings a profile governs the plan names.
NAMED = 4


def profile_of(setting):
    """The Profile that locks ``setting``, or None."""
    return next((p for p in PROFILES if setting in p.locks), None)


def unlocked(wanted):
    """The settings that ``wanted`` ({name: value}) unlocks: those of each
    profile it sets to its custom value."""
    return frozenset(name for p in PROFILES
                     if str(wanted.get(p.setting)) == p.custom
                     for name in p.locks)


def unlock_for(setting, by_name):
    """The Profile whose custom value ``setting`` needs on a node whose
    registry is ``by_name`` ({name: its registry entry}): the node has the
    profile and it takes that value.  None when nothing locks the setting
    there."""
    profile = profile_of(setting)
    if profile is None or profile.setting not in by_name:
        return None
    allowed = [str(v) for v in
               by_name[profile.setting].get('allowable_values') or ()]
    if allowed and profile.custom not in allowed:
        return None
    return profile


def locked_on(wanted, by_name):
    """{setting: Profile} of the settings of ``wanted`` that a profile of
    the node (registry ``by_name``) locks now: the profile is not at its
    custom value, and ``wanted`` does not set it so."""
    found = {}
    for setting in wanted:
        profile = profile_of(setting)
        if profile is None or profile.setting not in by_name:
            continue
        now = str(by_name[profile.setting].get('value'))
        if profile.custom not in (now, str(wanted.get(profile.setting))):
            found[setting] = profile
    return found


def missing(wanted, registries):
    """[Lock] of the settings of ``wanted`` sent without their profile's
    custom value, where that profile exists: on a node of ``registries``
    ({node: its detailed BIOS settings}) that reports a registry, or, when
    none does, by the setting's name alone."""
    reported = [{e['name'] for e in r} for r in registries.values()
                if any(e.get('attribute_type') for e in r)]
    found = []
    for setting in sorted(wanted):
        profile = profile_of(setting)
        if profile is None or str(
                wanted.get(profile.setting)) == profile.custom:
            continue
        if not reported or any(profile.setting in r for r in reported):
            found.append(Lock(setting, profile))
    return found


def reason(profile):
    """Why a node refuses a setting this profile locks, in words."""
    return 'locked by %s unless %s=%s' % (profile.setting, profile.setting,
                                          profile.custom)


def describe_missing(found):
    """The one line that refuses ``found`` (a non-empty [Lock])."""
    return '; '.join(
        '%s is locked by %s\'s %s unless %s=%s: set %s=%s in the same step '
        '(--bios-setting %s=%s)' % (
            lock.setting, lock.profile.vendor, lock.profile.setting,
            lock.profile.setting, lock.profile.custom, lock.profile.setting,
            lock.profile.custom, lock.profile.setting, lock.profile.custom)
        for lock in found)


def governs(profile, setting):
    """What else ``profile`` governs, for the plan: the first few of its
    locked settings besides ``setting``, and how many more."""
    others = [s for s in profile.locks if s != setting]
    named = ', '.join(others[:NAMED])
    if len(others) > NAMED:
        named += ' and %d more' % (len(others) - NAMED)
    return '%s=%s unlocks %s; it also ends the profile\'s control of %s ' \
        '(each keeps its value)' % (profile.setting, profile.custom,
                                    setting, named)
