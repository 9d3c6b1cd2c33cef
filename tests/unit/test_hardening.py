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

"""``project deploy-config check``: how each probe is judged, what the
report says run by the operator (short-lived users, always removed) and by
a project's own manager, that no probe writes, and the shipped hardening
that names each door's closing line."""

import configparser
import importlib.resources
from unittest import mock

import fixtures
from openstack import connection
from osc_lib import exceptions
import testtools
import yaml

from osc_deploy_config.domain.grants import hardening
from osc_deploy_config.v1 import project_deploy_config as cmds
from tests.unit import fakes

SHIPPED = importlib.resources.files('osc_deploy_config') / 'hardening'
INSTANCE_INFO = hardening.DOORS[0]
TRAIT = hardening.DOORS[1]


class TestVerdicts(testtools.TestCase):
    def test_a_refusal_is_closed_the_failure_after_the_policy_open(self):
        self.assertEqual(hardening.CLOSED,
                         hardening.verdict(INSTANCE_INFO, 403)[0])
        self.assertEqual(hardening.OPEN,
                         hardening.verdict(INSTANCE_INFO, 400)[0])
        self.assertEqual(hardening.CLOSED, hardening.verdict(TRAIT, 403)[0])
        self.assertEqual(hardening.OPEN, hardening.verdict(TRAIT, 409)[0])

    def test_anything_else_is_not_taken_for_an_answer(self):
        for door, status in ((INSTANCE_INFO, 409), (INSTANCE_INFO, 404),
                             (TRAIT, 400), (TRAIT, 201), (TRAIT, 500)):
            self.assertEqual(
                (hardening.NOT_PROBED, 'unexpected answer HTTP %d' % status),
                hardening.verdict(door, status))

    def test_probes_ask_for_what_cannot_be_written(self):
        self.assertEqual([{'op': 'remove', 'path': '/instance_info/k'}],
                         hardening.instance_info_probe('k'))
        self.assertEqual({'id': 'image-1',
                          'trait:CUSTOM_DEPLOY_CONFIG_CHECK_PROBE':
                          'required'}, hardening.image_probe('image-1', TRAIT))

    def test_lessee_findings_both_ways(self):
        servers = [{'id': 's-1', 'name': 'db-1'}, {'id': 's-2', 'name': 'x'}]
        nodes = [
            {'uuid': 'n-1', 'name': 'bm-1', 'instance_uuid': 's-1',
             'lessee': 'p-1'},
            {'uuid': 'n-2', 'name': 'bm-2', 'instance_uuid': 's-2',
             'lessee': 'p-2'},
            {'uuid': 'n-3', 'name': 'bm-3', 'instance_uuid': 's-9',
             'lessee': 'p-1'},
            {'uuid': 'n-4', 'name': None, 'instance_uuid': None,
             'lessee': 'p-1'}]
        self.assertEqual([
            ('bm-2', 'runs server x of the project, leased to p-2'),
            ('bm-3', 'leased to the project, runs server s-9 of another')],
            hardening.lessee_findings('p-1', servers, nodes))
        self.assertEqual([hardening.OPEN] * 2, [
            r[2] for r in hardening.lessee_rows('p-1', servers, nodes)])
        self.assertEqual(
            [(hardening.CLOSED, "1 node(s) run the project's servers, each "
              'leased to it')],
            [r[2:5:2] for r in hardening.lessee_rows('p-1', servers[:1],
                                                    nodes[:1])])
        self.assertEqual([hardening.NOT_PROBED], [
            r[2] for r in hardening.lessee_rows('p-1', servers[:1],
                                                nodes[:1], sees_all=False)])


class TestShippedHardening(testtools.TestCase):
    """The line each door names is in the file the operator installs."""

    def test_ironic_rules_give_instance_info_to_the_operators(self):
        rules = yaml.safe_load((SHIPPED / hardening.IRONIC_FILE).read_text())
        self.assertEqual('(role:member and system_scope:all) or '
                         '(role:service and system_scope:all) or '
                         'rule:service_role',
                         rules[hardening.INSTANCE_INFO_RULE])
        self.assertEqual(7, len(rules))

    def test_glance_protections_name_the_rule_of_the_glance_policy(self):
        protections = configparser.ConfigParser()
        protections.read_string(
            (SHIPPED / hardening.GLANCE_FILE).read_text())
        rules = yaml.safe_load((SHIPPED / 'glance-policy.yaml').read_text())
        self.assertEqual({'deploy_config_operator': 'role:admin'}, rules)
        for section in (hardening.TRAIT_SECTION, hardening.OURS_SECTION):
            self.assertEqual(
                {'create': 'deploy_config_operator', 'read': '@',
                 'update': 'deploy_config_operator', 'delete': '@'},
                dict(protections[section]))
        # the last section keeps every other property open
        self.assertEqual(['^trait:', '^deploy-config:', '.*'],
                         protections.sections())
        for door in hardening.DOORS:
            self.assertIn(door.closed_by.split(' ', 1)[0],
                          (hardening.IRONIC_FILE, hardening.GLANCE_FILE))


