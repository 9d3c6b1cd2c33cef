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

"""Vendor profiles that lock BIOS settings, value by value.

A vendor's BIOS groups its power and performance settings under a
profile: Dell's ``SysProfile``, HPE's ``WorkloadProfile`` (and, on AMD,
``AMDPerformanceWorkloadProfile`` within it), Lenovo's
``OperatingModes_ChooseOperatingMode``.  A lock is a profile *value* and
the settings it governs: under it the BIOS sets them itself and refuses a
change.  Dell and Lenovo lock the same settings under every value but the
custom one; HPE's values each lock their own (the default
``GeneralPowerEfficientCompute`` locks ``ProcAMDBoost`` but not ``Sriov``),
and its second profile is itself locked unless ``WorkloadProfile=Custom``.
At the custom value (``Custom``, ``CustomMode``; ``Disabled`` for the
second HPE profile) each setting keeps its value and can be changed.

The registries say so in their Dependencies (``RegistryEntries``), which
ironic's BIOS registry API does not carry (sushy leaves them out on
purpose): ``LOCKS`` is printed from captured registries (NVIDIA/libredfish
``tests/mockups``, MIT) by ``tools/bios_profile_locks.py``, and the unit
tests check it equals them.  A setting is locked under a profile value
when a Dependency whose condition holds at that value, whatever the other
settings are, makes it ``ReadOnly`` or ``GrayOut`` or sets its
``CurrentValue`` (the BIOS then overrides what a step writes); ``Hidden``
alone is not a lock.  The settings looked at are the vocabulary's, the
profiles' and the power and performance ones each profile governs; a value
no registry showed is taken to lock whatever any value of its profile
locks.

Dell's iDRAC also reports a locked setting ``ReadOnly`` live, which ironic
caches; HPE's static ``ReadOnly`` stays false; Lenovo greys it out, which
ironic does not keep.  The BMC takes the profile's custom value and the
locked setting in one request, and ironic before 36.0 passes it on; from
36.0 ironic refuses a setting its cache says is read-only whatever the
step also sets, so the node's profile is set first (``prerequisites``:
``deploy-config prepare``).  Plain functions over the detailed BIOS
settings ironic lists.
"""

import collections

# A profile: its setting, the value that locks nothing, whose it is, and
# where what its values lock (``LOCKS``) comes from.
Profile = collections.namedtuple('Profile', [
    'setting', 'custom', 'vendor', 'source'])
# A setting a profile locks, and the profile.
Lock = collections.namedtuple('Lock', ['setting', 'profile'])

_LIBREDFISH = 'NVIDIA/libredfish tests/mockups'
# Names of the other CPU's models, not in a captured registry, locked
# where their counterpart is: {name: the counterpart}.
BY_ANALOGY = {'ProcTurbo': 'ProcAMDBoost',
              'Processors_CorePerformanceBoost': 'Processors_TurboMode'}
