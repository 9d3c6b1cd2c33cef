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

"""Bounded by the clock, whatever the cloud does: every request's
timeouts, a rollout's reads within its deadline, its orderly leave, locks
no one can steal, and outcomes that say what the cloud shows."""

import datetime
import http.server
import json
import os
import re
import signal
import threading
import time
from unittest import mock

import fixtures
from keystoneauth1 import exceptions as ksa_exceptions
from openstack.baremetal.v1 import _proxy as baremetal_proxy
from osc_lib import exceptions
import testtools

from osc_deploy_config.domain.toggle import toggle_record
from osc_deploy_config.domain.toggle import toggle_states
from osc_deploy_config.services import clients
from osc_deploy_config.services import ironic
from osc_deploy_config.services import rest
from osc_deploy_config.services import versions
from osc_deploy_config.use_cases.toggle import claim as claims
from osc_deploy_config.use_cases.toggle import recovery
from tests.unit import fakes
from tests.unit import test_fleet
from tests.unit import test_rest
from tests.unit.fakes import OFF

SLEEP = time.sleep


def hanging(test, fake, when):
    """The fake's answers, but a request ``when(method, path)`` holds is
    never answered, until the test ends: what ends the wait for it is
    the command's own bound."""
    real = fake.handle
    released = threading.Event()
    test.addCleanup(released.set)

    def answer(path, method, **kwargs):
        if when(method, path):
            released.wait()
            raise ksa_exceptions.ConnectFailure('the test ended')
        return real(path, method, **kwargs)

    fake.proxy.request.side_effect = answer


class _SilentIronic(test_rest._FakeIronicHandler):
    """A loopback ironic that answers its version discovery, and accepts
    every other request and never answers it."""

    def do_GET(self):
        if self.discovered():
            return
        self.server.seen.append((self.command, self.path))
        self.server.released.wait(30)

    do_PUT = do_GET


class _TricklingIronic(test_rest._FakeIronicHandler):
    """A loopback ironic whose answers come a byte every 0.2 s (a body
    that never ends within a bound, each read within its timeout), or,
    ``server.stall``, whose body stops after its first byte; the
    budget's listing may be answered 503 with ``server.retry_after``."""

    def do_GET(self):
        if self.discovered():
            return
        self.server.seen.append((self.command, self.path))
        if self.server.retry_after is not None:
            self.send_response(503)
            self.send_header('Retry-After', self.server.retry_after)
            self.send_header('Content-Length', '0')
            self.end_headers()
            return
        data = b'{"deploy_templates": []}'
        self.send_response(200)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        for at, byte in enumerate(data):
            self.wfile.write(bytes([byte]))
            self.wfile.flush()
            if self.server.released.wait(30 if self.server.stall and at
                                         else 0.2):
                return


class _ListingIronic(test_rest._FakeIronicHandler):
    """A loopback ironic whose deploy template listing grows by one at
    each read."""

    def do_GET(self):
        if not self.discovered():
            self.answer(200, {'deploy_templates': [
                {'name': 'CUSTOM_T%d' % n, 'steps': []}
                for n in range(len(self.server.seen))]})


class _SilentKeystone(http.server.BaseHTTPRequestHandler):
    """A keystone that issues one token, which expires within a minute,
    then accepts every request and never answers."""

    def do_POST(self):
        self.server.seen.append((self.command, self.path))
        if len(self.server.seen) > 1:
            self.server.released.wait(30)
            return
        expires = datetime.datetime.now(datetime.timezone.utc) + (
            datetime.timedelta(seconds=60))
        data = json.dumps({'token': {
            'methods': ['password'], 'roles': [], 'catalog': [],
            'expires_at': expires.strftime('%Y-%m-%dT%H:%M:%S.000000Z'),
            'issued_at': '2026-12-04T00:00:00.000000Z',
            'user': {'id': 'u', 'name': 'u', 'domain': {
                'id': 'default', 'name': 'Default'}},
            'project': {'id': 'p', 'name': 'p', 'domain': {
                'id': 'default', 'name': 'Default'}}}}).encode()
        self.send_response(201)
        self.send_header('X-Subject-Token', 'token-1')
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST

    def log_message(self, *args):
        pass


def serve(test, handler):
    """A loopback server of ``handler`` for the test's time."""
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
    server.daemon_threads = True
    server.seen, server.released = [], threading.Event()
    server.stall, server.retry_after = False, None
    threading.Thread(target=server.serve_forever, daemon=True).start()
    test.addCleanup(server.server_close)
    test.addCleanup(server.shutdown)
    test.addCleanup(server.released.set)
    return server


