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

"""Deploy templates and node tagging against the mini cloud's real ironic."""

import json
import os
import shutil
import subprocess
import sys

from tests.functional import base

HT = 'HW_CPU_HYPERTHREADING'
BAREMETAL = shutil.which('baremetal', path=os.path.dirname(sys.executable))


class DeployConfigTestCase(base.FunctionalTestCase):
    def new_config(self, cloud=base.ADMIN, *options):
        """A fresh hyperthreading config and its template; cleaned up.
        Its BIOS step sets FnToggle, the mini cloud BIOS registry's free
        string, to the config's own value: its effect is this test's."""
        value = self.unique_name('fn').replace('-', '')
        config = 'hyperthreading=%s' % value
        template = self.openstack(
            'baremetal', 'deploy', 'template', 'create', '--config', config,
            '--bios-setting', 'FnToggle=%s' % value, *options,
            cloud=cloud,
        )
        self.addCleanup(self.forget_template, template['name'])
        return config, template

    def forget_template(self, name):
        """Delete a template and the trait sync gave the nodes for it
        (clean-up, through the SDK)."""
        ironic = self.sdk(base.SYSTEM_ADMIN).baremetal
        ironic.delete('/deploy_templates/%s' % name,
                      microversion=self.ironic_api)
        for node in self._get_json(ironic, '/nodes?fields=uuid,traits',
                                   self.ironic_api)['nodes']:
            if name in node['traits']:
                done = ironic.delete('/nodes/%s/traits/%s' % (
                    node['uuid'], name), microversion=self.ironic_api)
                self.assertEqual(204, done.status_code, done.text)

    def check_lifecycle(self, cloud):
        config, created = self.new_config(cloud)
        name = created['name']
        self.assertTrue(name.startswith('CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_'))
        self.assertEqual(config, created['config'])
        self.assertEqual([HT], created['capability_traits'])

        shown = self.openstack('baremetal', 'deploy', 'template', 'show',
                               '--config', config, cloud=cloud)
        self.assertEqual(created['uuid'], shown['uuid'])
        listed = self.openstack('baremetal', 'deploy', 'template', 'list',
                                '--config', config, cloud=cloud)
        self.assertEqual([name], [t['name'] for t in listed])

        self.openstack('baremetal', 'deploy', 'template', 'set', name,
                       '--requires-trait', 'CUSTOM_FN_FAST', '--extra',
                       'owner=fn', parse=False, cloud=cloud)
        shown = self.openstack('baremetal', 'deploy', 'template', 'show',
                               name, cloud=cloud)
        self.assertEqual('CUSTOM_FN_FAST',
                         shown['extra']['deploy_config_requires_traits'])
        self.assertEqual('fn', shown['extra']['owner'])

        self.openstack('baremetal', 'deploy', 'template', 'unset', name,
                       '--extra', 'owner', '--config', parse=False,
                       cloud=cloud)
        shown = self.openstack('baremetal', 'deploy', 'template', 'show',
                               name, cloud=cloud)
        self.assertEqual({}, shown['extra'])

        deleted = self.openstack('baremetal', 'deploy', 'template', 'delete',
                                 name, parse=False, cloud=cloud)
        self.assertEqual('Deleted deploy template %s\n' % name, deleted)
        gone = self.openstack('baremetal', 'deploy', 'template', 'show', name,
                              cloud=cloud, fail_ok=True)
        self.assertEqual(1, gone.returncode)
        self.assertEqual('Deploy template %s not found\n' % name, gone.stderr)

    def node_traits(self):
        """{node name: its traits}, as ironic has them."""
        return {n['name']: set(n['traits']) for n in self._get_json(
            self.sdk(base.SYSTEM_ADMIN).baremetal,
            '/nodes?fields=name,traits', self.ironic_api)['nodes']}


class TestLifecycle(DeployConfigTestCase):
    def test_system_scoped_cloud(self):
        self.check_lifecycle(base.SYSTEM_ADMIN)

    def test_project_scoped_cloud_gets_system_scope(self):
        self.check_lifecycle(base.ADMIN)

    def test_member_is_refused_in_one_line(self):
        # a real process: its exit code and all it writes to stderr
        done = self.openstack(
            'baremetal', 'deploy', 'template', 'create', '--config',
            'hyperthreading=fnrefused', '--bios-setting', 'A=b',
            cloud=base.DEMO, fail_ok=True, process=True)
        self.assertEqual(1, done.returncode)
        self.assertEqual(1, len(done.stderr.splitlines()), done.stderr)
        self.assertIn('system-scoped token', done.stderr)
        self.assertNotIn(
            'CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_FNREFUSED',
            [t['name'] for t in self.openstack(
                'baremetal', 'deploy', 'template', 'list',
                cloud=base.SYSTEM_ADMIN)])


