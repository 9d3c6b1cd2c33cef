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
import contextlib
import json
import os
import random
import re
import subprocess
import threading
import time

from testtools import content

from osc_deploy_config.use_cases.fleet import drive
from tests.functional import base
from tests.functional import faults
from tests.functional import test_resize

IN_FLIGHT = re.compile(r'(\d+) in flight')
DOWN = re.compile(r'(\d+) down\]')
_NODE = re.compile(r'/nodes/([0-9a-f-]{36})')
_NODES = re.compile(r'/nodes(/detail)?(\?|$)')
_SERVER_PATH = re.compile(r'/servers/([0-9a-f-]{36})/action')


class Sampler(threading.Thread):
    """Samples, every 0.1 s, the servers of a rollout that are down: not
    ACTIVE or busy (resizing, VERIFY_RESIZE), or on a node that is not
    active or in maintenance.  A sample that fails fails the test, at the
    end of the ``with``: no sample may go missing."""

    def __init__(self, test, servers):
        super().__init__(daemon=True)
        self.nova = test.sdk(base.ADMIN).compute
        self.ironic = test.sdk(base.SYSTEM_ADMIN).baremetal
        self.servers = set(servers)
        self.samples = []
        self.error = None
        self.stopped = threading.Event()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stopped.set()
        self.join(timeout=120)
        if exc[0] is None and (self.error or self.is_alive()):
            raise AssertionError('the budget sampler failed after %d '
                                 'samples: %r' % (len(self.samples),
                                                  self.error or 'hung'))

    def run(self):
        try:
            while not self.stopped.is_set():
                self.samples.append(len(self.down()))
                self.stopped.wait(0.1)
        except Exception as exc:    # noqa: BLE001 - the test's to fail
            self.error = exc

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
        return down


class FleetTestCase(test_resize.VirtualToggleTestCase):
    def setUp(self):
        super().setUp()
        self.slowed = set()

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

    def still(self, server_id, node):
        """Whether nothing a killed run left goes on by itself: no task of
        nova's, no confirmation under way (nova confirms after it
        answers), no servicing."""
        server = self.server_details(server_id)
        if server['OS-EXT-STS:task_state']:
            return False
        if server['status'] == 'VERIFY_RESIZE':
            (last, *_) = self.openstack('server', 'event', 'list',
                                        server_id)
            return last['Action'] != 'confirmResize'
        return node is None or self.node(node)['provision_state'] in (
            'active', 'service failed')

    def maintenance(self, node, on):
        ironic = self.sdk(base.SYSTEM_ADMIN).baremetal
        path = '/nodes/%s/maintenance' % node
        if on:
            ironic.put(path, json={'reason': 'fan check'},
                       microversion=self.ironic_api)
            self.addCleanup(self.maintenance, node, False)
        else:
            ironic.delete(path, microversion=self.ironic_api)


