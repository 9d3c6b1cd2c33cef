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

"""Configs that compose, on the fake-steps nodes: a flavor that asks for
two BIOS configs and a RAID profile deploys all three, through the set of
the two (one BIOS step) and the RAID template; a rollout switches one
type on its servers and keeps the other; a RAID profile never runs on a
running server; a member that a set needs is not deleted."""

import json
import os

import fixtures

from tests.functional import test_resize

SET_PREFIX = 'CUSTOM_DEPLOY_CONFIG_SET_'


class TestConfigSets(test_resize.ToggleTestCase):
    def bios_type(self, setting, *values):
        """A config type whose templates set the fake BIOS's ``setting``
        to each value, for nodes with HW_CPU_HYPERTHREADING."""
        config_type = self.unique_name('fn').replace('-', '')
        for value in values:
            made = self.openstack(
                'baremetal', 'deploy', 'template', 'create', '--config',
                '%s=%s' % (config_type, value), '--bios-setting',
                '%s=%s' % (setting, value), '--requires-trait',
                'HW_CPU_HYPERTHREADING')
            self.addCleanup(self.forget_template, made['name'])
        return config_type

    def raid_type(self, *levels):
        """A config type with a RAID profile of each level, any node."""
        disks = self.unique_name('fndisks').replace('-', '')
        folder = self.useFixture(fixtures.TempDir()).path
        for level in levels:
            path = os.path.join(folder, 'raid%s.json' % level)
            with open(path, 'w') as f:
                json.dump({'logical_disks': [
                    {'size_gb': 'MAX', 'raid_level': level}]}, f)
            made = self.openstack(
                'baremetal', 'deploy', 'template', 'create', '--config',
                '%s=raid%s' % (disks, level), '--raid-config', path,
                '--no-requires-trait')
            self.addCleanup(self.forget_template, made['name'])
        return disks

    def test_two_bios_configs_and_a_raid_profile_on_one_server(self):
        for node in self.free_nodes('bm-0', 'bm-1'):
            self.wait_schedulable(node)     # an earlier server has left
        fa = self.bios_type('FnToggle', 'on', 'off')
        fb = self.bios_type('BenchFleet', 'on', 'off')
        disks = self.raid_type('1', '0')
        self.openstack('baremetal', 'node', 'deploy-config', 'sync')
        flavor = self.create_baremetal_flavor()
        configs = ['%s=on' % fa, '%s=on' % fb, '%s=raid1' % disks]
        rows = self.openstack('flavor', 'deploy-config', 'set', flavor,
                              *configs)
        (the_set,) = [r['Extra Spec'][len('trait:'):] for r in rows
                      if r['Extra Spec'].startswith('trait:' + SET_PREFIX)]
        self.addCleanup(self.forget_template, the_set)
        # its nodes tagged before the flavor asked for it
        self.assertEqual({'bm-0', 'bm-1', 'bm-3'}, {
            n for n, traits in self.node_traits().items()
            if the_set in traits})
        shown = self.openstack('flavor', 'deploy-config', 'show', flavor)
        self.assertEqual(dict.fromkeys(configs[:2], the_set), shown['sets'])
        self.assertEqual({'trait:%s=required' % the_set},
                         {shown['required_traits'][c] for c in configs[:2]})
        # by the set's members, in the order of their types
        self.assertEqual((3, 2), (shown['tagged_nodes'][','.join(sorted(
            configs[:2]))], shown['schedulable_nodes']))

        # both servers deploy every config: one BIOS step for the two
        # (the set's), one RAID step; one of them booted through OSC
        servers = [self.create_server(flavor, cli=True),
                   self.create_server(flavor)]
        nodes = [self.node(self.server_details(s['id'])[
            'OS-EXT-SRV-ATTR:hypervisor_hostname'])['name'] for s in servers]
        self.assertEqual(['bm-0', 'bm-1'], sorted(nodes))
        for node in nodes:
            bios = self.bios(node)
            self.assertEqual(('on', 'on'), (bios['FnToggle'],
                                            bios['BenchFleet']))
            self.assertEqual(['1'], [d['raid_level'] for d in self.node(
                node)['raid_config']['logical_disks']])
            steps = [(s['interface'], s['step'])
                     for s in self.deployed_steps(node)]
            self.assertEqual(1, steps.count(('bios', 'apply_configuration')))
            self.assertEqual(1, steps.count(('raid', 'apply_configuration')))
        rows = {r['Type']: r for r in self.openstack(
            'server', 'deploy-config', 'show', servers[0]['id'])}
        self.assertEqual({fa: ('on', 'yes'), fb: ('on', 'yes'),
                          disks: ('raid1', 'yes')},
                         {t: (r['Wanted'], r['In Effect'])
                          for t, r in rows.items()})
        self.assertEqual('RAID 1', rows[disks]['Actual'])
        self.assertEqual(self.node(nodes[0])['raid_config']['last_updated'][
            :19], rows[disks]['Read At'][:19].replace('T', ' '))

        # a RAID profile applies at deploy only: never on a running server
        before = self.cloud_state()
        refused = self.toggle(servers[0]['id'], '%s=raid0' % disks,
                              fail_ok=True)
        self.assertEqual(1, refused.returncode)
        self.assertEqual(
            ['Server %s cannot take %s=raid0 while it runs: '
             'raid.apply_configuration would destroy the RAID volumes and '
             'everything on them. Nothing was changed; it applies at deploy '
             'only: boot a new server from a flavor that asks for it '
             '(openstack flavor deploy-config set FLAVOR %s=raid0) and move '
             'the workload there.' % (servers[0]['name'], disks, disks)],
            refused.stderr.splitlines())
        self.assertEqual(before, self.cloud_state())

        # a rollout of one type: each node serviced with that config's own
        # step, the other config of the set kept
        rolled = self.openstack(
            'server', 'deploy-config', 'set', *[s['id'] for s in servers],
            '--deploy-config', '%s=off' % fb, '--max-unavailable', '2')
        self.assertEqual({'done'}, {r['Outcome'] for r in rolled})
        for node in nodes:
            bios = self.bios(node)
            self.assertEqual(('on', 'off'), (bios['FnToggle'],
                                             bios['BenchFleet']))

        # a member the set in use needs is not deleted
        member = self.openstack('baremetal', 'deploy', 'template', 'show',
                                '--config', '%s=on' % fa)['name']
        done = self.openstack('baremetal', 'deploy', 'template', 'delete',
                              member, parse=False, fail_ok=True)
        self.assertEqual(1, done.returncode)
        self.assertIn('it is a member of set %s, needed by flavor %s' % (
            the_set, flavor), done.stderr)
        self.assertIn(member, [t['name'] for t in self.openstack(
            'baremetal', 'deploy', 'template', 'list')])
