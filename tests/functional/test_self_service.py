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

"""Self-service: the operator grants project demo a config; demo's member
sees its servers' configs and switches its virtual server; demo's manager
switches its bare-metal server through the project's runbook, within the
grant; another project's manager can do nothing to it; the operator's
rebuild applies again what was granted and applied; withdrawn, nothing
more is switched."""

import json

from osc_deploy_config.services import versions
from tests.functional import base
from tests.functional import test_resize

DEMO_MANAGER = 'minicloud-demo-manager'
OTHER_MANAGER = 'minicloud-other-manager'


class TestOlderIronic(base.FunctionalTestCase):
    def test_a_grant_says_the_version_it_needs(self):
        if versions.parse(self.ironic_max) >= (1, 112):
            self.skipTest('ironic %s has runbooks of a project'
                          % self.ironic_max)
        done = self.openstack('project', 'deploy-config', 'set', 'demo',
                              'hyperthreading=disabled', parse=False,
                              fail_ok=True)
        self.assertEqual(1, done.returncode)
        self.assertEqual([
            'The baremetal service at %s supports API version %s at most; '
            'deploy templates and runbooks of a project, gated by their '
            'traits need 1.112 or later' % (
                self.endpoint_root('baremetal'), self.ironic_max)],
            done.stderr.splitlines())


