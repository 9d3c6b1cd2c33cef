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

"""``server deploy-config set``: a rollout over a mixed fleet of the mini
cloud, bounded, resumable, read back."""

import json
import re
import signal
import subprocess
import threading
import time

from tests.functional import base
from tests.functional import test_resize

IN_FLIGHT = re.compile(r'(\d+) in flight')


class Sampler(threading.Thread):
    """Counts, every 0.1 s, the servers of a rollout that are being
    toggled: virtual ones nova is resizing, bare-metal ones whose node
    ironic is servicing."""

    def __init__(self, test, servers):
        super().__init__(daemon=True)
        self.nova = test.sdk(base.ADMIN).compute
        self.ironic = test.sdk(base.SYSTEM_ADMIN).baremetal
        self.servers = set(servers)
        self.samples = []
        self.stopped = threading.Event()

    def run(self):
        while not self.stopped.is_set():
            self.samples.append(self.toggling())
            self.stopped.wait(0.1)

    def toggling(self):
        found = self.nova.get('/servers/detail?all_tenants=True',
                              microversion='2.61').json()['servers']
        resizing = {s['id'] for s in found if s['id'] in self.servers and (
            s['OS-EXT-STS:task_state'] or s['status'] == 'VERIFY_RESIZE')}
        nodes = self.ironic.get('/nodes?fields=instance_uuid,'
                                'provision_state',
                                microversion='1.87').json()['nodes']
        servicing = {n['instance_uuid'] for n in nodes
                     if n['instance_uuid'] in self.servers
                     and n['provision_state'].startswith('servic')}
        return len(resizing | servicing)


