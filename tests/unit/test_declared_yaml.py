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

"""The declared file's YAML: plain scalars read as JSON reads them, keys
and versions YAML reads as numbers refused with the quotes to add, depth
bounded, and every string another YAML reader would take for a number or
a boolean written quoted (domain.declared.document)."""

from osc_lib import exceptions
import testtools
import yaml

from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.declared import changes
from osc_deploy_config.domain.declared import document
from osc_deploy_config.domain.declared import schema
from tests.unit import test_declared

RAID = deploy_config.Config('raid', 'r0')
# A raid template whose step's args are written at {ARGS}.
STEPS = """\
version: 1
configs:
  raid:
    r0:
      steps:
      - interface: raid
        step: apply_configuration
        priority: 150
        args: {ARGS}
flavors:
  bm.gold: {raid: r0}
"""
# Strings YAML 1.1 or 1.2 would read as numbers, booleans, null or dates.
LOOK_LIKE_OTHER_TYPES = (
    '1e3', '0o17', 'y', 'N', 'on', 'Off', 'yes', '0x1F', '1_000', '.inf',
    '-.Inf', '.NaN', '~', 'null', 'Null', 'true', 'False', '2024-01-01',
    '010', '1:30', '1', '-1.5', '+1', '.5', '1.', '')


def _with_args(args):
    return STEPS.replace('{ARGS}', args)


def _args(declared):
    return declared.templates[RAID, None].steps[0]['args']


class TestPlainScalarsAsJson(test_declared.FileTestCase):

    def test_only_json_spellings_are_numbers_booleans_and_null(self):
        declared = document.parse(_with_args(
            '{octal: 010, hex: 0x10, sexagesimal: 1:30, date: 2024-01-01, '
            'word: Off, yes: yes, n: n, underscored: 1_000, inf: .inf, '
            'big: Null, int: 10, negative: -1.5, exponent: 1e3, '
            'bool: true, none: null, tilde: ~, empty: }'), 'f.yaml')
        self.assertEqual(
            {'octal': '010', 'hex': '0x10', 'sexagesimal': '1:30',
             'date': '2024-01-01', 'word': 'Off', 'yes': 'yes', 'n': 'n',
             'underscored': '1_000', 'inf': '.inf', 'big': 'Null',
             'int': 10, 'negative': -1.5, 'exponent': 1000.0,
             'bool': True, 'none': None, 'tilde': None, 'empty': None},
            _args(declared))
        # PyYAML's own loader is left as it was
        self.assertEqual({'a': 8, 'b': False}, yaml.safe_load('a: 010\n'
                                                              'b: Off\n'))

    def test_a_date_is_a_string_that_diff_shows(self):
        declared = document.parse(_with_args('{since: 2024-01-01}'),
                                  'f.yaml')
        found = changes.diff(declared, document.from_cloud([], [], [], {}))
        shown = [row[5] for row in changes.rows(found) if row[3] == 'steps']
        self.assertIn('"since": "2024-01-01"', shown[0])

    def test_a_tag_beyond_strings_lists_and_mappings_is_refused(self):
        self.assertRefused(_with_args('{since: !!timestamp 2024-01-01}'),
                           '9:23', 'tag !!timestamp is not taken')
        self.assertRefused(_with_args('{mode: !!int 010}'), '9:22',
                           'tag !!int is not taken')
        declared = document.parse(_with_args('{mode: !!str 10}'), 'f.yaml')
        self.assertEqual({'mode': '10'}, _args(declared))


class TestKeysAndVersion(test_declared.FileTestCase):

    def test_a_key_yaml_reads_as_a_number_is_to_be_quoted(self):
        self.assertRefused(_with_args('{}').replace('bm.gold:', '123:'),
                           '11:3', 'key 123 of flavors is read by YAML as '
                           'a number: quote it ("123")')
        self.assertRefused(_with_args('{}').replace('r0:', '1:'), '4:5',
                           'key 1 of raid of configs is read by YAML as a '
                           'number: quote it ("1")')
        self.assertRefused(_with_args('{true: 1}'), '9:16',
                           'is read by YAML as a boolean: quote it ("true")')
        declared = document.parse(_with_args('{}').replace(
            'bm.gold:', '"123":'), 'f.yaml')
        self.assertEqual({'123': {'raid': 'r0'}}, declared.flavors)

    def test_a_version_spelled_otherwise_is_refused(self):
        self.assertRefused(_with_args('{}').replace('version: 1',
                                                    'version: 0x1'),
                           '1:10', 'version must be 1, not "0x1"')
        self.assertRefused(_with_args('{}').replace('version: 1',
                                                    'version: "1"'),
                           '1:10', 'version must be 1, not "1"')


