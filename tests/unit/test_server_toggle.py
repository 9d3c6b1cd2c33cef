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

"""A deploy-config toggle carried out against in-memory nova, ironic and
placement: what it leaves on the cloud and what it says."""

from osc_lib import exceptions

from osc_deploy_config.domain import deploy_config
from osc_deploy_config.domain import steps
from osc_deploy_config.domain import toggle_plan
from osc_deploy_config.use_cases import server_toggle
from tests.unit import fakes
from tests.unit.fakes import GOLD
from tests.unit.fakes import HT
from tests.unit.fakes import OFF
from tests.unit.fakes import OFF_T
from tests.unit.fakes import ON
from tests.unit.fakes import ON_T

OFF_SPECS = {'deploy-config:hyperthreading': 'disabled',
             'trait:' + OFF_T: 'required'}
DERIVED = 'm1.tiny+hyperthreading=disabled'


class ToggleTestCase(fakes.TestCommand):
    def setUp(self):
        super().setUp()
        self.ironic.add_hyperthreading_templates()
        self.said = []

    def toggle(self, server, *configs, dry_run=False, **options):
        return server_toggle.ServerToggle(
            self.app.client_manager.deploy_config, configs, self.said.append,
            sleep=lambda seconds: None, **options).run(server['id'], dry_run)

    def refused(self, server, *configs, **options):
        exc = self.assertRaises(exceptions.CommandError, self.toggle, server,
                                *configs, **options)
        return str(exc)

    def flavor_names(self):
        return sorted(f['name'] for f in self.nova.flavors.values())


