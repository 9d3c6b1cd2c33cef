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

"""What steps should leave on the hardware, read back."""

import testtools

from osc_deploy_config.domain.configs import steps
from osc_deploy_config.domain.hardware import effects


def bios(**settings):
    return steps.bios_step(sorted(settings.items()))


RAID1 = steps.raid_step({'logical_disks': [{'size_gb': 'MAX',
                                            'raid_level': '1'}]})


class TestMissing(testtools.TestCase):
    def test_nothing_missing_when_the_node_shows_it_all(self):
        self.assertEqual([], effects.missing(
            [bios(HyperThreading='Disabled'), RAID1],
            {'HyperThreading': 'Disabled', 'Other': 'x'},
            {'logical_disks': [{'raid_level': '1', 'size_gb': 100}]}))

    def test_each_unapplied_setting_named(self):
        self.assertEqual(
            ['BIOS A=1 (the node has 0)', 'BIOS B=2 (the node has no such '
             'setting)', 'RAID 1 (the node has none)'],
            effects.missing([bios(A='1', B='2'), RAID1], {'A': '0'}, {}))

    def test_the_last_step_wins(self):
        self.assertEqual({'A': '2'}, effects.bios_settings(
            [bios(A='1'), bios(A='2')]))

    def test_steps_without_effects_to_read(self):
        factory_reset = {'interface': 'bios', 'step': 'factory_reset',
                         'args': {}, 'priority': 150}
        self.assertEqual([], effects.missing([factory_reset], {}, None))
        self.assertIsNone(effects.raid_levels([factory_reset]))
