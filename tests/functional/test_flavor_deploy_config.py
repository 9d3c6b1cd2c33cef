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

"""The flavor translation, end to end: nova -> scheduler -> ironic."""

import re

from tests.functional import base
from tests.functional import test_deploy_template


class TestFlavorDeployConfig(test_deploy_template.DeployConfigTestCase):
    def specs(self, flavor):
        return self.openstack('flavor', 'show', flavor)['properties']

    def set_on_gold(self, *configs):
        """Set configs on bm.gold; restore its extra specs at clean-up."""
        before = self.specs(base.BAREMETAL_FLAVOR)
        self.addCleanup(self.restore_specs, base.BAREMETAL_FLAVOR, before)
        return self.openstack('flavor', 'deploy-config', 'set',
                              base.BAREMETAL_FLAVOR, *configs)

    def allocation_candidates(self, flavor):
        """How many nodes placement offers for the flavor, asked as nova's
        scheduler asks (the flavor's resources and required traits)."""
        specs = self.specs(flavor)
        resources = ','.join('%s:%s' % (k.split(':', 1)[1], v)
                             for k, v in sorted(specs.items())
                             if k.startswith('resources:') and v != '0')
        required = ','.join(k.split(':', 1)[1] for k, v in specs.items()
                            if k.startswith('trait:') and v == 'required')
        found = self.sdk(base.ADMIN).placement.get(
            '/allocation_candidates?resources=%s&required=%s'
            % (resources, required), microversion='1.22')
        self.assertEqual(200, found.status_code, found.text)
        return len(found.json()['provider_summaries'])

    def restore_specs(self, flavor, specs):
        now = self.specs(flavor)
        for key in set(now) - set(specs):
            self.openstack('flavor', 'unset', '--property', key, flavor,
                           parse=False)
        changed = {k: v for k, v in specs.items() if now.get(k) != v}
        if changed:
            self.openstack('flavor', 'set', flavor, *[
                arg for item in changed.items()
                for arg in ('--property', '%s=%s' % item)], parse=False)
        self.assertEqual(specs, self.specs(flavor))

    def test_boot_lands_on_tagged_node_and_applies_the_config(self):
        free = self.free_nodes('bm-0', 'bm-1')
        for node in free:   # an earlier test's server may still be leaving
            self.wait_schedulable(node)
        config, template = self.new_config()
        value = config.split('=')[1]
        self.openstack('baremetal', 'node', 'deploy-config', 'sync',
                       template['name'])
        before = self.specs(base.BAREMETAL_FLAVOR)
        changed = self.set_on_gold(config)

        self.assertLessEqual(
            {('set', 'deploy-config:hyperthreading', value),
             ('set', 'trait:%s' % template['name'], 'required')},
            {(r['Action'], r['Extra Spec'], r['Value']) for r in changed})
        specs = self.specs(base.BAREMETAL_FLAVOR)
        self.assertEqual('required', specs['trait:%s' % template['name']])
        self.assertEqual(value, specs['deploy-config:hyperthreading'])
        self.assertEqual({k: v for k, v in before.items()
                          if not k.startswith(('trait:', 'deploy-config:'))},
                         {k: v for k, v in specs.items()
                          if not k.startswith(('trait:', 'deploy-config:'))})
        self.assertNotIn('trait:HW_CPU_HYPERTHREADING', specs)
        shown = self.openstack('flavor', 'deploy-config', 'show',
                               base.BAREMETAL_FLAVOR)
        # bm-3 is tagged too (capable), but in maintenance: reserved
        self.assertEqual({config: 3}, shown['tagged_nodes'])
        self.assertEqual(len(free), shown['schedulable_nodes'])
        self.assertEqual(self.allocation_candidates(base.BAREMETAL_FLAVOR),
                         shown['schedulable_nodes'])
        self.assertEqual(['%s: 3 node(s) tagged in ironic, %d schedulable: '
                          'bm-3 reserved (maintenance)' % (config, len(free))],
                         shown['drift'])

        # no wait: sync returned once placement showed the tags
        server = self.create_server(base.BAREMETAL_FLAVOR, cloud=base.DEMO,
                                    cli=True)

        node = self.node(self.server_details(server['id'])[
            'OS-EXT-SRV-ATTR:hypervisor_hostname'])
        self.assertIn(node['name'], ('bm-0', 'bm-1'))
        self.assertEqual([template['name']], node['instance_info']['traits'])
        self.assertEqual(value, self.bios(node['name'])['FnToggle'])

    def test_unset_restores_the_extra_specs_exactly(self):
        config, _ = self.new_config()
        flavor = self.create_baremetal_flavor('CUSTOM_FN_BY_HAND')
        before = self.specs(flavor)
        self.openstack('flavor', 'deploy-config', 'set', flavor, config)
        self.assertNotEqual(before, self.specs(flavor))
        self.openstack('flavor', 'deploy-config', 'unset', flavor,
                       'hyperthreading')
        self.assertEqual(before, self.specs(flavor))

    def test_no_tagged_node_warned_refused_before_boot(self):
        config, template = self.new_config(
            base.ADMIN, '--requires-trait', 'CUSTOM_FN_NOBODY_HAS_IT')
        self.openstack('baremetal', 'node', 'deploy-config', 'sync',
                       template['name'])
        flavor = self.create_baremetal_flavor()
        self.openstack('flavor', 'deploy-config', 'set', flavor, config)

        shown = self.openstack('flavor', 'deploy-config', 'show', flavor,
                               fail_ok=True)
        self.assertEqual(0, shown.returncode)
        self.assertIn('no node is schedulable for this flavor', shown.stderr)

        # the admin's boot: the pre-flight asks placement, and refuses
        servers = self.openstack('server', 'list', '--all-projects')
        name = self.unique_name('fn')
        done = self.openstack('server', 'create', '--flavor', flavor,
                              '--image', base.IMAGE, '--nic', 'none',
                              '--wait', name, fail_ok=True)
        self.assertNotEqual(0, done.returncode)
        self.assertEqual(['No node can take %s (flavor %s) now: placement '
                          'offers none with the flavor\'s resources and the '
                          'templates\' traits (see openstack flavor '
                          'deploy-config show, and openstack baremetal node '
                          'deploy-config list). Nothing was created.'
                          % (config, flavor)], done.stderr.splitlines())
        self.assertEqual(servers, self.openstack('server', 'list',
                                                 '--all-projects'))

        # a member may not read placement: the hook cannot judge, and lets
        # nova decide (NoValidHost)
        done = self.openstack('server', 'create', '--flavor', flavor,
                              '--image', base.IMAGE, '--nic', 'none',
                              '--wait', name, fail_ok=True, cloud=base.DEMO)
        self.addCleanup(self.openstack, 'server', 'delete', '--wait', name,
                        parse=False, fail_ok=True, cloud=base.DEMO)
        self.assertNotEqual(0, done.returncode)
        fault = self.openstack('server', 'show', name,
                               cloud=base.DEMO)['fault']
        self.assertIn('No valid host', fault['message'])

    def test_dry_run_changes_nothing(self):
        # (bad input is in test_bad_input)
        config, _ = self.new_config()
        before = self.specs(base.BAREMETAL_FLAVOR)
        dry = self.openstack('flavor', 'deploy-config', 'set', '--dry-run',
                             base.BAREMETAL_FLAVOR, config)
        self.assertIn(('would set', 'deploy-config:hyperthreading',
                       config.split('=')[1]),
                      [(r['Action'], r['Extra Spec'], r['Value'])
                       for r in dry])
        self.assertTrue(all(r['Action'].startswith('would ') for r in dry))
        self.assertEqual(before, self.specs(base.BAREMETAL_FLAVOR))

    def test_list_is_one_compute_request_over_100_flavors(self):
        config, _ = self.new_config()
        compute = self.sdk(base.ADMIN).compute
        names = []
        for n in range(100):
            flavor = compute.create_flavor(
                name=self.unique_name('fn-many-%03d' % n), vcpus=1, ram=64,
                disk=1)
            self.addCleanup(compute.delete_flavor, flavor.id)
            if n % 10 == 0:
                compute.create_flavor_extra_specs(
                    flavor, {'deploy-config:hyperthreading': 'x%d' % n})
                names.append(flavor.name)

        done = self.openstack('--debug', 'flavor', 'deploy-config', 'list',
                              fail_ok=True)

        self.assertEqual(0, done.returncode, done.stderr)
        compute_requests = re.findall(
            r'REQ: curl -g -i -X (\w+) (\S+/v2\.1\S*)', done.stderr)
        self.assertEqual(1, len(compute_requests), compute_requests)
        self.assertIn('/flavors/detail', compute_requests[0][1])
        listed = {row['Name'] for row in self.openstack(
            'flavor', 'deploy-config', 'list')}
        self.assertLessEqual(set(names), listed)