class TestVirtual(ToggleTestCase):
    def setUp(self):
        super().setUp()
        self.tiny = self.nova.add_flavor('m1.tiny')
        self.server = self.nova.add_server('web-1', self.tiny)
        self.host = self.placement.add_provider('fake-compute',
                                                traits=[OFF_T])
        self.placement.allocate(self.server['id'], self.host, {'VCPU': 1})

    def test_resized_to_a_derived_flavor_and_confirmed(self):
        self.toggle(self.server, OFF, auto_confirm=True)
        server = self.nova.servers[self.server['id']]
        self.assertEqual(('ACTIVE', DERIVED, OFF_SPECS), (
            server['status'], server['flavor']['original_name'],
            server['flavor']['extra_specs']))
        made = next(f for f in self.nova.flavors.values()
                    if f['name'] == DERIVED)
        self.assertTrue(made['description'].startswith(toggle_plan.DERIVED_MARK))
        self.assertEqual([
            'Server web-1: deploy configs none -> hyperthreading=disabled: '
            'resize to flavor %s (to be created).' % DERIVED,
            'Server web-1 is ACTIVE on flavor %s.' % DERIVED], self.said)

    def test_rerun_after_success_does_nothing(self):
        self.toggle(self.server, OFF, auto_confirm=True)
        flavors = self.flavor_names()
        self.toggle(self.server, OFF, auto_confirm=True)
        self.assertEqual('Server web-1 already runs with '
                         'hyperthreading=disabled: nothing to do.',
                         self.said[-1])
        self.assertEqual(flavors, self.flavor_names())

    def test_reuses_an_identical_flavor(self):
        self.nova.add_flavor('tiny-no-ht', OFF_SPECS)
        self.toggle(self.server, OFF, auto_confirm=True)
        self.assertEqual(['m1.tiny', 'tiny-no-ht'], self.flavor_names())
        self.assertEqual('tiny-no-ht', self.nova.servers[self.server['id']][
            'flavor']['original_name'])

    def test_dry_run_changes_nothing(self):
        self.toggle(self.server, OFF, dry_run=True)
        self.assertEqual(['m1.tiny'], self.flavor_names())
        self.assertEqual('ACTIVE', self.nova.servers[self.server['id']][
            'status'])
        self.assertEqual(['Dry run, nothing changed. Server web-1: deploy '
                          'configs none -> hyperthreading=disabled: would '
                          'resize to flavor %s (to be created).' % DERIVED],
                         self.said)

    def test_refused_when_the_host_lacks_the_template_trait(self):
        why = self.refused(self.server, ON, auto_confirm=True)
        self.assertEqual(
            'Server web-1 cannot take hyperthreading=enabled on its host: '
            'fake-compute lacks %s. Nothing was changed; make the host '
            'capable and tag it (openstack resource provider trait set on '
            'the host), or migrate the server first.' % ON_T, why)
        self.assertEqual(['m1.tiny'], self.flavor_names())
        self.assertEqual([], self.nova.writes)

    def test_refused_on_a_reserved_host(self):
        self.host['inventories']['VCPU']['reserved'] = 1
        self.assertIn('fake-compute is reserved (VCPU reserved=1 of 1: in '
                      'maintenance?)', self.refused(self.server, OFF))
        self.assertEqual([], self.nova.writes)

    def test_no_valid_host_from_the_instance_action_is_an_error(self):
        # nova answers the resize 202, then puts the server back
        self.nova.no_valid_host = True
        why = self.refused(self.server, OFF, wait=True)
        self.assertEqual('Resize of server web-1 failed: '
                         'conductor_migrate_server: No valid host was '
                         'found. ', why)
        self.assertEqual('m1.tiny', self.nova.servers[self.server['id']][
            'flavor']['original_name'])
        # a rerun once the scheduler can place it uses the same flavor
        self.nova.no_valid_host = False
        self.toggle(self.server, OFF, auto_confirm=True)
        self.assertEqual(['m1.tiny', DERIVED], self.flavor_names())

    def test_rerun_finishes_a_flavor_an_interrupted_toggle_half_made(self):
        half = self.nova.add_flavor(DERIVED, description=(
            toggle_plan.derived_description('m1.tiny')))
        self.toggle(self.server, OFF, auto_confirm=True)
        self.assertEqual(OFF_SPECS, half['extra_specs'])
        self.assertEqual(['m1.tiny', DERIVED], self.flavor_names())
        self.assertEqual(DERIVED, self.nova.servers[self.server['id']][
            'flavor']['original_name'])

    def test_an_operators_flavor_with_the_derived_name_is_refused(self):
        self.nova.add_flavor(DERIVED, description='mine')
        self.assertIn('Flavor %s exists but differs from the target'
                      % DERIVED, self.refused(self.server, OFF))
        self.assertEqual({}, next(f for f in self.nova.flavors.values()
                                  if f['name'] == DERIVED)['extra_specs'])

    def test_rerun_after_an_interruption_before_the_confirm(self):
        self.toggle(self.server, OFF)     # resized, not confirmed
        self.assertEqual('VERIFY_RESIZE',
                         self.nova.servers[self.server['id']]['status'])
        self.toggle(self.server, OFF, auto_confirm=True)
        self.assertEqual('ACTIVE',
                         self.nova.servers[self.server['id']]['status'])
        self.assertEqual('Server web-1 is ACTIVE on flavor %s.' % DERIVED,
                         self.said[-1])

    def test_another_change_awaiting_confirmation_is_refused(self):
        self.toggle(self.server, OFF)
        self.host['traits'].append(ON_T)
        self.assertIn('has a resize awaiting confirmation: confirm or '
                      'revert it first', self.refused(self.server, ON))

    def test_a_busy_server_is_refused(self):
        self.nova.servers[self.server['id']][
            'OS-EXT-STS:task_state'] = 'resize_migrating'
        self.assertEqual('Server web-1 is busy (resize_migrating): another '
                         'change is under way; rerun when it ends. Nothing '
                         'was changed.', self.refused(self.server, OFF))
        self.assertEqual([], self.nova.writes)