class TestTimeouts(testtools.TestCase):
    def ironic_of(self, server, timeouts, **auth):
        import openstack

        conn = openstack.connect(
            load_yaml_config=False, load_envvars=False,
            baremetal_endpoint_override='http://127.0.0.1:%d/v1'
            % server.server_address[1], **(auth or {'auth_type': 'none'}))
        api = ironic.Ironic(conn.baremetal, versions.DEPLOY_TEMPLATES)
        api.timeouts = timeouts
        return api

    def test_a_body_that_trickles_ends_at_the_whole_answers_bound(self):
        server = serve(self, _TricklingIronic)
        api = self.ironic_of(server, rest.Timeouts(0.5, 1))
        started = time.monotonic()
        exc = self.assertRaises(exceptions.CommandError,
                                api.deploy_templates)
        self.assertLess(time.monotonic() - started, 3.5)
        self.assertEqual(
            'The baremetal service (ironic) at http://127.0.0.1:%d did not '
            'answer GET /v1/deploy_templates: it timed out giving its whole '
            'answer within 1.5 s (deploy_config_request_seconds)'
            % server.server_address[1], str(exc))
        self.assertEqual(1, len(server.seen))

    def test_a_body_that_stops_is_a_timeout_never_retried(self):
        server = serve(self, _TricklingIronic)
        server.stall = True
        api = self.ironic_of(server, rest.Timeouts(5, 0.5))
        exc = self.assertRaises(exceptions.CommandError,
                                api.deploy_templates)
        self.assertIn('it timed out answering within 0.5 s', str(exc))
        self.assertEqual(1, len(server.seen))

    def test_a_retry_after_past_the_bound_ends_the_read_at_once(self):
        server = serve(self, _TricklingIronic)
        server.retry_after = '300'
        api = self.ironic_of(server, rest.Timeouts(10, 60))
        slept = self.useFixture(fixtures.MockPatch('time.sleep')).mock
        with rest.bounded(time.monotonic() + 20):
            exc = self.assertRaises(exceptions.CommandError,
                                    api.deploy_templates)
        self.assertEqual([], slept.call_args_list)
        self.assertEqual(1, len(server.seen))
        self.assertTrue(str(exc).endswith(
            'failed to answer /v1/deploy_templates: 503 Service Unavailable '
            '(it asks for another in 300 s, past the time left)'), str(exc))
        # unbounded, a pause longer than a request may wait ends it too
        exc = self.assertRaises(exceptions.CommandError, api.deploy_templates)
        self.assertTrue(str(exc).endswith(
            '(it asks for another in 300 s, longer than the read timeout '
            '(60 s))'), str(exc))
        self.assertEqual(2, len(server.seen))
        # one it has time for is waited, and the read sent again
        server.retry_after = '3'
        self.assertRaises(exceptions.CommandError, api.deploy_templates)
        self.assertEqual([mock.call(3.0)] * 2, slept.call_args_list)
        self.assertEqual(5, len(server.seen))

    def test_a_silent_keystone_at_renewal_is_named(self):
        keystone = serve(self, _SilentKeystone)
        server = serve(self, _TricklingIronic)
        auth_url = 'http://127.0.0.1:%d/v3' % keystone.server_address[1]
        api = self.ironic_of(server, rest.Timeouts(0.5, 1), auth_type=(
            'v3password'), auth={'auth_url': auth_url, 'username': 'u',
                                 'password': 'p', 'project_name': 'p',
                                 'user_domain_id': 'default',
                                 'project_domain_id': 'default'})
        api.proxy.get_endpoint()    # as OSC authenticates, first
        self.assertEqual(1, len(keystone.seen))
        started = time.monotonic()
        exc = self.assertRaises(exceptions.CommandError,
                                api.deploy_templates)
        self.assertLess(time.monotonic() - started, 3.5)
        self.assertEqual(
            'The identity service (keystone) at %s did not issue a token '
            'within 1.5 s (deploy_config_request_seconds)'
            % auth_url[:-3], str(exc))
        self.assertEqual(2, len(keystone.seen))
        self.assertEqual([], server.seen)

    def test_a_silent_keystone_while_a_proxy_is_built_is_named(self):
        # the SDK's version discovery renews the token on its way: ours
        # first, under the request's bound
        import openstack

        keystone = serve(self, _SilentKeystone)
        server = serve(self, _TricklingIronic)
        auth_url = 'http://127.0.0.1:%d/v3' % keystone.server_address[1]
        conn = openstack.connect(
            load_yaml_config=False, load_envvars=False,
            baremetal_endpoint_override='http://127.0.0.1:%d/v1'
            % server.server_address[1], auth_type='v3password', auth={
                'auth_url': auth_url, 'username': 'u', 'password': 'p',
                'project_name': 'p', 'user_domain_id': 'default',
                'project_domain_id': 'default'})
        conn.session.get_token()    # as OSC authenticates, first
        started = time.monotonic()
        exc = self.assertRaises(exceptions.CommandError, clients.proxy_of,
                                conn, 'baremetal', rest.Timeouts(0.5, 1))
        self.assertLess(time.monotonic() - started, 3.5)
        self.assertEqual(
            'The identity service (keystone) at %s did not issue a token '
            'within 1.5 s (deploy_config_request_seconds)'
            % auth_url[:-3], str(exc))
        self.assertEqual([], server.seen)

    def test_no_read_is_served_from_the_sdks_cache(self):
        # ``cache:`` in clouds.yaml: each read reaches ironic
        import openstack
        from openstack import config

        server = serve(self, _ListingIronic)
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'clouds.yaml')
        with open(path, 'w') as f:
            json.dump({'cache': {'class': 'dogpile.cache.memory',
                                 'expiration_time': 3600, 'expiration': {
                                     'baremetal.deploy_templates': 3600}},
                       'clouds': {
                't': {'auth_type': 'none', 'baremetal_endpoint_override': (
                    'http://127.0.0.1:%d/v1' % server.server_address[1])}}},
                f)
        conn = openstack.connection.Connection(config=config.OpenStackConfig(
            config_files=[path], load_envvars=False).get_one('t'))
        self.assertTrue(conn.cache_enabled)
        api = ironic.Ironic(conn.baremetal, versions.DEPLOY_TEMPLATES)
        api.timeouts = rest.Timeouts(1, 1)
        self.assertEqual([0, 1, 2], [len(api.deploy_templates())
                                     for _ in range(3)])

    def silent_ironic(self, timeouts):
        server = serve(self, _SilentIronic)
        return self.ironic_of(server, timeouts), server

    def test_a_service_that_accepts_and_never_answers_is_one_line(self):
        api, server = self.silent_ironic(rest.Timeouts(1, 0.5))
        started = time.monotonic()
        exc = self.assertRaises(exceptions.CommandError,
                                api.deploy_templates)
        self.assertLess(time.monotonic() - started, 5)
        self.assertEqual(
            'The baremetal service (ironic) at http://127.0.0.1:%d did not '
            'answer GET /v1/deploy_templates: it timed out answering within '
            '0.5 s (deploy_config_request_seconds)'
            % server.server_address[1], str(exc))
        # a read that timed out is not sent again: it would only wait again
        self.assertEqual(1, len(server.seen))

    def test_a_read_waits_no_longer_than_the_commands_bound(self):
        api, server = self.silent_ironic(rest.Timeouts(10, 60))
        started = time.monotonic()
        with rest.bounded(started + 0.5):
            exc = self.assertRaises(exceptions.CommandError, api.nodes,
                                    ['uuid'])
        self.assertLess(time.monotonic() - started, 5)
        self.assertIn('did not answer GET /v1/nodes: it timed out answering '
                      'within 0.', str(exc))
        self.assertTrue(str(exc).endswith('(--wait-timeout reached)'),
                        str(exc))

    def test_no_read_starts_past_the_bound_and_a_write_is_not_cut(self):
        proxy = mock.create_autospec(baremetal_proxy.Proxy, instance=True)
        api = ironic.Ironic(proxy, versions.DEPLOY_TEMPLATES)
        with rest.bounded(time.monotonic() - 1, 'the grace ran out'):
            exc = self.assertRaises(rest.OutOfTime, api.nodes, ['uuid'])
            self.assertEqual('No time was left to ask the baremetal service '
                             '(ironic) GET /nodes: the grace ran out',
                             str(exc))
            self.assertEqual([], proxy.request.call_args_list)
            proxy.request.return_value = fakes.response(202)
            api.abort('n')
        self.assertEqual(tuple(rest.DEFAULT_TIMEOUTS),
                         proxy.request.call_args.kwargs['timeout'])
        # the bound is this thread's, and ends with the block
        self.assertIsNone(rest.current_bound())

    def test_the_bound_follows_the_reads_into_a_pool(self):
        until = time.monotonic() + 30
        with rest.bounded(until, 'the grace ran out'):
            self.assertEqual([(until, 'the grace ran out')] * 3,
                             rest.concurrently(lambda _: (
                                 rest.current_bound(), rest._bound.why),
                                 range(3), 2))
        # a read that fails leaves the pool at once, the others unwaited
        started, release = time.monotonic(), threading.Event()
        self.addCleanup(release.set)

        def read(item):
            if not item:
                release.wait(30)    # the first, still under way
            raise ValueError(item)

        exc = self.assertRaises(ValueError, rest.concurrently, read, [0, 1],
                                2)
        self.assertEqual('1', str(exc))
        self.assertLess(time.monotonic() - started, 5)
        # its readers are daemon threads: the process may exit meanwhile
        self.assertTrue(all(t.daemon for t in threading.enumerate()
                            if t.name == 'reader'))

    def test_the_setting_is_read_or_connect_and_read(self):
        self.assertEqual((10, 60), rest.parse_timeouts(None))
        self.assertEqual((5, 5), rest.parse_timeouts('5'))
        self.assertEqual((10, 90), rest.parse_timeouts(90))
        self.assertEqual((3, 30), rest.parse_timeouts('3,30'))
        for bad in ('0', 'soon', '1,2,3', '-1,5'):
            exc = self.assertRaises(exceptions.CommandError,
                                    rest.parse_timeouts, bad)
            self.assertIn('deploy_config_request_seconds', str(exc))


