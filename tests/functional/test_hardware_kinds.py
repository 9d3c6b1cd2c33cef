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

"""One config, every hardware kind: the mini cloud's kinds of BIOS (bm-0..bm-3
name hyperthreading HyperThreading, in the mini cloud's vocabulary file;
bm-4 ProcHyperthreading, as HPE's Intel models do; bm-5 LogicalProc, a
Dell's behind its emulated iDRAC; bm-6 ProcSMT, an HPE AMD's behind its
emulated iLO), served by templates made without vendor names.  The vendor
profiles behind Redfish: ``test_redfish``."""

import json

from tests.functional import base
from tests.functional import test_resize

SILVER = 'CUSTOM_BAREMETAL_SILVER'
SETTING = {'bm-4': 'ProcHyperthreading'}     # the others: HyperThreading


class KindsTestCase(test_resize.BaremetalToggleTestCase):
    def setUp(self):
        super().setUp()
        if not self.servicing:
            self.skipTest('ironic %s has no servicing (API 1.87)'
                          % self.ironic_max)

    def made_per_class(self, config):
        """The templates of a config of the vocabulary, one per class of
        the capable nodes; cleaned up."""
        made = self.openstack('baremetal', 'deploy', 'template', 'create',
                              '--config', config)
        for name in made['created']:
            self.addCleanup(self.forget_template, name)
        return made


class TestHardwareKinds(KindsTestCase):
    def hyperthreading(self, node):
        return self.bios(node)[SETTING.get(node, 'HyperThreading')]

    def test_one_config_served_on_both_kinds(self):
        self.power_on('bm-4')
        for node in self.free_nodes('bm-0', 'bm-1'):
            self.wait_schedulable(node)
        planned = self.openstack('baremetal', 'deploy', 'template', 'create',
                                 '--config', 'hyperthreading=enabled',
                                 '--dry-run')
        self.assertEqual('ProcHyperthreading=Enabled (HPE iLO, Intel)',
                         planned['settings']['baremetal-silver'])
        # (a kept demo cloud's template for every kind may serve gold)
        self.assertIn(planned['settings']['baremetal-gold'], (
            'HyperThreading=Enabled (mini cloud, fake)',
            'served by CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_ENABLED'))
        made = {}
        for value in ('enabled', 'disabled'):
            made[value] = self.made_per_class('hyperthreading=%s' % value)
            self.assertEqual(['baremetal-bronze', 'baremetal-copper',
                              'baremetal-gold', 'baremetal-silver'],
                             sorted(made[value]['templates']))
        self.openstack('baremetal', 'node', 'deploy-config', 'sync')
        flavors = {kind: self.create_baremetal_flavor(resource_class=kind)
                   for kind in (base.RESOURCE_CLASS, SILVER)}
        for flavor in flavors.values():
            self.openstack('flavor', 'deploy-config', 'set', flavor,
                           'hyperthreading=enabled')
        self.wait_schedulable('bm-4')
        servers = {kind: self.create_server(flavor, cli=True)
                   for kind, flavor in flavors.items()}
        nodes = {kind: self.node(self.server_details(s['id'])[
            'OS-EXT-SRV-ATTR:hypervisor_hostname'])['name']
            for kind, s in servers.items()}
        self.assertEqual('bm-4', nodes[SILVER])
        self.assertEqual(['Enabled', 'Enabled'],
                         [self.hyperthreading(n) for n in nodes.values()])

        rolled = self.openstack(
            'server', 'deploy-config', 'set',
            *[s['id'] for s in servers.values()], '--deploy-config',
            'hyperthreading=disabled', '--max-unavailable', '2')
        self.assertEqual(['done', 'done'], [r['Outcome'] for r in rolled])
        self.assertEqual(['Disabled', 'Disabled'],
                         [self.hyperthreading(n) for n in nodes.values()])
        classes = {base.RESOURCE_CLASS: 'baremetal-gold',
                   SILVER: 'baremetal-silver'}
        for kind, server in servers.items():
            (row,) = self.openstack('server', 'deploy-config', 'show',
                                    server['id'])
            self.assertEqual(('disabled', 'toggle', 'yes',
                              made['disabled']['templates'][classes[kind]]),
                             (row['Wanted'], row['Source'], row['In Effect'],
                              row['Template']), kind)

    def test_one_vendors_template_stays_off_the_other_kind(self):
        config = 'fnvendor=%s' % self.unique_name('v').replace('-', '')
        done = self.openstack(
            'baremetal', 'deploy', 'template', 'create', '--config', config,
            '--requires-trait', 'HW_CPU_HYPERTHREADING', '--bios-setting',
            'HyperThreading=Enabled', fail_ok=True)
        self.assertEqual(0, done.returncode, done.stderr)
        self.assertIn('bm-4', done.stderr)      # warned: sync won't tag it
        template = self.openstack('baremetal', 'deploy', 'template', 'show',
                                  '--config', config)['name']
        self.addCleanup(self.forget_template, template)
        synced = self.openstack('baremetal', 'node', 'deploy-config', 'sync',
                                template)
        self.assertNotIn('bm-4', [r['Node'] for r in synced])
        self.assertNotIn(template, self.node('bm-4')['traits'])
        (row,) = self.openstack('baremetal', 'node', 'deploy-config', 'list',
                                '--node', 'bm-4', '--config', config)
        self.assertEqual((False, False, 'its BIOS refuses '
                          'HyperThreading=Enabled (no such setting in the '
                          'BIOS registry)'),
                         (row['Capable'], row['Tagged'], row['Reason']))


class TestOddNodes(base.FunctionalTestCase):
    def test_a_node_without_a_resource_class(self):
        ironic = self.sdk(base.SYSTEM_ADMIN).baremetal
        name = self.unique_name('fn-classless')
        made = ironic.post('/nodes', json={
            'name': name, 'driver': 'fake-hardware'},
            microversion=self.ironic_api)
        self.assertEqual(201, made.status_code, made.text)
        self.addCleanup(ironic.delete, '/nodes/%s' % made.json()['uuid'],
                        microversion=self.ironic_api)
        self.assertIsNone(made.json()['resource_class'])
        done = self.openstack('baremetal', 'deploy', 'template', 'create',
                              '--config', 'virtualization=enabled',
                              '--dry-run', fail_ok=True)
        self.assertEqual(0, done.returncode, done.stderr)
        self.assertEqual(
            ['%s has no resource class: nova cannot schedule it, and no '
             'template of a class serves it; give it one: openstack '
             'baremetal node set --resource-class CLASS %s' % (name, name)],
            done.stderr.splitlines())
        self.assertEqual(['baremetal-copper', 'baremetal-silver'],
                         sorted(json.loads(done.stdout)['templates']))