class TestIronicclientParity(DeployConfigTestCase):
    """python-ironicclient's standalone CLI and ours show the same."""

    def baremetal(self, *args):
        done = subprocess.run(
            [BAREMETAL, '--os-cloud', base.SYSTEM_ADMIN, *args, '-f', 'json'],
            capture_output=True, text=True, check=True,
            env=dict(os.environ, OS_CLIENT_CONFIG_FILE=self.clouds_yaml))
        return json.loads(done.stdout)

    def test_list_and_show(self):
        _, template = self.new_config()
        for args in (['list'], ['list', '--long'],
                     ['list', '--fields', 'name', 'steps'],
                     ['list', '--sort', 'name:desc'],
                     ['show', template['name']],
                     ['show', template['uuid'], '--fields', 'name', 'extra']):
            self.assertEqual(
                self.baremetal('deploy', 'template', *args),
                self.openstack('baremetal', 'deploy', 'template', *args,
                               cloud=base.SYSTEM_ADMIN), args)


class TestAppliedAtDeploy(DeployConfigTestCase):
    def test_template_trait_flavor_changes_bios(self):
        for node in self.free_nodes('bm-0', 'bm-1'):
            self.wait_schedulable(node)     # an earlier server has left
        config, template = self.new_config()
        value = config.split('=')[1]
        synced = self.openstack('baremetal', 'node', 'deploy-config', 'sync',
                                template['name'])
        self.assertEqual({('bm-0', 'added'), ('bm-1', 'added'),
                          ('bm-3', 'added')},
                         {(r['Node'], r['Action']) for r in synced})
        flavor = self.create_baremetal_flavor(template['name'])

        # no wait: sync returned once placement showed the tags
        server = self.create_server(flavor)

        node = self.server_details(server['id'])[
            'OS-EXT-SRV-ATTR:hypervisor_hostname']
        name = self.node(node)['name']
        self.assertIn(name, ('bm-0', 'bm-1'))
        self.assertEqual(value, self.bios(name)['FnToggle'])
        listed = self.openstack('baremetal', 'node', 'deploy-config', 'list',
                                '--node', name, '--config', config)
        self.assertEqual([(True, True, True)],
                         [(r['Capable'], r['Tagged'], r['In Use'])
                          for r in listed])


class TestSync(DeployConfigTestCase):
    def test_tags_exactly_the_capable_nodes(self):
        config, template = self.new_config()
        name = template['name']
        dry = self.openstack('baremetal', 'node', 'deploy-config', 'sync',
                             name, '--dry-run')
        self.assertEqual({'would add'}, {r['Action'] for r in dry})
        self.assertEqual([], [n for n, t in self.node_traits().items()
                              if name in t])

        self.openstack('baremetal', 'node', 'deploy-config', 'sync', name)
        # bm-3 is capable though in maintenance: tagged, not schedulable
        self.assertEqual(['bm-0', 'bm-1', 'bm-3'], sorted(
            n for n, t in self.node_traits().items() if name in t))
        rerun = self.openstack('baremetal', 'node', 'deploy-config', 'sync',
                               name)
        self.assertEqual([], rerun)

        listed = self.openstack('baremetal', 'node', 'deploy-config', 'list',
                                '--config', config)
        free = set(self.free_nodes('bm-0', 'bm-1'))
        self.assertEqual(
            {'bm-0': (True, True, False, 'bm-0' in free),
             'bm-1': (True, True, False, 'bm-1' in free),
             'bm-2': (False, False, False, False),
             'bm-3': (True, True, True, False),
             # other vendors' BIOS: no FnToggle in their registry
             'bm-4': (False, False, False, False),
             'bm-5': (False, False, False, False),
             'bm-6': (False, False, False, False)},
            {r['Node']: (r['Capable'], r['Tagged'], r['Maintenance'],
                         r['Schedulable']) for r in listed})

    def test_untags_a_node_that_lost_its_capability(self):
        _, template = self.new_config()
        name = template['name']
        self.openstack('baremetal', 'node', 'deploy-config', 'sync', name)
        self.openstack('baremetal', 'node', 'remove', 'trait', 'bm-1', HT,
                       parse=False, cloud=base.SYSTEM_ADMIN)
        self.addCleanup(self.openstack, 'baremetal', 'node', 'add', 'trait',
                        'bm-1', HT, parse=False, cloud=base.SYSTEM_ADMIN)
        synced = self.openstack('baremetal', 'node', 'deploy-config', 'sync',
                                name)
        self.assertEqual([('bm-1', 'removed', 'lacks %s' % HT)],
                         [(r['Node'], r['Action'], r['Reason'])
                          for r in synced])
        self.assertNotIn(name, self.node_traits()['bm-1'])


    def test_delete_takes_the_templates_trait_off_the_nodes(self):
        _, template = self.new_config()
        name = template['name']
        self.openstack('baremetal', 'node', 'deploy-config', 'sync', name)
        self.assertIn(name, self.node_traits()['bm-0'])
        self.openstack('baremetal', 'deploy', 'template', 'delete', name,
                       parse=False)
        self.assertEqual([], [n for n, t in self.node_traits().items()
                              if name in t])

    def test_prune_removes_the_traits_of_a_deleted_template(self):
        # deleted with ironic's own API: our delete would have taken them
        _, template = self.new_config()
        name = template['name']
        self.openstack('baremetal', 'node', 'deploy-config', 'sync', name)
        tagged = sorted(n for n, t in self.node_traits().items() if name in t)
        self.assertEqual(['bm-0', 'bm-1', 'bm-3'], tagged)
        self.sdk(base.SYSTEM_ADMIN).baremetal.delete_deploy_template(
            template['uuid'])

        reported = self.openstack('baremetal', 'node', 'deploy-config',
                                  'sync')
        self.assertEqual([(n, 'stale') for n in tagged],
                         [(r['Node'], r['Action']) for r in reported
                          if r['Template'] == name])
        pruned = self.openstack('baremetal', 'node', 'deploy-config', 'sync',
                                '--prune')
        self.assertEqual([(n, 'removed') for n in tagged],
                         [(r['Node'], r['Action']) for r in pruned
                          if r['Template'] == name])
        self.assertEqual([], [n for n, t in self.node_traits().items()
                              if name in t])
        # sync returned once placement showed it: no provider keeps it
        self.assertEqual([], self.sdk(base.ADMIN).placement.get(
            '/resource_providers?required=%s' % name,
            microversion='1.18').json()['resource_providers'])