class TestTheCloudsSetting(fakes.TestCommand):
    def test_every_request_and_the_session_get_the_clouds_timeouts(self):
        self.cloud_settings['deploy_config_request_seconds'] = '2,7'
        manager = self.app.client_manager.deploy_config
        manager.nova().flavors()
        manager.ironic().nodes(['uuid'])
        for fake in (self.nova, self.ironic):
            self.assertEqual((2, 7),
                             fake.proxy.request.call_args.kwargs['timeout'])
        # what our wrappers do not send (a token, a version discovery)
        self.assertEqual(7, self.conn.session.timeout)

    def test_a_system_scoped_session_gets_them_too(self):
        self.conn.config.config['auth'] = {'project_name': 'admin'}
        self.conn.session._discovery_cache = {}
        connect = self.useFixture(fixtures.MockPatch(
            'openstack.connect', autospec=True)).mock
        clients.system_scoped(self.conn, rest.Timeouts(3, 9))
        self.assertEqual(9, connect.call_args.kwargs['api_timeout'])


class TestTakeover(fakes.TestCommand):
    """Two processes, a dead lock, one server: nova's lock order decides;
    no process unlocks what it did not lock."""

    def setUp(self):
        super().setUp()
        flavor = self.nova.add_flavor('m1.tiny', {})
        self.server = self.nova.add_server('web-1', flavor)
        self.api = self.app.client_manager.deploy_config.nova(
            versions.SERVER_LOCKS)
        # a killed toggle's lock
        self.api.lock(self.server['id'], toggle_states.lock_reason(
            [OFF], fakes.mine(fakes.gone_pid())))
        self.said = []

    def claim(self):
        return claims.Claim(self.api, self.api.find_server(
            self.server['id']), [OFF], self.said.append)

    def test_of_two_that_find_one_dead_lock_exactly_one_proceeds(self):
        first, second = self.claim(), self.claim()
        self.assertTrue(first.interrupted() and second.interrupted())
        # both have read the dead lock before either locks
        both_read = threading.Barrier(2, timeout=10)
        real = self.nova.handle
        gated = []

        def together(path, method, **kwargs):
            if 'lock' in (kwargs.get('json') or {}) and len(gated) < 2:
                gated.append(path)
                both_read.wait()
            return real(path, method, **kwargs)

        self.nova.proxy.request.side_effect = together
        took = {}

        def take(claim):
            try:
                claim.take()
                took[claim] = 'held'
            except toggle_states.Unavailable as exc:
                took[claim] = str(exc)

        threads = [threading.Thread(target=take, args=(c,))
                   for c in (first, second)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        held = [c for c, how in took.items() if how == 'held']
        self.assertEqual(1, len(held), took)
        (loser,) = {first, second} - set(held)
        self.assertIn('is being toggled by another command', took[loser])
        # no unlock (from another project): the takeovers locked over the
        # dead lock, and the loser left the winner's lock alone; the
        # owners' unlocks are each followed by a lock
        if not self.nova.locks_as_owner:
            self.assertNotIn('unlock', self.nova.locks(self.server))
        self.assertEqual('lock', self.nova.locks(self.server)[-1])
        self.assertTrue(self.nova.servers[self.server['id']]['locked'])
        held[0].release()
        self.assertEqual('unlock', self.nova.locks(self.server)[-1])
        self.assertFalse(self.nova.servers[self.server['id']]['locked'])

    def test_the_live_lock_of_a_clone_of_this_machine_is_left_alone(self):
        """Cloned from one image: same host name and machine ID, another
        boot, and alive; the toggle here gives up, nothing unlocked."""
        me = claims.me('n')
        clone = me._replace(pid=os.getpid(), boot=me.boot.partition('.')[0]
                            + '.c1044e00', nonce='c10e')
        self.api.lock(self.server['id'], toggle_states.lock_reason(
            [OFF], clone))
        before = list(self.nova.locks(self.server))
        claim = self.claim()
        self.assertFalse(claim.interrupted())
        exc = self.assertRaises(toggle_states.Unavailable, claim.refuse_held)
        self.assertIn('is being toggled by another command', str(exc))
        self.assertEqual(before, self.nova.locks(self.server))
        self.assertEqual(toggle_states.lock_reason([OFF], clone),
                         self.nova.servers[self.server['id']][
                             'locked_reason'])
        # and its lock is kept by a rollout's clearing of dead locks
        claim = self.claim()
        claim.clear_interrupted()
        self.assertEqual(before, self.nova.locks(self.server))

    def test_of_two_owners_that_find_one_dead_lock_exactly_one_proceeds(
            self):
        # nova ignores a lock of a locked server from its own project: the
        # takeovers unlock, and the first unlock decides
        self.nova.locks_as_owner = True
        self.test_of_two_that_find_one_dead_lock_exactly_one_proceeds()

    def test_a_takeover_locks_over_the_dead_lock(self):
        claim = self.claim()
        claim.take()
        self.assertEqual((['lock', 'lock'], True, claim.reason), (
            self.nova.locks(self.server), claim.took_over,
            self.nova.servers[self.server['id']]['locked_reason']))

    def test_a_lock_answer_lost_is_found_by_its_nonce(self):
        real = self.nova.handle

        def lost(path, method, **kwargs):
            answer = real(path, method, **kwargs)
            if 'lock' in (kwargs.get('json') or {}):
                raise ksa_exceptions.ConnectTimeout('Request timed out')
            return answer

        self.nova.proxy.request.side_effect = lost
        claim = self.claim()
        claim.take()
        self.assertTrue(claim.held)
        self.nova.proxy.request.side_effect = real
        self.assertTrue(claim.let_go())
        self.assertFalse(self.nova.servers[self.server['id']]['locked'])

    def test_a_lock_answer_lost_and_not_found_is_said_left(self):
        real = self.nova.handle

        def lost(path, method, **kwargs):
            if 'lock' in (kwargs.get('json') or {}):
                real(path, method, **kwargs)
                # someone locked after it: whose lock holds is not known
                real(path, method, microversion='2.73',
                     json={'lock': {'locked_reason': 'RMA'}})
                raise ksa_exceptions.ConnectTimeout('Request timed out')
            return real(path, method, **kwargs)

        self.nova.proxy.request.side_effect = lost
        claim = self.claim()
        self.assertRaises(exceptions.CommandError, claim.take)
        self.assertFalse(claim.let_go())
        self.assertIn('  server web-1 may stay locked by this toggle: its '
                      'lock request got no answer. Once no toggle runs on '
                      'it: openstack server unlock %s' % self.server['id'],
                      self.said)
        self.assertNotIn('unlock', self.nova.locks(self.server))


class TestAlive(testtools.TestCase):
    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.EnvironmentVariable(
            'XDG_STATE_HOME', self.useFixture(fixtures.TempDir()).path))

    def test_who_may_still_run(self):
        me = claims.me('n')
        self.assertTrue(claims.alive(me))
        self.assertFalse(claims.alive(me._replace(pid=fakes.gone_pid())))
        # a container of the same host name: its PID is not ours to look up
        self.assertTrue(claims.alive(me._replace(pid=fakes.gone_pid(),
                                                 ns='4026530000')))
        # a boot before this one that this machine recorded: gone,
        # whatever its PID
        machine = me.boot.partition('.')[0]
        earlier = me._replace(boot=machine + '.0000dead')
        self.assertTrue(claims.alive(earlier))
        self.recorded(earlier.boot)
        self.assertFalse(claims.alive(earlier))
        # another machine of the same host name (another machine ID)
        self.assertTrue(claims.alive(me._replace(
            pid=fakes.gone_pid(), boot='0000beef.' + me.boot.partition(
                '.')[2])))
        # a holder whose machine is not known: it may run
        self.assertTrue(claims.alive(me._replace(pid=fakes.gone_pid(),
                                                 boot='')))
        self.assertTrue(claims.alive(fakes.holder('elsewhere', 1)))

    def recorded(self, boot):
        """This machine's record of its boots lists ``boot`` first."""
        os.makedirs(os.path.dirname(claims.boots_path()), exist_ok=True)
        with open(claims.boots_path(), 'w') as record:
            record.write(boot + '\n')
        claims.record_boot()

    def test_a_clone_of_this_machine_is_alive_whatever_its_boot(self):
        """Two machines cloned from one image share host name and machine
        ID, and differ in boot: neither takes the other's live lock, and
        each one's own earlier boot, recorded, is dead to it."""
        me = claims.me('n')
        clone = me._replace(pid=fakes.gone_pid(), boot=me.boot.partition(
            '.')[0] + '.c1044e00')
        self.assertTrue(claims.alive(clone))
        claims.record_boot()
        self.assertEqual({me.boot}, claims.past_boots())
        self.assertTrue(claims.alive(clone))
        # the image carried a record of the machine it was made from
        self.recorded(me.boot.partition('.')[0] + '.0000beef')
        self.assertTrue(claims.alive(clone))
        self.assertEqual(2, len(claims.past_boots()))

    def test_a_record_that_cannot_be_written_proves_nothing(self):
        self.useFixture(fixtures.EnvironmentVariable(
            'XDG_STATE_HOME', '/proc/no-such-place'))
        claims.record_boot()
        self.assertEqual(frozenset(), claims.past_boots())

    def test_without_proc_nothing_is_proven_dead(self):
        self.useFixture(fixtures.MockPatch(
            'osc_deploy_config.use_cases.toggle.claim._read',
            return_value=''))
        me = claims.me('n')
        self.assertEqual('', me.boot)
        self.assertTrue(claims.alive(me._replace(pid=fakes.gone_pid())))


