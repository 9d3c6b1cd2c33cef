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

"""Faults: a service down, transient 503s, a command killed half-way."""

import datetime
import json
import re
import time

from tests.functional import base
from tests.functional import faults
from tests.functional import test_resize


class FaultTestCase(test_resize.VirtualToggleTestCase):
    def stop(self, service):
        """Stop one mini cloud service; started again at clean-up."""
        self.minicloud('stop', service)
        self.addCleanup(self.minicloud, 'start', service)

    def assert_one_line(self, done, pattern):
        self.assertNotEqual(0, done.returncode, done.stdout)
        lines = done.stderr.strip().splitlines()
        self.assertEqual(1, len(lines), done.stderr)
        self.assertNotIn('Traceback', done.stderr)
        self.assertRegex(lines[0], pattern)


class TestServiceDown(FaultTestCase):
    def check_down(self, root, name, commands, cloud=base.ADMIN):
        for args in commands:
            done = self.openstack(*args, cloud=cloud, parse=False,
                                  fail_ok=True)
            self.assert_one_line(done, r'Cannot reach the %s at %s: '
                                 '(connection refused|its version discovery '
                                 'failed)' % (
                                     re.escape(name), re.escape(root)))

    def test_ironic_down(self):
        config, template = self.new_config()
        root = self.endpoint_root('baremetal')
        before = self.cloud_state()
        self.stop('ironic')
        self.check_down(root, 'baremetal service (ironic)', [
            ('baremetal', 'deploy', 'template', 'list'),
            ('baremetal', 'deploy', 'template', 'show', template['name']),
            ('baremetal', 'deploy', 'template', 'create', '--config',
             'fndown=x', '--bios-setting', 'A=1'),
            ('baremetal', 'deploy', 'template', 'delete', template['name']),
            ('baremetal', 'node', 'deploy-config', 'list'),
            ('baremetal', 'node', 'deploy-config', 'sync'),
            ('flavor', 'deploy-config', 'show', base.BAREMETAL_FLAVOR),
            ('flavor', 'deploy-config', 'set', base.VIRTUAL_FLAVOR, config),
        ])
        self.minicloud('start', 'ironic')
        self.assertEqual(before, self.cloud_state())

    def test_nova_api_down(self):
        config, _ = self.new_config()
        server = self.create_server(base.VIRTUAL_FLAVOR)
        root = self.endpoint_root('compute')
        before = self.cloud_state()
        self.stop('nova-api')
        self.check_down(root, 'compute service (nova)', [
            ('flavor', 'deploy-config', 'list'),
            ('flavor', 'deploy-config', 'show', base.BAREMETAL_FLAVOR),
            ('flavor', 'deploy-config', 'set', base.VIRTUAL_FLAVOR, config),
            ('flavor', 'deploy-config', 'unset', base.VIRTUAL_FLAVOR,
             'hyperthreading'),
            ('server', 'resize', '--deploy-config', config, server['id']),
        ])
        self.minicloud('start', 'nova-api')
        self.assertEqual(before, self.cloud_state())

    def test_placement_down(self):
        config_type, made = self.new_pair()
        self.tag_host(made['on']['name'])
        server = self.create_server(base.VIRTUAL_FLAVOR)
        root = self.endpoint_root('placement')
        before = self.cloud_state()
        self.stop('placement')
        self.check_down(root, 'placement service', [
            ('server', 'resize', '--deploy-config', '%s=on' % config_type,
             server['id']),
        ])
        self.minicloud('start', 'placement')
        self.assertEqual(before, self.cloud_state())

    def test_keystone_down(self):
        root = self.endpoint_root('identity')
        self.stop('keystone')
        for args in (('baremetal', 'deploy', 'template', 'list'),
                     ('flavor', 'deploy-config', 'list')):
            done = self.openstack(*args, parse=False, fail_ok=True)
            # OSC authenticates before any plugin code runs: its error
            # names keystone's URL, after keystoneauth's discovery warning
            self.assertNotEqual(0, done.returncode)
            self.assertNotIn('Traceback', done.stderr)
            lines = done.stderr.strip().splitlines()
            self.assertLessEqual(len(lines), 2, done.stderr)
            self.assertRegex(lines[-1], 'Unable to establish connection to '
                             '%s/v3/auth/tokens' % re.escape(root))


