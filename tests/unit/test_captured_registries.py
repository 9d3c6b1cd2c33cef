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

"""The vocabulary on four real BIOS registries, as ironic's BIOS API would
list them (``GET /v1/nodes/{node}/bios?detail=True``).

The registries, with each server's BIOS values, are NVIDIA/libredfish's
captures (``../shared/registries`` beside the checkout, or
``$OSC_DEPLOY_CONFIG_REGISTRIES``; skipped where absent).  Each is turned
into what ironic keeps of it: of every setting the BIOS reports, its value,
and the registry's type, value names, bounds and ``ReadOnly`` (never its
Dependencies).  The vocabulary must resolve every config there (but
virtualization on HPE's AMD model, which has no such setting) and send the
profile that locks it.  The profile table must equal the registries'
Dependencies value by value: for each profile value, the settings of
interest it locks there are the table's, no more and no fewer
(``tools/bios_profile_locks.py`` prints the table by the same rule).
"""

import gzip
import json
import os
import re

import testtools

from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.hardware import bios_profiles
from osc_deploy_config.domain.hardware import bios_registry
from osc_deploy_config.domain.hardware import bios_vocabulary

CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
FOLDER = os.environ.get('OSC_DEPLOY_CONFIG_REGISTRIES') or os.path.join(
    CHECKOUT, '..', 'shared', 'registries')
# {folder: {config type: (setting, profile or None), or None: no setting}}
EXPECTED = {
    'dell-r750': {
        'hyperthreading': ('LogicalProc', None),
        'virtualization': ('ProcVirtualization', None),
        'sriov': ('SriovGlobalEnable', None),
        'turbo': ('ProcTurboMode', 'SysProfile')},
    'hpe-dl385-gen10plus-v2': {
        'hyperthreading': ('ProcSMT', None),
        'virtualization': None,     # no AMD-V setting: always on
        'sriov': ('Sriov', 'WorkloadProfile'),
        'turbo': ('ProcAMDBoost', 'WorkloadProfile')},
    'lenovo-sr670-v2': {
        'hyperthreading': ('Processors_HyperThreading', None),
        'virtualization': ('Processors_IntelVirtualizationTechnology', None),
        'sriov': ('DevicesandIOPorts_SRIOV', None),
        'turbo': ('Processors_TurboMode',
                  'OperatingModes_ChooseOperatingMode')},
    'supermicro-x13': {
        'hyperthreading': ('Hyper_Threading_ALL__F27F', None),
        'virtualization': ('IntelVirtualizationTechnology_3C6F', None),
        'sriov': ('SR_IOVSupport_0047', None),
        'turbo': ('TurboMode_3D06', None)},
}
# The profiles of each captured registry (Dell's own WorkloadProfile
# locks nothing of interest, and Supermicro's registry no setting of the
# vocabulary).
PROFILES_IN = {
    'dell-r750': ('SysProfile',),
    'hpe-dl385-gen10plus-v2': ('WorkloadProfile',
                               'AMDPerformanceWorkloadProfile'),
    'lenovo-sr670-v2': ('OperatingModes_ChooseOperatingMode',),
    'supermicro-x13': (),
}
REGISTRY = 'bios-attribute-registry.json.gz'
# The spellings of enabled and disabled a BIOS reports.
FAMILIES = (('Enabled', 'Disabled'), ('Enable', 'Disable'))
FIELDS = {'attribute_type': 'Type', 'lower_bound': 'LowerBound',
          'upper_bound': 'UpperBound', 'min_length': 'MinLength',
          'max_length': 'MaxLength'}
FLAGS = {'read_only': 'ReadOnly', 'reset_required': 'ResetRequired',
         'unique': 'IsSystemUniqueProperty'}


def load(folder, name):
    with gzip.open(os.path.join(FOLDER, folder, name), 'rt') as f:
        return json.load(f)