class TestSelfService(test_resize.VirtualToggleTestCase):
    def setUp(self):
        super().setUp()
        if versions.parse(self.ironic_max) < (1, 112):
            self.skipTest('ironic %s has no runbooks of a project (API '
                          '1.112)' % self.ironic_max)

    def toggle_as(self, cloud, server, config):
        """``server resize --deploy-config`` with a project's credentials;
        the completed process."""
        return self.openstack('server', 'resize', '--deploy-config', config,
                              '--auto-confirm', server, cloud=cloud,
                              parse=False, fail_ok=True)

    def refused_as(self, cloud, server, config, node=None):
        """A toggle refused in one line, nothing changed on the node."""
        before = node and (self.bios(node), self.node(node)['extra'])
        done = self.toggle_as(cloud, server, config)
        self.assertEqual(1, done.returncode, done.stdout)
        self.assertEqual(1, len(done.stderr.splitlines()), done.stderr)
        if node:
            self.assertEqual(before, (self.bios(node),
                                      self.node(node)['extra']))
        return done.stderr

    def forged_record_counts_for_nothing(self, server, node, config_type):
        """A record demo's member writes by hand (if its policy lets it
        write the node's extra) counts for nothing: the operator reads the
        flavor's config, since no grant's runbook ran."""
        record = json.dumps({'instance_uuid': server['id'],
                             'project_id': self.server_details(
                                 server['id'])['tenant_id'],
                             'configs': {config_type: 'off'}})
        done = self.openstack(
            'baremetal', 'node', 'set', node, '--extra',
            'deploy_config_project_applied=%s' % record, cloud=base.DEMO,
            parse=False, fail_ok=True)
        if done.returncode == 0:
            self.addCleanup(self.openstack, 'baremetal', 'node', 'unset',
                            node, '--extra', 'deploy_config_project_applied',
                            parse=False, fail_ok=True)
        else:
            self.assertIn('HTTP 403', done.stderr)
        self.assertEqual([('on', 'flavor')], [
            (r['Wanted'], r['Source']) for r in self.openstack(
                'server', 'deploy-config', 'show', server['id'])
            if r['Type'] == config_type])
        self.assertEqual('on', self.bios(node)['FnToggle'])

    def test_a_project_switches_its_own_servers_within_its_grant(self):
        for node in self.free_nodes('bm-0', 'bm-1'):
            self.wait_schedulable(node)
        config_type, made = self.new_pair()
        made['max'] = self.openstack(
            'baremetal', 'deploy', 'template', 'create', '--config',
            '%s=max' % config_type, '--bios-setting', 'FnToggle=max',
            '--requires-trait', 'HW_CPU_HYPERTHREADING')
        self.addCleanup(self.forget_template, made['max']['name'])
        # a second BIOS config the bare-metal flavor asks for beside it:
        # the two are served by their set, and only the first is granted
        bench_type = self.unique_name('fn').replace('-', '')
        bench = self.openstack(
            'baremetal', 'deploy', 'template', 'create', '--config',
            '%s=on' % bench_type, '--bios-setting', 'BenchFleet=on',
            '--requires-trait', 'HW_CPU_HYPERTHREADING')
        self.addCleanup(self.forget_template, bench['name'])
        self.openstack('baremetal', 'node', 'deploy-config', 'sync',
                       bench['name'], *[t['name'] for t in made.values()])
        for template in made.values():
            self.tag_host(template['name'])
        flavors = {'bm': self.create_baremetal_flavor(),
                   'virt': self.create_flavor(self.unique_name('fn-virt'),
                                              1, 64, 1)}
        for flavor in flavors.values():
            self.openstack('flavor', 'deploy-config', 'set', flavor,
                           '%s=on' % config_type)
        self.addCleanup(self.forget_flavors, flavors['virt'])
        (the_set,) = [r['Extra Spec'][len('trait:'):] for r in self.openstack(
            'flavor', 'deploy-config', 'set', flavors['bm'],
            '%s=on' % bench_type) if 'SET_' in r['Extra Spec']]
        self.addCleanup(self.forget_template, the_set)
        server = self.create_server(flavors['bm'], cloud=base.DEMO)
        virtual = self.create_server(flavors['virt'], cloud=base.DEMO)
        node = self.node(self.server_details(server['id'])[
            'OS-EXT-SRV-ATTR:hypervisor_hostname'])['name']
        off, on, most = ('%s=%s' % (config_type, v)
                         for v in ('off', 'on', 'max'))

        # the operator grants demo the pair: a runbook it owns for each,
        # and the flavor its virtual server needs, private and open to it
        granted = self.openstack('project', 'deploy-config', 'set', 'demo',
                                 on, off)
        self.addCleanup(self.openstack, 'project', 'deploy-config', 'unset',
                        'demo', '--all', parse=False)
        self.assertEqual({'create', 'record'},
                         {r['Action'] for r in granted})
        self.assertEqual([(off, 'ok'), (on, 'ok')], sorted(
            (r['Config'], r['State']) for r in self.openstack(
                'project', 'deploy-config', 'show', 'demo')))

        # demo's member sees its server's configs, and is told who may
        # switch it
        shown = self.openstack('server', 'deploy-config', 'show',
                               server['id'], cloud=base.DEMO)
        self.assertEqual((config_type, 'on', 'flavor', 'FnToggle=on',
                          'yes'), [(r['Type'], r['Wanted'], r['Source'],
                                    r['Actual'], r['In Effect'])
                                   for r in shown
                                   if r['Type'] == config_type][0])
        self.assertIn("its project's managers may switch it", self.refused_as(
            base.DEMO, server['id'], off, node))
        self.forged_record_counts_for_nothing(server, node, config_type)
        # nor may another project take the name of demo's grant
        runbook = self.openstack('project', 'deploy-config', 'show',
                                 'demo')[0]['Runbook']
        squat = self.openstack(
            'baremetal', 'runbook', 'create', '--name',
            runbook.replace('.CUSTOM_', '.CUSTOM_X'), '--steps', '[]',
            cloud=OTHER_MANAGER, parse=False, fail_ok=True)
        self.assertIn('HTTP 403', squat.stderr)

        # demo's manager switches it, through the project's runbook
        done = self.toggle_as(DEMO_MANAGER, server['id'], off)
        self.assertEqual(0, done.returncode, done.stderr)
        details = self.server_details(server['id'])
        self.assertEqual(('off', 'ACTIVE', False), (
            self.bios(node)['FnToggle'], details['status'],
            details['locked']))
        self.assertEqual({'instance_uuid': server['id'],
                          'project_id': details['tenant_id'],
                          'configs': {config_type: 'off'}},
                         self.node(node)['extra'][
                             'deploy_config_project_applied'])
        # ... not to what was not granted, nor another project at all
        self.assertIn('the operator has not granted it', self.refused_as(
            DEMO_MANAGER, server['id'], most, node))
        for ref in (server['id'], server['name']):
            self.assertIn('No server', self.refused_as(
                OTHER_MANAGER, ref, on, node))
        # ... nor around the grant with ironic's own commands, under the
        # hardened policy the mini cloud runs: no steps of its own choosing,
        # no runbook of its own
        steps = json.dumps([{'interface': 'bios',
                             'step': 'apply_configuration',
                             'args': {'settings': [{'name': 'FnToggle',
                                                    'value': 'max'}]}}])
        for command in (
                ('baremetal', 'node', 'service', node, '--service-steps',
                 steps),
                ('baremetal', 'runbook', 'create', '--name',
                 self.unique_name('CUSTOM_MINE').upper().replace('-', '_'),
                 '--steps', steps)):
            done = self.openstack(*command, cloud=DEMO_MANAGER, parse=False,
                                  fail_ok=True)
            self.assertEqual(1, done.returncode, done.stdout)
            self.assertIn('HTTP 403', done.stderr)
        self.assertEqual(('off', 'active'), (
            self.bios(node)['FnToggle'],
            self.node(node)['provision_state']))
        # the operator's check: the grant's runbooks are no other door;
        # the manager may still send the BIOS step its templates use,
        # which ironic 39 cannot refuse to a project alone (see the docs)
        found = {(r['Door'], r['Who']): r for r in self.openstack(
            'project', 'deploy-config', 'check', 'demo')}
        self.assertEqual('closed', found[
            'runbook the project may run, not a grant', 'operator']['State'])
        steps = found['raw deploy steps (rebuild --deploy-steps)', 'manager']
        self.assertEqual('open', steps['State'])
        self.assertIn('used by a template, so no disallow list may refuse '
                      'it: bios.apply_configuration', steps['Detail'])

        # demo's member switches its virtual server to the granted flavor
        done = self.toggle_as(base.DEMO, virtual['id'], off)
        self.assertEqual(0, done.returncode, done.stderr)
        self.assertEqual(('ACTIVE', '%s+%s' % (flavors['virt'], off)), (
            self.server_details(virtual['id'])['status'],
            self.server_flavor(virtual['id'])['original_name']))
        # the flavor derived for it is demo's alone
        derived = '%s+%s' % (flavors['virt'], off)
        compute = self.sdk(base.ADMIN).compute
        self.assertEqual([details['tenant_id']], [
            a['tenant_id'] for a in compute.get_flavor_access(
                compute.find_flavor(derived, ignore_missing=False))])
        done = self.openstack('flavor', 'show', derived, cloud=OTHER_MANAGER,
                              parse=False, fail_ok=True)
        self.assertIn('No Flavor found', done.stderr)

        # the operator's rebuild deploys the flavor's set, then applies
        # again what was granted and applied: both values as they were
        self.openstack('server', 'rebuild', '--image', base.IMAGE, '--wait',
                       server['id'], parse=False)
        self.assertEqual(('off', 'on'), (self.bios(node)['FnToggle'],
                                         self.bios(node)['BenchFleet']))
        self.assertIn(the_set, self.node(node)['instance_info']['traits'])

        # withdrawn: the runbooks go, and nothing more is switched
        self.openstack('project', 'deploy-config', 'unset', 'demo', on, off,
                       parse=False)
        self.assertEqual([], self.openstack('project', 'deploy-config',
                                            'show', 'demo'))
        self.assertIn('the operator has not granted it', self.refused_as(
            DEMO_MANAGER, server['id'], on, node))
