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

"""Properties of config parsing, naming and steps validation, over
generated input (hypothesis)."""

import re

from hypothesis import example
from hypothesis import given
from hypothesis import strategies as st
import os_traits
from osc_lib import exceptions
import testtools

from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.configs import steps

WORD = st.from_regex(r'\A[a-z0-9][a-z0-9_.-]{0,150}\Z')
WORD_RULE = re.compile(r'\A[a-z0-9][a-z0-9_.-]*\Z')
# placement's rule for a custom trait (os-traits names them the same way)
CUSTOM_TRAIT = re.compile(r'\ACUSTOM_[A-Z0-9_]+\Z')
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.text(max_size=10), inner, max_size=3),
    max_leaves=8)
STEP = st.fixed_dictionaries({
    'interface': st.sampled_from(steps.INTERFACES) | JSON,
    'step': st.text(max_size=8) | JSON,
    'args': st.dictionaries(st.text(max_size=5), JSON, max_size=2) | JSON,
    'priority': st.integers(-3, 300) | st.from_regex(r'\A-?\d{1,3}\Z')
    | JSON,
}, optional={'extra': JSON})
# Valid but for the edges: odd step names, huge or string priorities.
NEAR_VALID_STEP = st.fixed_dictionaries({
    'interface': st.sampled_from(steps.INTERFACES),
    'step': st.text(max_size=20),
    'args': st.dictionaries(st.text(max_size=5), JSON, max_size=2),
    'priority': st.integers(-1, 2 ** 40) | st.from_regex(r'\A\d{1,12}\Z')
    | st.booleans(),
})


class TestConfigProperties(testtools.TestCase):
    @given(st.text(max_size=400))
    @example('ht=on\n')
    def test_any_text_is_a_config_or_one_clear_error(self, text):
        try:
            config = deploy_config.parse_config(text)
        except exceptions.CommandError as exc:
            self.assertEqual(1, len(str(exc).splitlines()))
            return
        self.assertEqual(text, str(config))           # round trip
        self.assertRegex(config.type, WORD_RULE)
        self.assertRegex(config.value, WORD_RULE)
        trait = deploy_config.template_trait(config)
        self.assertLessEqual(len(trait), deploy_config.MAX_TRAIT_LENGTH)
        self.assertRegex(trait, CUSTOM_TRAIT)
        self.assertTrue(os_traits.is_custom(trait))

    @given(WORD, WORD)
    def test_every_short_enough_config_is_accepted(self, config_type, value):
        text = '%s=%s' % (config_type, value)
        name_length = len(deploy_config.TEMPLATE_PREFIX) + len(text)
        if name_length > deploy_config.MAX_TRAIT_LENGTH:
            self.assertRaises(exceptions.CommandError,
                              deploy_config.parse_config, text)
        else:
            config = deploy_config.parse_config(text)
            self.assertEqual(config, deploy_config.parse_config(str(config)))
            self.assertEqual(name_length,
                             len(deploy_config.template_trait(config)))

    @given(st.text(max_size=300) | st.builds(
        lambda body, end: 'CUSTOM_' + body + end,
        st.from_regex(r'\A[A-Z0-9_]{1,12}\Z'),
        st.sampled_from(['', '\n', ' ', 'a', '-'])))
    def test_template_names_are_traits_and_every_trait_a_name(self, name):
        is_trait = len(name) <= deploy_config.MAX_TRAIT_LENGTH and (
            name in os_traits.get_traits()
            or CUSTOM_TRAIT.match(name) is not None)
        try:
            deploy_config.validate_template_name(name)
        except exceptions.CommandError:
            self.assertFalse(is_trait, name)
        else:
            self.assertTrue(is_trait, name)


class TestStepsProperties(testtools.TestCase):
    @given(st.lists(NEAR_VALID_STEP | STEP, max_size=3) | JSON)
    @example([{'interface': 'bios', 'step': 'a', 'args': {},
               'priority': '10'},
              {'interface': 'raid', 'step': 'b', 'args': {}, 'priority': 0}])
    def test_steps_are_valid_or_one_clear_error(self, candidate):
        try:
            checked = steps.validate_steps(candidate)
        except exceptions.CommandError as exc:
            self.assertEqual(1, len(str(exc).splitlines()))
            return
        # every step kept, as given, but for integer priorities
        self.assertEqual([dict(s, priority=int(s['priority']))
                          for s in candidate], checked)
        for step in checked:
            self.assertEqual({'interface', 'step', 'args', 'priority'},
                             set(step))
            self.assertIn(step['interface'], steps.INTERFACES)
            self.assertIsInstance(step['priority'], int)
            self.assertGreaterEqual(step['priority'], 0)