class TestHonestOutcomes(test_fleet.FleetTestCase):
    def interrupt_twice_after(self, at):
        """Ctrl-C twice, as a user leaving at once, after the first nova
        request whose path ``at`` holds for: the second once the first was
        taken."""
        taken = self.ctrl_c_taken()

        def interrupted_twice(method, path):
            if at(path):
                self.nova.after_request = None
                for _ in range(2):
                    taken()
                    os.kill(os.getpid(), signal.SIGINT)

        self.nova.after_request = interrupted_twice

    def test_done_is_read_back_on_its_target(self):
        # someone drops db-0's record between the toggle and the read-back
        node = self.nodes['bm-0']
        real = self.ironic.after_request

        def record_dropped(method, path):
            real(method, path)
            if method == 'PATCH':
                node['properties'].pop(toggle_record.APPLIED, None)

        self.ironic.after_request = record_dropped
        status, rows, _, _ = self.roll('db-0', *test_fleet.DISABLED)
        self.assertEqual((1, 'failed: toggled, but the server does not run '
                          'hyperthreading=disabled now (its node\'s record '
                          'shows hyperthreading=enabled)'),
                         (status, rows['db-0']['Outcome']))

    def test_a_failed_unlock_is_done_left_locked_and_exits_1(self):
        real = self.nova.handle

        def unlock_fails(path, method, **kwargs):
            if 'unlock' in (kwargs.get('json') or {}):
                raise ConnectionResetError('reset by peer')
            return real(path, method, **kwargs)

        self.nova.proxy.request.side_effect = unlock_fails
        status, rows, said, line = self.roll('db-0', *test_fleet.DISABLED)
        db0 = self.server('db-0')
        self.assertEqual((1, 'done, left locked: openstack server unlock %s'
                          % db0['id']), (status, rows['db-0']['Outcome']))
        self.assertTrue(db0['locked'])
        # counted done once up again (said with no line), then a failure
        self.assertEqual([('0', '1', '0'), ('0', '0', '1')],
                         re.findall(r'\[(\d+) done, (\d+) in flight, '
                                    r'\d+ left, (\d+) failed', said))

    def test_the_pending_record_goes_only_on_a_refusal(self):
        node = self.nodes['bm-0']
        self.ironic.service_http_errors['bm-0'] = 502
        status, rows, _, _ = self.roll('db-0', *test_fleet.DISABLED)
        self.assertEqual(1, status)
        self.assertTrue(rows['db-0']['Outcome'].startswith('failed: 502'))
        # a proxy's 502: the servicing may have begun
        self.assertIn(toggle_record.PENDING, node['properties'])
        node['properties'].pop(toggle_record.PENDING)
        self.ironic.service_http_errors['bm-0'] = 409
        status, rows, _, _ = self.roll('db-0', *test_fleet.DISABLED)
        self.assertTrue(rows['db-0']['Outcome'].startswith('failed: 409'))
        self.assertNotIn(toggle_record.PENDING, node['properties'])

    def test_only_a_404_means_a_server_is_gone(self):
        # after the selection's listing, db-1 leaves the listings, and
        # nova fails to read it: not gone, the budget is not read
        db1 = self.server('db-1')
        real = self.nova.handle
        listings = []

        def hidden(path, method, **kwargs):
            if path.startswith('/servers/detail'):
                listings.append(path)
                answer = real(path, method, **kwargs)
                if len(listings) > 1:
                    found = answer.json()
                    found['servers'] = [s for s in found['servers']
                                        if s['id'] != db1['id']]
                    return fakes.response(200, found)
                return answer
            if path == '/servers/%s' % db1['id'] and len(listings) > 1:
                return fakes.error(500, 'database went away')
            return real(path, method, **kwargs)

        self.nova.proxy.request.side_effect = hidden
        status, rows, said, _ = self.roll('db-0', 'db-1',
                                          *test_fleet.DISABLED,
                                          '--wait-timeout', '1')
        self.assertEqual(1, status)
        self.assertIn('The cloud could not be read for the budget (The '
                      'compute service (nova) at ', said)
        self.assertIn(': 500): nothing starts until it can.', said)
        self.assertEqual([], self.ironic.writes)

    def test_ctrl_c_during_the_read_back_prints_every_row(self):
        self.interrupt_twice_after(lambda path: path.startswith(
            '/servers/detail') and self.ironic.serviced and not self.server(
                'db-0')['locked'])
        status, rows, _, _ = self.roll('db-0', *test_fleet.DISABLED)
        self.assertEqual((130, 'not read back: interrupted'),
                         (status, rows['db-0']['Outcome']))

    def test_ctrl_c_while_clearing_left_locks_prints_every_row(self):
        # db-1 runs the configs already, left locked by a killed toggle
        db1 = self.server('db-1')
        toggle_record_patch = toggle_record.complete_patch(
            self.nodes['bm-1'], db1['id'], [OFF])
        self.nodes['bm-1']['properties'][toggle_record.APPLIED] = \
            toggle_record_patch[0]['value']
        self.nodes['bm-1']['bios'] = {'HyperThreading': 'Disabled'}
        db1.update(locked=True, locked_by='admin', locked_reason=(
            toggle_states.lock_reason([OFF], fakes.mine(fakes.gone_pid()))))

        self.interrupt_twice_after(lambda path: path.startswith(
            '/servers/%s/action' % db1['id']))
        status, rows, _, _ = self.roll('db-0', 'db-1', *test_fleet.DISABLED)
        self.assertEqual((130, 'not started: interrupted',
                          'unchanged, left locked: by an interrupted toggle '
                          '(interrupted while clearing it): openstack server '
                          'unlock %s' % db1['id']), (
            status, rows['db-0']['Outcome'], rows['db-1']['Outcome']))