class CheckTestCase(fakes.TestCommand):
    def setUp(self):
        super().setUp()
        self.glance.add_image('tiny')
        self.server = self.nova.add_server(
            'db-1', self.nova.add_flavor('bm.gold', fakes.GOLD))
        self.node = self.deploy_on_node(self.server, 'bm-1', [], {'A': '1'})
        self.before = self.state()

    def state(self):
        return ({n['name']: (n['instance_info'], n['extra'])
                 for n in self.ironic.nodes.values()},
                sorted(self.glance.images))

    def open_doors(self):
        """The cloud without the shipped hardening."""
        self.ironic.instance_info_open = True
        self.glance.protected = ()

    def check(self, project='demo'):
        columns, rows = self.run_command(cmds.CheckProjectDeployConfig,
                                         [project])
        self.assertEqual(hardening.COLUMNS, columns)
        # no probe wrote anything
        self.assertEqual(self.before, self.state())
        return {(r[0], r[1]): (r[2], r[4]) for r in rows}

    def states(self, found):
        return {door: state for door, (state, _) in found.items()}

    def refused(self, project):
        return str(self.assertRaises(
            exceptions.CommandError, self.run_command,
            cmds.CheckProjectDeployConfig, [project]))


class TestOperatorsCheck(CheckTestCase):
    """The operator's check probes as short-lived users of the project."""

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.MockPatch(
            'openstack.connect', autospec=True, side_effect=self.connect))

    def connect(self, auth, **options):
        """keystone's answer to a short-lived user's password (the SDK
        boundary): a connection with its project-scoped token, which the
        fake services judge; a system scope refused."""
        if auth.get('system_scope'):
            refused = mock.create_autospec(connection.Connection,
                                           instance=True)
            refused.config = mock.Mock(spec=['config'], config={})
            refused.authorize.side_effect = \
                fakes.ksa_exceptions.Unauthorized()
            return refused
        _, project, role = self.keystone.users[auth['user_id']]
        self.ironic.project, self.ironic.project_roles = project, {role}
        self.nova.project = project
        self.glance.roles = {role}
        conn = mock.NonCallableMock(spec=connection.Connection)
        conn.config = mock.Mock(spec=['config', 'get_interface',
                                      'get_region_name'])
        conn.config.config = {'auth_type': 'password', 'auth': auth}
        conn.session = self.conn.session
        conn.session._discovery_cache = {}
        conn.baremetal, conn.image = self.ironic.proxy, self.glance.proxy
        return conn

    def test_hardened_every_door_closed_users_removed(self):
        self.conn.config.config['auth']['auth_url'] = 'http://keystone'
        found = self.check()
        self.assertEqual({hardening.CLOSED}, set(self.states(found).values()))
        self.assertEqual(7, len(found))
        self.assertEqual(
            'as a short-lived manager user, removed: refused (HTTP 403)',
            found[INSTANCE_INFO.name, 'manager'][1])
        self.assertEqual({}, self.keystone.users)
        self.assertEqual(['manager', 'member'], [
            n.split('-')[3] for n in self.keystone.removed])

    def test_open_doors_named(self):
        self.conn.config.config['auth']['auth_url'] = 'http://keystone'
        self.open_doors()
        found = self.states(self.check())
        self.assertEqual(hardening.OPEN, found[INSTANCE_INFO.name, 'manager'])
        # ironic's own default refuses a lessee's member
        self.assertEqual(hardening.CLOSED,
                         found[INSTANCE_INFO.name, 'member'])
        self.assertEqual({hardening.OPEN}, {
            s for (door, _), s in found.items()
            if door.startswith('image property')})

    def test_a_node_leased_elsewhere_is_an_open_door(self):
        self.conn.config.config['auth']['auth_url'] = 'http://keystone'
        self.node['lessee'] = 'project-2'
        found = self.check()
        self.assertEqual(
            (hardening.OPEN, 'bm-1: runs server db-1 of the project, '
             'leased to project-2'),
            found[hardening.LESSEE_DOOR.name, 'operator'])
        # the only node of the project is not its own: nothing to probe
        self.assertEqual(hardening.NOT_PROBED,
                         found[INSTANCE_INFO.name, 'manager'][0])

    def test_users_removed_when_one_cannot_be_made(self):
        self.conn.config.config['auth']['auth_url'] = 'http://keystone'
        self.keystone.refuse_assignment = True
        self.assertIn("Could not make the check's short-lived manager user "
                      'in project demo', self.refused('demo'))
        self.assertEqual({}, self.keystone.users)
        self.assertEqual(1, len(self.keystone.removed))

    def test_an_unknown_project_in_one_line(self):
        self.assertEqual('No project with a name or ID of nope',
                         self.refused('nope'))
        self.assertEqual([], self.keystone.removed)


class TestProjectsOwnCheck(CheckTestCase):
    """A project's manager probes with its own token."""

    def setUp(self):
        super().setUp()
        self.as_project('manager', 'member', 'reader')
        self.glance.roles = {'manager', 'member', 'reader'}

    def test_its_doors_probed_the_others_said(self):
        found = self.states(self.check('project-1'))
        self.assertEqual(
            {'manager': {hardening.CLOSED},
             'member': {hardening.NOT_PROBED},
             'operator': {hardening.NOT_PROBED}},
            {who: {s for (_, w), s in found.items() if w == who}
             for who in ('manager', 'member', 'operator')})

    def test_open_doors_named(self):
        self.open_doors()
        found = self.states(self.check('project-1'))
        self.assertEqual({hardening.OPEN}, {
            s for (_, who), s in found.items() if who == 'manager'})

    def test_another_project_in_one_line(self):
        self.assertIn('A project checks itself only',
                      self.refused('project-2'))
        self.assertEqual([], self.ironic.writes)
