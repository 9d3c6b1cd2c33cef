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
import copy
import importlib.resources
from unittest import mock

import fixtures
from openstack import connection
from osc_lib import exceptions
import testtools
import yaml

from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.grants import grants
from osc_deploy_config.domain.grants import hardening
from osc_deploy_config.v1 import project_deploy_config as cmds
from tests.unit import fakes

SHIPPED = importlib.resources.files('osc_deploy_config') / 'hardening'
DOOR = {d.probe: d for d in hardening.DOORS if d.role == 'manager'}
INSTANCE_INFO = DOOR['instance_info']
TRAIT = DOOR[hardening.PROBE_TRAIT]
PAST_POLICY = '"rescue_password" is only valid when setting target ' \
    'provision state to rescue'


DRIVER_STEP = {'interface': 'deploy', 'step': 'deploy', 'priority': 100,
               'argsinfo': None}


def history_event(kind, at, steps, user):
    """A node history entry, as ironic 39 writes a deploy's or a
    servicing's start."""
    return {'uuid': at, 'event_type': kind, 'created_at': at,
            'severity': 'INFO', 'user': user,
            'event': 'Starting with steps=%s' % (steps,)}


class TestVerdicts(testtools.TestCase):
    def test_a_refusal_is_closed_the_failure_after_the_policy_open(self):
        self.assertEqual(hardening.CLOSED,
                         hardening.verdict(INSTANCE_INFO, 403)[0])
        self.assertEqual(hardening.OPEN,
                         hardening.verdict(INSTANCE_INFO, 400)[0])
        self.assertEqual(hardening.CLOSED, hardening.verdict(
            TRAIT, 403, "Attribute 'trait:X' is reserved.")[0])
        self.assertEqual(hardening.OPEN, hardening.verdict(TRAIT, 409)[0])
        self.assertEqual(hardening.OPEN, hardening.verdict(
            DOOR['runbook_create'], 400)[0])
        for probe in ('service_steps', 'deploy_steps'):
            self.assertEqual(hardening.OPEN, hardening.verdict(
                DOOR[probe], 400, PAST_POLICY)[0])
            self.assertEqual(hardening.OPEN, hardening.verdict(
                DOOR[probe], 409, 'Node n is locked by host c')[0])

    def test_anything_else_is_not_taken_for_an_answer(self):
        for door, status in ((INSTANCE_INFO, 409), (INSTANCE_INFO, 404),
                             (TRAIT, 400), (TRAIT, 201), (TRAIT, 500)):
            self.assertEqual(
                (hardening.NOT_PROBED, 'unexpected answer HTTP %d' % status),
                hardening.verdict(door, status))
        # glance refusing the create for another policy (add_image) says
        # nothing of the property's protection
        self.assertEqual(hardening.NOT_PROBED, hardening.verdict(
            TRAIT, 403, 'You are not authorized to complete add_image')[0])
        # a 400 that is not ironic's answer after its policy: a body it
        # refused first, say, proves nothing
        self.assertEqual(hardening.NOT_PROBED, hardening.verdict(
            DOOR['service_steps'], 400, 'Invalid service_steps')[0])

    def test_a_rebuild_naming_a_runbook_open_only_past_everything(self):
        door = DOOR['runbook_rebuild']
        self.assertEqual(hardening.OPEN,
                         hardening.verdict(door, 400, PAST_POLICY)[0])
        self.assertEqual(hardening.CLOSED, hardening.verdict(door, 403)[0])
        # the runbook not approved for the node, the node in maintenance:
        # the probe never reached the step rules
        self.assertEqual(hardening.CLOSED, hardening.verdict(
            door, 400, 'disable_ramdisk is supported only with manual '
            'cleaning or servicing')[0])
        for text in ('This runbook has not been approved for use on this '
                     'node', "it's in maintenance mode"):
            self.assertEqual(hardening.NOT_PROBED,
                             hardening.verdict(door, 400, text)[0])

    def test_probes_ask_for_what_cannot_be_written(self):
        self.assertEqual([{'op': 'remove', 'path': '/instance_info/k'}],
                         hardening.instance_info_probe('k'))
        self.assertEqual({'id': 'image-1',
                          'trait:CUSTOM_DEPLOY_CONFIG_CHECK_PROBE':
                          'required'}, hardening.image_probe('image-1', TRAIT))
        # every provision probe carries a rescue password for another
        # target: ironic refuses it before the conductor, in any state
        for body in (hardening.deploy_steps_probe('firmware.update'),
                     hardening.service_steps_probe(),
                     hardening.clean_steps_probe(),
                     hardening.runbook_rebuild_probe('CUSTOM_RB')):
            self.assertEqual(hardening.NOT_A_RESCUE, body['rescue_password'])
            self.assertNotEqual('rescue', body['target'])
        self.assertEqual(
            [{'interface': 'firmware', 'step': 'update', 'args': {},
              'priority': 0}],
            hardening.deploy_steps_probe('firmware.update')['deploy_steps'])
        self.assertEqual('CUSTOM_RB', hardening.runbook_rebuild_probe(
            'CUSTOM_RB')['runbook'])

    def test_raw_deploy_steps_closed_only_where_each_was_refused(self):
        door = DOOR['deploy_steps']
        refused = (403, 'denied')
        passed = (400, PAST_POLICY)
        self.assertEqual(hardening.CLOSED, hardening.steps_row(
            door, {'bios.factory_reset': refused,
                   'firmware.update': refused}, set())[0])
        # a step a template uses cannot be disallowed: open
        state, detail = hardening.steps_row(
            door, {'bios.apply_configuration': passed,
                   'firmware.update': refused},
            {'bios.apply_configuration'})
        self.assertEqual(hardening.OPEN, state)
        self.assertIn('used by a template, so no disallow list may refuse '
                      'it: bios.apply_configuration', detail)
        # one no template uses: ironic's disallow list decides, unprobed
        state, detail = hardening.steps_row(
            door, {'firmware.update': passed}, {'bios.apply_configuration'})
        self.assertEqual(hardening.NOT_PROBED, state)
        self.assertIn("closed only where ironic's [api]disallow_deploy_steps "
                      'lists it', detail)
        # the templates not read: nothing is judged open or closed
        self.assertEqual(hardening.NOT_PROBED, hardening.steps_row(
            door, {'bios.apply_configuration': passed}, None)[0])
        # a step rule ironic 39 cannot enforce is named, never closed
        state, detail = hardening.steps_row(door, {'firmware.update': (
            500, 'Policy baremetal:step:execute:firmware.update has not '
            'been registered')}, set())
        self.assertEqual(hardening.NOT_PROBED, state)
        self.assertIn('cannot enforce (HTTP 500 for every caller', detail)

    def test_disallowed_steps_leave_the_templates_and_profiles_theirs(self):
        templates = [{'steps': [
            {'interface': 'bios', 'step': 'apply_configuration'},
            {'interface': 'deploy', 'step': 'erase_devices_metadata'}]}]
        steps, kept = hardening.disallowed_steps(templates)
        self.assertEqual('vendor.send_raw', steps[0])
        self.assertEqual(['bios.apply_configuration',
                          'deploy.erase_devices_metadata',
                          'raid.apply_configuration'], kept)
        # a deploy's own steps are never listed; what step_safety says
        # destroys data or risks the boot is
        self.assertFalse({'deploy.deploy', 'deploy.write_image'} & set(steps))
        self.assertTrue({'management.one_button_secure_erase',
                         'management.import_configuration',
                         'management.reset_bios_to_default'} <= set(steps))
        self.assertFalse(set(kept) & set(steps))
        self.assertIn('firmware.update', steps)
        self.assertEqual(len(hardening.GUARDED_STEPS) + 1,
                         len(steps) + len(kept))

    def test_non_inheritable_keeps_novas_default(self):
        self.assertEqual(
            ['cache_in_nova', 'bittorrent', 'deploy-config:raid',
             'trait:CUSTOM_DEPLOY_CONFIG_RAID_1'],
            hardening.non_inheritable([
                {'id': 'i-1', 'trait:CUSTOM_DEPLOY_CONFIG_RAID_1': 'required',
                 'deploy-config:raid': '1', 'hw_firmware_type': 'uefi'},
                {'id': 'i-2', 'deploy-config:raid': '1'}]))

    def test_owners_read_and_said(self):
        nodes = [{'uuid': 'n-1', 'name': 'bm-1', 'owner': 'p-1'},
                 {'uuid': 'n-2', 'name': 'bm-2', 'owner': 'p-2',
                  'instance_uuid': 's-1'},
                 {'uuid': 'n-3', 'name': 'bm-3', 'owner': 'p-2'}]
        servers = [{'id': 's-1'}]
        rows = hardening.owner_rows('p-1', servers, nodes)
        self.assertEqual([hardening.OPEN] * 2, [r[2] for r in rows])
        self.assertTrue(rows[0][4].startswith('bm-1: owned by the project'))
        self.assertIn("the project's toggles there are refused", rows[0][4])
        # another's owner of a node that runs the project's server: named
        self.assertTrue(rows[1][4].startswith('bm-2: owned by project p-2'))
        self.assertEqual(hardening.CLOSED,
                         hardening.owner_rows('p-3', [], nodes)[0][2])
        # a token that may not see every node proves nothing by absence
        self.assertEqual((hardening.NOT_PROBED, 'scoped'),
                         hardening.owner_rows('p-3', [], nodes,
                                              hidden='scoped')[0][2:5:2])

    def test_runbooks_runnable_by_ironics_rule_whatever_their_traits(self):
        nodes = [{'uuid': 'n-1', 'name': 'bm-1', 'lessee': 'p-1',
                  'traits': ['HW_CPU_HYPERTHREADING', 'CUSTOM_T']},
                 {'uuid': 'n-2', 'name': 'bm-2', 'owner': 'p-1',
                  'traits': ['CUSTOM_T']},
                 {'uuid': 'n-3', 'name': 'bm-3', 'lessee': 'p-2',
                  'traits': ['CUSTOM_OTHER']}]
        grant = grants.wanted('p-1', deploy_config.parse_config('ht=off'),
                              None, {'name': 'CUSTOM_T', 'steps': []})
        runbooks = [
            dict(grant, uuid='r-1'),
            {'name': 'CUSTOM_OLD', 'owner': 'p-1', 'public': False,
             'traits': ['HW_CPU_HYPERTHREADING'], 'extra': {}},
            # not the project's: ironic's runbook:use refuses it, public
            # or not
            {'name': 'CUSTOM_PUBLIC', 'owner': 'p-2', 'public': True,
             'traits': ['CUSTOM_T'], 'extra': {}},
            # its own, on no node of its
            {'name': 'CUSTOM_IDLE', 'owner': 'p-1', 'public': False,
             'traits': ['CUSTOM_OTHER'], 'extra': {}}]
        self.assertEqual(
            [('CUSTOM_OLD', ['bm-1']), (grant['name'], ['bm-1', 'bm-2'])],
            sorted((r['name'], on) for r, on in grants.runnable(
                runbooks, nodes, 'p-1')))
        template = {'name': 'CUSTOM_T', 'steps': [], 'extra': {}}
        template['extra'][grants.GRANTED] = {
            'p-1': grants.content_digest(template)}
        self.assertEqual(
            [(hardening.OPEN, 'read: CUSTOM_OLD runs on bm-1 (its traits: '
              'HW_CPU_HYPERTHREADING)')],
            [r[2:5:2] for r in hardening.runbook_rows(
                'p-1', runbooks, nodes, [template])])
        self.assertEqual(
            [(hardening.CLOSED, 'read: the project may run 1 runbook(s) on '
              "its nodes, each its grant's")],
            [r[2:5:2] for r in hardening.runbook_rows(
                'p-1', runbooks[:1], nodes, [template])])
        # the grant's name on other steps, or with the grant withdrawn:
        # no grant's
        forged = dict(runbooks[0], steps=[{
            'interface': 'bios', 'step': 'factory_reset', 'args': {},
            'order': 0}])
        withdrawn = dict(template, extra={})
        for rows in (hardening.runbook_rows('p-1', [forged], nodes,
                                            [template]),
                     hardening.runbook_rows('p-1', runbooks[:1], nodes,
                                            [withdrawn])):
            self.assertEqual([hardening.OPEN], [r[2] for r in rows])
        # the templates unread (a project's token): a grant's name proves
        # nothing either way
        self.assertEqual([hardening.NOT_PROBED], [r[2] for r in (
            hardening.runbook_rows('p-1', runbooks[:1], nodes, None))])

    def test_a_runbook_named_as_a_node_trait_runs_there_too(self):
        # ironic 39 at a microversion before 1.112 runs a runbook whose
        # name is one of the node's traits, whatever its own traits
        nodes = [{'uuid': 'n-1', 'name': 'bm-1', 'lessee': 'p-1',
                  'traits': ['HW_CPU_HYPERTHREADING']}]
        runbook = {'name': 'HW_CPU_HYPERTHREADING', 'owner': 'p-1',
                   'traits': [], 'extra': {}}
        self.assertEqual([(runbook, ['bm-1'])],
                         grants.runnable([runbook], nodes, 'p-1'))

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
            [(hardening.CLOSED, "read: 1 node(s) run the project's servers, "
              'each leased to it')],
            [r[2:5:2] for r in hardening.lessee_rows('p-1', servers[:1],
                                                    nodes[:1])])
        self.assertEqual([hardening.NOT_PROBED], [
            r[2] for r in hardening.lessee_rows('p-1', servers[:1],
                                                nodes[:1], hidden='why')])