class TestBaremetal(ToggleTestCase):
    def setUp(self):
        super().setUp()
        gold = self.nova.add_flavor('bm.gold', dict(GOLD, **{
            'deploy-config:hyperthreading': 'enabled',
            'trait:' + ON_T: 'required'}))
        self.server = self.nova.add_server('db-1', gold)
        self.node = self.deploy_on_node(self.server, 'bm-0',
                                        [HT, ON_T, OFF_T],
                                        {'HyperThreading': 'Enabled'})

    def test_serviced_in_place_and_recorded(self):
        self.toggle(self.server, OFF)
        self.assertEqual({'HyperThreading': 'Disabled'}, self.node['bios'])
        self.assertEqual('active', self.node['provision_state'])
        self.assertEqual({'deploy_config_hyperthreading': 'disabled'},
                         self.node['extra'])
        server = self.nova.servers[self.server['id']]
        self.assertEqual(toggle_plan.record([OFF]), server['metadata'])
        self.assertEqual('bm.gold', server['flavor']['original_name'])
        self.assertEqual([
            'Server db-1: deploy configs hyperthreading=enabled -> '
            'hyperthreading=disabled: service node bm-0 with '
            'bios.apply_configuration (reboots).',
            'Server db-1: node bm-0 serviced, now hyperthreading=disabled.'],
            self.said)
        self.toggle(self.server, OFF)
        self.assertIn('already runs with hyperthreading=disabled',
                      self.said[-1])

    def test_a_type_the_image_asks_for_is_refused(self):
        image = self.glance.add_image('ht-on', **{
            'deploy-config:hyperthreading': 'enabled',
            'trait:' + ON_T: 'required'})
        self.nova.servers[self.server['id']]['image'] = {'id': image['id']}
        self.assertEqual(
            'Server db-1 cannot toggle hyperthreading: its image ht-on asks '
            'for hyperthreading=enabled, which every deploy of the server '
            'applies again. Nothing was changed; rebuild it from an image '
            'without it (openstack image deploy-config unset).',
            self.refused(self.server, OFF))
        self.assertEqual([], self.ironic.writes + self.nova.writes)

    def test_dry_run_services_nothing(self):
        self.toggle(self.server, OFF, dry_run=True)
        self.assertEqual({'HyperThreading': 'Enabled'}, self.node['bios'])
        self.assertEqual([], self.ironic.writes)
        self.assertIn('would service node bm-0 with bios.apply_configuration',
                      self.said[0])

    def test_refused_in_maintenance(self):
        self.node['maintenance'] = True
        self.assertIn('node bm-0 is in maintenance',
                      self.refused(self.server, OFF))
        self.assertEqual({'HyperThreading': 'Enabled'}, self.node['bios'])
        self.assertEqual([], self.ironic.writes)

    def test_refused_when_the_node_is_not_tagged(self):
        provider = self.placement.providers[self.node['uuid']]
        provider['traits'].remove(OFF_T)
        self.assertIn('node bm-0 lacks %s' % OFF_T,
                      self.refused(self.server, OFF))
        self.assertEqual([], self.ironic.writes)

    def test_a_bios_that_ignores_the_step_fails_the_toggle(self):
        # ironic reports success: only the node's settings tell
        self.ironic.bios_ignores_steps = True
        self.assertEqual(
            'Servicing node bm-0 finished, but the hardware does not show '
            'hyperthreading=disabled: BIOS HyperThreading=Disabled (the node '
            'has Enabled). Nothing was recorded; rerun to retry once the '
            'node takes the settings.', self.refused(self.server, OFF))
        self.assertEqual({}, self.nova.servers[self.server['id']][
            'metadata'])
        self.assertEqual({}, self.node['extra'])
        self.ironic.bios_ignores_steps = False
        self.toggle(self.server, OFF)
        self.assertEqual({'HyperThreading': 'Disabled'}, self.node['bios'])

    def test_a_node_ironic_hides_is_bare_metal_all_the_same(self):
        # a project-scoped token under ironic's secure RBAC sees no node
        self.without_system_role()
        self.ironic.nodes.clear()
        why = self.refused(self.server, OFF)
        self.assertIn('Server db-1 is a bare-metal server, but ironic does '
                      'not show its node to these credentials', why)
        self.assertIn('openstack role add --system all', why)
        self.assertEqual([], self.nova.writes)

    def test_failed_servicing_is_aborted_and_the_node_runs_on(self):
        self.ironic.service_error = 'BIOS interface timed out'
        self.assertEqual(
            'Servicing node bm-0 failed: BIOS interface timed out. Ironic '
            'returned the node to active and server db-1 runs on: its '
            'hardware shows HyperThreading=Enabled (as ironic read it at '
            '2026-11-30T12:00:00Z); the node stays in maintenance, where '
            'ironic put it for the failed step (openstack baremetal node '
            'maintenance unset bm-0 once the hardware is checked). Nothing '
            'was recorded; fix the cause, then rerun.',
            self.refused(self.server, OFF))
        self.assertEqual(('active', True, 'BIOS interface timed out'), (
            self.node['provision_state'], self.node['maintenance'],
            self.node['maintenance_reason']))
        self.assertEqual([('bm-0', 'service'), ('bm-0', 'abort')],
                         self.ironic.provision_requests)
        # the operator checks the hardware, then a rerun toggles it
        self.node['maintenance'] = False
        self.assertEqual({}, self.nova.servers[self.server['id']][
            'metadata'])
        self.ironic.service_error = None
        self.toggle(self.server, OFF)
        self.assertEqual({'HyperThreading': 'Disabled'}, self.node['bios'])

    def test_an_ironic_that_cannot_abort_says_how_to_recover(self):
        self.ironic.service_error = 'BIOS interface timed out'
        self.ironic.abort_unsupported = True
        why = self.refused(self.server, OFF)
        self.assertTrue(why.startswith(
            'Servicing node bm-0 failed: BIOS interface timed out. This '
            'ironic cannot take a node out of "service failed" (abort needs '
            'ironic 32.0 or later)'), why)
        self.assertTrue(why.endswith(
            "openstack baremetal node service %s --service-steps "
            "'[{\"interface\": \"bios\", \"step\": "
            "\"apply_configuration\", \"args\": {\"settings\": "
            "[{\"name\": \"HyperThreading\", \"value\": "
            "\"Disabled\"}]}}]'" % self.node['uuid']), why)
        self.assertIn('openstack baremetal node maintenance unset %s && '
                      'openstack baremetal node service' % self.node['uuid'],
                      why)
        self.assertEqual(('service failed', True), (
            self.node['provision_state'], self.node['maintenance']))
        self.ironic.service_error = None
        self.node['maintenance'] = False
        self.toggle(self.server, OFF)    # from "service failed"
        self.assertEqual({'HyperThreading': 'Disabled'}, self.node['bios'])

    def test_waits_for_the_servicing_saying_each_state_once(self):
        self.ironic.servicing_reads = 3
        self.toggle(self.server, OFF)
        self.assertEqual({'HyperThreading': 'Disabled'}, self.node['bios'])
        self.assertEqual(['  node bm-0 servicing'],
                         [s for s in self.said if s.startswith('  ')])

    def test_a_servicing_that_never_ends_is_one_line(self):
        self.ironic.servicing_reads = 10 ** 6
        self.assertEqual(
            'Node %s still servicing after 0s' % self.node['uuid'],
            self.refused(self.server, OFF, wait_seconds=0))
        self.assertEqual({}, self.nova.servers[self.server['id']][
            'metadata'])

    def test_a_rerun_records_what_an_interrupted_servicing_did(self):
        # killed after ironic serviced the node, before the record
        self.node['bios'] = {'HyperThreading': 'Disabled'}
        self.toggle(self.server, OFF)
        self.assertEqual([], self.ironic.provision_requests)
        self.assertEqual(toggle_plan.record([OFF]), self.nova.servers[
            self.server['id']]['metadata'])
        self.assertIn('node bm-0 already shows hyperthreading=disabled: '
                      'recording it', self.said[1])

    def test_a_profile_that_destroys_data_is_refused(self):
        raid = deploy_config.Config('disks', 'raid0')
        self.ironic.add_template(
            'CUSTOM_DEPLOY_CONFIG_DISKS_RAID0', steps=[steps.raid_step(
                {'logical_disks': [{'size_gb': 'MAX', 'raid_level': '0',
                                    'is_root_volume': True}]})],
            extra=deploy_config.template_extra(raid, []))
        self.assertEqual(
            'Server db-1 cannot take disks=raid0 while it runs: '
            'raid.apply_configuration would destroy the RAID volumes and '
            'everything on them. Nothing was changed; it applies at deploy '
            'only: boot a new server from a flavor that asks for it '
            '(openstack flavor deploy-config set FLAVOR disks=raid0) and '
            'move the workload there.', self.refused(self.server, raid))
        self.assertEqual([], self.ironic.writes + self.nova.writes)
