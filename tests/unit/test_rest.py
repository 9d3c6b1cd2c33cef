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

"""The REST layer's retries and its one-line service errors."""

import datetime
import email.utils
import http.server
import json
import logging
import threading
import time
import types
from unittest import mock

import fixtures
from keystoneauth1 import exceptions as ksa_exceptions
from keystoneauth1.identity import v3
from openstack import exceptions as sdk_exceptions
from openstack.baremetal.v1 import _proxy as baremetal_proxy
from osc_lib import exceptions
import testtools

from osc_deploy_config.services import ironic
from osc_deploy_config.services import rest
from osc_deploy_config.services import versions
from osc_deploy_config.v1 import cli
from tests.unit import fakes
from tests.unit import test_cli


class TestSend(testtools.TestCase):
    def setUp(self):
        super().setUp()
        self.proxy = mock.create_autospec(baremetal_proxy.Proxy,
                                          instance=True)
        self.api = ironic.Ironic(self.proxy, versions.DEPLOY_TEMPLATES)

    def test_reads_are_retried_on_503_and_refused_connections(self):
        self.proxy.request.return_value = fakes.response(
            200, {'deploy_templates': []})
        self.api.deploy_templates()
        kwargs = self.proxy.request.call_args.kwargs
        # no retry of keystoneauth's (it would sleep any Retry-After): a
        # refused connection or a 503 is retried here, a timeout never
        self.assertEqual((0, 0), (kwargs['status_code_retries'],
                                  kwargs['connect_retries']))
        self.assertEqual(tuple(rest.DEFAULT_TIMEOUTS), kwargs['timeout'])
        slept = self.useFixture(fixtures.MockPatch('time.sleep')).mock
        self.proxy.request.side_effect = [ksa_exceptions.ConnectFailure(
            'Unable to establish connection to http://10.0.0.5:6385/v1: '
            'Connection refused')] * 2 + [fakes.response(
                200, {'deploy_templates': []})]
        self.assertEqual([], self.api.deploy_templates())
        self.assertEqual([mock.call(0.5), mock.call(1.0)],
                         slept.call_args_list)

    def test_unreachable_service_in_one_line(self):
        self.useFixture(fixtures.MockPatch('time.sleep'))
        self.proxy.request.side_effect = ksa_exceptions.ConnectFailure(
            'Unable to establish connection to http://10.0.0.5:6385/v1/'
            'deploy_templates: [Errno 111] Connection refused')
        exc = self.assertRaises(exceptions.CommandError,
                                self.api.deploy_templates)
        self.assertEqual('Cannot reach the baremetal service (ironic) at '
                         'http://10.0.0.5:6385: connection refused', str(exc))

    def test_failing_read_names_service_url_and_retries(self):
        failed = fakes.response(503, url='http://ironic.test/v1/nodes')
        failed.reason = 'Service Unavailable'
        self.proxy.request.return_value = failed
        exc = self.assertRaises(exceptions.CommandError, self.api.nodes,
                                ['uuid'])
        self.assertEqual(
            'The baremetal service (ironic) at http://ironic.test failed to '
            'answer /v1/nodes: 503 Service Unavailable (after %d retries)'
            % rest.READ_RETRIES, str(exc))

    def test_failing_write_left_to_the_caller(self):
        self.proxy.request.return_value = fakes.error(500, 'boom')
        self.assertRaises(sdk_exceptions.HttpException,
                          self.api.add_node_trait, 'n', 'CUSTOM_X')

    def test_trait_already_removed_is_no_error(self):
        self.proxy.request.return_value = fakes.error(
            404, "Node n doesn't have a trait 'CUSTOM_X'")
        self.assertIsNone(self.api.remove_node_trait('n', 'CUSTOM_X'))
        self.proxy.request.return_value = fakes.error(
            404, 'Node n could not be found.')
        self.assertRaises(sdk_exceptions.NotFoundException,
                          self.api.remove_node_trait, 'n', 'CUSTOM_X')

    def test_a_create_is_never_retried_a_node_write_is_on_409(self):
        slept = self.useFixture(fixtures.MockPatch('time.sleep')).mock
        self.proxy.request.return_value = fakes.error(409, 'taken')
        self.assertRaises(sdk_exceptions.ConflictException,
                          self.api.create_deploy_template, {'name': 'X'})
        self.assertEqual(1, self.proxy.request.call_count)
        # none of keystoneauth's retries: ours, within the command's bound
        kwargs = self.proxy.request.call_args.kwargs
        self.assertEqual((0, 0), (kwargs['status_code_retries'],
                                  kwargs['connect_retries']))
        self.proxy.request.reset_mock()
        locked = fakes.error(409, 'Node n is locked by host c1')
        self.proxy.request.side_effect = [locked, locked,
                                          fakes.response(204)]
        self.api.add_node_trait('n', 'CUSTOM_X')
        self.assertEqual(3, self.proxy.request.call_count)
        self.assertEqual([mock.call(0.5), mock.call(1.0)],
                         slept.call_args_list)

    def test_a_node_write_is_retried_only_where_it_ends_in_time(self):
        # a write is never cut: a retry is sent only where its pause and
        # its timeouts together end within the command's bound
        slept = self.useFixture(fixtures.MockPatch('time.sleep')).mock
        self.proxy.request.return_value = fakes.error(
            409, 'Node n is locked by host c1')
        with rest.bounded(time.monotonic() + sum(rest.DEFAULT_TIMEOUTS) + 2):
            self.assertRaises(sdk_exceptions.ConflictException,
                              self.api.add_node_trait, 'n', 'CUSTOM_X')
        self.assertEqual(1 + 2, self.proxy.request.call_count)
        self.assertEqual([mock.call(0.5), mock.call(1.0)],
                         slept.call_args_list)
        self.proxy.request.reset_mock()
        with rest.bounded(time.monotonic() + 1):
            self.assertRaises(sdk_exceptions.ConflictException,
                              self.api.add_node_trait, 'n', 'CUSTOM_X')
        self.assertEqual(1, self.proxy.request.call_count)
        self.proxy.request.reset_mock()
        self.assertRaises(sdk_exceptions.ConflictException,
                          self.api.add_node_trait, 'n', 'CUSTOM_X')
        self.assertEqual(1 + rest.WRITE_RETRIES,
                         self.proxy.request.call_count)

    def test_older_ironics_500_for_a_wrong_scope_is_a_refusal(self):
        self.proxy.request.return_value = fakes.error(
            500, '"baremetal:deploy_template:get": "(role:reader and '
            'system_scope:all)" requires a scope of [\'system\'], request '
            'was made with project scope.')
        exc = self.assertRaises(exceptions.CommandError,
                                self.api.deploy_templates)
        self.assertIn('Ironic refused to list deploy templates (403): ',
                      str(exc))
        self.assertIn('requires a scope of', str(exc))