class TestShippedHardening(testtools.TestCase):
    """The line each door names is in the file the operator installs, and
    its rules mean what the docs say, as oslo.policy judges them."""

    def enforce(self, rule, target=None, **creds):
        from oslo_config import cfg
        from oslo_policy import policy

        enforcer = policy.Enforcer(cfg.ConfigOpts(), use_conf=False)
        enforcer.set_rules(policy.Rules.from_dict({'rule': rule}),
                           use_conf=False)
        return enforcer.enforce('rule', target or {}, dict(
            {'service_user_id': None, 'system_scope': None,
             'project_name': 'demo'}, **creds))

    def test_ironic_rules_give_instance_info_to_the_operators(self):
        rules = yaml.safe_load((SHIPPED / hardening.IRONIC_FILE).read_text())
        self.assertEqual('(role:member and system_scope:all) or '
                         '(role:service and system_scope:all) or '
                         'rule:service_role',
                         rules[hardening.INSTANCE_INFO_RULE])
        self.assertEqual(9, len(rules))
        # nova's service user: the service role in the Default domain's
        # service project, never in a project of that name elsewhere
        target = {'config.service_project_name': 'service'}
        service = {'roles': ['service'], 'project_name': 'service'}
        self.assertTrue(self.enforce(rules['service_role'], target,
                                     project_domain_id='default', **service))
        self.assertFalse(self.enforce(rules['service_role'], target,
                                      project_domain_id='d-2', **service))
        # no step rule: ironic 39 answers 500 to every request naming its
        # step (oslo.policy's authorize refuses a rule no code registered)
        self.assertFalse([r for r in rules
                          if r.startswith('baremetal:step:execute:')])

    def test_ironic_disallow_lists_leave_the_profiles_steps(self):
        conf = configparser.ConfigParser()
        conf.read_string((SHIPPED / 'ironic-api.conf').read_text())
        steps, kept = hardening.disallowed_steps([])
        self.assertEqual(list(hardening.PROFILE_STEPS), kept)
        for option in ('disallow_deploy_steps', 'disallow_service_steps'):
            self.assertEqual(steps, conf['api'][option].split(','))

    def test_glance_rule_never_met_through_nova(self):
        rules = yaml.safe_load((SHIPPED / 'glance-policy.yaml').read_text())
        rule = rules['deploy_config_operator']
        self.assertTrue(self.enforce(rule, roles=['admin']))
        self.assertFalse(self.enforce(rule, roles=['member', 'manager']))
        # glance adds the service token's roles to the member's
        # (property_utils.check_property_rules): nova's service user with
        # admin passes "role:admin", never this rule
        self.assertTrue(self.enforce('role:admin', roles=[
            'member', 'admin', 'service'], service_user_id='nova'))
        self.assertFalse(self.enforce(rule, roles=[
            'member', 'admin', 'service'], service_user_id='nova',
            service_roles=['admin', 'service']))

    def test_glance_protections_name_the_rule_of_the_glance_policy(self):
        protections = configparser.ConfigParser()
        protections.read_string(
            (SHIPPED / hardening.GLANCE_FILE).read_text())
        rules = yaml.safe_load((SHIPPED / 'glance-policy.yaml').read_text())
        self.assertEqual(['deploy_config_operator'], list(rules))
        for section in (hardening.TRAIT_SECTION, hardening.OURS_SECTION):
            self.assertEqual(
                {'create': 'deploy_config_operator', 'read': '@',
                 'update': 'deploy_config_operator', 'delete': '@'},
                dict(protections[section]))
        # the last section keeps every other property open
        self.assertEqual(['^trait:', '^deploy-config:', '.*'],
                         protections.sections())
        ironic = yaml.safe_load((SHIPPED / hardening.IRONIC_FILE).read_text())
        for door in hardening.DOORS:
            where, _, line = door.closed_by.partition(' ')
            if where == hardening.IRONIC_FILE:
                self.assertIn(line.strip('"'), ironic)
            elif where == hardening.GLANCE_POLICY_FILE:
                self.assertIn(line.split('"')[1], rules)
            elif where == hardening.GLANCE_FILE:
                self.assertIn(line.strip('[]'), protections.sections())
            else:   # not one of the files: says what closes it instead
                self.assertIn(door.probe, ('deploy_steps',
                                           'runbook_rebuild'))