class TestFleet(test_resize.VirtualToggleTestCase):
    def boot(self):
        """A config type with three values; two bare-metal servers and two
        virtual ones of flavors asking for <type>=on, and one bare-metal
        server on bm-2, which is not capable."""
        for node in self.free_nodes('bm-0', 'bm-1', 'bm-2'):
            self.wait_schedulable(node)     # an earlier server has left
        config_type, made = self.new_pair()
        made['max'] = self.openstack(
            'baremetal', 'deploy', 'template', 'create', '--config',
            '%s=max' % config_type, '--bios-setting', 'FnToggle=max',
            '--requires-trait', 'HW_CPU_HYPERTHREADING')
        self.addCleanup(self.forget_template, made['max']['name'])
        for template in made.values():
            self.openstack('baremetal', 'node', 'deploy-config', 'sync',
                           template['name'])
            self.tag_host(template['name'])
        flavors = {'bm': self.create_baremetal_flavor(),
                   'virt': self.unique_name('fn-virt')}
        self.openstack('flavor', 'create', '--vcpus', '1', '--ram', '64',
                       '--disk', '1', flavors['virt'])
        self.addCleanup(self.delete_flavors_of, flavors['virt'])
        for flavor in flavors.values():
            self.openstack('flavor', 'deploy-config', 'set', flavor,
                           '%s=on' % config_type)
        servers = {}
        for name, flavor in (('a', 'bm'), ('b', 'bm'), ('v1', 'virt'),
                             ('v2', 'virt')):
            servers[name] = self.create_server(flavors[flavor])
        servers['c'] = self.create_server(base.BAREMETAL_FLAVOR)
        self.assertEqual('bm-2', self.node_of(servers['c']['id']))
        return config_type, flavors, servers

    def delete_flavors_of(self, name):
        """The flavor, and those the toggles derived from it."""
        for flavor in self.openstack('flavor', 'list', '--all'):
            if flavor['Name'].split('+')[0] == name:
                self.openstack('flavor', 'delete', flavor['ID'], parse=False,
                               fail_ok=True)

    def node_of(self, server_id):
        return self.node(self.server_details(server_id)[
            'OS-EXT-SRV-ATTR:hypervisor_hostname'])['name']

    def roll(self, *args, fail_ok=False):
        return self.openstack('server', 'deploy-config', 'set', *args,
                              fail_ok=fail_ok)

    def resizes(self, server_id):
        """How many resizes nova recorded for the server."""
        return [e['Action'] for e in self.openstack(
            'server', 'event', 'list', server_id)].count('resize')

    def test_a_rollout_bounded_resumable_and_read_back(self):
        config_type, flavors, servers = self.boot()
        ids = {n: s['id'] for n, s in servers.items()}
        nodes = {n: self.node_of(ids[n]) for n in ('a', 'b')}

        # a mixed fleet, at most two at once, one server incapable
        untouched = self.bios('bm-2')['FnToggle']
        sampler = Sampler(self, ids.values())
        sampler.start()
        done = self.openstack(
            'server', 'deploy-config', 'set', *ids.values(),
            '--deploy-config', '%s=off' % config_type, '--max-unavailable',
            '2', fail_ok=True)
        sampler.stopped.set()
        sampler.join()
        self.assertEqual(0, done.returncode, done.stderr)
        outcomes = {r['Server']: r['Outcome'] for r in json.loads(
            done.stdout)}
        names = {s['name']: n for n, s in servers.items()}
        self.assertEqual(
            {'a': 'toggled', 'b': 'toggled', 'v1': 'toggled',
             'v2': 'toggled'},
            {names[s]: o for s, o in outcomes.items() if names[s] != 'c'})
        self.assertRegex(outcomes[servers['c']['name']],
                         r'^skipped: .* node bm-2 lacks ')
        self.assertLessEqual(max(sampler.samples), 2, sampler.samples)
        said = [int(n) for n in IN_FLIGHT.findall(done.stderr)]
        self.assertEqual(2, max(said), done.stderr)
        for name in ('a', 'b'):
            self.assertEqual('off', self.bios(nodes[name])['FnToggle'])
        self.assertEqual(untouched, self.bios('bm-2')['FnToggle'])

        # a flavor change, rolled out to the servers of that flavor
        self.openstack('flavor', 'deploy-config', 'set', flavors['bm'],
                       '%s=max' % config_type)
        outdated = {r['Server'] for r in self.openstack(
            'server', 'deploy-config', 'list', '--all-projects',
            '--outdated')}
        self.assertLessEqual({servers['a']['name'], servers['b']['name']},
                             outdated)
        rolled = self.roll('--flavor', flavors['bm'], '--all-projects',
                           '--max-unavailable', '2')
        self.assertEqual({servers['a']['name']: 'toggled',
                          servers['b']['name']: 'toggled'},
                         {r['Server']: r['Outcome'] for r in rolled})
        for name in ('a', 'b'):
            self.assertEqual('max', self.bios(nodes[name])['FnToggle'])

        # killed half-way, rerun: done, and no server resized twice
        argv, env = self.openstack_argv(
            'server', 'deploy-config', 'set', '--flavor', flavors['virt'],
            '--all-projects')
        killed = subprocess.Popen(argv, env=env, text=True,
                                  stderr=subprocess.PIPE,
                                  stdout=subprocess.DEVNULL)
        for line in killed.stderr:
            if ': started: ' in line:
                time.sleep(1)
                break
        killed.send_signal(signal.SIGKILL)
        killed.wait()
        rerun = self.roll('--flavor', flavors['virt'], '--all-projects')
        self.assertLessEqual({r['Outcome'] for r in rerun},
                             {'toggled', 'unchanged'}, rerun)
        for name in ('v1', 'v2'):
            self.assertEqual(2, self.resizes(ids[name]))
            self.assertEqual(flavors['virt'], self.openstack(
                'server', 'show', ids[name])['flavor']['original_name'])

        # a failure stops new starts, and leaves the server running
        first = min((servers['a'], servers['b']), key=lambda s: s['name'])
        other = ({servers['a']['id'], servers['b']['id']}
                 - {first['id']}).pop()
        node = self.node_of(first['id'])
        self.addCleanup(self.openstack, 'baremetal', 'node', 'maintenance',
                        'unset', node, parse=False, cloud=base.SYSTEM_ADMIN,
                        fail_ok=True)
        with self.bios_that(node, 'fails_steps', 'fan failure'):
            failed = self.roll(first['id'], other, '--deploy-config',
                               '%s=on' % config_type, fail_ok=True)
        self.assertEqual(1, failed.returncode)
        self.assertTrue(failed.stderr.strip().splitlines()[-1].startswith(
            '1 server(s) failed: %s: Servicing node %s failed: '
            % (first['name'], node)), failed.stderr)
        rows = {r['Server']: r['Outcome'] for r in json.loads(
            failed.stdout)}
        self.assertRegex(rows[first['name']], '^failed: Servicing node')
        self.assertEqual('not started', [o for s, o in rows.items()
                                         if s != first['name']][0])
        shown = self.node(node)
        self.assertEqual(('active', True, 'max'), (
            shown['provision_state'], shown['maintenance'],
            self.bios(node)['FnToggle']))
        self.assertEqual('ACTIVE', self.server_details(first['id'])['status'])