class TestRetries(FaultTestCase):
    def test_transient_503_on_a_read_is_retried(self):
        _, template = self.new_config()
        answers = iter([503, 503])

        def fault(method, path, body):
            if method == 'GET' and '/deploy_templates' in path:
                return next(answers, None)
            return None

        with faults.FaultProxy(self.endpoint('baremetal'), fault) as proxy:
            found = self.openstack(
                'baremetal', 'deploy', 'template', 'list', cloud='faulty',
                clouds_yaml=self.through_proxy(proxy, 'baremetal'))
            self.assertEqual(3, proxy.count('GET', '/deploy_templates'))
        self.assertIn(template['name'], [t['name'] for t in found])

    def through_nova(self, fault, *args):
        """The command ``args``, as the admin, with nova behind a fault
        proxy: (its result, the proxy)."""
        with faults.FaultProxy(self.endpoint('compute'), fault) as proxy:
            done = self.openstack(
                *args, cloud='faulty', parse=False, fail_ok=True,
                clouds_yaml=self.through_proxy(proxy, 'compute',
                                               like=base.ADMIN, path='/v2.1'))
        return done, proxy

    def test_lasting_503_is_one_line_after_the_retries(self):
        done, proxy = self.through_nova(lambda method, path, body: 503,
                                        'flavor', 'deploy-config', 'list')
        self.assertEqual(3, proxy.count('GET', '/flavors'))
        self.assert_one_line(done, r'The compute service \(nova\) at '
                             r'\S+ failed to answer /v2.1/flavors/detail: '
                             r'503 .*\(after 2 retries\)')
        # the proxy's URL, not nova's
        self.assertNotIn(self.endpoint_root('compute'), done.stderr)

    def test_a_retry_after_past_what_is_left_ends_the_read_at_once(self):
        """A load balancer's 503 with Retry-After: 300 holds nothing: the
        read ends at once, in one line that says what it asked."""
        done, proxy = self.through_nova(
            lambda method, path, body: faults.RetryAfter(503, 300),
            'flavor', 'deploy-config', 'list')
        self.assertEqual(1, proxy.count('GET', '/flavors'))
        self.assert_one_line(done, r'The compute service \(nova\) at '
                             r'\S+ failed to answer /v2.1/flavors/detail: '
                             r'503 .*\(it asks for another in 300 s, longer '
                             r'than the read timeout \(60 s\)\)$')

    def test_a_body_that_trickles_ends_within_the_request_timeout(self):
        """Each byte within the read timeout, the whole answer not: the
        command ends at the connect and read timeouts together."""
        done, proxy = self.through_nova(
            lambda method, path, body: faults.TRICKLE if method == 'GET' and (
                '/servers' in path) else None,
            '--os-deploy-config-request-seconds', '1,3', 'server',
            'deploy-config', 'show', 'fn-trickled')
        self.assertEqual(1, proxy.count('GET', '/servers'))
        self.assert_one_line(done, r'The compute service \(nova\) at \S+ '
                             r'did not answer GET /v2.1/servers\S*: it '
                             r'timed out giving its whole answer within 4 s '
                             r'\(deploy_config_request_seconds\)$')

    def test_a_silent_keystone_at_renewal_ends_a_rollout_in_one_line(self):
        """Every token the proxy passes expires in 123 s: beyond
        keystoneauth's margin (120 s), within ours (120 s and the 4 s a
        request may last); keystone is silent from the third request on
        (OSC's token, the session's, then its renewal): the rollout ends
        within its request bound, in one line naming keystone."""
        server = self.create_server(base.VIRTUAL_FLAVOR)
        tokens = []

        def fault(method, path, body):
            if method != 'POST' or not path.endswith('/auth/tokens'):
                return None
            tokens.append(path)
            return faults.Rewrite(expiring_soon) if len(tokens) < 3 else (
                faults.HANG)

        with faults.FaultProxy(self.endpoint_root('identity'),
                               fault) as proxy:
            started = time.monotonic()
            done = self.openstack(
                '--os-deploy-config-request-seconds', '1,3', 'server',
                'deploy-config', 'set', server['id'], '--deploy-config',
                'hyperthreading=disabled', '--wait-timeout', '20',
                cloud='faulty', parse=False, fail_ok=True,
                clouds_yaml=self.through_keystone(proxy))
            took = time.monotonic() - started
            # OSC's token, the session's; then at least one renewal
            self.assertLessEqual(3, proxy.count('POST', '/auth/tokens'))
        self.assertLess(took, 20, done.stderr)
        # where the renewal was cut: planning's row, or the one line
        self.assert_one_line(done, r'The identity service \(keystone\) at '
                             r'%s did not answer POST /v3/auth/tokens: it '
                             r'timed out answering within 3 s '
                             r'\(deploy_config_request_seconds\)$'
                             % re.escape(proxy.url))

    def through_keystone(self, proxy):
        """A clouds.yaml whose cloud "faulty", the admin's, authenticates
        through a ``faults.FaultProxy``."""
        import yaml

        with open(self.clouds_yaml) as f:
            auth = yaml.safe_load(f)['clouds'][base.ADMIN]['auth']
        return self.clouds_with('faulty', base.ADMIN, auth=dict(
            auth, auth_url=proxy.url + '/v3'))


