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

"""The doors around a grant, on the mini cloud that runs the shipped
hardening: demo's manager and member try them as they would, with
ironic's and glance's own commands, and are refused; ``project
deploy-config check`` finds every door closed, and on the mini cloud
switched to the legacy (open) policy names each open one."""

import os

from tests.functional import base

DEMO_MANAGER = 'minicloud-demo-manager'
TRAIT = 'CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_DISABLED'


class HardeningTestCase(base.FunctionalTestCase):
    def demo_baremetal_node(self):
        """A bare-metal server of demo's (deleted at clean-up): the name
        of its node, which ironic leased to demo at deploy."""
        node = self.free_nodes(*base.SCHEDULABLE_NODES)[0]
        self.wait_schedulable(node)
        server = self.create_server(base.BAREMETAL_FLAVOR, cloud=base.DEMO)
        return self.node(self.server_details(server['id'])[
            'OS-EXT-SRV-ATTR:hypervisor_hostname'])['name']

    def check(self, cloud=base.ADMIN):
        """{(door, who): (state, closed by)} of ``check demo``."""
        return {(r['Door'], r['Who']): (r['State'], r['Closed By'])
                for r in self.openstack('project', 'deploy-config', 'check',
                                        'demo', cloud=cloud)}

    def probe_users_left(self):
        return [u['Name'] for u in self.openstack('user', 'list')
                if u['Name'].startswith('deploy-config-check-')]


class TestHardened(HardeningTestCase):
    def test_doors_closed_to_the_project_and_check_says_so(self):
        node = self.demo_baremetal_node()
        before = (self.node(node)['instance_info'], self.bios(node))
        # the instance_info rebuild: a trait of the project's choosing in
        # instance_info, for ironic to pick its template at rebuild
        for cloud in (DEMO_MANAGER, base.DEMO):
            done = self.openstack('baremetal', 'node', 'set', node,
                                  '--instance-info', 'traits=%s' % TRAIT,
                                  cloud=cloud, parse=False, fail_ok=True)
            self.assertEqual(1, done.returncode, done.stdout)
            self.assertIn('HTTP 403', done.stderr)
        self.assertEqual(before, (self.node(node)['instance_info'],
                                  self.bios(node)))
        # the trait image: glance's property protection refuses it
        name = self.unique_name('fn-trait-image')
        done = self.openstack('image', 'create', '--property',
                              'trait:%s=required' % TRAIT, name,
                              cloud=base.DEMO, parse=False, fail_ok=True)
        self.assertEqual(1, done.returncode, done.stdout)
        self.assertIn('403', done.stderr)
        self.assertEqual([], self.openstack('image', 'list', '--name', name,
                                            cloud=base.DEMO))

        # the operator's check: every door closed, its users gone
        found = self.check()
        self.assertEqual({'closed'}, {s for s, _ in found.values()}, found)
        self.assertEqual(7, len(found))
        self.assertEqual([], self.probe_users_left())
        # the manager's own: its doors closed, a member's not probed
        found = self.check(DEMO_MANAGER)
        self.assertEqual(
            {'manager': {'closed'}, 'member': {'not probed'},
             'operator': {'not probed'}},
            {who: {s for (_, w), (s, _) in found.items() if w == who}
             for who in ('manager', 'member', 'operator')})


class TestLegacyCloud(HardeningTestCase):
    """The mini cloud without the hardening: ironic's legacy policy, no
    property protections (``minicloud up --ironic-policy legacy``).  Out
    of the default run: switching ironic and glance there and back costs
    about 17-27 s; ``FN_LEGACY=1`` runs it."""

    def setUp(self):
        if not os.environ.get('FN_LEGACY'):
            self.skipTest('switches the mini cloud to the legacy policy and '
                          'back (17-27 s): set FN_LEGACY=1')
        super().setUp()
        self.minicloud('up', '--ironic-policy', 'legacy')
        self.addCleanup(self.minicloud, 'up', '--ironic-policy', 'secure')

    def test_check_names_each_open_door(self):
        self.demo_baremetal_node()
        found = self.check()
        instance_info = "node's instance_info (templates, boot mode)"
        self.assertEqual(
            {(instance_info, 'manager'): 'open',
             # the legacy policy also lets a lessee's member (ironic's
             # deprecated rule: baremetal:node:update)
             (instance_info, 'member'): 'open',
             ('image property trait:', 'manager'): 'open',
             ('image property trait:', 'member'): 'open',
             ('image property deploy-config:', 'manager'): 'open',
             ('image property deploy-config:', 'member'): 'open',
             ("node's lessee is not the server's project", 'operator'):
                 'closed'},
            {door: state for door, (state, _) in found.items()})
        self.assertEqual(
            'ironic-policy.yaml "baremetal:node:update_instance_info"',
            found[instance_info, 'manager'][1])
        self.assertEqual([], self.probe_users_left())
