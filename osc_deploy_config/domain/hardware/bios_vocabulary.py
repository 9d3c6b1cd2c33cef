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

"""Vendor-neutral configs: the BIOS attribute and value that mean a config
on each vendor's hardware, found in the hardware's own BIOS registry.

BIOS attribute names differ by vendor, and by CPU within a vendor:
hyperthreading is ``LogicalProc`` on Dell iDRAC (Intel and AMD),
``ProcHyperthreading`` on HPE iLO with Intel and ``ProcSMT`` with AMD,
``Processors_HyperThreading`` on Lenovo XCC with Intel and
``Processors_SMTMode`` with AMD, and on Supermicro a name with a per-board
suffix (``Hyper_Threading_ALL__F27F``; older firmware ``Name#0048``).  A
BMC refuses a name its registry lacks.  Metal3's baremetal-operator maps
three vendor-neutral firmware fields to each BMC type's names; this table
does the same for config types, and ironic's BIOS registry (API 1.74)
tells which name, and which spelling of the value, a node's BIOS has.  A
setting a vendor profile's value may lock comes with the profile value
that unlocks it, in the same step, where ironic passes the step to the
BMC as it is (before 36.0); from 36.0 ironic refuses the locked setting
whatever the step sets, so the step carries the setting alone and the
node is prepared first (``bios_profiles``).  Each name says whose it is,
for which CPU, and where it comes from; those read in a captured
registry (NVIDIA/libredfish ``tests/mockups``, MIT: Dell PowerEdge R750,
HPE DL385 Gen10 Plus v2, Lenovo SR670 V2, Supermicro SYS-821GE-TNHR) say
so.

HPE's AMD BIOS has no setting for AMD-V (it is always on; ``ProcAmdIoVt`` is
the IOMMU): virtualization finds nothing there, and says so.

An operator adds names for hardware the table does not know in a
vocabulary file (``extend``); the mini cloud's fake BIOS names live in
its own.  Plain functions over the detailed BIOS settings ironic lists.
"""

import collections
import re

from osc_lib import exceptions

from osc_deploy_config.domain.hardware import bios_profiles
from osc_deploy_config.domain.hardware import bios_registry

# One name of a config's setting: the attribute, whose it is, for which
# CPUs, where the name comes from, and whether a registry's name matches
# it by its stem, whatever per-board suffix follows (Supermicro).
Meaning = collections.namedtuple(
    'Meaning', ['name', 'vendor', 'cpu', 'source', 'by_stem'],
    defaults=[False])
_CAPTURED = 'captured registry of the %s (NVIDIA/libredfish tests/mockups)'
_DELL = _CAPTURED % 'Dell PowerEdge R750'
_HPE_AMD = _CAPTURED % 'HPE ProLiant DL385 Gen10 Plus v2'
_LENOVO = _CAPTURED % 'Lenovo ThinkSystem SR670 V2'
_SUPERMICRO = _CAPTURED % 'Supermicro SYS-821GE-TNHR (X13)'
_METAL3_IDRAC = 'Metal3 baremetal-operator bmc/idrac.go'
_METAL3_ILO = 'Metal3 baremetal-operator bmc/ilo4.go, ilo5.go'
_ILO5 = "HPE iLO 5's BIOS attributes"
_LENOVO_AMD = 'Lenovo Press LP1977, ThinkSystem UEFI settings for AMD EPYC'
_SUPERMICRO_AMD = "Supermicro H13 BIOS setup's name, as X13's registry " \
    'spells setup names (not in a captured registry)'