# profile setting: ((values, the settings each of them locks), ...), as
# tools/bios_profile_locks.py prints it.
LOCKS = {
    'SysProfile': (
        (('PerfPerWattOptimizedDapc', 'PerfPerWattOptimizedOs',
          'PerfOptimized', 'DenseCfgOptimized', 'PerfOptimizedHwp',
          'PerfWorkStationOptimized'),
         ('ProcTurboMode', 'ProcCStates', 'ProcC1E', 'ProcPwrPerf',
          'CollaborativeCpuPerfCtrl', 'CpuInterconnectBusLinkPower',
          'EnergyPerformanceBias', 'MemFrequency', 'MemPatrolScrub',
          'MemRefreshRate', 'MonitorMwait', 'OsAcpiCx', 'PcieAspmL1',
          'ProcessorEist', 'UncoreFrequency', 'WriteDataCrc')),
        (('Custom',), ()),
    ),
    'WorkloadProfile': (
        (('GeneralPowerEfficientCompute',),
         ('ProcAMDBoost', 'AMDPerformanceWorkloadProfile', 'AmdL1Prefetcher',
          'AmdL2Prefetcher', 'ApplicationPowerBoost', 'DataFabricCStateEnable',
          'InfinityFabricPstate', 'MinProcIdlePower', 'NumaGroupSizeOpt',
          'PowerRegulator', 'ProcX2Apic', 'ProcTurbo')),
        (('GeneralPeakFrequencyCompute',),
         ('ProcAMDBoost', 'AMDPerformanceWorkloadProfile', 'AmdL1Prefetcher',
          'AmdL2Prefetcher', 'DataFabricCStateEnable', 'MinProcIdlePower',
          'NumaGroupSizeOpt', 'PowerRegulator', 'ProcTurbo',
          'CStateEfficiencyMode')),
        (('GeneralThroughputCompute',),
         ('ProcAMDBoost', 'AMDPerformanceWorkloadProfile', 'AmdL1Prefetcher',
          'AmdL2Prefetcher', 'InfinityFabricPstate', 'MinProcIdlePower',
          'NumaGroupSizeOpt', 'PowerRegulator', 'ProcTurbo',
          'CStateEfficiencyMode')),
        (('Virtualization-PowerEfficient',),
         ('AMDPerformanceWorkloadProfile', 'ApplicationPowerBoost',
          'DataFabricCStateEnable', 'InfinityFabricPstate', 'MinProcIdlePower',
          'NumaGroupSizeOpt', 'PowerRegulator', 'Sriov', 'ProcAmdIoVt')),
        (('Virtualization-MaxPerformance',),
         ('ProcAMDBoost', 'AMDPerformanceWorkloadProfile',
          'ApplicationPowerBoost', 'DataFabricCStateEnable',
          'InfinityFabricPstate', 'NumaGroupSizeOpt', 'PowerRegulator',
          'ProcTurbo', 'CStateEfficiencyMode', 'Sriov', 'ProcAmdIoVt')),
        (('LowLatency',),
         ('ProcAMDBoost', 'AMDPerformanceWorkloadProfile', 'AmdL1Prefetcher',
          'AmdL2Prefetcher', 'ApplicationPowerBoost', 'DataFabricCStateEnable',
          'InfinityFabricPstate', 'NumaGroupSizeOpt', 'PowerRegulator',
          'ProcX2Apic', 'ProcTurbo', 'CStateEfficiencyMode', 'Sriov',
          'ProcAmdIoVt', 'CollabPowerControl', 'MemPatrolScrubbing',
          'MemRefreshRate', 'NumaMemoryDomainsPerSocket',
          'XGMIForceLinkWidth')),
        (('MissionCritical',),
         ('AMDPerformanceWorkloadProfile', 'AmdL1Prefetcher',
          'AmdL2Prefetcher', 'MinProcIdlePower', 'CStateEfficiencyMode',
          'MemPatrolScrubbing', 'MemRefreshRate')),
        (('TransactionalApplicationProcessing',),
         ('ProcAMDBoost', 'AMDPerformanceWorkloadProfile', 'AmdL1Prefetcher',
          'AmdL2Prefetcher', 'MinProcIdlePower', 'NumaGroupSizeOpt',
          'PowerRegulator', 'ProcTurbo', 'CStateEfficiencyMode', 'Sriov',
          'MemPatrolScrubbing')),
        (('HighPerformanceCompute(HPC)',),
         ('ProcAMDBoost', 'AMDPerformanceWorkloadProfile', 'AmdL1Prefetcher',
          'AmdL2Prefetcher', 'ApplicationPowerBoost', 'DataFabricCStateEnable',
          'InfinityFabricPstate', 'MinProcIdlePower', 'NumaGroupSizeOpt',
          'PowerRegulator', 'ProcX2Apic', 'ProcTurbo', 'CStateEfficiencyMode',
          'Sriov', 'ProcAmdIoVt', 'NumaMemoryDomainsPerSocket',
          'XGMIForceLinkWidth')),
        (('DecisionSupport',),
         ('AMDPerformanceWorkloadProfile', 'AmdL1Prefetcher',
          'AmdL2Prefetcher', 'MinProcIdlePower', 'NumaGroupSizeOpt',
          'CStateEfficiencyMode', 'Sriov')),
        (('GraphicProcessing',),
         ('AMDPerformanceWorkloadProfile', 'AmdL1Prefetcher',
          'AmdL2Prefetcher', 'ApplicationPowerBoost', 'DataFabricCStateEnable',
          'InfinityFabricPstate', 'MinProcIdlePower', 'NumaGroupSizeOpt',
          'ProcX2Apic', 'CStateEfficiencyMode', 'Sriov', 'ProcAmdIoVt',
          'NumaMemoryDomainsPerSocket', 'XGMIForceLinkWidth')),
        (('I/OThroughput',),
         ('AMDPerformanceWorkloadProfile', 'AmdL1Prefetcher',
          'AmdL2Prefetcher', 'ApplicationPowerBoost', 'DataFabricCStateEnable',
          'InfinityFabricPstate', 'MinProcIdlePower', 'NumaGroupSizeOpt',
          'CStateEfficiencyMode', 'Sriov', 'NumaMemoryDomainsPerSocket',
          'XGMIForceLinkWidth')),
        (('Custom',), ()),
    ),
    'AMDPerformanceWorkloadProfile': (
        (('Disabled', 'MemoryThroughputIntensive'), ()),
        (('CPUIntensive',), ('NumaMemoryDomainsPerSocket',)),
        (('JavaThroughput', 'JavaLatency'),
         ('NumaMemoryDomainsPerSocket', 'AmdL2Prefetcher', 'ProcAmdIoVt')),
        (('PowerEfficiency',),
         ('NumaMemoryDomainsPerSocket', 'AmdL2Prefetcher', 'AmdL1Prefetcher',
          'CStateEfficiencyMode', 'CollabPowerControl')),
        (('StorageIOIntensive',),
         ('ApplicationPowerBoost', 'InfinityFabricPstate')),
        (('NICThroughputIntensive',),
         ('ApplicationPowerBoost', 'InfinityFabricPstate',
          'XGMIForceLinkWidth')),
        (('NICLatencySensitive',),
         ('NumaMemoryDomainsPerSocket', 'ProcAmdIoVt', 'ApplicationPowerBoost',
          'InfinityFabricPstate', 'XGMIForceLinkWidth')),
        (('AcceleratorThroughput',),
         ('NumaMemoryDomainsPerSocket', 'ProcAmdIoVt')),
        (('VMwareVSphereOptimized', 'ContainerOptimized'),
         ('NumaMemoryDomainsPerSocket', 'ProcSMT')),
        (('LinuxKVMOptimized', 'BigDataAnalyticsOptimized', 'IOTGateway'),
         ('NumaMemoryDomainsPerSocket', 'ProcAmdIoVt', 'ProcSMT')),
        (('RDBMSOptimized',),
         ('NumaMemoryDomainsPerSocket', 'InfinityFabricPstate',
          'DataFabricCStateEnable')),
        (('HPCOptimized',),
         ('NumaMemoryDomainsPerSocket', 'ProcAmdIoVt', 'ApplicationPowerBoost',
          'InfinityFabricPstate', 'ProcSMT', 'ProcX2Apic')),
        (('OpenStackNFV', 'OpenStackForRealTimeKernel'),
         ('NumaMemoryDomainsPerSocket', 'AmdL2Prefetcher', 'AmdL1Prefetcher',
          'Sriov')),
    ),
    'OperatingModes_ChooseOperatingMode': (
        (('MinimalPower', 'Efficiency_FavorPower',
          'Efficiency_FavorPerformance', 'MaximumPerformance'),
         ('Processors_TurboMode', 'Processors_C1EnhancedMode',
          'Processors_CPUPstateControl', 'Processors_CStates',
          'Processors_EnergyEfficientTurbo', 'Processors_L0p', 'Processors_L1',
          'Processors_MONITORMWAIT', 'Processors_UPILinkDisable',
          'Processors_UPILinkFrequency', 'Memory_ADDDCSparing',
          'Memory_MemoryPowerManagement', 'Memory_MemorySpeed',
          'Memory_PagePolicy', 'Power_PlatformControlledType',
          'Power_PowerPerformanceBias', 'Processors_CorePerformanceBoost')),
        (('CustomMode',), ()),
    ),
}
# profile setting: {value: the settings it locks}
BY_VALUE = {setting: {value: locked for values, locked in groups
                      for value in values}
            for setting, groups in LOCKS.items()}