class TestSilentServices(FleetTestCase):
    """Nova and ironic accept requests and never answer them, at each
    place a rollout reads: it ends within --wait-timeout and its grace
    every time, each server in a row, exit 1.  One small fleet (a
    bare-metal server and a virtual one) for every case; short
    timeouts."""

    WAIT = 20           # --wait-timeout
    REQUEST = '2'       # deploy_config_request_seconds

    def test_silent_services_at_every_read_end_the_rollout_in_time(self):
        config_type, servers = self.boot_two()
        ids = [s['id'] for s in servers.values()]
        node = self.node(self.node_of(servers['a']['id']))['uuid']
        silent = {}

        def fault(service):
            def answer(method, path, body):
                when = silent.get(service)
                found = when and when(method, path, body)
                return faults.HANG if found is True else found or None
            return answer

        with faults.FaultProxy(self.endpoint('baremetal'),
                               fault('ironic')) as ironic, \
                faults.FaultProxy(self.endpoint('compute'),
                                  fault('nova')) as nova:
            clouds = self.clouds_with(
                'faulty', base.ADMIN, baremetal_endpoint_override=ironic.url,
                compute_endpoint_override=nova.url + '/v2.1',
                deploy_config_request_seconds=self.REQUEST)
            target = ('--deploy-config', '%s=off' % config_type,
                      '--max-unavailable', '2', '--wait-timeout',
                      str(self.WAIT))

            # planning: ironic silent (its templates, its nodes)
            silent['ironic'] = lambda method, path, body: True
            rows, said = self.rolled_in_time(ids, target, clouds)
            self.assertEqual({'not started'}, {
                r.split(':')[0] for r in rows.values()}, said)
            self.assertIn('planning failed: ', list(rows.values())[0])
            self.assertIn('baremetal service (ironic)', said)
            silent.clear()

            # planning: nova silent once the servers are selected (the
            # flavors of the virtual servers)
            silent['nova'] = lambda method, path, body: (
                path.startswith('/v2.1/flavors'))
            rows, said = self.rolled_in_time(ids, target, clouds)
            self.assertRegex(list(rows.values())[0], (
                r'^not started: planning failed: The compute service \(nova\)'
                r' at http://127.0.0.1:\d+ did not answer GET /v2.1/flavors/'
                r'detail\S*: it timed out answering within 2 s '
                r'\(deploy_config_request_seconds\)$'))

            # the budget: nova's listings silent after the selection's
            listings = []

            def budget(method, path, body):
                if method == 'GET' and path.startswith(
                        '/v2.1/servers/detail'):
                    listings.append(path)
                    return len(listings) > 1
                return False

            silent['nova'] = budget
            rows, said = self.rolled_in_time(ids, target, clouds)
            self.assertEqual({'not started: --wait-timeout reached'},
                             set(rows.values()), said)
            self.assertIn('The cloud could not be read for the budget', said)

            # the budget: a load balancer's 503 and Retry-After: 300 holds
            # no read past --wait-timeout
            del listings[:]
            silent['nova'] = lambda method, path, body: budget(
                method, path, body) and faults.RetryAfter(503, 300)
            rows, said = self.rolled_in_time(ids, target, clouds)
            self.assertEqual({'not started'}, {
                r.split(':')[0] for r in rows.values()}, said)
            self.assertIn('it asks for another in 300 s, past the time left',
                          said)

            # a worker's poll: ironic's of the node once it is serviced
            # (alone, or through a listing of the nodes while the other
            # toggle is in flight), nova's of the server once it is resized
            asked = set()

            def polls(method, path, body):
                if method == 'PUT' and b'"service"' in body:
                    asked.add('ironic')
                if method == 'POST' and b'"resize"' in body:
                    asked.add('nova')
                return method == 'GET' and (
                    ('ironic' in asked and path.startswith((
                        '/v1/nodes/%s?' % node, '/v1/nodes?'))) or (
                        'nova' in asked and path.startswith(
                            '/v2.1/servers/%s' % servers['v']['id'])
                        and 'os-instance-actions' not in path))

            silent['nova'] = silent['ironic'] = polls
            rows, said = self.rolled_in_time(ids, target, clouds)
            self.assertEqual({'ironic', 'nova'}, asked)
            for outcome in rows.values():
                self.assertRegex(outcome, r'^failed: The (baremetal|compute)'
                                 r' service .* did not answer GET .*: it '
                                 r'timed out answering within 2 s', said)
            silent.clear()
            self.wait_for('the fleet to be still', lambda: all(
                self.still(i, self.node_of(i) if i == servers['a']['id']
                           else None) for i in ids))

            # the read-back: nova's listings silent once both are unlocked
            unlocked = []

            def read_back(method, path, body):
                if method == 'POST' and b'"unlock"' in body:
                    unlocked.append(path)
                return len(unlocked) >= 2 and method == 'GET' and (
                    path.startswith('/v2.1/servers/detail'))

            silent['nova'] = read_back
            rows, said = self.rolled_in_time(ids, target, clouds)
            for outcome in rows.values():
                self.assertRegex(outcome, r'^not read back: The compute '
                                 r'service \(nova\) at \S+ did not answer '
                                 r'GET /v2.1/servers/detail', said)
        # what the silent services left, a rerun finishes
        status, rows, said = self.roll(*ids, *target)
        self.assertEqual((0, {'unchanged'}), (status, set(rows.values())),
                         said)
        self.assertEqual([], [i for i in ids
                              if self.server_details(i)['locked']])

    def boot_two(self):
        """A config type; a bare-metal server (a) and a virtual one (v) of
        flavors asking for <type>=on, their hosts tagged for both."""
        for node in self.free_nodes('bm-0', 'bm-1'):
            self.wait_schedulable(node)
        config_type, made = self.new_pair()
        self.openstack('baremetal', 'node', 'deploy-config', 'sync',
                       *[t['name'] for t in made.values()])
        for template in made.values():
            self.tag_host(template['name'])
        servers = {}
        for name, flavor in (('a', self.create_baremetal_flavor()), (
                'v', self.create_flavor(self.unique_name('fn-virt'), 1, 64,
                                        1))):
            self.openstack('flavor', 'deploy-config', 'set', flavor,
                           '%s=on' % config_type)
            servers[name] = self.create_server(flavor)
        return config_type, servers

    def rolled_in_time(self, ids, target, clouds):
        """The rollout, as a process, through the silent services: it ends
        within --wait-timeout and its grace, with a row per server and
        exit 1; ({server ID: outcome}, what it said)."""
        started = time.monotonic()
        done = self.openstack('server', 'deploy-config', 'set', *ids,
                              *target, cloud='faulty', clouds_yaml=clouds,
                              fail_ok=True, process=True)
        took = time.monotonic() - started
        self.assertLess(took, self.WAIT + drive.GRACE_SECONDS, done.stderr)
        rows = {r['ID']: r['Outcome'] for r in json.loads(
            done.stdout or '[]')}
        self.assertEqual((1, sorted(ids)), (done.returncode, sorted(rows)),
                         done.stderr)
        self.assertNotIn('Traceback', done.stderr)
        return rows, done.stderr