# config type: the names of its setting, in the order they are looked for
NAMES = {
    'hyperthreading': (
        Meaning('LogicalProc', 'Dell iDRAC', 'Intel, AMD',
                '%s; %s' % (_DELL, _METAL3_IDRAC)),
        Meaning('ProcHyperthreading', 'HPE iLO', 'Intel', _METAL3_ILO),
        Meaning('ProcSMT', 'HPE iLO', 'AMD', _HPE_AMD),
        Meaning('Processors_HyperThreading', 'Lenovo XCC', 'Intel',
                _LENOVO),
        Meaning('Processors_SMTMode', 'Lenovo XCC', 'AMD', _LENOVO_AMD),
        Meaning('Hyper_Threading_ALL_', 'Supermicro', 'Intel', _SUPERMICRO,
                True),
        Meaning('SMTControl', 'Supermicro', 'AMD', _SUPERMICRO_AMD, True),
    ),
    'virtualization': (
        Meaning('ProcVirtualization', 'Dell iDRAC, HPE iLO', 'Intel, AMD',
                '%s; %s; %s' % (_DELL, _METAL3_IDRAC, _METAL3_ILO)),
        Meaning('Processors_IntelVirtualizationTechnology', 'Lenovo XCC',
                'Intel', _LENOVO),
        Meaning('Processors_SVMMode', 'Lenovo XCC', 'AMD',
                '%s; NVIDIA/libredfish src/lenovo.rs' % _LENOVO_AMD),
        Meaning('IntelVirtualizationTechnology', 'Supermicro', 'Intel',
                _SUPERMICRO, True),
        Meaning('SVMMode', 'Supermicro', 'AMD', _SUPERMICRO_AMD, True),
    ),
    'sriov': (
        Meaning('SriovGlobalEnable', 'Dell iDRAC', 'Intel, AMD',
                '%s; %s' % (_DELL, _METAL3_IDRAC)),
        Meaning('Sriov', 'HPE iLO', 'Intel, AMD',
                '%s; %s' % (_HPE_AMD, _METAL3_ILO)),
        Meaning('DevicesandIOPorts_SRIOV', 'Lenovo XCC', 'Intel', _LENOVO),
        Meaning('SR_IOVSupport', 'Supermicro', 'Intel',
                '%s; older firmware SR-IOVSupport#0048' % _SUPERMICRO, True),
    ),
    'turbo': (
        Meaning('ProcTurboMode', 'Dell iDRAC', 'Intel', _DELL),
        Meaning('ProcTurbo', 'HPE iLO', 'Intel', _ILO5),
        Meaning('ProcAMDBoost', 'HPE iLO', 'AMD', _HPE_AMD),
        Meaning('Processors_TurboMode', 'Lenovo XCC', 'Intel', _LENOVO),
        Meaning('Processors_CorePerformanceBoost', 'Lenovo XCC', 'AMD',
                _LENOVO_AMD),
        Meaning('TurboMode', 'Supermicro', 'Intel', _SUPERMICRO, True),
        Meaning('CorePerformanceBoost', 'Supermicro', 'AMD',
                _SUPERMICRO_AMD, True),
    ),
}
# config value: its spellings, one per family (Enabled/Disabled,
# Enable/Disable), in the order they are looked for
VALUES = {
    'enabled': ('Enabled', 'Enable'),
    'disabled': ('Disabled', 'Disable'),
}
# Supermicro's per-board suffix: _F27F (X13), #0048 (older firmware).
_SUFFIX = re.compile(r'(.+?)[_#][0-9A-Fa-f]{4}')
_EXTENSION_KEYS = ('name', 'vendor', 'cpu', 'source', 'by_stem')
# The vendor of the hardware behind ironic's vendor BIOS interfaces: whose
# names to suggest for nodes that report no registry (ironic's ilo BIOS
# interface caches names and values, never a registry).
INTERFACE_VENDORS = {'ilo': 'HPE iLO', 'idrac-redfish': 'Dell iDRAC',
                     'idrac-wsman': 'Dell iDRAC'}

# The setting that means a config on one kind of hardware (``unlock``: the
# Profile whose value may lock it, or None; ``prerequisites``: the profile
# settings, [(name, value)] outermost first, sent before it in the same
# step).
Match = collections.namedtuple('Match', ['name', 'value', 'vendor', 'cpu',
                                         'unlock', 'prerequisites'],
                               defaults=[()])
# A resource class the vocabulary found nothing for, and why.
Unmatched = collections.namedtuple('Unmatched', ['resource_class', 'nodes',
                                                 'why'])
# What per_class found: {resource class: Match}, [Unmatched], and
# {resource class: nodes of a matched class that report no registry}.
Plan = collections.namedtuple('Plan', ['matched', 'unmatched', 'unchecked'])


