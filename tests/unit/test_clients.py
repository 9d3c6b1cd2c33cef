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

"""Which scope each service gets, from one cloud entry; the stand-ins are
the SDK's Connection and keystoneauth's Session, autospec'd."""

import logging
from unittest import mock

import fixtures
from keystoneauth1 import exceptions as ksa_exceptions
from keystoneauth1 import session
from openstack import connection
from openstack import exceptions as sdk_exceptions
from osc_lib import exceptions
import testtools

from osc_deploy_config.services import clients
from osc_deploy_config.services import ironic
from osc_deploy_config.services import rest
from osc_deploy_config.services import versions
from tests.unit import fakes

PROJECT_AUTH = {'auth_url': 'http://keystone.test/v3', 'username': 'admin',
                'password': 'pw', 'user_domain_name': 'Default',
                'project_name': 'admin', 'project_domain_name': 'Default'}
# What our code reads of a Connection's CloudRegion.
REGION_SPEC = ['config', 'get_interface', 'get_region_name',
               '_discovery_cache']


def connection_of(auth, auth_type='password'):
    conn = mock.create_autospec(connection.Connection, instance=True)
    conn.config = mock.Mock(spec=REGION_SPEC)
    conn.config.config = {'auth_type': auth_type, 'auth': dict(auth),
                          'region_name': 'RegionOne', 'cloud': 'c'}
    conn.session = mock.create_autospec(session.Session, instance=True)
    conn.session._discovery_cache = {}
    return conn


def project_connection(auth_type='password'):
    return connection_of(PROJECT_AUTH, auth_type)


def osc_instance(conn):
    """OSC's client manager, as the plugin's make_client sees it."""
    return mock.Mock(spec=['sdk_connection'], sdk_connection=conn)


class SystemScopeTestCase(testtools.TestCase):
    """``openstack.connect`` builds the system-scoped connection."""

    def setUp(self):
        super().setUp()
        self.connect = self.useFixture(fixtures.MockPatch(
            'openstack.connect', autospec=True)).mock
        self.system = connection_of({'system_scope': 'all'})
        self.connect.return_value = self.system

    def refuse_system_scope(self):
        self.system.authorize.side_effect = ksa_exceptions.Unauthorized()


class TestSystemScoped(SystemScopeTestCase):
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
        self.refuse_system_scope()
        self.assertIsNone(clients.system_scoped(project_connection()))

    def test_project_bound_auth_is_not_rescoped(self):
        self.assertIsNone(clients.system_scoped(
            project_connection('v3applicationcredential')))
        self.connect.assert_not_called()

    def test_already_system_scoped(self):
        conn = connection_of({'system_scope': 'all'})
        self.assertIs(conn, clients.system_scoped(conn))
        self.connect.assert_not_called()


class TestClients(SystemScopeTestCase):
    def test_ironic_falls_back_to_project_scope(self):
        self.refuse_system_scope()
        conn = project_connection()
        made = clients.Clients(osc_instance(conn))
        api = made.ironic()
        self.assertIs(conn.baremetal, api.proxy)
        self.assertEqual('project', api.scope)

    def test_ironic_system_scoped_and_built_once(self):
        self.system.config.config['baremetal_api_version'] = '1.115'
        made = clients.Clients(osc_instance(project_connection()))
        first, second = made.ironic(), made.ironic()
        self.assertIs(self.system.baremetal, first.proxy)
        self.assertIs(self.system.baremetal, second.proxy)
        self.assertEqual(('system', 'system'), (first.scope, second.scope))
        self.connect.assert_called_once()
        # python-ironicclient's pin to its latest version is dropped
        # before the proxy is built (the SDK refuses it on older ironic)
        self.assertEqual('1',
                         self.system.config.config['baremetal_api_version'])

    def test_other_services_use_the_project_connection(self):
        conn = project_connection()
        made = clients.Clients(osc_instance(conn))
        self.assertIs(conn.compute, made.nova().proxy)
        self.assertIs(conn.placement, made.placement().proxy)
        self.assertIs(conn.image, made.glance().proxy)
        self.connect.assert_not_called()


class TestProjectId(testtools.TestCase):
    def setUp(self):
        super().setUp()
        self.conn = project_connection()
        self.keystone = fakes.FakeKeystone({
            'p-1': 'admin', 'p-2': ('demo', 'default'),
            'p-3': ('demo', 'd-2'), 'p-4': 'p-1'},
            {'default': 'Default', 'd-2': 'second'})
        self.conn.identity = self.keystone.proxy
        self.made = clients.Clients(osc_instance(self.conn))

    def test_by_id(self):
        self.assertEqual('p-2', self.made.project_id('p-2'))

    def test_by_name(self):
        self.assertEqual('p-1', self.made.project_id('admin'))

    def test_by_name_within_a_domain(self):
        self.assertEqual('p-3', self.made.project_id('demo', 'second'))
        self.assertEqual('p-2', self.made.project_id('demo', 'default'))

    def test_a_name_in_two_domains_is_one_line(self):
        exc = self.assertRaises(exceptions.CommandError,
                                self.made.project_id, 'demo')
        self.assertEqual(
            'Project demo is ambiguous: p-2 (demo, domain default); p-3 '
            '(demo, domain d-2). Give its ID, or its name with '
            '--project-domain.', str(exc))

    def test_a_name_like_another_projects_id_is_one_line(self):
        exc = self.assertRaises(exceptions.CommandError,
                                self.made.project_id, 'p-1')
        self.assertIn('Project p-1 is ambiguous: p-1 (admin, domain '
                      'default); p-4 (p-1, domain default)', str(exc))

    def test_unknown_is_one_line(self):
        exc = self.assertRaises(exceptions.CommandError,
                                self.made.project_id, 'nope')
        self.assertEqual('No project with a name or ID of nope', str(exc))
        exc = self.assertRaises(exceptions.CommandError,
                                self.made.project_id, 'demo', 'third')
        self.assertEqual('No domain with a name or ID of third', str(exc))


class TestProxyOf(testtools.TestCase):
    def test_a_service_whose_discovery_failed_gets_one_line(self):
        conn = project_connection()
        type(conn).placement = mock.PropertyMock(
            side_effect=sdk_exceptions.NotSupported('no endpoint'))
        conn.config.get_interface.return_value = 'public'
        conn.config.get_region_name.return_value = 'RegionOne'
        conn.session.get_endpoint.return_value = 'http://placement.test:8778'
        exc = self.assertRaises(exceptions.CommandError, clients.proxy_of,
                                conn, 'placement', rest.DEFAULT_TIMEOUTS)
        self.assertEqual('Cannot reach the placement service at '
                         'http://placement.test:8778: its version discovery '
                         'failed', str(exc))
        conn.session.get_endpoint.assert_called_once_with(
            service_type='placement', skip_discovery=True,
            interface='public', region_name='RegionOne')


class TestHiddenNodes(testtools.TestCase):
    def warned(self, scope, nodes):
        logs = self.useFixture(fixtures.FakeLogger())
        api = ironic.Ironic(None, versions.DEPLOY_TEMPLATES, scope=scope)
        api.warn_if_nodes_hidden(nodes, logging.getLogger('t'))
        return logs.output

    def test_empty_list_in_project_scope_is_explained(self):
        self.assertIn('No node is visible to a project-scoped token',
                      self.warned('project', []))

    def test_quiet_otherwise(self):
        self.assertEqual('', self.warned('system', []))
        self.assertEqual('', self.warned('project', [{'uuid': 'n'}]))