# Outermost first: a profile another's value locks comes after it.
PROFILES = (
    Profile('SysProfile', 'Custom', 'Dell iDRAC',
            'Dell PowerEdge R750 (BIOS 1.8.2) attribute registry, '
            'Dependencies on SysProfile (%s)' % _LIBREDFISH),
    Profile('WorkloadProfile', 'Custom', 'HPE iLO',
            'HPE ProLiant DL385 Gen10 Plus v2 (AMD) attribute registry, '
            'Dependencies on WorkloadProfile (%s); ProcTurbo by analogy'
            % _LIBREDFISH),
    Profile('AMDPerformanceWorkloadProfile', 'Disabled', 'HPE iLO',
            'HPE ProLiant DL385 Gen10 Plus v2 (AMD) attribute registry, '
            'Dependencies on AMDPerformanceWorkloadProfile (%s)'
            % _LIBREDFISH),
    Profile('OperatingModes_ChooseOperatingMode', 'CustomMode',
            'Lenovo XCC',
            'Lenovo ThinkSystem SR670 V2 attribute registry, Dependencies '
            'on OperatingModes_ChooseOperatingMode (%s); '
            'Processors_CorePerformanceBoost by analogy' % _LIBREDFISH),
)
# How many of the other settings a profile governs the plan names.
NAMED = 4