class CheckTestCase(fakes.TestCommand):
    def setUp(self):
        super().setUp()
        self.glance.add_image('tiny')
        self.server = self.nova.add_server(
            'db-1', self.nova.add_flavor('bm.gold', fakes.GOLD))
        self.node = self.deploy_on_node(self.server, 'bm-1', [], {'A': '1'})
        # nova created the server, ironic deployed it and recorded so
        self.server['created'] = '2026-12-01T10:00:00Z'
        self.ironic.history[self.node['uuid']] = [history_event(
            'deployment_start', '2026-12-01T10:00:01', [DRIVER_STEP],
            'nova')]
        self.before = self.state()

    def state(self):
        """What no probe may change (a copy)."""
        return copy.deepcopy(({n['name']: (n['instance_info'], n['extra'])
                               for n in self.ironic.nodes.values()},
                              sorted(self.glance.images)))

    def open_doors(self):
        """The cloud without the shipped hardening."""
        self.ironic.instance_info_open = True
        self.ironic.steps_open = True
        self.ironic.runbook_create_open = True
        self.glance.protected = ()

    def runbook_of_its_own(self, name='CUSTOM_OLD', trait='CUSTOM_HW'):
        """A runbook the project made before the hardening, on a trait of
        its node that no template is named for."""
        self.node['traits'].append(trait)
        self.ironic.runbooks[name] = {
            'uuid': name, 'name': name, 'owner': 'project-1',
            'public': False, 'traits': [trait], 'extra': {},
            'disable_ramdisk': False, 'steps': [
                {'interface': 'bios', 'step': 'apply_configuration',
                 'args': {'settings': []}, 'order': 0}]}

    def rows(self, project='demo'):
        columns, rows = self.run_command(cmds.CheckProjectDeployConfig,
                                         [project])
        self.assertEqual(hardening.COLUMNS, columns)
        # no probe wrote anything
        self.assertEqual(self.before, self.state())
        return rows

    def check(self, project='demo'):
        return {(r[0], r[1]): (r[2], r[4]) for r in self.rows(project)}

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

    def rows(self, project='demo'):
        """The operator's check, the fakes back to the operator's token
        (a probe user's connection leaves them at its project's)."""
        self.ironic.project, self.ironic.project_roles = None, set()
        self.nova.project = None
        return super().rows(project)

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
        self.ironic.add_bios_template(
            deploy_config.parse_config('hyperthreading=disabled'),
            ('HyperThreading', 'Disabled'))
        found = self.check()
        self.assertEqual(22, len(found))
        # never "closed" where nothing was probed: nova's proxy has no
        # safe probe, the rebuild naming a runbook needs one to run
        self.assertEqual(
            dict.fromkeys(((DOOR[probe].name, role)
                           for probe in ('nova_proxy', 'runbook_rebuild')
                           for role in ('manager', 'member')),
                          hardening.NOT_PROBED),
            {d: s for d, s in self.states(found).items()
             if s == hardening.NOT_PROBED})
        # the manager may send the template's BIOS step: no disallow list
        # can refuse it without refusing the template
        state, detail = found[DOOR['deploy_steps'].name, 'manager']
        self.assertEqual(hardening.OPEN, state)
        self.assertIn('used by a template, so no disallow list may refuse '
                      'it: bios.apply_configuration', detail)
        self.assertIn("closed only where ironic's [api]disallow_deploy_steps"
                      ' lists it', detail)
        self.assertEqual({hardening.CLOSED}, {
            s for (door, who), s in self.states(found).items()
            if door not in (DOOR['nova_proxy'].name,
                            DOOR['runbook_rebuild'].name)
            and (door, who) != (DOOR['deploy_steps'].name, 'manager')})
        self.assertEqual(
            'as a short-lived manager user, removed: refused (HTTP 403)',
            found[INSTANCE_INFO.name, 'manager'][1])
        self.assertEqual({}, self.keystone.users)
        self.assertEqual(['manager', 'member'], [
            n.split('-')[3] for n in self.keystone.removed])

    def test_a_runbook_of_its_own_named_and_probed(self):
        self.conn.config.config['auth']['auth_url'] = 'http://keystone'
        self.runbook_of_its_own()
        found = self.check()
        self.assertEqual(
            (hardening.OPEN, 'read: CUSTOM_OLD runs on bm-1 (its traits: '
             'CUSTOM_HW)'), found[hardening.RUNBOOK_DOOR.name, 'operator'])
        # ironic 39 checks no step rule on a rebuild that names it, then
        # refuses it for the runbook's disable_ramdisk: closed, said why
        state, detail = found[DOOR['runbook_rebuild'].name, 'manager']
        self.assertEqual(hardening.CLOSED, state)
        self.assertIn("only because ironic refuses a rebuild the runbook's "
                      'disable_ramdisk', detail)
        self.assertEqual(hardening.CLOSED,
                         found[DOOR['runbook_rebuild'].name, 'member'][0])
        # an ironic that lets such a rebuild through: open
        self.ironic.rebuild_refuses_runbooks = False
        self.assertEqual(hardening.OPEN, self.check()[
            DOOR['runbook_rebuild'].name, 'manager'][0])
        # a fixed ironic, with a rule for the step: closed
        self.ironic.runbook_skips_step_rules = False
        self.ironic.step_rules['bios.apply_configuration'] = 'refuse'
        found = self.check()
        self.assertEqual(hardening.CLOSED,
                         found[DOOR['runbook_rebuild'].name, 'manager'][0])
        # ironic 39 with a step rule in its policy file: a 500, named
        self.ironic.step_rules['bios.apply_configuration'] = 'unregistered'
        self.ironic.runbook_skips_step_rules = True
        state, detail = self.check()[DOOR['deploy_steps'].name, 'manager']
        # open still: the RAID profile's step passes, and no shipped list
        # names it
        self.assertEqual(hardening.OPEN, state)
        self.assertIn('no disallow list may refuse it: '
                      'raid.apply_configuration', detail)
        self.assertIn('which this ironic cannot enforce (HTTP 500 for every '
                      "caller, the operator's own too): "
                      'bios.apply_configuration', detail)

    def test_steps_no_template_explains_are_seen_in_the_history(self):
        self.conn.config.config['auth']['auth_url'] = 'http://keystone'
        template = self.ironic.add_bios_template(
            deploy_config.parse_config('hyperthreading=disabled'),
            ('HyperThreading', 'Disabled'))
        chosen = {'interface': 'bios', 'step': 'apply_configuration',
                  'args': {'settings': [{'name': 'TpmState',
                                         'value': 'Off'}]}, 'priority': 150}
        driver = DRIVER_STEP
        # the instance was deployed with the template, as nova asks
        self.node['instance_info']['traits'] = [template['name']]
        self.before = self.state()
        self.ironic.history[self.node['uuid']] = [
            # before the instance: not its project's doing
            history_event('deployment_start', '2026-12-01T09:00:00',
                          [chosen], 'u-0'),
            history_event('deployment_start', '2026-12-01T10:00:01',
                          [driver], 'nova'),
            history_event('servicing_start', '2026-12-01T10:00:02',
                          template['steps'], 'u-1'),
            history_event('deployment_start', '2026-12-01T10:00:03',
                          [chosen, driver], 'u-2')]
        found = self.check()
        self.assertEqual(
            (hardening.OPEN, "bm-1: bios.apply_configuration at "
             "2026-12-01T10:00:03 by user u-2, args {'settings': [{'name': "
             "'TpmState', 'value': 'Off'}]}"),
            found[hardening.HISTORY_DOOR.name, 'operator'])
        del self.ironic.history[self.node['uuid']][-1]
        self.assertEqual(hardening.CLOSED, self.check()[
            hardening.HISTORY_DOOR.name, 'operator'][0])
        # a template the instance does not name, nor a grant: unexplained;
        # an in-band step only the end of a flow lists: seen
        self.node['instance_info']['traits'] = []
        self.before = self.state()
        self.ironic.history[self.node['uuid']].append(history_event(
            'deployment_end', '2026-12-01T10:00:04', [dict(
                chosen, interface='raid', step='delete_configuration',
                args={})], 'u-3'))
        found = {r[4].split(' at ')[0] for r in self.rows() if r[0] == (
            hardening.HISTORY_DOOR.name)}
        self.assertEqual({'bm-1: bios.apply_configuration',
                          'bm-1: raid.delete_configuration'}, found)
        # a deploy in the second nova created the instance: its own
        self.ironic.history[self.node['uuid']] = [history_event(
            'deployment_start', '2026-12-01T10:00:00', [DRIVER_STEP],
            'nova')]
        self.assertEqual(hardening.CLOSED, self.check()[
            hardening.HISTORY_DOOR.name, 'operator'][0])
        # a flow whose steps cannot be read is named
        self.ironic.history[self.node['uuid']] = self.ironic.history[
            self.node['uuid']][:1] + [dict(history_event(
                'deployment_start', '2026-12-01T10:00:06', [], 'u-1'),
                event="Starting with steps=[{'args': {'v': nan}}]")]
        self.assertEqual(
            (hardening.OPEN, 'bm-1: (steps.unreadable) at '
             '2026-12-01T10:00:06 by user u-1, args {}'),
            self.check()[hardening.HISTORY_DOOR.name, 'operator'])
        # a history that does not reach the deploy proves nothing
        self.ironic.history[self.node['uuid']] = []
        state, detail = self.check()[hardening.HISTORY_DOOR.name, 'operator']
        self.assertEqual(hardening.NOT_PROBED, state)
        self.assertIn("does not show its instance's deploy", detail)

    def test_a_node_the_project_owns_is_named(self):
        self.conn.config.config['auth']['auth_url'] = 'http://keystone'
        self.node['owner'] = 'project-1'
        state, detail = self.check()[hardening.OWNER_DOOR.name, 'operator']
        self.assertEqual(hardening.OPEN, state)
        self.assertTrue(detail.startswith('bm-1: owned by the project'))

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
            if door.startswith('image property') and 'nova' not in door})
        for probe in ('service_steps', 'clean_steps', 'runbook_create'):
            self.assertEqual(hardening.OPEN, found[DOOR[probe].name,
                                                   'manager'])

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
            {'manager': {hardening.CLOSED, hardening.NOT_PROBED},
             'member': {hardening.NOT_PROBED},
             'operator': {hardening.CLOSED, hardening.NOT_PROBED}},
            {who: {s for (_, w), s in found.items() if w == who}
             for who in ('manager', 'member', 'operator')})
        # its token does not see the nodes leased to others, which may
        # run its servers: neither their lessees nor their owners judged
        self.assertEqual(hardening.NOT_PROBED,
                         found[hardening.OWNER_DOOR.name, 'operator'])
        self.assertEqual(hardening.NOT_PROBED,
                         found[hardening.LESSEE_DOOR.name, 'operator'])
        # the templates hidden from it: its deploy steps are not judged
        self.assertEqual(hardening.NOT_PROBED,
                         found[DOOR['deploy_steps'].name, 'manager'])

    def test_its_own_runbook_named(self):
        self.runbook_of_its_own()
        found = self.states(self.check('project-1'))
        self.assertEqual(hardening.OPEN,
                         found[hardening.RUNBOOK_DOOR.name, 'operator'])
        self.assertEqual(hardening.CLOSED,
                         found[DOOR['runbook_rebuild'].name, 'manager'])

    def test_open_doors_named(self):
        self.open_doors()
        found = self.states(self.check('project-1'))
        self.assertEqual({hardening.OPEN, hardening.NOT_PROBED}, {
            s for (_, who), s in found.items() if who == 'manager'})
        self.assertEqual(hardening.OPEN,
                         found[DOOR['service_steps'].name, 'manager'])

    def test_another_project_in_one_line(self):
        self.assertIn('A project checks itself only',
                      self.refused('project-2'))
        self.assertEqual([], self.ironic.writes)