class TestFleet(FleetTestCase):
    """One fleet (its boot is most of the cost): a rollout within a budget
    that counts what is down, then one killed at seeded random points and
    run again until it gets there."""

    # seeded kill points in CI: of the servers' own writes, and of a
    # failed servicing's recovery (each of its points once)
    KILLS = 7
    RECOVERY_KILLS = 3
    BUDGET = 2

    def test_a_rollout_within_its_budget_then_killed_anywhere(self):
        config_type, flavors, servers = self.boot()
        self.check_budget(config_type, flavors, servers)
        self.check_timeout(config_type, flavors, servers)
        seed = int(os.environ.get('FN_CHAOS_SEED') or time.time())
        self.addDetail('seed', content.text_content(str(seed)))
        chance = random.Random(seed)  # noqa: S311 - kill points, not keys
        chaos, runs = self.check_killed_anywhere(config_type, {
            n: servers[n] for n in ('a', 'b', 'v1', 'v2')}, chance)
        recovered = self.check_recovery_killed_anywhere(
            config_type, servers['a']['id'], chance)
        self.report_chaos(seed, chaos, runs, recovered)

    def check_budget(self, config_type, flavors, servers):
        ids = {n: s['id'] for n, s in servers.items()}
        nodes = {n: self.node_of(ids[n]) for n in ('a', 'b')}

        # a mixed fleet, at most two down at once, one server incapable;
        # its node goes into maintenance once two toggles have started:
        # down, it spends the budget from then on (each start is sampled
        # at its first change, a resize or a service request, as a lock
        # may come ahead of a place: the servers down then, itself
        # included, never more than the budget)
        untouched = self.bios('bm-2')['FnToggle']
        sampler, at_start = Sampler(self, ids.values()), []
        of_node = {self.node(nodes[n])['uuid']: ids[n] for n in ('a', 'b')}

        def sample(server_id):
            at_start.append(len(sampler.down() | {server_id}))
            if len(at_start) == 2:
                self.maintenance('bm-2', True)

        def at_resize(method, path, body):
            found = _SERVER_PATH.search(path)
            if found and b'"resize"' in body:
                sample(found.group(1))
            return None

        def at_service(method, path, body):
            found = _NODE.search(path)
            if method == 'PUT' and found and b'"service"' in body:
                sample(of_node[found.group(1)])
            return None

        with faults.FaultProxy(self.endpoint('compute'), at_resize) as nova, \
                faults.FaultProxy(self.endpoint('baremetal'),
                                  at_service) as ironic:
            status, rows, said = self.roll(
                *ids.values(), '--deploy-config', '%s=off' % config_type,
                '--max-unavailable', '2', clouds_yaml=self.through_proxy(
                    nova, 'compute', like=base.ADMIN, path='/v2.1',
                    baremetal_endpoint_override=ironic.url))
        self.maintenance('bm-2', False)
        self.assertEqual(0, status, said)
        self.assertEqual(1, max(int(n) for n in DOWN.findall(said)), said)
        self.assertEqual(4, len(at_start), at_start)
        self.assertLessEqual(max(at_start), 2, at_start)
        self.assertEqual(2, max(int(n) for n in IN_FLIGHT.findall(said)))
        self.assertEqual({ids[n]: 'done' for n in ('a', 'b', 'v1', 'v2')},
                         {i: o for i, o in rows.items() if i != ids['c']})
        self.assertRegex(rows[ids['c']], r'^skipped: .* node bm-2 lacks ')
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

    def check_timeout(self, config_type, flavors, servers):
        """Three virtual servers, a budget of 2 and --wait-timeout 1: the
        resize requests are held at a proxy until two are there and the
        second is past (planning may take it all on a busy machine: then
        nothing starts); the rollout ends by itself, every row printed, no
        lock left, and a rerun without the timeout gets there."""
        ids = [servers[n]['id'] for n in ('v1', 'v2')] + [
            self.create_server(flavors['virt'])['id']]
        release, held = threading.Event(), []

        def hold(method, path, body):
            if b'"resize"' in body:
                held.append(path)
                return release
            return None

        target = ('--deploy-config', '%s=max' % config_type)
        with faults.FaultProxy(self.endpoint('compute'), hold) as nova:
            started = time.monotonic()
            with self.meanwhile(lambda: (len(held) == 2 and (
                    time.monotonic() > started + 1.5)) or (
                    time.monotonic() > started + 30), release.set):
                status, rows, said = self.roll(
                    *ids, *target, '--max-unavailable', '2',
                    '--wait-timeout', '1', clouds_yaml=self.through_proxy(
                        nova, 'compute', like=base.ADMIN, path='/v2.1'))
        self.assertEqual((1, 3), (status, len(rows)), said)
        for outcome in rows.values():
            self.assertRegex(outcome, r'^(failed: .*\(--wait-timeout\)|'
                             r'not started: --wait-timeout reached)$')
        self.assertIn('not started: --wait-timeout reached', rows.values())
        self.wait_for('the held resizes to end', lambda: all(
            not self.server_details(i)['OS-EXT-STS:task_state']
            for i in ids))
        self.assertEqual([], [i for i in ids
                              if self.server_details(i)['locked']])
        status, rows, said = self.roll(*ids, *target,
                                       '--max-unavailable', '2')
        self.assertEqual(0, status, said)
        for server_id in ids:
            found = self.server_details(server_id)
            self.assertEqual(('ACTIVE', False, 'max'), (
                found['status'], found['locked'], found['flavor'][
                    'extra_specs'].get('deploy-config:%s' % config_type)))

    def check_recovery_killed_anywhere(self, config_type, server_id,
                                       chance):
        """A servicing that fails, its recovery killed at seeded points
        (after the node's maintenance is lifted, after the abort, before
        the hold), each reached; then a rerun: the node held in
        maintenance with the line, never serviced twice.  The points
        reached, in order."""
        kills = int(os.environ.get('FN_CHAOS_RECOVERY_KILLS')
                    or self.RECOVERY_KILLS)
        order = list(RecoveryChaos.POINTS)
        chance.shuffle(order)
        order += [chance.choice(RecoveryChaos.POINTS)
                  for _ in range(kills - len(order))]
        node = self.node_of(server_id)
        uuid = self.node(node)['uuid']
        target = 'off' if self.bios(node)['FnToggle'] == 'on' else 'on'
        reached = []
        with self.bios_that(node, 'fails_steps', 'fan controller'):
            for point in order[:kills]:
                chaos = RecoveryChaos(uuid)
                with faults.FaultProxy(self.endpoint('baremetal'),
                                       chaos.fault) as ironic:
                    argv, env = self.openstack_argv(
                        'server', 'deploy-config', 'set', server_id,
                        '--deploy-config', '%s=%s' % (config_type, target),
                        parse=False, cloud='faulty',
                        clouds_yaml=self.clouds_with(
                            'faulty', base.ADMIN,
                            baremetal_endpoint_override=ironic.url))
                    chaos.aim(point)
                    self.assertEqual('killed', self.run_killed_at(
                        argv, env, chaos.is_held), point)
                    reached.append(point)
                    chaos.aim(None)
                    done = subprocess.run(argv, env=env, text=True,
                                          capture_output=True)
                self._commands.append('$ %s (rerun, exit %d)\n%s%s' % (
                    ' '.join(argv), done.returncode, done.stdout,
                    done.stderr))
                self.assertEqual(1, done.returncode, done.stderr)
                self.assertIn('is held in maintenance: an earlier servicing '
                              'of it by a toggle failed, and its recovery '
                              'was interrupted', done.stderr)
                self.assertEqual(1, chaos.services, point)
                found = self.node(node)
                self.assertEqual((True, False), (
                    found['maintenance'],
                    self.server_details(server_id)['locked']))
                self.assertTrue(found['maintenance_reason'].startswith(
                    'osc-deploy-config: '), found['maintenance_reason'])
                self.checked_and_released(node)
        return reached

    def checked_and_released(self, node):
        """The operator's part once the hardware is checked: the node out
        of maintenance and back to active, its pending record gone."""
        ironic = self.sdk(base.SYSTEM_ADMIN).baremetal
        path = '/nodes/%s' % node
        ironic.delete(path + '/maintenance', microversion=self.ironic_api)
        if self.node(node)['provision_state'] == 'service failed':
            ironic.put(path + '/states/provision', json={'target': 'abort'},
                       microversion=self.ironic_api)
        self.wait_for('node %s active' % node, lambda: (
            self.node(node)['provision_state'] == 'active'
            and not self.node(node)['reservation']))
        ironic.patch(path, microversion=self.ironic_api, json=[
            {'op': 'remove', 'path': '/properties/deploy_config_pending'}])

    def check_killed_anywhere(self, config_type, servers, chance):
        """Rollouts killed at seeded points of each server's own writes
        (after its lock, pending record, service request or resize, during
        its servicing, after its confirmation, before its unlock), each
        point reached; a round ends when every server got there, and the
        next goes back; then a last run gets there.  Meanwhile the other
        reads meet seeded weather (``Chaos.STORMS``): 503s with a
        Retry-After, bodies that trickle.  A sampler holds the budget all
        along; the proxies count no node serviced and no server resized
        twice in a round, and no lock is left."""
        kills = int(os.environ.get('FN_CHAOS_KILLS') or self.KILLS)
        ids = {n: s['id'] for n, s in servers.items()}
        nodes = {n: self.node_of(ids[n]) for n in ('a', 'b')}
        for node in nodes.values():     # a servicing lasts: a poll sees it
            self.slow_bios(node)
        chaos = Chaos({self.node(nodes[n])['uuid']: ids[n] for n in nodes},
                      random.Random(chance.random()))  # noqa: S311
        chaos.names = {ids[n]: n for n in ids}
        with faults.FaultProxy(self.endpoint('baremetal'),
                               chaos.fault) as ironic, \
                faults.FaultProxy(self.endpoint('compute'),
                                  chaos.fault) as nova, \
                Sampler(self, ids.values()) as sampler:
            clouds = self.clouds_with(
                'faulty', base.ADMIN,
                baremetal_endpoint_override=ironic.url,
                compute_endpoint_override=nova.url + '/v2.1')

            def rollout(value):
                return self.openstack_argv(
                    'server', 'deploy-config', 'set', *ids.values(),
                    '--deploy-config', '%s=%s' % (config_type, value),
                    '--max-unavailable', str(self.BUDGET), parse=False,
                    cloud='faulty', clouds_yaml=clouds)

            value, runs = 'on', []
            while len(chaos.reached) < kills:
                self.wait_for('the fleet to be still', lambda: all(
                    self.still(ids[n], nodes.get(n)) for n in ids))
                points = sorted(
                    (ids[n], kind) for n in ids for kind in self.points(
                        config_type, ids[n], nodes.get(n), value))
                if not points:
                    # every server there: a run unkilled ends the round
                    # (and unlocks what the last kill left locked), the
                    # next round goes back
                    chaos.aim(None)
                    runs.append(self.run_killed_at(*rollout(value)))
                    self.assertEqual(0, runs[-1], runs)
                    value = 'off' if value == 'on' else 'on'
                    chaos.round += 1
                    continue
                chaos.left_locked = {i for i in ids.values()
                                     if self.server_details(i)['locked']}
                chaos.aim(chance.choice(points))
                self.assertEqual('killed', self.run_killed_at(
                    *rollout(value), chaos.is_held), chaos.at)
                chaos.reached.append(chaos.at)
            chaos.aim(None)
            runs.append(self.run_killed_at(*rollout(value)))
            while runs[-1] != 0 and len(runs) < kills + 4:
                runs.append(self.run_killed_at(*rollout(value)))
        self.assertEqual(0, runs[-1], runs)
        self.assertLessEqual(max(sampler.samples), self.BUDGET,
                             sampler.samples)
        self.assertEqual({}, {k: n for k, n in chaos.writes.items()
                              if n > 1})
        self.assertEqual([value, value],
                         [self.bios(n)['FnToggle'] for n in nodes.values()])
        self.assertEqual([value, value], [
            self.server_details(ids[n])['flavor']['extra_specs'].get(
                'deploy-config:%s' % config_type) for n in ('v1', 'v2')])
        self.assertEqual([], [i for i in ids.values()
                              if self.server_details(i)['locked']])
        return chaos, runs

    def points(self, config_type, server_id, node, value):
        """The kill points a run to ``value`` will reach among the
        server's own writes, from how the cloud shows it now (none for a
        server there already, even one a kill left locked: a run unkilled
        unlocks it)."""
        server = self.server_details(server_id)
        if node is None:
            there = server['flavor']['extra_specs'].get(
                'deploy-config:%s' % config_type) == value
            if server['status'] == 'ACTIVE' and not server[
                    'OS-EXT-STS:task_state']:
                return [] if there else ['lock', 'resize', 'confirm',
                                         'unlock']
            return ['lock', 'confirm', 'unlock']
        found = self.node(node)
        if 'deploy_config_pending' in found['properties'] or (
                found['provision_state'] != 'active'):
            return ['lock', 'unlock']
        if self.bios(node)['FnToggle'] == value:
            return []
        return ['lock', 'pending', 'service', 'servicing', 'unlock']

    def report_chaos(self, seed, chaos, runs, recovered):
        """The run's seed and points, for the chaos env's report."""
        text = 'seed %d: %d kill points reached over %d round(s) (%s), ' \
            'through %d read(s) answered 503 with Retry-After: 1 and %d ' \
            'whose body trickled; then %s; %d kill points of recovery ' \
            'reached (%s), each node held with its line, serviced once\n' % (
                seed, len(chaos.reached), chaos.round + 1,
                ', '.join('%s %s' % (chaos.names[s], k)
                          for s, k in chaos.reached), chaos.storms['503'],
                chaos.storms['trickle'], runs, len(recovered),
                ', '.join(recovered))
        self.addDetail('chaos', content.text_content(text))
        if os.environ.get('FN_CHAOS_REPORT'):
            with open(os.environ['FN_CHAOS_REPORT'], 'a') as f:
                f.write(text)

    def slow_bios(self, node, seconds=1):
        """The node's fake BIOS takes ``seconds`` over its settings (until
        the clean-up)."""
        ironic = self.sdk(base.SYSTEM_ADMIN).baremetal
        key = '/extra/minicloud_bios_slow_steps'
        found = ironic.patch('/nodes/%s' % node, microversion=self.ironic_api,
                             json=[{'op': 'add', 'path': key,
                                    'value': str(seconds)}])
        self.assertEqual(200, found.status_code, found.text)
        if node not in self.slowed:
            self.slowed.add(node)
            self.addCleanup(ironic.patch, '/nodes/%s' % node,
                            microversion=self.ironic_api,
                            json=[{'op': 'remove', 'path': key}])

    @contextlib.contextmanager
    def meanwhile(self, when, action):
        """Meanwhile, in a thread: ``action()`` once ``when()`` (polled
        every 0.1 s)."""
        stop = threading.Event()

        def watch():
            while not stop.is_set():
                if when():
                    action()
                    return
                stop.wait(0.1)

        thread = threading.Thread(target=watch, daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()

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


class Chaos:
    """Where a rollout is killed: after, or for ``unlock`` (the release
    of the run's own lock) and ``servicing`` (the first read of its node,
    or of a listing of the nodes, after its service request) before, one
    server's own write of a kind (``aim``);
    every request is held from there on, until the process is killed.
    Counts, per round, the service and resize requests passed on.
    ``servers``: {node UUID: the ID of the server on it}."""

    # the kinds of writes held themselves, not after they pass
    BEFORE = ('unlock', 'servicing')
    _ACTIONS = (('lock', b'"lock"'), ('unlock', b'"unlock"'),
                ('resize', b'"resize"'), ('confirm', b'"confirmResize"'))
    # the weather on the other reads: a share answered 503 with a
    # Retry-After (their retry passes), a share whose body trickles (10
    # KB/s), each within the run's bounds
    STORMS = (('503', 0.04, faults.RetryAfter(503, 1)),
              ('trickle', 0.04, faults.Trickle(512, 0.05)))

    def __init__(self, servers, weather):
        self.servers = servers
        self.weather = weather      # a random.Random of its own seed
        self.lock = threading.Lock()     # two proxies ask at once
        self.round = 0
        self.reached = []
        self.writes = collections.Counter()
        self.storms = collections.Counter()
        self.stormed = set()        # the paths whose retry passes
        self.at, self.state = None, {}
        self.names = {}             # server ID: its name in the test
        self.left_locked = set()    # servers a kill left locked, at aim

    def aim(self, at):
        self.at, self.state = at, {}

    def is_held(self):
        return self.state.get('held', False)

    def fault(self, method, path, body):
        with self.lock:
            return self._fault(method, path, body)

    def _fault(self, method, path, body):
        if self.state.get('held') or self.state.get('armed'):
            self.state['held'] = True
            return faults.HANG
        server, kind = self.classify(method, path, body)
        if kind == 'service':
            self.state.setdefault('serviced', set()).add(server)
        if kind == 'lock':
            self.state.setdefault('locked', set()).add(server)
        if kind == 'unlock' and server not in self.state.get('locked', ()):
            # a takeover's or a cleanup's unlock: not the toggle's release
            kind = None
        if kind == 'unlock' and server in self.left_locked and (
                server not in self.state.setdefault('owned', set())):
            # the fleet is the admin's own: its takeover of a dead lock
            # unlocks, then locks again (nova records no lock over a lock
            # of the same project); the toggle's release comes after
            self.state['owned'].add(server)
            kind = None
        if self.at == (server, kind):
            if kind in self.BEFORE:
                self.state['held'] = True
                return faults.HANG
            self.state['armed'] = True
        if kind in ('service', 'resize'):
            self.writes[(self.round, server, kind)] += 1
        if method == 'GET' and kind is None:
            return self.storm(path)
        return None

    def storm(self, path):
        """The weather's fault for a read, or None."""
        if path in self.stormed:
            self.stormed.discard(path)
            return None
        roll = self.weather.random()
        for name, share, fault in self.STORMS:
            if roll < share:
                self.storms[name] += 1
                if name == '503':
                    self.stormed.add(path)
                return fault
            roll -= share
        return None

    def classify(self, method, path, body):
        """(server ID, the kind of its write) of a request, or Nones."""
        found = _SERVER_PATH.search(path)
        if found and method == 'POST':
            return found.group(1), next(
                (k for k, key in self._ACTIONS if key in body), None)
        aimed = self.at and self.at[0]
        if method == 'GET' and _NODES.search(path) and (
                aimed in self.state.get('serviced', ())):
            # polls that share a listing of the nodes
            return aimed, 'servicing'
        found = _NODE.search(path)
        server = found and self.servers.get(found.group(1))
        if not server:
            return None, None
        if method == 'PATCH' and any(
                op['op'] == 'add' and op['path'].endswith(
                    'deploy_config_pending') for op in json.loads(body)):
            return server, 'pending'
        if method == 'PUT' and b'"service"' in body:
            return server, 'service'
        if method == 'GET' and server in self.state.get('serviced', ()):
            return server, 'servicing'
        return server, None


class RecoveryChaos:
    """Where a failed servicing's recovery of one node (its UUID) is
    killed: after its maintenance is lifted, after the abort, or at the
    hold (held itself); every request is held from there on.  Counts the
    service requests passed on."""

    POINTS = ('lifted', 'aborted', 'hold')

    def __init__(self, node):
        self.node = node
        self.services = 0
        self.lock = threading.Lock()
        self.aim(None)

    def aim(self, at):
        """Kill at ``at`` (None: nowhere), every request passed on till
        then."""
        self.at, self.armed, self.held = at, False, False

    def is_held(self):
        return self.held

    def fault(self, method, path, body):
        with self.lock:
            if self.held or self.armed:
                self.held = True
                return faults.HANG
            if self.node not in path:
                return None
            kind = None
            if path.endswith('/maintenance'):
                kind = {'DELETE': 'lifted', 'PUT': 'hold'}.get(method)
            elif method == 'PUT' and path.endswith('/states/provision'):
                if b'"service"' in body:
                    self.services += 1
                elif b'"abort"' in body:
                    kind = 'aborted'
            if kind and kind == self.at:
                if kind == 'hold':
                    self.held = True
                    return faults.HANG
                self.armed = True
            return None