def by_setting(name):
    """The Profile whose setting is ``name``, or None."""
    return next((p for p in PROFILES if p.setting == name), None)


def lockable(profile_setting):
    """Every setting some value of the profile locks, in the table's
    order: all it may govern."""
    found = []
    for _, locked in LOCKS.get(profile_setting, ()):
        found += [s for s in locked if s not in found]
    return tuple(found)


def governed(profile_setting, value):
    """The settings the profile at ``value`` locks: what the BIOS sets
    itself while the node is at that value (none at the custom value, nor
    for what is no profile)."""
    profile = by_setting(profile_setting)
    return _locks(profile, value) if profile else ()


def _locks(profile, value):
    """What ``value`` of the profile locks; a value no registry showed
    locks whatever any value does, so that it is never taken as free."""
    return BY_VALUE[profile.setting].get(str(value),
                                         lockable(profile.setting))


def profile_of(setting):
    """The first Profile some value of which locks ``setting``, or
    None."""
    return next((p for p in PROFILES if setting in lockable(p.setting)),
                None)


def _present(by_name):
    """The Profiles of a node (registry ``by_name``): it has the setting,
    and allows its custom value where it lists values (Dell's own
    ``WorkloadProfile`` has no ``Custom``: it is not HPE's)."""
    found = []
    for profile in PROFILES:
        entry = by_name.get(profile.setting)
        allowed = [str(v) for v in (entry or {}).get('allowable_values')
                   or ()]
        if entry is not None and (not allowed or profile.custom in allowed):
            found.append(profile)
    return found


def present(entries):
    """The Profiles a node's detailed BIOS settings (``entries``) have."""
    return _present({e['name']: e for e in entries or ()})


def _values(by_name):
    return {name: str(e.get('value')) for name, e in by_name.items()}


def _lockers(setting, values, by_name):
    """The Profiles of the node whose value in ``values`` locks
    ``setting``, outermost first."""
    return [p for p in _present(by_name)
            if setting in _locks(p, values[p.setting])]


def locks_now(entries):
    """{setting: (profile setting, its current value)} of the node's
    settings (``entries``: its detailed BIOS settings) that a profile's
    current value locks (the outermost profile, where two do)."""
    by_name = {e['name']: e for e in entries}
    now = _values(by_name)
    found = {}
    for profile in _present(by_name):
        for setting in _locks(profile, now[profile.setting]):
            if setting in by_name:
                found.setdefault(setting,
                                 (profile.setting, now[profile.setting]))
    return found


def _unlocking(profile, avoid, wanted, by_name):
    """The value of ``profile`` that locks none of ``avoid``: the one
    ``wanted`` gives it, else its custom value, else the first the node
    allows; None when there is none."""
    allowed = [str(v) for v in by_name[profile.setting].get(
        'allowable_values') or ()] or list(BY_VALUE[profile.setting])
    for value in (wanted.get(profile.setting), profile.custom, *allowed):
        if value is not None and str(value) in allowed and not (
                avoid & set(_locks(profile, value))):
            return str(value)
    return None


def prerequisites(wanted, entries):
    """The profile settings ([(name, value)], outermost first) that must
    be in effect on the node (``entries``: its detailed BIOS settings)
    for every setting of ``wanted`` ({name: value}) to be writable, from
    its current values: each profile that locks one now, or that the
    node can move to a value that does, at its current value where that
    locks none (in effect already), else at an unlocking one.  A profile
    that must change and is itself locked brings the profile that locks
    it (HPE: ``WorkloadProfile=Custom`` before
    ``AMDPerformanceWorkloadProfile``).  [] when no profile governs them;
    None when no value the node allows unlocks one."""
    return _required(wanted, entries, keep=True)


