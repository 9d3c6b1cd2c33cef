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

import logging
from unittest import mock

import fixtures
from keystoneauth1 import exceptions as ksa_exceptions
from openstack import exceptions as sdk_exceptions
from openstack.baremetal.v1 import _proxy as baremetal_proxy
from osc_lib import exceptions
import testtools

from osc_deploy_config import ironic
from osc_deploy_config import rest
from tests.unit import fakes


class TestSend(testtools.TestCase):
    def setUp(self):
        super().setUp()
        self.proxy = mock.create_autospec(baremetal_proxy.Proxy,
                                          instance=True)
        self.api = ironic.Ironic(self.proxy, 'deploy templates')

    def test_reads_are_retried_on_503_and_refused_connections(self):
        self.proxy.request.return_value = fakes.response(
            200, {'deploy_templates': []})
        self.api.deploy_templates()
        kwargs = self.proxy.request.call_args.kwargs
        self.assertEqual(rest.READ_RETRIES, kwargs['status_code_retries'])
        self.assertEqual(rest.READ_RETRIES, kwargs['connect_retries'])
        self.assertEqual([503], kwargs['retriable_status_codes'])

    def test_writes_are_not_retried_here(self):
        self.proxy.request.return_value = fakes.response(201, {'uuid': 'u'})
        self.api.create_deploy_template({'name': 'CUSTOM_X'})
        kwargs = self.proxy.request.call_args.kwargs
        self.assertNotIn('status_code_retries', kwargs)
        self.assertNotIn('connect_retries', kwargs)

    def test_unreachable_service_in_one_line(self):
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
        self.proxy.request.return_value = fakes.response(201, {'uuid': 'u'})
        self.api.create_deploy_template({'name': 'CUSTOM_X'})
        self.assertEqual(
            [], self.proxy.request.call_args.kwargs['retriable_status_codes'])
        self.proxy.request.return_value = fakes.response(204)
        self.api.add_node_trait('n', 'CUSTOM_X')
        self.assertEqual(
            [409],
            self.proxy.request.call_args.kwargs['retriable_status_codes'])

    def test_retries_are_logged_for_debug_only(self):
        logged = self.useFixture(fixtures.FakeLogger(
            level=logging.DEBUG, format='%(levelname)s %(message)s'))
        self.proxy.request.return_value = fakes.response(
            200, {'deploy_templates': []})
        self.api.deploy_templates()
        http_log = self.proxy.request.call_args.kwargs['logger']
        # what keystoneauth says before a retry
        http_log.warning('Retriable status code %(code)s.', {'code': 503})
        self.assertEqual('DEBUG Retriable status code 503.\n',
                         logged.output)

    def test_older_ironics_500_for_a_wrong_scope_is_a_refusal(self):
        self.proxy.request.return_value = fakes.error(
            500, '"baremetal:deploy_template:get": "(role:reader and '
            'system_scope:all)" requires a scope of [\'system\'], request '
            'was made with project scope.')
        self.assertRaises(sdk_exceptions.ForbiddenException,
                          self.api.deploy_templates)