def settings(match):
    """The (name, value) pairs a Match sends: the profile values that
    unlock the setting first, where the step carries them."""
    return list(match.prerequisites) + [(match.name, match.value)]


def describe(match):
    """``SysProfile=Custom, ProcTurboMode=Disabled (Dell iDRAC, Intel)``"""
    return '%s (%s, %s)' % (', '.join('%s=%s' % s for s in settings(match)),
                            match.vendor, match.cpu)


def knows(config, names=None):
    """Whether the vocabulary has the config's type and value."""
    return config.type in (names or NAMES) and config.value in VALUES


def stem(name):
    """A name without its per-board suffix, in lower-case letters and
    digits (``Hyper_Threading_ALL__F27F``: ``hyperthreadingall``), or None
    when it has no such suffix."""
    found = _SUFFIX.fullmatch(name)
    return re.sub(r'[^a-z0-9]', '', found.group(1).lower()) if found \
        else None


def _entry(meaning, by_name):
    """The registry entry a Meaning names on one node, or None (by its
    stem: only when exactly one of the node's names has it)."""
    if not meaning.by_stem:
        return by_name.get(meaning.name)
    wanted = re.sub(r'[^a-z0-9]', '', meaning.name.lower())
    found = [e for n, e in by_name.items() if stem(n) == wanted]
    return found[0] if len(found) == 1 else None


def spelling(value, entry):
    """The spelling of a config value (``enabled``) that a registry entry
    takes; None.  A registry that names its values by number (Supermicro)
    takes the family of the value its BIOS reports (``Enable``)."""
    allowed = [str(v) for v in entry.get('allowable_values') or ()]
    if bios_registry.by_number(allowed):
        now = str(entry.get('value'))
        families = list(zip(*VALUES.values(), strict=True))
        family = next((i for i, f in enumerate(families) if now in f), None)
        return None if family is None else VALUES[value][family]
    return next((s for s in VALUES[value] if bios_registry.refusal(
        entry, s, unlocked=True) is None), None)


def match(config, registry, names=None, same_step_unlocks=True):
    """The Match for ``config`` in one node's BIOS registry (its detailed
    settings): the first name of the table it has, writable (or unlocked
    by its profiles: sent with them, or, ``same_step_unlocks`` False for
    ironic 36 and later, alone, the node prepared first), with a spelling
    of the value it allows; None."""
    for meaning, entry, value, guards in _candidates(
            config, registry, names):
        if guards is not None and bios_registry.refusal(
                entry, value, bool(guards), same_step_unlocks) is None:
            return Match(entry['name'], value, meaning.vendor, meaning.cpu,
                         _innermost(entry['name'], guards),
                         tuple(guards) if same_step_unlocks else ())
    return None


def _candidates(config, registry, names):
    """(Meaning, its entry, the value's spelling, its guards) of each
    name of the table the node has and that takes a spelling of the
    value."""
    by_name = {e['name']: e for e in registry}
    for meaning in (names or NAMES)[config.type]:
        entry = _entry(meaning, by_name)
        value = entry and spelling(config.value, entry)
        if value is not None:
            yield meaning, entry, value, bios_profiles.guards(
                entry['name'], registry)


def _innermost(setting, guards):
    """The Profile of ``guards`` whose values lock ``setting``
    itself."""
    return next((bios_profiles.by_setting(name) for name, _ in
                 reversed(guards or ()) if setting in
                 bios_profiles.lockable(name)), None)


def _refused(config, registry, names, same_step_unlocks):
    """Why the node refuses every name of ``config`` it has, in one line
    (the first's reason); None when it has none."""
    for _, entry, value, guards in _candidates(config, registry, names):
        return '%s: %s' % (entry['name'], bios_registry.refusal(
            entry, value, bool(guards), same_step_unlocks) or
            'no value of its profile unlocks it')
    return None