def expiring_soon(body):
    """A token of keystone's (its JSON), made to expire in 123 s."""
    token = json.loads(body)
    token['token']['expires_at'] = (
        datetime.datetime.now(datetime.timezone.utc) +
        datetime.timedelta(seconds=123)).strftime(
            '%Y-%m-%dT%H:%M:%S.000000Z')
    return json.dumps(token).encode()


class TestInterrupted(FaultTestCase):
    def test_sync_killed_half_way_completes_on_rerun(self):
        config, template = self.new_config(base.ADMIN, '--no-requires-trait')
        name = template['name']
        capable = [row['Node'] for row in self.openstack(
            'baremetal', 'node', 'deploy-config', 'list', '--config', config)
            if row['Capable']]
        self.assertGreaterEqual(len(capable), 3)
        before = {n['name']: set(n['traits']) for n in self.openstack(
            'baremetal', 'node', 'list', '--fields', 'name', 'traits',
            cloud=base.SYSTEM_ADMIN)}
        writes = []

        def fault(method, path, body):
            if method == 'PUT' and '/traits/' in path:
                writes.append(path)
                return faults.HANG if len(writes) == 3 else None
            return None

        with faults.FaultProxy(self.endpoint('baremetal'), fault) as proxy:
            argv, env = self.openstack_argv(
                'baremetal', 'node', 'deploy-config', 'sync', name,
                cloud='faulty', parse=False,
                clouds_yaml=self.through_proxy(proxy, 'baremetal'))
            self.killed_when(argv, env, lambda: len(writes) >= 3)

        def tagged():
            return sorted(n['name'] for n in self.openstack(
                'baremetal', 'node', 'list', '--fields', 'name', 'traits',
                cloud=base.SYSTEM_ADMIN) if name in n['traits'])

        self.assertEqual(2, len(tagged()))
        rows = self.openstack('baremetal', 'node', 'deploy-config', 'sync',
                              name)
        self.assertEqual(len(capable) - 2,
                         sum(r['Action'] == 'added' for r in rows))
        self.assertEqual(sorted(capable), tagged())
        after = {n['name']: set(n['traits']) - {name} for n in self.openstack(
            'baremetal', 'node', 'list', '--fields', 'name', 'traits',
            cloud=base.SYSTEM_ADMIN)}
        self.assertEqual(before, after)   # nothing else changed

    def check_toggle_killed_at(self, held):
        """Kill a toggle at the first request matching ``held``, rerun it:
        the server ends on the one target flavor, nothing left over."""
        config_type, made, server, target = self.server_to_toggle('on')
        flavors_before = self.flavors()
        seen = []

        def fault(method, path, body):
            if held(method, path, body):
                seen.append(path)
                return faults.HANG
            return None

        with faults.FaultProxy(self.endpoint('compute'), fault) as proxy:
            argv, env = self.openstack_argv(
                'server', 'resize', '--deploy-config', '%s=on' % config_type,
                '--auto-confirm', server['id'], cloud='faulty', parse=False,
                clouds_yaml=self.through_proxy(proxy, 'compute',
                                               like=base.ADMIN,
                                               path='/v2.1'))
            self.killed_when(argv, env, lambda: bool(seen))

        done = self.toggle(server['id'], '%s=on' % config_type,
                           '--auto-confirm')
        self.assertIn('ACTIVE on flavor %s' % target, done)
        shown = self.openstack('server', 'show', server['id'])
        self.assertEqual('ACTIVE', shown['status'])
        self.assertEqual(target, shown['flavor']['original_name'])
        self.assertEqual({'deploy-config:%s' % config_type: 'on',
                          'trait:%s' % made['on']['name']: 'required'},
                         shown['flavor']['extra_specs'])
        self.assertEqual(sorted(flavors_before + [target]), self.flavors())

    def test_toggle_killed_before_the_flavor_has_its_specs(self):
        self.check_toggle_killed_at(
            lambda method, path, body: method == 'POST'
            and 'extra_specs' in path)

    def test_toggle_killed_before_the_resize_is_confirmed(self):
        self.check_toggle_killed_at(
            lambda method, path, body: method == 'POST' and '/servers/' in path
            and '/action' in path and self.confirming(path))

    def confirming(self, path):
        """Whether the server behind this action already awaits
        confirmation (the held action is then the confirm)."""
        server_id = path.split('/servers/')[1].split('/')[0]
        return self.sdk(base.ADMIN).compute.get(
            '/servers/%s' % server_id).json()['server']['status'] == \
            'VERIFY_RESIZE'
