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

import testtools

from osc_deploy_config.domain.hardware import bios_registry

HT_ENUM = {'name': 'HyperThreading', 'value': 'Enabled',
           'attribute_type': 'Enumeration',
           'allowable_values': ['Enabled', 'Disabled']}
DELAY = {'name': 'BootDelay', 'value': '5', 'attribute_type': 'Integer',
         'lower_bound': 0, 'upper_bound': 60}
SERIAL = {'name': 'SerialNumber', 'value': 'X1', 'attribute_type': 'String',
          'read_only': True, 'max_length': 32}
NAME = {'name': 'AssetTag', 'value': '', 'attribute_type': 'String',
        'min_length': 1, 'max_length': 4}
REGISTRY = [HT_ENUM, DELAY, SERIAL, NAME]


class TestRefusal(testtools.TestCase):
    def test_accepts_what_the_registry_allows(self):
        for entry, value in ((HT_ENUM, 'Disabled'), (DELAY, '0'),
                             (DELAY, 60), (NAME, 'abcd')):
            self.assertIsNone(bios_registry.refusal(entry, value))

    def test_refuses_with_the_reason(self):
        cases = [
            (None, 'x', 'no such setting in the BIOS registry'),
            (HT_ENUM, 'Maybe', 'allowed values are Enabled, Disabled'),
            (DELAY, '61', 'the setting must be 0 to 60'),
            (DELAY, 'soon', 'the setting is an Integer'),
            (SERIAL, 'X2', 'the setting is read-only'),
            (NAME, 'abcde', 'length must be 1 to 4'),
            ({'attribute_type': 'Boolean'}, 'yes',
             'the setting is a Boolean (true or false)'),
        ]
        for entry, value, reason in cases:
            self.assertEqual(reason, bios_registry.refusal(entry, value))


class TestProblems(testtools.TestCase):
    def test_one_problem_per_setting_naming_every_node(self):
        found = bios_registry.problems(
            {'HyperThreding': 'Enabled', 'HyperThreading': 'Disabled'},
            {'bm-1': REGISTRY, 'bm-0': REGISTRY})
        self.assertEqual([bios_registry.Problem(
            'HyperThreding=Enabled', 'no such setting in the BIOS registry',
            ['bm-0', 'bm-1'])], found)
        self.assertEqual(
            'BIOS registry refuses HyperThreding=Enabled on bm-0, bm-1: no '
            'such setting in the BIOS registry',
            bios_registry.describe(found))

    def test_nodes_whose_registries_differ(self):
        older = [dict(HT_ENUM, allowable_values=['Enabled'])]
        found = bios_registry.problems({'HyperThreading': 'Disabled'},
                                       {'bm-0': REGISTRY, 'bm-9': older})
        self.assertEqual(['bm-9'], [n for p in found for n in p.nodes])

    def test_has_registry(self):
        self.assertTrue(bios_registry.has_registry(REGISTRY))
        self.assertFalse(bios_registry.has_registry(
            [{'name': 'A', 'value': '1', 'attribute_type': None}]))
        self.assertFalse(bios_registry.has_registry([]))
