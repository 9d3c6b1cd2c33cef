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

"""A toggle in every state: the states it refuses, the lock that holds the
server while ironic services its node, the steps it does not know, a
member's request, a stopped server's rebuild, and a toggle killed at each
point of its path, then run again."""

import json
import time

from tests.functional import base
from tests.functional import faults
from tests.functional import test_resize


class TestBaremetalStates(test_resize.BaremetalToggleTestCase):
    def setUp(self):
        super().setUp()
        if not self.servicing:
            self.skipTest('ironic %s has no servicing (API 1.87)'
                          % self.ironic_max)

    def settled(self, server, status):
        """The server is in ``status`` with no task under way."""
        found = self.server_details(server['id'])
        return found['status'] == status and not found[
            'OS-EXT-STS:task_state']

    def when_stopped(self, server, run):
        """What ``run()`` gives once the server is SHUTOFF with no task.
        Nova's power sync may stop it once more, from a node power state
        it cached before the stop ("Instance is not stopped. Calling the
        stop API"): whatever ran meanwhile is refused as powering off,
        changing nothing, and runs again."""
        def ran():
            if not self.settled(server, 'SHUTOFF'):
                return None
            result = run()
            return None if 'powering-off' in result.stderr else result

        return self.wait_for('a run on the stopped server', ran,
                             interval=0.25)

    def actions(self, server):
        """nova's instance actions of the server, oldest first."""
        return list(reversed(self.openstack('server', 'event', 'list',
                                            server['id'])))

    def test_the_lock_the_unknown_step_and_the_stopped_server(self):
        config_type, server, node = self.deployed()

        # nova's lock and unlock bracket the node's servicing
        done = self.toggle(server['id'], '%s=off' % config_type)
        self.assertIn('node %s serviced' % node, done)
        events = [(e['Action'], e['Start Time']) for e in self.actions(
            server)]
        self.assertEqual(['create', 'lock', 'unlock'],
                         [a for a, _ in events])
        (serviced_at,) = [s['updated_at'] for s in self.sdk(
            base.SYSTEM_ADMIN).baremetal.get(
            '/nodes/%s/bios' % node,
            microversion=self.ironic_api).json()['bios']
            if s['name'] == 'FnToggle']
        self.assertLessEqual(events[1][1][:19], serviced_at[:19])
        self.assertLessEqual(serviced_at[:19], events[2][1][:19])
        self.assertFalse(self.server_details(server['id'])['locked'])

        # a step no table knows is refused before anything is sent
        unknown = self.openstack(
            'baremetal', 'deploy', 'template', 'create', '--config',
            '%s=fans' % config_type, '--steps', json.dumps([{
                'interface': 'vendor', 'step': 'fn_tune_fans', 'args': {},
                'priority': 100}]), '--no-requires-trait')
        self.addCleanup(self.forget_template, unknown['name'])
        before = self.cloud_state()
        refused = self.toggle(server['id'], '%s=fans' % config_type,
                              fail_ok=True)
        self.assertEqual(
            ['Server %s cannot take %s=fans while it runs: '
             'vendor.fn_tune_fans is not known to be safe on a running '
             'server (it may destroy its data). Nothing was changed; if you '
             'know it is safe there, allow it: --allow-step '
             'vendor.fn_tune_fans' % (server['name'], config_type)],
            refused.stderr.splitlines())
        self.assertEqual(before, self.cloud_state())

        # a stopped server: refused, its node not serviced; its rebuild
        # ends when nova's does, stopped, with the command to run after
        self.addCleanup(self.power_on, node)    # for the node's next server
        self.openstack('server', 'stop', server['id'], parse=False)
        refused = self.when_stopped(server, lambda: self.toggle(
            server['id'], '%s=on' % config_type, fail_ok=True))
        self.assertEqual(
            ['Server %s is SHUTOFF: a toggle starts only on an ACTIVE '
             'server. Nothing was changed; start it (openstack server start '
             '%s), then rerun.' % (server['name'], server['id'])],
            refused.stderr.splitlines())
        self.assertEqual('off', self.bios(node)['FnToggle'])
        rebuilt = self.when_stopped(server, lambda: self.openstack(
            'server', 'rebuild', '--image', base.IMAGE, '--wait',
            server['id'], parse=False, fail_ok=True))
        self.assertEqual(1, rebuilt.returncode, rebuilt.stderr)
        self.assertEqual(
            "Server %s was rebuilt and is SHUTOFF, as it was: it runs its "
            "flavor's deploy configs, and %s=off cannot be applied again to "
            "a stopped server (a toggle needs it ACTIVE). Once it runs "
            "(openstack server start %s): openstack server resize "
            "--deploy-config %s=off %s" % (
                server['name'], config_type, server['id'], config_type,
                server['id']), rebuilt.stderr.strip().splitlines()[-1])
        self.assertEqual(('SHUTOFF', 'on'), (
            self.server_details(server['id'])['status'],
            self.bios(node)['FnToggle']))

    def test_a_timed_out_toggle_and_a_late_failure_finish_on_a_rerun(self):
        config_type, server, node = self.deployed()
        toggle = ('server', 'resize', '--deploy-config')

        # the BIOS takes 3 s: the toggle ends at its 1 s timeout, ironic
        # goes on, and a rerun finishes and records it
        with self.bios_that(node, 'slow_steps', '3'):
            started = time.monotonic()
            timed_out = self.openstack(
                *toggle, '%s=off' % config_type, '--wait-timeout', '1',
                server['id'], parse=False, fail_ok=True)
            self.assertLess(time.monotonic() - started, 60)
            self.assertEqual(1, timed_out.returncode)
            self.assertIn('(--wait-timeout)', timed_out.stderr)
            self.assertFalse(self.server_details(server['id'])['locked'])
            self.openstack(*toggle, '%s=off' % config_type, server['id'],
                           parse=False)
        self.assertEqual(('off', {config_type: 'off'}), (
            self.bios(node)['FnToggle'], self.recorded(node, server)))

        # the servicing fails after the toggle gave up: ironic leaves the
        # node in "service failed" and in maintenance; a rerun recovers it
        with self.bios_that(node, 'slow_steps', '2'), \
                self.bios_that(node, 'fails_steps', 'fan controller'):
            self.openstack(*toggle, '%s=on' % config_type, '--wait-timeout',
                           '1', server['id'], parse=False, fail_ok=True)
            self.wait_for('the servicing of %s to fail' % node, lambda: (
                self.node(node)['provision_state'] == 'service failed'))
            recovered = self.openstack(*toggle, '%s=on' % config_type,
                                       server['id'], parse=False,
                                       fail_ok=True)
        self.addCleanup(self.maintenance_unset, node)
        self.assertEqual(1, recovered.returncode)
        self.assertEqual(1, len(recovered.stderr.splitlines()),
                         recovered.stderr)
        self.assertIn('Ironic returned the node to active and server %s '
                      'runs on' % server['name'], recovered.stderr)
        found = self.node(node)
        self.assertEqual(('active', True, 'off', {config_type: 'off'}), (
            found['provision_state'], found['maintenance'],
            self.bios(node)['FnToggle'], self.recorded(node, server)))
        self.assertNotIn('deploy_config_pending', found['properties'])
        self.assertRegex(found['maintenance_reason'], (
            r'^osc-deploy-config: servicing failed: .*fan controller'))
        self.assertFalse(self.server_details(server['id'])['locked'])

    def maintenance_unset(self, node):
        self.sdk(base.SYSTEM_ADMIN).baremetal.delete(
            '/nodes/%s/maintenance' % node, microversion=self.ironic_api)

    def killed_and_rerun(self, server, node, config, held):
        """A toggle to ``config`` run through proxies in front of ironic
        and nova, killed once ``held(service, method, path, body)`` holds a
        request, then run again through them: how many service requests
        reached ironic in all."""
        seen = []

        def holding(service):
            def fault(method, path, body):
                if not seen and held(service, method, path, body):
                    seen.append(path)
                    return faults.HANG
                return None
            return fault

        with faults.FaultProxy(self.endpoint('baremetal'),
                               holding('ironic')) as ironic, \
                faults.FaultProxy(self.endpoint('compute'),
                                  holding('nova')) as nova:
            clouds = self.clouds_with(
                'faulty', base.ADMIN,
                baremetal_endpoint_override=ironic.url,
                compute_endpoint_override=nova.url + '/v2.1')
            argv, env = self.openstack_argv(
                'server', 'resize', '--deploy-config', config, server['id'],
                cloud='faulty', parse=False, clouds_yaml=clouds)
            self.killed_when(argv, env, lambda: bool(seen))
            self.openstack('server', 'resize', '--deploy-config', config,
                           server['id'], cloud='faulty', parse=False,
                           clouds_yaml=clouds)
            return ironic.count('PUT', '/states/provision', forwarded=True)

    def test_a_toggle_killed_anywhere_services_once_and_unlocks(self):
        config_type, server, node = self.deployed()
        uuid = self.node(node)['uuid']
        node_path = '/v1/nodes/%s' % uuid
        polls = []

        def after_the_lock(service, method, path, body):
            return method == 'PATCH' and path == node_path

        def after_the_pending_record(service, method, path, body):
            return method == 'PUT' and path.endswith('/states/provision')

        def a_poll(service, method, path):
            """A poll of the node's servicing (counted)."""
            if service == 'ironic' and method == 'GET' and path.startswith(
                    node_path + '?'):
                polls.append(path)
                return True
            return False

        def after_the_service_request(service, method, path, body):
            return a_poll(service, method, path)

        def while_servicing(service, method, path, body):
            # the BIOS takes 3 s: the third poll finds it servicing
            return a_poll(service, method, path) and len(polls) >= 3

        def before_the_unlock(service, method, path, body):
            return service == 'nova' and b'"unlock"' in body

        value = 'on'
        for point in (after_the_lock, after_the_pending_record,
                      after_the_service_request, while_servicing,
                      before_the_unlock):
            value = 'off' if value == 'on' else 'on'
            del polls[:]
            slow = '3' if point is while_servicing else '0'
            with self.bios_that(node, 'slow_steps', slow):
                serviced = self.killed_and_rerun(
                    server, node, '%s=%s' % (config_type, value), point)
            self.assertEqual(
                (1, value, {config_type: value}, False),
                (serviced, self.bios(node)['FnToggle'],
                 self.recorded(node, server),
                 self.server_details(server['id'])['locked']),
                point.__name__)
            self.assertNotIn('deploy_config_pending',
                             self.node(node)['properties'])


class TestVirtualStates(test_resize.VirtualToggleTestCase):
    def test_a_private_flavors_server_toggles_onto_a_private_one(self):
        config_type, made = self.new_pair()
        self.tag_host(made['on']['name'])
        private = self.unique_name('fn-private')
        project = self.sdk(base.ADMIN).current_project_id
        self.openstack('flavor', 'create', '--vcpus', '1', '--ram', '64',
                       '--disk', '1', '--private', '--project', project,
                       private)
        self.addCleanup(self.forget_flavors, private)    # and the derived
        target = '%s+%s=on' % (private, config_type)
        server = self.create_server(private)
        self.toggle(server['id'], '%s=on' % config_type, '--auto-confirm')
        shown = self.openstack('flavor', 'show', target)
        self.assertEqual((False, [project]), (
            shown['os-flavor-access:is_public'], [
                a['tenant_id'] for a in self.sdk(base.ADMIN).compute.get(
                    '/flavors/%s/os-flavor-access' % shown['id']).json()[
                    'flavor_access']]))
        self.assertEqual(target, self.server_flavor(server['id'])[
            'original_name'])