def per_class(config, registries, names=None, same_step_unlocks=True):
    """The Plan over ``registries`` ({resource class: {node label: its
    detailed BIOS settings}}): a class matches when every node of it with
    a registry agrees on the setting; the nodes of a matched class that
    report none are named as unchecked (``same_step_unlocks``: as in
    ``match``)."""
    matched, unmatched, unchecked = {}, [], {}
    for resource_class, nodes in sorted(registries.items()):
        reporting = {n: r for n, r in nodes.items()
                     if bios_registry.has_registry(r)}
        found = {n: match(config, r, names, same_step_unlocks)
                 for n, r in sorted(reporting.items())}
        kinds = set(found.values())
        if not reporting:
            why = 'no BIOS registry reported'
        elif None in kinds:
            why = _why_none(config, {n: reporting[n] for n, m in
                                     found.items() if m is None},
                            names, same_step_unlocks)
        elif len(kinds) > 1:
            why = 'its nodes name it differently (%s)' % ', '.join(
                '%s: %s' % (n, describe(m)) for n, m in found.items())
        else:
            matched[resource_class] = kinds.pop()
            if len(reporting) < len(nodes):
                unchecked[resource_class] = sorted(set(nodes) - set(
                    reporting))
            continue
        unmatched.append(Unmatched(resource_class, sorted(nodes), why))
    return Plan(matched, unmatched, unchecked)


def _why_none(config, registries, names, same_step_unlocks):
    """Why the nodes of ``registries`` have no Match: no such setting,
    or, on ironic 36 and later, what ironic refuses of the one they
    have (Supermicro's numbered values)."""
    refused = set() if same_step_unlocks else {
        _refused(config, registry, names, same_step_unlocks)
        for registry in registries.values()} - {None}
    if not refused:
        return 'no setting of %s in the BIOS registry of %s' % (
            config.type, ', '.join(registries))
    return '; '.join(sorted(refused)) + ' (%s)' % ', '.join(registries)


def suggestion(config, vendor, names=None):
    """The ``--bios-setting`` options that mean ``config`` on a vendor's
    hardware whose nodes report no registry (``vendor``: as the table
    names it, e.g. ``HPE iLO``), one per CPU the table knows, with the
    profile that locks it; None when the table has none."""
    found = []
    for meaning in (names or NAMES).get(config.type, ()):
        if vendor not in meaning.vendor or meaning.by_stem:
            continue
        profile = bios_profiles.profile_of(meaning.name)
        options = ['--bios-setting %s=%s' % (profile.setting, profile.custom)
                   ] if profile else []
        options.append('--bios-setting %s=%s' % (meaning.name,
                                                 VALUES[config.value][0]))
        found.append('%s (%s)' % (' '.join(options), meaning.cpu))
    return ' or '.join(found) or None


def extend(data, origin, names=None):
    """The table with the names of a vocabulary file (``data``: its YAML,
    ``{config type: [{name, vendor, cpu, source, by_stem}, ...]}``)
    looked for after the table's own; one line naming ``origin`` and the
    entry when it is malformed."""
    if not isinstance(data, dict):
        raise exceptions.CommandError(
            'Vocabulary file %s must map config types to lists of BIOS '
            'names' % origin)
    table = dict(names or NAMES)
    for config_type, entries in sorted(data.items()):
        where = '%s, %s' % (origin, config_type)
        if not isinstance(entries, list) or not entries:
            raise exceptions.CommandError(
                'Vocabulary file %s: expected a list of names' % where)
        table[str(config_type)] = table.get(str(config_type), ()) + tuple(
            _meaning(entry, '%s[%d]' % (where, number))
            for number, entry in enumerate(entries))
    return table


def _meaning(entry, where):
    """One Meaning of a vocabulary file, checked."""
    if isinstance(entry, str):
        entry = {'name': entry}
    if not isinstance(entry, dict) or not isinstance(
            entry.get('name'), str) or not entry['name']:
        raise exceptions.CommandError(
            'Vocabulary file %s: each entry needs a "name"' % where)
    unknown = sorted(set(entry) - set(_EXTENSION_KEYS))
    if unknown:
        raise exceptions.CommandError(
            'Vocabulary file %s: unknown keys %s (known: %s)' % (
                where, ', '.join(unknown), ', '.join(_EXTENSION_KEYS)))
    return Meaning(entry['name'], str(entry.get('vendor') or 'operator'),
                   str(entry.get('cpu') or 'any'),
                   str(entry.get('source') or 'vocabulary file'),
                   bool(entry.get('by_stem')))