def as_ironic_lists_it(folder):
    """What ironic's BIOS API lists of a captured server: every setting its
    BIOS reports, with the fields ironic keeps of its registry entry (an
    Enumeration's values by ``ValueName``, else ``ValueDisplayName``)."""
    registry = {a['AttributeName']: a for a in load(
        folder, 'bios-attribute-registry.json.gz')[
            'RegistryEntries']['Attributes']}
    listed = []
    for name, value in load(folder, 'bios.json.gz')['Attributes'].items():
        entry = registry.get(name, {})
        setting = {'name': name, 'value': value}
        setting.update((field, entry.get(key)) for field, key in
                       FIELDS.items())
        setting.update((field, bool(entry.get(key))) for field, key in
                       FLAGS.items())
        setting['allowable_values'] = [
            v.get('ValueName') or v.get('ValueDisplayName')
            for v in entry.get('Value') or ()] or None
        listed.append(setting)
    return listed


def interest(names):
    """The settings of a registry (``names``) the lock table must know:
    the vocabulary's (by stem where it matches so), the profiles' and
    those the table lists."""
    found = {n for meanings in bios_vocabulary.NAMES.values()
             for m in meanings for n in names
             if n == m.name or m.by_stem and bios_vocabulary.stem(n)
             == re.sub(r'[^a-z0-9]', '', m.name.lower())}
    return found | {n for p in bios_profiles.PROFILES
                    for n in (p.setting,) + bios_profiles.lockable(p.setting)
                    if n in names}


def _holds(terms, profile, value):
    """Whether a Dependency's condition holds at ``profile=value``
    whatever the other settings are: a term on another setting is
    unknown; the terms are ORed (Dell leaves ``MapTerms`` out) unless one
    says AND."""
    known = [(t['MapFromValue'] == value) == (t['MapFromCondition'] == 'EQU')
             if t['MapFromAttribute'] == profile
             and t['MapFromProperty'] == 'CurrentValue' else None
             for t in terms]
    if any(t.get('MapTerms') == 'AND' for t in terms):
        return all(k is True for k in known)
    return any(k is True for k in known)


def _locking(dependency):
    """Whether a Dependency locks its setting: makes it ``ReadOnly`` or
    greys it out, or sets its value (``Hidden`` alone does not)."""
    return dependency['MapToProperty'] == 'CurrentValue' or (
        dependency['MapToProperty'] in ('ReadOnly', 'GrayOut')
        and dependency['MapToValue'] is True)


def locks_by_value(folder, profile):
    """{value: the settings of interest the registry's Dependencies lock
    under ``profile=value``}, for each value the registry lists or a
    Dependency names, in that order."""
    entries = load(folder, REGISTRY)['RegistryEntries']
    attributes = {a['AttributeName']: a for a in entries['Attributes']}
    values = [v['ValueName'] for v in attributes[profile]['Value']]
    values += [t['MapFromValue'] for d in entries['Dependencies']
               for t in d['Dependency']['MapFrom']
               if t['MapFromAttribute'] == profile
               and t['MapFromValue'] not in values]
    wanted = interest(set(attributes))
    found = {value: set() for value in dict.fromkeys(values)}
    for d in entries['Dependencies']:
        dependency = d['Dependency']
        if dependency['MapToAttribute'] in wanted and _locking(dependency):
            for value in found:
                if _holds(dependency['MapFrom'], profile, value):
                    found[value].add(dependency['MapToAttribute'])
    return found


