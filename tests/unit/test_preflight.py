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

from osc_deploy_config import deploy_config
from osc_deploy_config import preflight
from tests.unit.fakes import OFF_T
from tests.unit.fakes import ON_T

ON = deploy_config.Config('hyperthreading', 'enabled')
OFF = deploy_config.Config('hyperthreading', 'disabled')
RAID = deploy_config.Config('disks', 'raid1')
BIOS_STEP = {'interface': 'bios', 'step': 'apply_configuration'}
TEMPLATES = {ON: {'name': ON_T, 'steps': [BIOS_STEP]},
             OFF: {'name': OFF_T, 'steps': [BIOS_STEP]},
             RAID: {'name': 'CUSTOM_DEPLOY_CONFIG_DISKS_RAID1',
                    'steps': [{'interface': 'raid',
                               'step': 'apply_configuration'}]}}
GOLD = {'name': 'bm.gold', 'vcpus': 4, 'ram': 8192, 'disk': 40,
        'extra_specs': {'resources:CUSTOM_BAREMETAL_GOLD': '1',
                        'resources:VCPU': '0', 'resources:MEMORY_MB': '0',
                        'resources:DISK_GB': '0'}}


def flavor(**specs):
    return dict(GOLD, extra_specs=dict(GOLD['extra_specs'], **specs))


def asks(config):
    return {'deploy-config:%s' % config.type: config.value,
            'trait:%s' % TEMPLATES[config]['name']: 'required'}


class TestConflicts(testtools.TestCase):
    def refused(self, the_flavor, image):
        found = preflight.asked(the_flavor, image, TEMPLATES)
        return str(self.assertRaises(exceptions.CommandError,
                                     preflight.refuse_conflicts, found,
                                     TEMPLATES))

    def test_two_values_of_a_type_name_both_sources(self):
        self.assertEqual(
            'Deploy config conflict: flavor bm.gold asks for '
            'hyperthreading=enabled, image ht-off for '
            'hyperthreading=disabled; ironic would run both templates and '
            'fail the deploy. Nothing was created.',
            self.refused(flavor(**asks(ON)),
                         dict(asks(OFF), name='ht-off')))

    def test_a_trait_set_by_hand_counts_as_its_config(self):
        self.assertIn('image ht-off for hyperthreading=disabled',
                      self.refused(flavor(**asks(ON)), {
                          'name': 'ht-off', 'trait:%s' % OFF_T: 'required'}))

    def test_templates_sharing_a_step(self):
        templates = dict(TEMPLATES)
        templates[RAID] = dict(TEMPLATES[RAID], steps=[BIOS_STEP])
        found = preflight.asked(flavor(**asks(ON)),
                                dict(asks(RAID), name='raid'), templates)
        exc = self.assertRaises(exceptions.CommandError,
                                preflight.refuse_conflicts, found, templates)
        self.assertIn('hyperthreading=enabled (flavor bm.gold) and '
                      'disks=raid1 (image raid) both run '
                      'bios.apply_configuration', str(exc))

    def test_agreeing_and_disjoint_configs_pass(self):
        for image in (asks(ON), asks(RAID), {}):
            found = preflight.asked(flavor(**asks(ON)), image, TEMPLATES)
            preflight.refuse_conflicts(found, TEMPLATES)


class TestPlacement(testtools.TestCase):
    def test_request_is_the_flavors_and_the_images_traits(self):
        resources, required, forbidden = preflight.placement_request(
            flavor(**asks(ON)), asks(RAID))
        self.assertEqual({'CUSTOM_BAREMETAL_GOLD': 1}, resources)
        self.assertEqual({ON_T, 'CUSTOM_DEPLOY_CONFIG_DISKS_RAID1'},
                         required)
        self.assertTrue(preflight.asks_templates(required))

    def test_judged_only_when_the_request_is_the_schedulers(self):
        self.assertTrue(preflight.judged(flavor(**asks(ON))))
        for spec in ('resources1:VGPU', 'trait1:CUSTOM_X',
                     'hw:cpu_policy', 'pci_passthrough:alias'):
            self.assertFalse(preflight.judged(flavor(**{spec: '1'})), spec)

    def test_unschedulable_is_refused_naming_configs(self):
        found = preflight.asked(flavor(**asks(ON)), {}, TEMPLATES)
        exc = self.assertRaises(exceptions.CommandError,
                                preflight.refuse_unschedulable, found, {})
        self.assertIn('No node can take hyperthreading=enabled (flavor '
                      'bm.gold) now', str(exc))
        preflight.refuse_unschedulable(found, {'rp': set()})
        preflight.refuse_unschedulable([], {})
