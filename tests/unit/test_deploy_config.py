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

from osc_lib import exceptions
import testtools

from osc_deploy_config.domain.configs import deploy_config


class TestParseConfig(testtools.TestCase):
    def test_type_and_value(self):
        self.assertEqual(deploy_config.Config('hyperthreading', 'enabled'),
                         deploy_config.parse_config('hyperthreading=enabled'))
        self.assertEqual('raid=raid1-ssd.v2',
                         str(deploy_config.parse_config('raid=raid1-ssd.v2')))

    def test_refused(self):
        for text, why in (('hyperthreading', 'expected TYPE=VALUE'),
                          ('=enabled', 'empty type'),
                          ('hyperthreading=', 'empty value'),
                          ('Hyper=on', 'type must be lowercase'),
                          ('ht=On', 'value must be lowercase'),
                          ('ht=o n', 'value must be'),
                          ('-ht=on', 'type must be'),
                          ('ht=a=b', 'value must be'),
                          # "$" would match before a trailing newline
                          ('ht=on\n', 'value must be'),
                          ('ht\n=on', 'type must be')):
            exc = self.assertRaises(exceptions.CommandError,
                                    deploy_config.parse_config, text)
            self.assertIn(why, str(exc), text)

    def test_too_long_for_a_trait(self):
        exc = self.assertRaises(exceptions.CommandError,
                                deploy_config.parse_config, 'a=' + 'b' * 240)
        self.assertIn('would exceed 255 characters', str(exc))

    def test_longest_accepted_is_a_valid_name(self):
        value = 'v' * (255 - len('CUSTOM_DEPLOY_CONFIG_T_'))
        name = deploy_config.template_trait(
            deploy_config.parse_config('t=' + value))
        self.assertEqual(255, len(name))
        self.assertEqual(name, deploy_config.validate_template_name(name))


class TestTemplateTrait(testtools.TestCase):
    def test_each_other_character_one_underscore(self):
        self.assertEqual(
            'CUSTOM_DEPLOY_CONFIG_RAID_RAID1_SSD_V2',
            deploy_config.template_trait(
                deploy_config.Config('raid', 'raid1-ssd.v2')))
        # unlike os_traits.normalize_name, a run is not collapsed: names
        # made this way exist in clouds
        self.assertEqual('CUSTOM_DEPLOY_CONFIG_A_B__C',
                         deploy_config.template_trait(
                             deploy_config.Config('a', 'b--c')))

    def test_name_rules(self):
        for name in ('custom_x', 'HW_CPU_X', 'CUSTOM_', 'CUSTOM_a',
                     'CUSTOM_' + 'A' * 249, 'CUSTOM_A\n'):
            exc = self.assertRaises(exceptions.CommandError,
                                    deploy_config.validate_template_name, name)
            self.assertIn('Invalid deploy template name', str(exc))

    def test_a_standard_trait_is_a_name_ironic_accepts(self):
        # as python-ironicclient lets ironic decide: any trait will do
        for name in ('HW_CPU_X86_VMX', 'CUSTOM_MINE'):
            self.assertEqual(name, deploy_config.validate_template_name(name))


class TestTraits(testtools.TestCase):
    def test_standard_and_custom(self):
        self.assertEqual(['CUSTOM_X', 'HW_CPU_HYPERTHREADING'],
                         deploy_config.validate_traits(['HW_CPU_HYPERTHREADING',
                                             'CUSTOM_X', 'CUSTOM_X']))

    def test_unknown_standard_trait(self):
        exc = self.assertRaises(exceptions.CommandError,
                                deploy_config.validate_traits, ['HW_CPU_NOPE'])
        self.assertIn("Unknown trait 'HW_CPU_NOPE'", str(exc))

    def test_malformed_custom_trait(self):
        for trait in ('CUSTOM_lower', 'CUSTOM_X\n'):
            exc = self.assertRaises(exceptions.CommandError,
                                    deploy_config.validate_traits, [trait])
            self.assertIn('Invalid trait %r' % trait, str(exc))


class TestTemplateExtra(testtools.TestCase):
    def test_round_trip(self):
        config = deploy_config.Config('hyperthreading', 'enabled')
        extra = deploy_config.template_extra(config, ['HW_CPU_HYPERTHREADING'])
        self.assertEqual({
            'deploy_config_type': 'hyperthreading',
            'deploy_config_value': 'enabled',
            'deploy_config_requires_traits': 'HW_CPU_HYPERTHREADING'},
            extra)
        self.assertEqual(config, deploy_config.config_of(extra))
        self.assertEqual(['HW_CPU_HYPERTHREADING'],
                         deploy_config.capability_traits_of(extra))

    def test_not_annotated(self):
        self.assertIsNone(deploy_config.config_of({}))
        self.assertIsNone(deploy_config.config_of(None))
        self.assertIsNone(deploy_config.config_of({'deploy_config_type': 'x'}))
        self.assertEqual([], deploy_config.capability_traits_of({'a': 'b'}))

    def test_default_traits_when_the_template_does_not_say(self):
        extra = {'deploy_config_type': 'hyperthreading',
                 'deploy_config_value': 'disabled'}
        self.assertEqual(['HW_CPU_HYPERTHREADING'],
                         deploy_config.capability_traits_of(extra))
        extra['deploy_config_type'] = 'raid'
        self.assertEqual([], deploy_config.capability_traits_of(extra))

    def test_empty_string_requires_nothing(self):
        extra = deploy_config.template_extra(
            deploy_config.Config('hyperthreading', 'on'), [])
        self.assertEqual([], deploy_config.capability_traits_of(extra))

    def test_list_or_comma_separated(self):
        base = {'deploy_config_type': 't', 'deploy_config_value': 'v'}
        for stored in ('CUSTOM_B, CUSTOM_A', ['CUSTOM_A', 'CUSTOM_B']):
            self.assertEqual(
                ['CUSTOM_A', 'CUSTOM_B'], deploy_config.capability_traits_of(
                    dict(base, **{'deploy_config_requires_traits': stored})))
