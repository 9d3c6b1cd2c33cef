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
cloud: bounded by an availability budget that counts the servers already
down, every server reported, read back, and killed at random points and
run again until it gets there."""

import collections
import json
import os
import random
import re
import subprocess
import threading
import time

from testtools import content

from tests.functional import base
from tests.functional import faults
from tests.functional import test_resize

IN_FLIGHT = re.compile(r'(\d+) in flight')
_NODE_PATH = re.compile(r'/nodes/([0-9a-f-]{36})/states/provision')
_SERVER_PATH = re.compile(r'/servers/([0-9a-f-]{36})/action')


class Sampler(threading.Thread):
    """Samples, every 0.1 s, the servers of a rollout that are down: not
    ACTIVE or busy (resizing, VERIFY_RESIZE), or on a node that is not
    active or in maintenance."""

    def __init__(self, test, servers):
        super().__init__(daemon=True)
        self.nova = test.sdk(base.ADMIN).compute
        self.ironic = test.sdk(base.SYSTEM_ADMIN).baremetal
        self.servers = set(servers)
        self.samples = []
        self.stopped = threading.Event()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stopped.set()
        self.join()

    def run(self):
        while not self.stopped.is_set():
            self.samples.append(self.down())
            self.stopped.wait(0.1)

    def down(self):
        found = self.nova.get('/servers/detail?all_tenants=True',
                              microversion='2.73').json()['servers']
        down = {s['id'] for s in found if s['id'] in self.servers and (
            s['status'] != 'ACTIVE' or s['OS-EXT-STS:task_state'])}
        nodes = self.ironic.get('/nodes?fields=instance_uuid,'
                                'provision_state,maintenance',
                                microversion='1.87').json()['nodes']
        down |= {n['instance_uuid'] for n in nodes
                 if n['instance_uuid'] in self.servers and (
                     n['maintenance'] or n['provision_state'] != 'active')}
        return len(down)


class FleetTestCase(test_resize.VirtualToggleTestCase):
    def boot(self):
        """A config type with three values; two bare-metal servers (a, b)
        and two virtual ones (v1, v2) of flavors asking for <type>=on, and
        one bare-metal server on bm-2, which is not capable (c)."""
        for node in self.free_nodes('bm-0', 'bm-1', 'bm-2'):
            self.wait_schedulable(node)     # an earlier server has left
        config_type, made = self.new_pair()
        made['max'] = self.openstack(
            'baremetal', 'deploy', 'template', 'create', '--config',
            '%s=max' % config_type, '--bios-setting', 'FnToggle=max',
            '--requires-trait', 'HW_CPU_HYPERTHREADING')
        self.addCleanup(self.forget_template, made['max']['name'])
        self.openstack('baremetal', 'node', 'deploy-config', 'sync',
                       *[t['name'] for t in made.values()])
        for template in made.values():
            self.tag_host(template['name'])
        flavors = {'bm': self.create_baremetal_flavor(),
                   'virt': self.create_flavor(self.unique_name('fn-virt'),
                                              1, 64, 1)}
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

    def node_of(self, server_id):
        return self.node(self.server_details(server_id)[
            'OS-EXT-SRV-ATTR:hypervisor_hostname'])['name']

    def roll(self, *args, clouds_yaml=None):
        """The rollout, run; (exit status, {server ID: outcome}, stderr)."""
        done = self.openstack('server', 'deploy-config', 'set', *args,
                              fail_ok=True, clouds_yaml=clouds_yaml,
                              cloud='faulty' if clouds_yaml else base.ADMIN)
        rows = json.loads(done.stdout) if done.stdout else []
        return (done.returncode, {r['ID']: r['Outcome'] for r in rows},
                done.stderr)

    def maintenance(self, node, on):
        ironic = self.sdk(base.SYSTEM_ADMIN).baremetal
        path = '/nodes/%s/maintenance' % node
        if on:
            ironic.put(path, json={'reason': 'fan check'},
                       microversion=self.ironic_api)
            self.addCleanup(self.maintenance, node, False)
        else:
            ironic.delete(path, microversion=self.ironic_api)


class TestFleet(FleetTestCase):
    """One fleet (its boot is most of the cost): a rollout within a budget
    that counts what is down, then one killed at seeded random points and
    run again until it gets there."""

    KILLS = 5
    BUDGET = 2

    def test_a_rollout_within_its_budget_then_killed_anywhere(self):
        config_type, flavors, servers = self.boot()
        self.check_budget(config_type, flavors, servers)
        self.check_killed_anywhere(config_type, {
            n: servers[n] for n in ('a', 'b', 'v1', 'v2')})

    def check_budget(self, config_type, flavors, servers):
        ids = {n: s['id'] for n, s in servers.items()}
        nodes = {n: self.node_of(ids[n]) for n in ('a', 'b')}

        # a mixed fleet, at most two down at once, one server incapable
        untouched = self.bios('bm-2')['FnToggle']
        with Sampler(self, ids.values()) as sampler:
            status, rows, said = self.roll(
                *ids.values(), '--deploy-config', '%s=off' % config_type,
                '--max-unavailable', '2')
        self.assertEqual(0, status, said)
        self.assertEqual({ids[n]: 'done' for n in ('a', 'b', 'v1', 'v2')},
                         {i: o for i, o in rows.items() if i != ids['c']})
        self.assertRegex(rows[ids['c']], r'^skipped: .* node bm-2 lacks ')
        self.assertLessEqual(max(sampler.samples), 2, sampler.samples)
        self.assertEqual(2, max(int(n) for n in IN_FLIGHT.findall(said)))
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

        # another operator puts a's node in maintenance: it spends a
        # budget of 1, and nothing starts
        self.maintenance(nodes['a'], True)
        flavor_rollout = ('--flavor', flavors['bm'], '--all-projects')
        status, rows, said = self.roll(*flavor_rollout)
        self.assertEqual(1, status)
        self.assertEqual({ids['a']: 'unavailable: node %s in maintenance'
                          % nodes['a']}, {ids['a']: rows[ids['a']]})
        self.assertTrue(rows[ids['b']].startswith('not started'), rows)
        self.assertIn('--max-unavailable 1 is spent before any server '
                      'starts, by %s' % servers['a']['name'], said)
        self.assertEqual('off', self.bios(nodes['b'])['FnToggle'])
        # a budget of 2 leaves room for b: toggled, a still unavailable
        status, rows, said = self.roll(*flavor_rollout,
                                       '--max-unavailable', '2')
        self.assertEqual((1, 'done'), (status, rows[ids['b']]), said)
        self.assertTrue(rows[ids['a']].startswith('unavailable'), rows)
        self.assertEqual('max', self.bios(nodes['b'])['FnToggle'])
        # back from maintenance, a rerun does the rest
        self.maintenance(nodes['a'], False)
        status, rows, said = self.roll(*flavor_rollout)
        self.assertEqual((0, 'done', 'unchanged'), (
            status, rows[ids['a']], rows[ids['b']]), said)
        self.assertEqual('max', self.bios(nodes['a'])['FnToggle'])

        # an HTTP error in one server's toggle: a counted failure, every
        # server in the table
        refused = self.node(nodes['a'])['uuid']

        def refusal(method, path, body):
            return 400 if method == 'PUT' and refused in path else None

        with faults.FaultProxy(self.endpoint('baremetal'),
                               refusal) as proxy:
            status, rows, said = self.roll(
                ids['a'], ids['b'], '--deploy-config', '%s=off' % config_type,
                '--max-unavailable', '2', '--max-failures', '1',
                clouds_yaml=self.through_proxy(proxy, 'baremetal',
                                               like=base.ADMIN))
        self.assertEqual(1, status)
        self.assertRegex(rows[ids['a']], '^failed: 400 ')
        self.assertEqual('done', rows[ids['b']])
        self.assertTrue(said.strip().splitlines()[-1].startswith(
            '1 of 2 server(s) do not run the configs: %s: failed: 400'
            % servers['a']['name']), said)
        self.assertEqual(('max', False), (
            self.bios(nodes['a'])['FnToggle'],
            self.server_details(ids['a'])['locked']))

    def check_killed_anywhere(self, config_type, servers):
        """A rollout to ``on`` killed at seeded random points, then run
        again until it gets there; every server needs a change."""
        seed = int(os.environ.get('FN_CHAOS_SEED') or time.time())
        self.addDetail('seed', content.text_content(str(seed)))
        chance = random.Random(seed)  # noqa: S311 - kill points, not keys
        ids = [s['id'] for s in servers.values()]
        nodes = [self.node_of(servers[n]['id']) for n in ('a', 'b')]
        for node in nodes:      # a servicing lasts: a kill may find one
            self.slow_bios(node)
        point, writes = {}, collections.Counter()

        def count(method, path, body):
            """Hold every request from the run's point on (it is killed
            there); count the service and resize requests passed on."""
            if point.get('held') or (point and point['writes'] >= point['at']
                                     and (method != 'GET' or point['after'])):
                point['held'] = True
                return faults.HANG
            if point and method != 'GET':
                point['writes'] += 1
            found = _NODE_PATH.search(path) or _SERVER_PATH.search(path)
            if found and (b'"service"' in body or b'"resize"' in body):
                writes[found.group(1)] += 1
            return None

        with faults.FaultProxy(self.endpoint('baremetal'), count) as ironic, \
                faults.FaultProxy(self.endpoint('compute'), count) as nova, \
                Sampler(self, ids) as sampler:
            clouds = self.clouds_with(
                'faulty', base.ADMIN,
                baremetal_endpoint_override=ironic.url,
                compute_endpoint_override=nova.url + '/v2.1')
            argv, env = self.openstack_argv(
                'server', 'deploy-config', 'set', *ids, '--deploy-config',
                '%s=on' % config_type, '--max-unavailable',
                str(self.BUDGET), parse=False, cloud='faulty',
                clouds_yaml=clouds)
            runs = []
            while len(runs) < self.KILLS + 6 and runs[-1:] != [0]:
                point.clear()
                if len(runs) < self.KILLS:
                    # before the run's 1st to 3rd write, or just after it
                    point.update(at=chance.randint(0, 2), writes=0,
                                 after=chance.random() < 0.5)
                runs.append(self.run_killed_at(
                    argv, env, lambda: point.get('held')))
        self.assertEqual(0, runs[-1], runs)
        self.assertGreaterEqual(runs.count('killed'), self.KILLS, runs)
        self.assertLessEqual(max(sampler.samples), self.BUDGET,
                             sampler.samples)
        self.assertEqual({}, {i: n for i, n in writes.items() if n > 1})
        self.assertEqual(['on', 'on'],
                         [self.bios(n)['FnToggle'] for n in nodes])
        self.assertEqual(
            {'v1': 'on', 'v2': 'on'},
            {n: self.server_details(servers[n]['id'])['flavor'][
                'extra_specs'].get('deploy-config:%s' % config_type)
             for n in ('v1', 'v2')})
        self.assertEqual([], [i for i in ids if self.server_details(i)[
            'locked']])

    def slow_bios(self, node):
        """The node's fake BIOS takes a second over its settings."""
        ironic = self.sdk(base.SYSTEM_ADMIN).baremetal
        key = '/extra/minicloud_bios_slow_steps'
        ironic.patch('/nodes/%s' % node, microversion=self.ironic_api, json=[
            {'op': 'add', 'path': key, 'value': '1'}])
        self.addCleanup(ironic.patch, '/nodes/%s' % node,
                        microversion=self.ironic_api,
                        json=[{'op': 'remove', 'path': key}])

    def run_killed_at(self, argv, env, reached=None):
        """Run the rollout as a process; SIGKILL it once ``reached()``
        (when given, and before it ends): its exit status, or 'killed'."""
        process = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        try:
            self.wait_for('the rollout to end or reach its point', lambda: (
                process.poll() is not None or (reached and reached())),
                timeout=300, interval=0.05)
        finally:
            killed = process.poll() is None
            if killed:
                process.kill()
            out, err = process.communicate()
            self._commands.append('$ %s (%s)\n%s%s' % (
                ' '.join(argv), 'killed' if killed else
                'exit %d' % process.returncode, out, err))
        return 'killed' if killed else process.returncode