class TestWhoAndWhen(testtools.TestCase):
    def test_keystone_is_named_by_its_url_path_and_all(self):
        # a devstack's services share one host: the path tells them apart
        proxy = types.SimpleNamespace(session=types.SimpleNamespace(
            auth=types.SimpleNamespace(auth_url='http://h/identity/v3')))
        for url, named in (
                ('http://h/identity/v3/auth/tokens', 'identity'),
                ('http://h/identity', 'identity'),
                ('http://h/baremetal/v1/nodes', 'baremetal'),
                ('http://h/identityx/v3', 'baremetal')):
            self.assertEqual(named, rest.named(
                proxy, 'baremetal', 'Unable to establish connection to %s: '
                'refused' % url), url)

    def test_a_write_renews_its_token_past_the_commands_bound(self):
        # a token due (none yet): renewed in the request's whole bound,
        # which the command's cuts for a read, never for a write
        def renewed(session):
            time.sleep(1)
            return _Token(3600)

        auth = mock.create_autospec(v3.Password, instance=True,
                                    auth_ref=None, auth_url='http://k:5000/v3')
        auth.get_auth_ref.side_effect = renewed
        proxy = types.SimpleNamespace(session=types.SimpleNamespace(
            auth=auth))
        with rest.bounded(time.monotonic() - 1, 'the grace ran out'):
            rest.renew_token(proxy, 'PUT', (1, 1), 'settings')
            auth.auth_ref = None
            exc = self.assertRaises(exceptions.CommandError,
                                    rest.renew_token, proxy, 'GET', (1, 1),
                                    'the grace ran out')
        self.assertEqual('The identity service (keystone) at http://k:5000 '
                         'did not issue a token within 0 s (the grace ran '
                         'out)', str(exc))

    def test_a_token_that_would_expire_during_a_request_is_renewed_once(
            self):
        # 123 s left: past keystoneauth's 120 s margin, not past the
        # request's 4 s; of four threads, one renews it, and the token it
        # has stays meanwhile (keystoneauth's renewal would drop it)
        def renewed(session):
            time.sleep(0.2)
            self.assertIsNotNone(auth.auth_ref)
            return _Token(3600)

        auth = mock.create_autospec(v3.Password, instance=True,
                                    auth_ref=_Token(123))
        auth.get_auth_ref.side_effect = renewed
        proxy = types.SimpleNamespace(session=types.SimpleNamespace(
            auth=auth))
        threads = [threading.Thread(target=rest.renew_token, args=(
            proxy, 'GET', (1, 3), 'settings')) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(5)
        self.assertEqual(1, auth.get_auth_ref.call_count)
        rest.renew_token(proxy, 'GET', (1, 3), 'settings')
        self.assertEqual(1, auth.get_auth_ref.call_count)
        auth.invalidate.assert_not_called()

    def test_a_token_a_renewal_does_not_extend_is_never_renewed(self):
        # auth_type token: a token issued again keeps the old one's
        # expiry; neither we nor keystoneauth renew it near its end
        auth = mock.create_autospec(v3.Token, instance=True,
                                    auth_ref=_Token(100), reauthenticate=True)
        proxy = types.SimpleNamespace(session=types.SimpleNamespace(
            auth=auth))
        rest.renew_token(proxy, 'GET', (1, 3), 'settings')
        auth.get_auth_ref.assert_not_called()
        self.assertFalse(auth.reauthenticate)

    def test_a_retry_after_in_seconds_or_as_a_date(self):
        def answer(value):
            found = fakes.response(503)
            found.headers['Retry-After'] = value
            return found

        self.assertEqual(300.0, rest.retry_after(answer('300'), 0.5))
        for bad in ('\u00b2', 'soon', '-1'):
            self.assertEqual(0.5, rest.retry_after(answer(bad), 0.5), bad)
        self.assertEqual(0.0, rest.retry_after(answer(
            'Wed, 21 Oct 2015 07:28:00 -0000'), 0.5))
        later = email.utils.formatdate(time.time() + 100, usegmt=True)
        self.assertAlmostEqual(100, rest.retry_after(answer(later), 0.5),
                               delta=2)


class _FakeIronicHandler(http.server.BaseHTTPRequestHandler):
    """A loopback ironic: version discovery, and 503 for everything else."""

    def do_GET(self):
        if not self.discovered():
            self.answer(503, {'error_message': 'unavailable'})

    def do_POST(self):
        self.answer(503, {'error_message': 'unavailable'})

    do_PUT = do_POST

    def discovered(self):
        """Whether this was the version discovery, answered (not counted
        in ``server.seen``)."""
        if self.path.rstrip('/') not in ('', '/v1'):
            return False
        root = 'http://%s:%d' % self.server.server_address
        version = {'id': 'v1', 'status': 'CURRENT', 'version': '1.80',
                   'min_version': '1.1',
                   'links': [{'href': root + '/v1/', 'rel': 'self'}]}
        self.send_json(200, {'versions': [version],
                             'default_version': version})
        return True

    def answer(self, status, body):
        self.server.seen.append((self.command, self.path))
        self.send_json(status, body)

    def send_json(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


class TestRetriesThroughKeystoneauth(testtools.TestCase):
    """The SDK proxy and keystoneauth for real, against a loopback ironic
    that answers 503: what is sent, and how often."""

    def setUp(self):
        super().setUp()
        import openstack

        server = http.server.ThreadingHTTPServer(('127.0.0.1', 0),
                                                 _FakeIronicHandler)
        server.seen = []
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        self.seen = server.seen
        conn = openstack.connect(
            load_yaml_config=False, load_envvars=False, auth_type='none',
            baremetal_endpoint_override='http://127.0.0.1:%d/v1'
            % server.server_address[1])
        self.api = ironic.Ironic(conn.baremetal, versions.DEPLOY_TEMPLATES)
        # keystoneauth's backoff between retries, without the waiting
        self.useFixture(fixtures.MockPatch('time.sleep'))

    def sent(self, method, prefix):
        return [p for m, p in self.seen if m == method and
                p.startswith(prefix)]

    def test_a_create_answered_503_is_sent_once(self):
        self.assertRaises(sdk_exceptions.HttpException,
                          self.api.create_deploy_template,
                          {'name': 'CUSTOM_X', 'steps': []})
        self.assertEqual(1, len(self.sent('POST', '/v1/deploy_templates')))

    def test_a_read_answered_503_is_retried_quietly(self):
        test_cli.keep_filters(self, 'keystoneauth.session')
        cli.demote_keystoneauth_warnings()   # as our commands do
        shown = self.useFixture(fixtures.FakeLogger(
            level=logging.WARNING, format='%(levelname)s %(message)s'))
        self.assertRaises(exceptions.CommandError, self.api.deploy_templates)
        self.assertEqual(1 + rest.READ_RETRIES,
                         len(self.sent('GET', '/v1/deploy_templates')))
        self.assertEqual('', shown.output)   # --debug shows the retries

    def test_a_node_trait_write_answered_503_is_sent_once(self):
        # retried on 409 (NodeLocked) only: a 503 may have been applied
        self.assertRaises(sdk_exceptions.HttpException,
                          self.api.add_node_trait, 'n', 'CUSTOM_X')
        self.assertEqual(1, len(self.sent('PUT', '/v1/nodes/n/traits')))


class TestNovaWrites(testtools.TestCase):
    def test_flavor_access_a_concurrent_toggle_added_is_no_error(self):
        from openstack.compute.v2 import _proxy as compute_proxy

        from osc_deploy_config.services import nova

        proxy = mock.create_autospec(compute_proxy.Proxy, instance=True)
        api = nova.Nova(proxy)
        proxy.request.return_value = fakes.response(409, {
            'conflictingRequest': {'code': 409, 'message': (
                'Flavor access already exists for flavor 7 and project p '
                'combination.')}})
        api.add_flavor_access('7', 'p')
        proxy.request.return_value = fakes.response(409, {
            'conflictingRequest': {'code': 409, 'message': 'Something else'}})
        self.assertRaises(sdk_exceptions.ConflictException,
                          api.add_flavor_access, '7', 'p')


class _Token:
    """A token of keystoneauth's (its AccessInfo), ``left`` seconds before
    its expiry."""

    def __init__(self, left):
        self.left = left
        self.expires = datetime.datetime(2026, 12, 4) + datetime.timedelta(
            seconds=left)

    def will_expire_soon(self, seconds):
        return self.left < seconds