class TestHardeningSettings(fakes.TestCommand):
    """``deploy-config hardening show``: the lines for the cloud at hand,
    from its templates, images and service project."""

    def show(self):
        columns, rows = self.run_command(cmds.ShowHardening, [])
        self.assertEqual(hardening.SETTINGS_COLUMNS, columns)
        return {r[2]: r for r in rows}

    def test_the_lines_follow_the_templates_images_and_projects(self):
        self.ironic.add_template('CUSTOM_WIPE', steps=[
            {'interface': 'deploy', 'step': 'erase_devices_metadata',
             'args': {}, 'priority': 80}])
        self.glance.add_image('raid-1', **{
            'trait:CUSTOM_DEPLOY_CONFIG_RAID_1': 'required'})
        self.keystone.projects['p-svc'] = ('service', 'default')
        found = self.show()
        steps = found['disallow_deploy_steps'][3].split(',')
        self.assertNotIn('deploy.erase_devices_metadata', steps)
        self.assertIn('deploy.erase_devices', steps)
        self.assertIn('deploy.erase_devices_metadata',
                      found['disallow_deploy_steps'][4])
        self.assertEqual(found['disallow_deploy_steps'][3],
                         found['disallow_service_steps'][3])
        self.assertEqual(
            'cache_in_nova,bittorrent,trait:CUSTOM_DEPLOY_CONFIG_RAID_1',
            found['non_inheritable_image_properties'][3])
        self.assertEqual(
            '"service_role": "role:service and project_id:p-svc and '
            'project_name:%(config.service_project_name)s"',
            found['service_role'][3])
        # a project of that name in another domain: named, not taken
        self.keystone.projects['p-evil'] = ('service', 'd-2')
        found = self.show()
        self.assertIn('project_id:p-svc', found['service_role'][3])
        self.assertIn('p-evil (domain d-2)', found['service_role'][4])
        # none in the Default domain: no guess
        del self.keystone.projects['p-svc']
        found = self.show()
        self.assertIsNone(found['service_role'][3])
        self.assertIn('no project named service in the Default domain '
                      '(others of that name: p-evil (domain d-2))',
                      found['service_role'][4])
        self.assertEqual([], self.ironic.writes)

    def test_a_project_scoped_token_in_one_line(self):
        self.as_project('admin', 'member', 'reader')
        self.assertIn('system-scoped', str(self.assertRaises(
            exceptions.CommandError, self.run_command, cmds.ShowHardening,
            [])))
