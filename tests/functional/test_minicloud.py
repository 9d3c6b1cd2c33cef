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

"""The mini cloud is a real cloud: what later tests rely on, proven."""

import json

from tests.functional import base


class TestSeed(base.FunctionalTestCase):
    def test_nodes_are_seeded_with_traits_and_maintenance(self):
        nodes = {
            node['name']: node
            for node in self.openstack(
                'baremetal', 'node', 'list', '--long',
                cloud=base.SYSTEM_ADMIN,
            )
        }
        self.assertEqual(['bm-0', 'bm-1', 'bm-2', 'bm-3', 'bm-4', 'bm-5',
                          'bm-6'], sorted(nodes))
        for name in ('bm-0', 'bm-1', 'bm-3', 'bm-4', 'bm-5', 'bm-6'):
            self.assertIn('HW_CPU_HYPERTHREADING', nodes[name]['traits'])
        self.assertNotIn('HW_CPU_HYPERTHREADING', nodes['bm-2']['traits'])
        self.assertTrue(nodes['bm-3']['maintenance'])
        for name in base.SCHEDULABLE_NODES:
            self.assertFalse(nodes[name]['maintenance'])
            self.assertEqual(
                'active' if nodes[name]['instance_uuid'] else 'available',
                nodes[name]['provision_state'])
        self.assertEqual(
            {'baremetal-gold'}, {n['resource_class'] for name, n in
                                 nodes.items() if name not in ('bm-4',
                                                               'bm-5',
                                                               'bm-6')})
        # other kinds of hardware: their own classes and BIOS names
        self.assertEqual('baremetal-silver', nodes['bm-4']['resource_class'])
        self.assertEqual('b', nodes['bm-4']['extra']['minicloud_bios_kind'])
        # on Redfish, over the emulated BMCs (tools/minicloud/bmc)
        for name, rclass in (('bm-5', 'baremetal-copper'),
                             ('bm-6', 'baremetal-bronze')):
            self.assertEqual(rclass, nodes[name]['resource_class'])
            for interface in ('power', 'bios'):
                self.assertEqual('redfish',
                                 nodes[name][interface + '_interface'])
            self.assertEqual('fake', nodes[name]['deploy_interface'])
        # the iDRAC's own management, for its job queue
        self.assertEqual('idrac-redfish',
                         nodes['bm-5']['management_interface'])
        self.assertEqual('redfish', nodes['bm-6']['management_interface'])

    def test_secure_rbac_hides_nodes_from_project_scope(self):
        # Ironic's default policy: a project-scoped admin sees no node.
        self.assertEqual(
            [], self.openstack('baremetal', 'node', 'list', cloud=base.ADMIN)
        )

    def test_flavors_and_image(self):
        specs = self.openstack('flavor', 'show', base.BAREMETAL_FLAVOR)
        self.assertEqual('1', specs['properties'][
            'resources:CUSTOM_BAREMETAL_GOLD'])
        self.assertEqual('0', specs['properties']['resources:VCPU'])
        self.assertEqual('1', self.openstack('flavor', 'show', 'bm.silver')[
            'properties']['resources:CUSTOM_BAREMETAL_SILVER'])
        self.assertEqual('1', self.openstack('flavor', 'show', 'bm.copper')[
            'properties']['resources:CUSTOM_BAREMETAL_COPPER'])
        self.openstack('flavor', 'show', base.VIRTUAL_FLAVOR)
        image = self.openstack('image', 'show', base.IMAGE, cloud=base.DEMO)
        self.assertEqual('active', image['status'])


class TestBoot(base.FunctionalTestCase):
    def test_virtual_server_boots_on_fake_compute(self):
        server = self.create_server(base.VIRTUAL_FLAVOR, cloud=base.DEMO)
        self.assertEqual('ACTIVE', server['status'])
        details = self.server_details(server['id'])
        self.assertEqual('fake-compute', details['OS-EXT-SRV-ATTR:host'])


class TestDeployTemplateAtDeploy(base.FunctionalTestCase):
    """A bare-metal server boots on an ironic node through nova's ironic
    compute, and a template whose name is a required trait runs at deploy
    time."""

    node_name = 'bm-1'

    def test_template_step_changes_bios_settings(self):
        trait = 'CUSTOM_MINICLOUD_%s' % self.unique_name('t')[2:].upper()
        # FnToggle: the BIOS registry's free string
        setting = {'name': 'FnToggle', 'value': trait}
        steps = [{'interface': 'bios', 'step': 'apply_configuration',
                  'args': {'settings': [setting]}, 'priority': 150}]
        self.openstack(
            'baremetal', 'deploy', 'template', 'create', trait,
            '--steps', json.dumps(steps), cloud=base.SYSTEM_ADMIN,
        )
        self.addCleanup(
            self.openstack, 'baremetal', 'deploy', 'template', 'delete',
            trait, parse=False, cloud=base.SYSTEM_ADMIN,
        )
        self.openstack('baremetal', 'node', 'add', 'trait', self.node_name,
                       trait, parse=False, cloud=base.SYSTEM_ADMIN)
        self.addCleanup(
            self.openstack, 'baremetal', 'node', 'remove', 'trait',
            self.node_name, trait, parse=False, cloud=base.SYSTEM_ADMIN,
        )
        flavor = self.create_baremetal_flavor(trait)
        self.assertNotEqual(setting['value'],
                            self.bios(self.node_name).get(setting['name']))
        self.wait_schedulable(self.node_name, traits=[trait])

        server = self.create_server(flavor)

        self.assertEqual('ironic-compute', self.server_details(
            server['id'])['OS-EXT-SRV-ATTR:host'])
        node = self.node(self.node_name)
        self.assertEqual((server['id'], 'active'),
                         (node['instance_uuid'], node['provision_state']))
        self.assertEqual([trait], node['instance_info']['traits'])
        self.assertEqual(setting['value'],
                         self.bios(self.node_name)[setting['name']])


class TestPermissions(base.FunctionalTestCase):
    def test_member_cannot_create_flavor(self):
        name = self.unique_name('fn-denied')
        done = self.openstack(
            'flavor', 'create', '--vcpus', '1', '--ram', '64', '--disk', '1',
            name, cloud=base.DEMO, fail_ok=True,
        )
        self.assertNotEqual(0, done.returncode)
        self.assertIn('403', done.stderr)
        self.assertIn("Policy doesn't allow", done.stderr)
        flavors = self.openstack('flavor', 'list', '--all')
        self.assertNotIn(name, [f['Name'] for f in flavors])