def guards(setting, entries):
    """The profile settings ([(name, value)], outermost first) a step
    sends with ``setting`` where the BMC takes them in one request
    (ironic before 36): those of ``prerequisites``, each at the value
    that unlocks most (its custom value), so that one template holds
    whatever value its nodes are at; None when no value unlocks it."""
    return _required({setting: None}, entries, keep=False)


def _required(wanted, entries, keep):
    """``prerequisites`` (``keep``: a profile whose current value locks
    nothing wanted keeps it) or ``guards``."""
    by_name = {e['name']: e for e in entries}
    now = _values(by_name)
    locked = locks_now(entries)
    chosen, avoid = {}, set(wanted)
    pending = sorted(wanted)
    while pending:
        setting = pending.pop(0)
        for profile in _present(by_name):
            current = now[profile.setting]
            if setting not in _locks(profile, chosen.get(
                    profile.setting, current)) and (
                        profile.setting in chosen or profile.setting in locked
                        or setting not in lockable(profile.setting)):
                continue
            value = current if keep and not (
                avoid & set(_locks(profile, current))) else _unlocking(
                    profile, avoid, wanted, by_name)
            if value is None:
                return None
            chosen[profile.setting] = value
            if value != current and profile.setting not in avoid:
                avoid.add(profile.setting)
                pending.append(profile.setting)
    return [(p.setting, chosen[p.setting]) for p in PROFILES
            if p.setting in chosen]


def locked_on(wanted, by_name, same_step_unlocks=True,
              skips_unchanged=True):
    """{setting: Profile} of the settings of ``wanted`` that a profile of
    the node (registry ``by_name``) locks: at its value once the step is
    applied, or, ``same_step_unlocks`` False (ironic 36 and later), at
    its value now, whatever the step sets; but for those ``held``, where
    ironic ``skips_unchanged`` (35.0 and later)."""
    now = _values(by_name)
    after = dict(now, **{k: str(v) for k, v in wanted.items()}) \
        if same_step_unlocks else now
    kept = held(wanted, by_name) if skips_unchanged else {}
    found = {}
    for setting in wanted:
        lockers = _lockers(setting, after, by_name)
        if setting in by_name and lockers and setting not in kept:
            found[setting] = lockers[0]
    return found


def held(wanted, by_name):
    """{setting: (profile setting, its value)} of the settings of
    ``wanted`` that a profile locks at the value the node has, where
    ``wanted`` is all the node has (ironic then skips the write and the
    reboot) and ironic does not cache them read-only (its check before
    the write; an iLO's locks are in its Dependencies only): switching
    away from it needs the profile changed first."""
    now = _values(by_name)
    if any(str(v) != now.get(k) for k, v in wanted.items()):
        return {}
    found = {}
    for setting, value in wanted.items():
        entry = by_name.get(setting)
        lockers = _lockers(setting, now, by_name) if entry else ()
        if lockers and not entry.get('read_only') and str(value) == now[
                setting]:
            found[setting] = (lockers[0].setting, now[lockers[0].setting])
    return found


def unlocked(wanted, by_name):
    """The settings of ``wanted`` a profile of the node locks now and the
    step's own profile values unlock: their cached ``read_only`` is the
    profile's, gone once the BMC applies the step."""
    now = _values(by_name)
    after = dict(now, **{k: str(v) for k, v in wanted.items()})
    return frozenset(s for s in wanted if _lockers(s, now, by_name)
                     and not _lockers(s, after, by_name))


def missing(wanted, registries, same_step_unlocks=True):
    """[Lock] of the settings of ``wanted`` sent without the profile value
    that unlocks them: locked on a node of ``registries`` ({node: its
    detailed BIOS settings}) that reports a registry, or, when none does,
    by the setting's name alone.  [] with ``same_step_unlocks`` False
    (ironic 36 and later): the profile in the step does not help there;
    the node is prepared instead (``prerequisites``)."""
    if not same_step_unlocks:
        return []
    reported = [{e['name']: e for e in r} for r in registries.values()
                if any(e.get('attribute_type') for e in r)]
    found = []
    for setting in sorted(wanted):
        if reported:
            profile = next((locks[setting] for locks in (
                locked_on(wanted, by_name) for by_name in reported)
                if setting in locks), None)
        else:
            profile = profile_of(setting)
            if profile and setting not in _locks(
                    profile, wanted.get(profile.setting)):
                profile = None
        if profile:
            found.append(Lock(setting, profile))
    return found