class TestDepth(test_declared.FileTestCase):

    def test_thousands_of_nested_lists_are_one_line(self):
        for opened in ('[', '{a: '):
            exc = self.assertRaises(
                schema.FileError, document.parse,
                'version: 1\nflavors: ' + opened * 5000, 'f.yaml')
            self.assertIn('nested too deep', str(exc))
        self.assertRefused('version: 1\nflavors: ' + '[' * 5000, '2:73',
                           'nested too deep')

    def test_a_step_nested_as_deep_as_taken_reads(self):
        # the file, configs, raid, r0, steps, the step, args: 7 deep
        lists = document.DEEPEST - 7
        deepest = _with_args('{disks: %s%s}' % ('[' * lists, ']' * lists))
        self.assertEqual(RAID, next(iter(document.parse(
            deepest, 'f.yaml').templates))[0])
        self.assertRefused(deepest.replace('[', '[[', 1), '9:%d' % (
            23 + lists), 'nested too deep')


class TestRender(testtools.TestCase):

    def test_only_strings_read_otherwise_are_quoted_and_all_read_back(self):
        args = {'word%02d' % n: text
                for n, text in enumerate(LOOK_LIKE_OTHER_TYPES)}
        args.update({'name': 'Disabled', 'version': '1.2.3', 'int': 1,
                     'float': 1.5, 'big': 1e16, 'bool': False, 'none': None})
        listed = [{'uuid': 'u', 'name': 'CUSTOM_DEPLOY_CONFIG_RAID_R0',
                   'steps': [{'interface': 'raid', 'priority': 150,
                              'step': 'apply_configuration', 'args': args}],
                   'extra': deploy_config.template_extra(RAID, [], None)}]
        current = document.from_cloud(listed, [], [], {})
        text = document.render(current)
        for word in LOOK_LIKE_OTHER_TYPES:
            self.assertTrue("'%s'" % word in text or '"%s"' % word in text,
                            word)
        for plain in ('name: Disabled\n', 'version: 1.2.3\n',
                      'step: apply_configuration\n'):
            self.assertIn(plain, text)
        self.assertEqual(current.templates,
                         document.parse(text, 'f.yaml').templates)
        # and as YAML 1.1 reads them
        self.assertEqual(args, yaml.safe_load(text)['configs']['raid'][
            'r0']['steps'][0]['args'])


class TestInfinity(testtools.TestCase):

    def test_a_number_too_large_for_json_is_refused(self):
        exc = self.assertRaises(
            schema.FileError, document.parse,
            'version: 1\nconfigs:\n  raid:\n    r0:\n      steps:\n'
            '      - {interface: raid, step: apply_configuration, '
            'priority: 150, args: {size: 1e400}}\n', 'f.yaml')
        self.assertIn('f.yaml:6:', str(exc))
        self.assertIn('number 1e400 is too large for JSON', str(exc))


class TestTwoTemplatesOfOneConfig(testtools.TestCase):

    def test_they_are_refused_not_collapsed(self):
        from osc_deploy_config.domain.configs import steps

        config = deploy_config.Config('hyperthreading', 'enabled')
        templates = [{'name': name, 'steps': [steps.bios_step(
            [('LogicalProc', 'Enabled')])], 'extra':
            deploy_config.template_extra(config, ['HW_CPU_HYPERTHREADING'])}
            for name in ('CUSTOM_A', 'CUSTOM_B')]
        exc = self.assertRaises(exceptions.CommandError,
                                document.from_cloud, templates, [], [], {})
        self.assertEqual(
            'Templates CUSTOM_A and CUSTOM_B both serve '
            'hyperthreading=enabled: one template per config and kind; '
            'delete one (openstack baremetal deploy template delete)',
            str(exc))