class TestResourceClass(DeployConfigTestCase):
    """nova's name of a node's resource class (not ironic's business:
    left out of the old-ironic run)."""

    def test_schedulable_under_the_resource_class_nova_names(self):
        # nova names ironic's "CUSTOM_fn--x" CUSTOM_CUSTOM_FN_X in
        # placement: each run of symbols one "_", CUSTOM_ always prefixed
        node, ironic_class = 'bm-2', 'CUSTOM_fn--x'
        self.free_nodes(node)
        trait = 'CUSTOM_' + self.unique_name('FN_RC').replace('-', '_').upper()
        template = self.openstack(
            'baremetal', 'deploy', 'template', 'create', '--config',
            'fnrc=%s' % trait[-8:].lower(), '--bios-setting', 'FnToggle=rc',
            '--requires-trait', trait)
        self.addCleanup(self.forget_template, template['name'])
        self.set_resource_class(node, ironic_class)
        self.addCleanup(self.set_resource_class, node, 'baremetal-gold')
        self.openstack('baremetal', 'node', 'add', 'trait', node, trait,
                       parse=False, cloud=base.SYSTEM_ADMIN)
        self.addCleanup(self.openstack, 'baremetal', 'node', 'remove',
                        'trait', node, trait, parse=False,
                        cloud=base.SYSTEM_ADMIN)
        self.wait_for('%s offered as CUSTOM_CUSTOM_FN_X' % node,
                      lambda: self.free_in('CUSTOM_CUSTOM_FN_X', node), 60)

        synced = self.openstack('baremetal', 'node', 'deploy-config', 'sync',
                                template['name'])
        self.assertEqual([(node, 'added')],
                         [(r['Node'], r['Action']) for r in synced])
        listed = self.openstack('baremetal', 'node', 'deploy-config', 'list',
                                '--node', node, '--config',
                                template['config'])
        self.assertEqual([(True, True, True)], [
            (r['Capable'], r['Tagged'], r['Schedulable']) for r in listed])

    def set_resource_class(self, node, resource_class):
        """Change a free node's resource class; back to the seed's, wait
        until nova offers it under that class again."""
        self.openstack('baremetal', 'node', 'set', node, '--resource-class',
                       resource_class, parse=False, cloud=base.SYSTEM_ADMIN)
        if resource_class == 'baremetal-gold':
            self.wait_schedulable(node)

    def free_in(self, resource_class, node):
        """Whether placement offers the node for one unit of the class."""
        found = self.sdk(base.ADMIN).placement.get(
            '/allocation_candidates?resources=%s:1' % resource_class,
            microversion='1.22')
        return (found.status_code == 200 and self.node(node)['uuid'] in
                found.json()['provider_summaries'])


class TestLegacyPolicy(DeployConfigTestCase):
    """Older clouds: ironic's legacy policy lets a project admin in."""

    def setUp(self):
        super().setUp()
        self.minicloud('up', '--ironic-policy', 'legacy')
        self.addCleanup(self.minicloud, 'up', '--ironic-policy', 'secure')

    def test_project_admin_sees_nodes_and_manages_templates(self):
        nodes = self.openstack('baremetal', 'node', 'list', cloud=base.ADMIN)
        self.assertEqual(['bm-0', 'bm-1', 'bm-2', 'bm-3', 'bm-4', 'bm-5',
                          'bm-6'], sorted(n['name'] for n in nodes))
        self.check_lifecycle(base.ADMIN)


class TestRegistration(base.FunctionalTestCase):
    def test_ours_win_over_python_ironicclient(self):
        # python-ironicclient is installed in this environment too.
        self.assertTrue(BAREMETAL)
        # a real process: the entry points as an installed openstack
        # loads them
        listed = self.openstack('--help', parse=False, process=True)
        for action in ('create', 'delete', 'list', 'set', 'show', 'unset'):
            self.assertRegex(
                listed, r'baremetal deploy template %s .*\(osc-deploy-config\)'
                % action)
        self.assertRegex(listed, r'baremetal node deploy-config sync ')