class TestAlwaysEndsInTime(test_fleet.FleetTestCase):
    """Requests that are never answered: the rollout ends in time, every
    row printed."""

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.MockPatch(
            'osc_deploy_config.use_cases.fleet.drive.GRACE_SECONDS', 3))
        self.useFixture(fixtures.MockPatch(
            'osc_deploy_config.use_cases.fleet.drive.JOIN_SECONDS', 1))

    def join_workers(self, seconds=15):
        """Wait for the workers a rollout left behind (its threads named
        "toggle ..."); fail where one still runs then."""
        for thread in threading.enumerate():
            if thread.name.startswith('toggle '):
                thread.join(seconds)
                self.assertFalse(thread.is_alive(), thread.name)

    def timed(self, *args):
        started = time.monotonic()
        found = self.roll(*args)
        return (time.monotonic() - started,) + found

    def test_a_read_back_never_answered_is_not_read_back(self):
        hanging(self, self.nova, lambda method, path: path.startswith(
            '/servers/detail') and bool(self.ironic.serviced))
        took, status, rows, said, _ = self.timed(
            'db-0', *test_fleet.DISABLED, '--wait-timeout', '1')
        self.assertLess(took, 1 + 3 + 1)
        self.assertEqual(1, status)
        self.assertRegex(rows['db-0']['Outcome'], (
            r'^not read back: The compute service \(nova\) at '
            r'\S+ did not answer GET /servers/detail: it '
            r'timed out giving its whole answer within [\d.]+ s '
            r'\(--wait-timeout and the 3 s of grace after it ran out\)$'))

    def test_a_poll_never_answered_fails_its_toggle_alone(self):
        # no --wait-timeout: the request's own timeout ends it
        self.cloud_settings['deploy_config_request_seconds'] = '0.2'
        node = self.nodes['bm-0']
        hanging(self, self.ironic, lambda method, path: (method == 'GET') and (
            path.startswith('/nodes/%s?' % node['uuid'])))
        took, status, rows, said, _ = self.timed(
            'db-0', 'web-0', *test_fleet.DISABLED, '--max-failures', '1',
            '--max-unavailable', '2')
        self.assertLess(took, 10)
        self.assertEqual((1, 'done'), (status, rows['web-0']['Outcome']))
        # the URL where an answer of the service's was seen before
        self.assertRegex(rows['db-0']['Outcome'], (
            r'^failed: The baremetal service \(ironic\) at '
            r'(http://ironic.test|its catalog endpoint) did not answer GET '
            r'/nodes/%s: it timed out giving its whole answer within 0.4 s '
            r'\(deploy_config_request_seconds\)$' % node['uuid']))
        self.assertFalse(self.server('db-0')['locked'])

    def test_a_worker_stuck_marking_its_recovery_lifts_nothing_after(self):
        # the servicing fails; the mark of the recovery, its first write,
        # takes past the grace: the rollout leaves with the line that holds
        # the node, and the worker, back from its write, lifts nothing
        self.ironic.service_error = 'BIOS refused'
        node, marked = self.nodes['bm-0'], threading.Event()

        def mark_hangs(path, method, body):
            if method == 'PATCH' and 'recovering' in json.dumps(body):
                SLEEP(5)
                marked.set()

        fakes.intercept(self.ironic, mark_hangs)
        took, status, rows, said, line = self.timed(
            'db-0', *test_fleet.DISABLED, '--wait-timeout', '1')
        self.assertLess(took, 1 + 3 + 1)
        self.assertEqual(1, status)
        self.assertIn('Node bm-0 was left in the middle of the recovery of a '
                      'failed servicing, which lifts its maintenance', said)
        self.join_workers()     # the node held all along
        self.assertTrue(marked.is_set())
        self.assertEqual([], recovery.UNHELD.lines())
        self.assertTrue(node['maintenance'])
        self.assertNotIn(('DELETE', '/nodes/%s/maintenance' % node['uuid']),
                         self.ironic.writes)

    def test_a_worker_left_mid_recovery_says_how_to_hold_its_node(self):
        # the servicing fails; the abort never ends, and neither does the
        # hold: past the grace, the rollout leaves with the command
        self.ironic.service_error = 'BIOS refused'
        self.ironic.aborts_hang = True
        self.useFixture(fixtures.MockPatch(
            'osc_deploy_config.use_cases.toggle.waits.ABORT_SECONDS', 60))
        node = self.nodes['bm-0']

        def hold_hangs(path, method, body):
            if method == 'PUT' and path.endswith('/maintenance'):
                SLEEP(3)

        fakes.intercept(self.ironic, hold_hangs)
        took, status, rows, said, line = self.timed(
            'db-0', *test_fleet.DISABLED, '--wait-timeout', '1')
        self.assertLess(took, 1 + 3 + 1)
        self.assertEqual(1, status)
        self.assertTrue(rows['db-0']['Outcome'].startswith('interrupted: '),
                        rows)
        self.assertIn(
            'Node bm-0 was left in the middle of the recovery of a failed '
            'servicing, which lifts its maintenance: hold it before '
            'anything runs on it: openstack baremetal node maintenance set '
            '%s --reason "osc-deploy-config: servicing failed: BIOS '
            'refused"' % node['uuid'], said)
        # the recovery had marked the pending record first
        self.assertTrue(toggle_record.pending(
            node, self.server('db-0')['id']).recovering)
        self.join_workers()     # the worker holds the node at last
        self.assertEqual([], recovery.UNHELD.lines())
        self.assertTrue(node['maintenance'])
