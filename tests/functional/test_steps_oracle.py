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

"""Our steps validation against the oracle, ironic's own schema: generated
steps that we accept, ironic accepts too."""

from hypothesis import HealthCheck
from hypothesis import example
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from osc_lib import exceptions

from osc_deploy_config.domain.configs import steps
from tests.functional import base
from tests.unit import test_properties

EXAMPLES = 60


class TestStepsOracle(base.FunctionalTestCase):
    def setUp(self):
        super().setUp()
        self.ironic = self.sdk(base.SYSTEM_ADMIN).baremetal
        self.verdicts = {'both accept': 0, 'both refuse': 0,
                         'only ironic accepts': 0}
        self.addCleanup(lambda: self.addDetail(
            'verdicts', base.content.text_content(str(self.verdicts))))

    def ironic_accepts(self, candidate):
        name = self.unique_name('CUSTOM_FN_ORACLE').upper().replace('-', '_')
        created = self.ironic.post('/deploy_templates', microversion='1.55',
                                   json={'name': name, 'steps': candidate})
        if created.status_code == 201:
            self.ironic.delete('/deploy_templates/%s' % name,
                               microversion='1.55')
            return True
        # 400, or a 500 when ironic's database cannot store it (a step
        # named U+10000 on utf8 MySQL): refused either way
        self.assertIn(created.status_code, (400, 500), created.text)
        return False

    def test_never_accepts_what_ironic_refuses(self):
        self.judge_candidates()
        # the candidates met both sides of the rule, and no other
        self.assertGreater(self.verdicts['both accept'], 0, self.verdicts)
        self.assertGreater(self.verdicts['both refuse'], 0, self.verdicts)

    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(st.lists(test_properties.NEAR_VALID_STEP | test_properties.STEP,
                    min_size=1, max_size=2))
    @example([{'interface': 'bios', 'step': 'apply_configuration',
               'args': {}, 'priority': 10}])
    def judge_candidates(self, candidate):
        try:
            checked = steps.validate_steps(candidate)
        except exceptions.CommandError:
            ours = False
        else:
            ours = True
            # what we send is what we checked (priorities made integers)
            candidate = checked
        theirs = self.ironic_accepts(candidate)
        if ours:
            self.assertTrue(theirs, 'we accept, ironic refuses: %r'
                            % (candidate,))
        self.verdicts['both accept' if ours else 'both refuse' if not theirs
                      else 'only ironic accepts'] += 1
