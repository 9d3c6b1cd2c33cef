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
profile that locks it; and every setting the profile table says a profile
locks must be locked by it in that registry's Dependencies.
"""

import gzip
import json
import os

import testtools

from osc_deploy_config.domain import bios_profiles
from osc_deploy_config.domain import bios_vocabulary
from osc_deploy_config.domain import deploy_config

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
# The profile of each captured registry's vendor.
PROFILE_OF = {'dell-r750': 'SysProfile',
              'hpe-dl385-gen10plus-v2': 'WorkloadProfile',
              'lenovo-sr670-v2': 'OperatingModes_ChooseOperatingMode'}
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


def locked_by(folder, profile):
    """The settings a profile makes read-only or greys out, by the
    registry's Dependencies."""
    return {d['Dependency']['MapToAttribute'] for d in load(
        folder, 'bios-attribute-registry.json.gz')['RegistryEntries'][
            'Dependencies']
        if d['Dependency']['MapToProperty'] in ('ReadOnly', 'GrayOut')
        and d['Dependency']['MapToValue'] is True
        and any(m['MapFromAttribute'] == profile
                for m in d['Dependency']['MapFrom'])}


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

    def test_each_lock_of_the_profile_table_is_in_the_dependencies(self):
        for folder, setting in sorted(PROFILE_OF.items()):
            profile = next(p for p in bios_profiles.PROFILES
                           if p.setting == setting)
            names = {a['AttributeName'] for a in load(
                folder, 'bios-attribute-registry.json.gz')[
                    'RegistryEntries']['Attributes']}
            present = {s for s in profile.locks if s in names}
            self.assertEqual(set(), present - locked_by(folder, setting),
                             folder)
            # what the registry lacks is the other CPU's name, by analogy
            self.assertLessEqual(len(profile.locks) - len(present), 1,
                                 folder)
