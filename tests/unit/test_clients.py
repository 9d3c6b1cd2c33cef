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

from unittest import mock

import fixtures
from keystoneauth1 import exceptions as ksa_exceptions
from openstack import connection
import testtools

from osc_deploy_config import clients

PROJECT_AUTH = {'auth_url': 'http://keystone.test/v3', 'username': 'admin',
                'password': 'pw', 'user_domain_name': 'Default',
                'project_name': 'admin', 'project_domain_name': 'Default'}


def project_connection(auth_type='password'):
    conn = mock.create_autospec(connection.Connection, instance=True)
    conn.config = mock.Mock()
    conn.config.config = {'auth_type': auth_type, 'auth': dict(PROJECT_AUTH),
                          'region_name': 'RegionOne', 'cloud': 'c'}
    conn.session = mock.Mock(_discovery_cache={})
    return conn


class TestSystemScoped(testtools.TestCase):
    def setUp(self):
        super().setUp()
        self.connect = self.useFixture(_Patch('openstack.connect')).mock
        self.system = mock.create_autospec(connection.Connection,
                                           instance=True)
        self.system.config = mock.Mock()
        self.connect.return_value = self.system

    def test_same_credentials_system_scope(self):
        conn = project_connection()
        self.assertIs(self.system, clients.system_scoped(conn))
        # keystone's version discovery is not repeated
        self.assertIs(conn.session._discovery_cache,
                      self.system.config._discovery_cache)
        kwargs = self.connect.call_args.kwargs
        self.assertEqual(
            {'auth_url': 'http://keystone.test/v3', 'username': 'admin',
             'password': 'pw', 'user_domain_name': 'Default',
             'system_scope': 'all'}, kwargs['auth'])
        self.assertEqual('RegionOne', kwargs['region_name'])
        self.assertNotIn('cloud', kwargs)
        self.assertFalse(kwargs['load_yaml_config'])
        self.system.authorize.assert_called_once_with()

    def test_no_system_role(self):
        self.system.authorize.side_effect = ksa_exceptions.Unauthorized()
        self.assertIsNone(clients.system_scoped(project_connection()))

    def test_project_bound_auth_is_not_rescoped(self):
        self.assertIsNone(clients.system_scoped(
            project_connection('v3applicationcredential')))
        self.connect.assert_not_called()

    def test_already_system_scoped(self):
        conn = project_connection()
        conn.config.config['auth'] = {'system_scope': 'all'}
        self.assertIs(conn, clients.system_scoped(conn))
        self.connect.assert_not_called()


class TestClients(testtools.TestCase):
    def test_baremetal_falls_back_to_project_scope(self):
        conn = project_connection()
        made = clients.Clients(mock.Mock(sdk_connection=conn))
        with mock.patch.object(clients, 'system_scoped', return_value=None):
            self.assertIs(conn.baremetal, made.baremetal)
        self.assertEqual('project', made.baremetal_scope)

    def test_baremetal_built_once(self):
        conn = project_connection()
        system = mock.create_autospec(connection.Connection, instance=True)
        system.config = mock.Mock(config={'baremetal_api_version': '1.115'})
        made = clients.Clients(mock.Mock(sdk_connection=conn))
        with mock.patch.object(clients, 'system_scoped',
                               return_value=system) as scoped:
            self.assertIs(system.baremetal, made.baremetal)
            self.assertIs(system.baremetal, made.baremetal)
        scoped.assert_called_once_with(conn)
        self.assertEqual('system', made.baremetal_scope)
        # python-ironicclient's pin to its latest version is dropped
        # before the proxy is built (the SDK refuses it on older ironic)
        self.assertEqual('1', system.config.config['baremetal_api_version'])


class TestHiddenNodes(testtools.TestCase):
    def warned(self, scope, nodes):
        logs = self.useFixture(fixtures.FakeLogger())
        made = clients.Clients(mock.Mock(sdk_connection=project_connection()))
        made.baremetal_scope = scope
        made.warn_if_nodes_hidden(nodes)
        return logs.output

    def test_empty_list_in_project_scope_is_explained(self):
        self.assertIn('No node is visible to a project-scoped token',
                      self.warned('project', []))

    def test_quiet_otherwise(self):
        self.assertEqual('', self.warned('system', []))
        self.assertEqual('', self.warned('project', [{'uuid': 'n'}]))


class _Patch:
    """mock.patch as a testtools fixture."""

    def __init__(self, target):
        self._patcher = mock.patch(target)

    def setUp(self):
        self.mock = self._patcher.start()

    def cleanUp(self):
        self._patcher.stop()

    def getDetails(self):
        return {}