class TestCapturedRegistries(testtools.TestCase):
    def setUp(self):
        super().setUp()
        if not os.path.isdir(FOLDER):
            self.skipTest('no captured registries in %s' % FOLDER)

    def test_every_config_resolves_with_its_profile(self):
        for folder, expected in sorted(EXPECTED.items()):
            listed = as_ironic_lists_it(folder)
            reported = {s['name']: s['value'] for s in listed}
            for config_type, wanted in sorted(expected.items()):
                for value in ('enabled', 'disabled'):
                    found = bios_vocabulary.match(deploy_config.Config(
                        config_type, value), listed)
                    where = '%s: %s=%s' % (folder, config_type, value)
                    if wanted is None:
                        self.assertIsNone(found, where)
                        continue
                    self.assertEqual(wanted, (found.name, found.unlock and
                                              found.unlock.setting), where)
                    # spelled as the BIOS spells what it reports
                    family = next(i for i, words in enumerate(FAMILIES)
                                  if reported[found.name] in words)
                    self.assertEqual(FAMILIES[family][value == 'disabled'],
                                     found.value, where)

    def test_dells_idrac_reports_the_lock_live(self):
        listed = {s['name']: s for s in as_ironic_lists_it('dell-r750')}
        self.assertEqual((True, 'PerfOptimized'), (
            listed['ProcTurboMode']['read_only'],
            listed['SysProfile']['value']))

    def test_supermicro_names_its_values_by_number(self):
        listed = {s['name']: s for s in as_ironic_lists_it('supermicro-x13')}
        self.assertEqual((['0', '1'], 'Enable'), (
            listed['TurboMode_3D06']['allowable_values'],
            listed['TurboMode_3D06']['value']))

    def test_the_lock_table_equals_the_dependencies_value_by_value(self):
        for folder, profiles in sorted(PROFILES_IN.items()):
            names = {a['AttributeName'] for a in load(folder, REGISTRY)[
                'RegistryEntries']['Attributes']}
            for profile in profiles:
                found = locks_by_value(folder, profile)
                self.assertEqual(set(found), set(
                    bios_profiles.BY_VALUE[profile]), folder)
                for value, locked in found.items():
                    self.assertEqual(locked, set(bios_profiles.governed(
                        profile, value)) & names, '%s: %s=%s' % (
                            folder, profile, value))
                # what the registry lacks is the other CPU's name
                self.assertLessEqual(set(bios_profiles.lockable(
                    profile)) - names, set(bios_profiles.BY_ANALOGY))

    def test_no_other_profile_of_the_table_locks_anything_there(self):
        # Dell's own WorkloadProfile, and nothing on Supermicro
        for folder, profiles in sorted(PROFILES_IN.items()):
            names = {a['AttributeName'] for a in load(folder, REGISTRY)[
                'RegistryEntries']['Attributes']}
            for profile in set(bios_profiles.LOCKS) & names - set(profiles):
                self.assertEqual({}, {v: s for v, s in locks_by_value(
                    folder, profile).items() if s}, folder)

    def test_hpe_profiles_by_value_in_the_capture(self):
        found = locks_by_value('hpe-dl385-gen10plus-v2', 'WorkloadProfile')
        self.assertEqual(
            ({'ProcAMDBoost', 'AMDPerformanceWorkloadProfile'}, 8),
            ({'ProcAMDBoost', 'Sriov', 'AMDPerformanceWorkloadProfile'}
             & found['GeneralPowerEfficientCompute'],
             len([v for v, s in found.items() if 'Sriov' in s])))
        found = locks_by_value('hpe-dl385-gen10plus-v2',
                               'AMDPerformanceWorkloadProfile')
        self.assertEqual((6, 2), (
            len([v for v, s in found.items() if 'ProcSMT' in s]),
            len([v for v, s in found.items() if 'Sriov' in s])))

    def test_ironic_37_refuses_dells_turbo_beside_its_profile(self):
        listed = as_ironic_lists_it('dell-r750')
        wanted = {'SysProfile': 'Custom', 'ProcTurboMode': 'Disabled'}
        self.assertEqual([], bios_registry.problems(wanted, {'r750': listed}))
        (problem,) = bios_registry.problems(wanted, {'r750': listed},
                                            same_step_unlocks=False)
        self.assertEqual(
            'locked by SysProfile=PerfOptimized; ironic 36 and later refuse '
            'it even with SysProfile=Custom in the same step: prepare the '
            'node first (SysProfile=Custom)', problem.reason)

    def test_ironic_37_takes_no_value_of_supermicros_settings(self):
        listed = as_ironic_lists_it('supermicro-x13')
        for value in ('Disable', '0'):
            (problem,) = bios_registry.problems(
                {'Hyper_Threading_ALL__F27F': value}, {'x13': listed},
                same_step_unlocks=False)
            self.assertEqual(
                "ironic 36 and later accept only the registry's value names "
                "(0, 1) and read back the BIOS's display strings (Enable): "
                "no value of Hyper_Threading_ALL__F27F can be applied "
                "through ironic's redfish BIOS interface", problem.reason)
