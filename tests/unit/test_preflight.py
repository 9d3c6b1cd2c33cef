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

import argparse
import logging

import fixtures
from keystoneauth1 import exceptions as ksa_exceptions
from openstackclient.compute.v2 import server as osc_server
from osc_lib import exceptions
import testtools

from osc_deploy_config.domain.configs import config_specs
from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.configs import steps
from osc_deploy_config.domain.servers import preflight
from osc_deploy_config.v1 import server_hooks as hooks
from tests.unit import fakes
from tests.unit.fakes import HT
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
        for image, configs in ((asks(ON), [ON, ON]), (asks(RAID), [ON, RAID]),
                               ({}, [ON])):
            found = preflight.asked(flavor(**asks(ON)), image, TEMPLATES)
            self.assertEqual(configs, [a.config for a in found])
            self.assertIsNone(preflight.refuse_conflicts(found, TEMPLATES))


class TestPlacement(testtools.TestCase):
    def test_request_is_the_flavors_and_the_images_traits(self):
        resources, required, forbidden = config_specs.placement_request(
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
        # a candidate, or a boot that asks for no config: no refusal
        self.assertIsNone(preflight.refuse_unschedulable(found,
                                                         {'rp': set()}))
        self.assertIsNone(preflight.refuse_unschedulable([], {}))


class CreateHookCase(fakes.TestCommand):
    """The hook before OSC's own server create, over the fake services:
    what it refuses, what it reads, and that OSC reads none of it again."""

    def setUp(self):
        super().setUp()
        for config in (ON, OFF):
            self.ironic.add_template(TEMPLATES[config]['name'], steps=[
                dict(BIOS_STEP, args={}, priority=150)],
                extra=deploy_config.template_extra(config, [HT]))
        self.nova.add_flavor('bm.gold', flavor(**asks(ON))['extra_specs'])
        self.tiny = self.nova.add_flavor('m1.tiny')
        self.glance.add_image('ht-off', **asks(OFF))
        self.image = self.glance.add_image('tiny')
        self.node = self.placement.add_provider(
            'bm-0', traits=[HT, ON_T, OFF_T],
            resource_class='CUSTOM_BAREMETAL_GOLD')
        self.app.client_manager.compute = self.nova.proxy
        self.app.client_manager.image = self.glance.proxy
        self.cmd = osc_server.CreateServer(self.app, None)
        self.logged = self.useFixture(fixtures.FakeLogger(
            name='osc_deploy_config', level=logging.DEBUG))

    def before(self, flavor_name, image):
        """The hook's before(); what it logged for --debug."""
        args = argparse.Namespace(flavor=flavor_name, image=image,
                                  volume=None, snapshot=None,
                                  boot_from_volume=None)
        hooks.CreatePreflightHook(self.cmd).before(args)
        return self.logged.output

    def refused(self, flavor_name, image):
        return str(self.assertRaises(exceptions.CommandError, self.before,
                                     flavor_name, image))


class TestCreateHook(CreateHookCase):
    def test_a_conflict_is_refused_even_when_ironic_and_placement_hide(self):
        self.ironic.forbidden = self.placement.forbidden = True
        self.assertIn('flavor bm.gold asks for hyperthreading=enabled, image '
                      'ht-off for hyperthreading=disabled',
                      self.refused('bm.gold', 'ht-off'))

    def test_unschedulable_refused_only_when_placement_can_be_read(self):
        self.node['inventories']['CUSTOM_BAREMETAL_GOLD']['reserved'] = 1
        self.assertIn('No node can take hyperthreading=enabled (flavor '
                      'bm.gold) now', self.refused('bm.gold', 'tiny'))
        self.placement.forbidden = True
        self.placement.requests.clear()
        said = self.before('bm.gold', 'tiny')
        # placement was asked, refused, and the boot goes on unjudged
        self.assertEqual(1, len(self.placement.requests))
        self.assertIn('pre-flight without placement', said)

    def test_a_plain_boot_is_read_once_and_handed_to_osc(self):
        said = self.before('m1.tiny', 'tiny')
        # by ID (404 for a name), then the summaries, then the flavor
        self.assertEqual(['/flavors/m1.tiny', '/flavors?is_public=None',
                          '/flavors/' + self.tiny['id']],
                         [path for _, path, _ in self.nova.requests])
        self.assertEqual(1, len(self.glance.requests))
        self.assertEqual([], self.ironic.requests + self.placement.requests)
        # OSC's own lookups get what the hook read: no request of theirs
        compute, images = self.nova.proxy, self.glance.proxy
        self.assertEqual(self.tiny['id'], compute.find_flavor(
            'm1.tiny', ignore_missing=False).id)
        self.assertEqual(self.image['id'], images.find_image(
            'tiny', ignore_missing=False).id)
        self.assertEqual(4, len(self.nova.requests + self.glance.requests))
        self.assertIn('deploy-config pre-flight: read flavor %s and image '
                      '%s to check their deploy configs; handed to server '
                      'create' % (self.tiny['id'], self.image['id']), said)

    def test_a_name_is_one_filtered_read_where_nova_filters_names(self):
        self.nova.max_version = (2, 102)
        self.before('m1.tiny', 'tiny')
        self.assertEqual(
            [('/flavors/m1.tiny', '2.61'),
             ('/flavors/detail?is_public=None&name=%5Em1%5C.tiny%24',
              '2.102')], [(p, v) for _, p, v in self.nova.requests])

    def test_by_id_one_read_each(self):
        self.before(self.tiny['id'], self.image['id'])
        self.assertEqual(1, len(self.nova.requests))
        self.assertEqual(1, len(self.glance.requests))

    def test_what_cannot_be_read_never_blocks(self):
        lookups = self.nova.proxy.find_flavor, self.glance.proxy.find_image
        for flavor_ref, image in (('no-such-flavor', 'tiny'),
                                  ('bm.gold', 'no-such-image')):
            self.assertIn('deploy-config pre-flight skipped',
                          self.before(flavor_ref, image))
        # nothing handed over: OSC looks them up itself, and says so
        self.assertEqual(lookups, (self.nova.proxy.find_flavor,
                                   self.glance.proxy.find_image))
        self.nova.proxy.request.side_effect = (
            ksa_exceptions.ConnectFailure('nova is down'))
        self.assertIn('pre-flight skipped', self.before('bm.gold', 'ht-off'))


class TestRefusedSteps(CreateHookCase):
    """A template's BIOS step that ironic would refuse on the nodes the
    scheduler could choose (ironic 36 and later: read-only in its cache) is
    named before nova is asked."""

    def setUp(self):
        super().setUp()
        template = next(t for t in self.ironic.templates.values()
                        if t['name'] == ON_T)
        template['steps'] = [steps.bios_step([('ProcTurboMode',
                                               'Disabled')])]
        self.bm5 = self.ironic.add_node('bm-5', [HT, ON_T],
                                        resource_class='baremetal-gold')
        self.bm5['bios'] = {'ProcTurboMode': 'Enabled'}
        self.registry = {'ProcTurboMode': {
            'attribute_type': 'Enumeration', 'read_only': True,
            'allowable_values': ['Enabled', 'Disabled']}}
        self.ironic.bios_registries[self.bm5['uuid']] = self.registry
        # placement's one candidate is bm-5
        self.placement.providers.pop(self.node['uuid'])
        self.node = self.placement.add_provider(
            'bm-5', traits=[HT, ON_T], uuid_=self.bm5['uuid'],
            resource_class='CUSTOM_BAREMETAL_GOLD')

    def test_every_candidate_refusing_refuses_the_boot(self):
        self.assertIn('ironic would refuse the templates\' BIOS steps on '
                      'every node the scheduler could choose (%s: '
                      'ProcTurboMode=Disabled (the setting is read-only))'
                      % self.bm5['uuid'], self.refused('bm.gold', 'tiny'))
        self.assertEqual([], self.nova.writes)

    def test_a_node_that_takes_it_lets_the_boot_go(self):
        self.registry['ProcTurboMode']['read_only'] = False
        self.before('bm.gold', 'tiny')

    def test_unreadable_caches_never_block(self):
        self.ironic.forbidden = True
        said = self.before('bm.gold', 'tiny')
        self.assertIn('pre-flight without', said)

    def test_candidates_it_did_not_judge_never_let_it_block(self):
        self.useFixture(fixtures.MockPatch(
            'osc_deploy_config.use_cases.servers.boot_preflight.'
            'PREFLIGHT_NODES', 1))
        other = self.ironic.add_node('bm-6', [HT, ON_T],
                                     resource_class='baremetal-gold')
        other['bios'] = {'ProcTurboMode': 'Enabled'}
        self.ironic.bios_registries[other['uuid']] = self.registry
        self.placement.add_provider('bm-6', traits=[HT, ON_T],
                                    uuid_=other['uuid'],
                                    resource_class='CUSTOM_BAREMETAL_GOLD')
        said = self.before('bm.gold', 'tiny')
        self.assertIn('would fail this deploy', said)