def reason(profile):
    """Why a node refuses a setting this profile locks, in words."""
    return 'locked by %s unless %s=%s' % (profile.setting, profile.setting,
                                          profile.custom)


def prepare_first(setting, entries):
    """Why ironic 36 and later refuse ``setting``, which a profile's
    current value locks on the node, in one line naming what preparing
    the node sets first."""
    by_name = {e['name']: e for e in entries}
    name, value = locks_now(entries)[setting]
    needed = [(n, v) for n, v in prerequisites({setting: None}, entries)
              or () if str(by_name[n].get('value')) != v]
    why = ('ironic 36 and later refuse it even with %s=%s in the same step'
           % (name, by_setting(name).custom)) \
        if by_name[setting].get('read_only') else \
        "in the BMC's Dependencies, which ironic does not cache"
    return 'locked by %s=%s; %s: %s' % (
        name, value, why, 'prepare the node first (%s)' % ', '.join(
            '%s=%s' % pair for pair in needed) if needed
        else 'no value of %s the node allows unlocks it' % name)


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
    """What else ``profile`` governs, for the plan: the first few of the
    settings its values lock besides ``setting``, and how many more."""
    others = [s for s in lockable(profile.setting) if s != setting]
    named = ', '.join(others[:NAMED])
    if len(others) > NAMED:
        named += ' and %d more' % (len(others) - NAMED)
    return '%s=%s unlocks %s; it also ends the profile\'s control of %s ' \
        '(each keeps its value)' % (profile.setting, profile.custom,
                                    setting, named)


# The profiles whose BMC reports what they lock ReadOnly live (Dell's
# iDRAC), so that ironic may have cached it so; HPE's static ReadOnly
# stays false, and a setting read-only there is so for another reason.
LIVE_READ_ONLY = frozenset({'SysProfile'})


def stale_read_only(wanted, entries):
    """The settings of ``wanted`` that ironic's cache (``entries``: the
    node's detailed BIOS settings) holds read-only though no profile locks
    them by its current values: read-only as cached under a profile value
    that locked them.  Ironic (36.0 to 39.0 at least) writes a cached
    setting's registry fields again only when its value changes
    (``BIOSSettingList.sync_node_setting``), and sushy keeps a BMC's
    registry for the conductor's life: a setting cached read-only stays
    so, and ironic refuses it, after its profile is unlocked."""
    by_name = {e['name']: e for e in entries}
    locked = locks_now(entries)
    return sorted(name for name in wanted
                  if (by_name.get(name) or {}).get('read_only')
                  and name not in locked and profile_of(name) is not None
                  and profile_of(name).setting in by_name
                  and profile_of(name).setting in LIVE_READ_ONLY)


def kept_read_only(wanted, entries):
    """The settings of ``wanted`` that ironic's cache (``entries``) holds
    read-only under a profile that locks them now and that the BMC reports
    read-only live (``LIVE_READ_ONLY``: Dell's): a profile change leaves
    their values, so ironic (36.0 to 39.0) keeps them read-only in its
    cache, and refuses them, once the profile is unlocked too
    (``stale_read_only``)."""
    by_name = {e['name']: e for e in entries or ()}
    locked = locks_now(entries or ())
    return sorted(name for name in wanted
                  if (by_name.get(name) or {}).get('read_only')
                  and name in locked and locked[name][0] in LIVE_READ_ONLY)


def describe_kept(found):
    """Why preparing the node does not make it take ``found``
    (``kept_read_only``), in one line."""
    return ('ironic caches %s read-only under the profile that locks it, '
            'and ironic 36 to 39 keep it so once the profile is unlocked '
            '(they write a cached setting\'s read_only again only when its '
            'value changes, and no API of theirs reads it anew): preparing '
            'the node would not make it take the config (see "Known limit: '
            'ironic\'s cache of read-only" in the docs)' % ', '.join(found))


def describe_stale(found):
    """Why ironic refuses ``found`` (``stale_read_only``), and what to do,
    in one line."""
    return ('ironic still caches %s read-only, which its profile no '
            'longer explains: ironic 36 to 39 write a cached setting\'s '
            'read_only again only when its value changes, no API of theirs '
            'reads it anew, and they refuse the setting meanwhile (see '
            '"Known limit: ironic\'s cache of read-only" in the docs)'
            % ', '.join(found))
