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

"""Grants: the runbooks a grant publishes (one per template serving the
config, per resource class), what a running server may take, drift and its
repair, withdrawal, the flavors a project's virtual servers need, and the
record's trust rule."""

from osc_lib import exceptions
import testtools

from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.configs import steps
from osc_deploy_config.domain.configs import templates
from osc_deploy_config.domain.grants import grant_flavors
from osc_deploy_config.domain.grants import grants
from osc_deploy_config.domain.toggle import toggle_plan
from osc_deploy_config.domain.toggle import toggle_record
from osc_deploy_config.v1 import project_deploy_config as cmds
from tests.unit import fakes
from tests.unit.fakes import HT
from tests.unit.fakes import OFF
from tests.unit.fakes import OFF_T
from tests.unit.fakes import ON
from tests.unit.fakes import ON_T

SILVER_OFF = OFF_T + '_FOR_BAREMETAL_SILVER'
RAID = deploy_config.Config('disks', 'raid1')


def template(name, config, settings, resource_class=None, extra_steps=()):
    return {'uuid': 'uuid-' + name, 'name': name, 'steps': [
        steps.bios_step(settings), *extra_steps],
        'extra': deploy_config.template_extra(config, [HT], resource_class)}


def known():
    """hyperthreading=enabled for every kind; =disabled for every kind and
    its own for baremetal-silver (another vendor's name); a RAID
    profile."""
    return templates.by_config([
        template(ON_T, ON, [('HyperThreading', 'Enabled')]),
        template(OFF_T, OFF, [('HyperThreading', 'Disabled')]),
        template(SILVER_OFF, OFF, [('ProcHyperthreading', 'Disabled')],
                 'baremetal-silver'),
        {'uuid': 'uuid-raid', 'name': 'CUSTOM_DEPLOY_CONFIG_DISKS_RAID1',
         'steps': [steps.raid_step({'logical_disks': [
             {'size_gb': 'MAX', 'raid_level': '1'}]})],
         'extra': deploy_config.template_extra(RAID, [])}])


def runbooks(changes, uuid='rb-%d'):
    """The runbooks a plan's changes make, as ironic lists them."""
    return [dict(c.wanted, uuid=uuid % n) for n, c in enumerate(
        c for c in changes if c.action == grants.CREATE)]


class TestPlan(testtools.TestCase):
    def test_one_runbook_per_template_serving_the_config(self):
        changes = grants.plan('p1', [OFF], known(), [])
        self.assertEqual(
            [(grants.RECORD, None, OFF_T),
             (grants.CREATE, None, 'deploy-config.p1.' + OFF_T),
             (grants.RECORD, 'baremetal-silver', SILVER_OFF),
             (grants.CREATE, 'baremetal-silver',
              'deploy-config.p1.' + SILVER_OFF)],
            [(c.action, c.resource_class, c.name) for c in changes])
        self.assertEqual([{'op': 'add', 'path': '/extra/%s' % grants.GRANTED,
                           'value': {'p1': grants.content_digest(
                               known()[OFF])}}], changes[0].wanted)
        runbook = changes[3].wanted
        self.assertEqual(('p1', False, [SILVER_OFF]), (
            runbook['owner'], runbook['public'], runbook['traits']))
        self.assertEqual([{'interface': 'bios', 'step': 'apply_configuration',
                           'args': {'settings': [{
                               'name': 'ProcHyperthreading',
                               'value': 'Disabled'}]}, 'order': 0}],
                         runbook['steps'])
        self.assertEqual(OFF, grants.granted_config(runbook))

    def test_a_config_a_running_server_may_not_take_is_never_granted(self):
        why = self.assertRaises(exceptions.CommandError, grants.plan, 'p1',
                                [OFF, RAID], known(), [])
        self.assertIn('Deploy config disks=raid1 cannot be granted: its '
                      'template CUSTOM_DEPLOY_CONFIG_DISKS_RAID1 runs '
                      'raid.apply_configuration', str(why))
        reset = known()
        reset[ON]['steps'].append({'interface': 'bios',
                                   'step': 'factory_reset', 'args': {},
                                   'priority': 10})
        self.assertIn('bios.factory_reset', str(self.assertRaises(
            exceptions.CommandError, grants.plan, 'p1', [ON], reset, [])))
        idle = known()
        idle[ON]['steps'][0]['priority'] = 0
        self.assertIn('has no enabled step', str(self.assertRaises(
            exceptions.CommandError, grants.plan, 'p1', [ON], idle, [])))

    def test_a_disabled_step_is_left_out(self):
        found = known()
        found[ON]['steps'].append({'interface': 'raid',
                                   'step': 'apply_configuration',
                                   'args': {}, 'priority': 0})
        (created,) = runbooks(grants.plan('p1', [ON], found, []))
        self.assertEqual(['apply_configuration'],
                         [s['step'] for s in created['steps']])

    def test_a_config_no_template_realises_is_refused(self):
        self.assertIn('No deploy template realises turbo=on', str(
            self.assertRaises(exceptions.CommandError, grants.plan, 'p1', [
                deploy_config.Config('turbo', 'on')], known(), [])))

    def test_drift_is_found_and_a_match_kept(self):
        made = runbooks(grants.plan('p1', [OFF], known(), []))
        granted = known()
        for template in (granted[OFF], granted.per_class[OFF][
                'CUSTOM_BAREMETAL_SILVER']):
            fakes.grant(template, 'p1')
        self.assertEqual([grants.KEEP, grants.KEEP], [
            c.action for c in grants.plan('p1', [OFF], granted, made)])
        made[0]['steps'][0]['args']['settings'][0]['value'] = 'Enabled'
        made[1]['traits'] = []
        changes = grants.plan('p1', [OFF], granted, made)
        self.assertEqual(
            [(grants.REPAIR, 'its steps differ from template ' + OFF_T),
             (grants.REPAIR, 'its traits are none, not ' + SILVER_OFF)],
            [(c.action, c.why) for c in changes])
        # ironic runs a runbook's steps in the order it returns them: the
        # same steps in another order differ
        first = made[0]['steps'][0]
        want = dict(made[0], steps=[first, dict(first, step='other',
                                                order=1)])
        found = dict(want, steps=[dict(first, step='other', order=0),
                                  dict(first, order=1)])
        self.assertIn('steps', grants.differences(want, found))

    def test_a_runbook_whose_template_no_longer_serves_goes(self):
        made = runbooks(grants.plan('p1', [OFF], known(), []))
        fewer = known()
        del fewer.per_class[OFF]
        changes = grants.plan('p1', [OFF], fewer, made)
        self.assertEqual([grants.RECORD, grants.KEEP, grants.DELETE],
                         [c.action for c in changes])

    def test_a_name_another_project_took_is_deleted_first(self):
        # the grant's name space is the operator's: another project's
        # runbook under it blocks nothing
        squat = dict(grants.wanted('p2', OFF, None, known()[OFF]),
                     name='deploy-config.p1.' + OFF_T, owner='p2', uuid='x')
        changes = grants.plan('p1', [OFF], known(), [squat])
        self.assertEqual(
            [(grants.RECORD, OFF_T, None),
             (grants.DELETE, 'deploy-config.p1.' + OFF_T,
              "its name is the grant's to project p1, but project p2 made "
              "it"),
             (grants.CREATE, 'deploy-config.p1.' + OFF_T, 'no runbook yet')],
            [(c.action, c.name, c.why if c.action != grants.RECORD else None)
             for c in changes[:3]])
        self.assertIs(squat, changes[1].found)

    def test_another_projects_runbooks_are_not_its(self):
        theirs = runbooks(grants.plan('p2', [ON], known(), []))
        self.assertEqual([grants.RECORD, grants.CREATE], [
            c.action for c in grants.plan('p1', [ON], known(), theirs)])
        self.assertEqual([], grants.withdraw('p1', None, known(), theirs))

    def test_withdrawn_runbooks_first_then_the_templates_records(self):
        granted = known()
        fakes.grant(granted[OFF], 'p1', 'p2')
        made = runbooks(grants.plan('p1', [OFF], granted, []))
        changes = grants.withdraw('p1', [OFF], granted, made)
        self.assertEqual([grants.DELETE, grants.DELETE, grants.UNRECORD],
                         [c.action for c in changes])
        self.assertEqual([{'op': 'add', 'path': '/extra/%s' % grants.GRANTED,
                           'value': {'p2': grants.content_digest(
                               granted[OFF])}}], changes[-1].wanted)

    def test_a_long_name_stays_within_ironics_255(self):
        name = grants.runbook_name('p' * 32, 'CUSTOM_' + 'X' * 250)
        self.assertEqual(255, len(name))
        self.assertNotEqual(name, grants.runbook_name('p' * 32,
                                                      'CUSTOM_' + 'X' * 249))

    def test_the_runbooks_as_the_templates_they_grant(self):
        made = runbooks(grants.plan('p1', [OFF], known(), []))
        found = grants.as_templates(made, 'p1')
        silver = found.for_class('CUSTOM_BAREMETAL_SILVER')[OFF]
        self.assertEqual((SILVER_OFF, 'rb-1'), (silver['name'],
                                               silver['runbook']))
        self.assertEqual(OFF_T, found.for_class(None)[OFF]['name'])
        # another project's, or a public one, is not its grant
        self.assertEqual({}, dict(grants.as_templates(made, 'p2')))


class TestTrust(testtools.TestCase):
    """A project's record counts only for what the templates say was
    granted to it; a record of the wrong shape is none."""

    def node(self, project_configs, operator_configs=None):
        node = {'uuid': 'n1', 'properties': {}, 'extra': {}}
        if operator_configs:
            node['properties'][toggle_record.APPLIED] = {
                'instance_uuid': 'i1', 'configs': operator_configs}
        node['extra'][toggle_record.PROJECT_APPLIED] = {
            'instance_uuid': 'i1', 'configs': project_configs,
            'project_id': 'p1'}
        return node

    def test_a_granted_config_overrides_the_operators_record(self):
        node = self.node({'hyperthreading': 'disabled'},
                         {'hyperthreading': 'enabled'})
        self.assertEqual({'hyperthreading': OFF},
                         toggle_record.applied(node, 'i1', {OFF}))

    def test_a_record_that_does_not_count_never_removes_the_operators(self):
        node = self.node({'hyperthreading': 'disabled'},
                         {'hyperthreading': 'enabled'})
        for granted in (None, set(), {ON}):
            self.assertEqual({'hyperthreading': ON},
                             toggle_record.applied(node, 'i1', granted))
        node = self.node({'hyperthreading': 'disabled'})
        self.assertEqual({}, toggle_record.applied(node, 'i1', {ON}))

    def test_a_record_of_the_wrong_shape_is_none(self):
        for configs in (['x'], {'hyperthreading': 1}, 'disabled'):
            node = self.node(configs, {'hyperthreading': 'enabled'})
            self.assertEqual(({'hyperthreading': ON}, None), (
                toggle_record.applied(node, 'i1', {OFF}),
                toggle_record.project_recorded(node, 'i1')))

    def test_granted_means_the_templates_record_on_that_hardware(self):
        found = known()
        fakes.grant(found[OFF], 'p1')
        self.assertEqual({OFF}, grants.granted('p1', found.for_class(
            'CUSTOM_BAREMETAL_GOLD')))
        # silver nodes take their own template, not granted to p1
        self.assertEqual(set(), grants.granted('p1', found.for_class(
            'CUSTOM_BAREMETAL_SILVER')))
        # a runbook the project made itself proves nothing
        forged = runbooks(grants.plan('p1', [ON], known(), []))
        self.assertEqual(set(), grants.granted('p1', known().for_class(
            'CUSTOM_BAREMETAL_GOLD')))
        self.assertTrue(forged)

    def test_the_operators_toggle_supersedes_the_projects_record(self):
        node = self.node({'hyperthreading': 'disabled', 'turbo': 'on'})
        patch = toggle_record.complete_patch(node, 'i1', [ON])
        self.assertIn({'op': 'add', 'path': '/extra/%s'
                       % toggle_record.PROJECT_APPLIED,
                       'value': {'instance_uuid': 'i1', 'project_id': 'p1',
                                 'configs': {'turbo': 'on'}}}, patch)


class GrantTestCase(fakes.TestCommand):
    def setUp(self):
        super().setUp()
        self.ironic.add_hyperthreading_templates()
        self.ironic.add_template(
            'CUSTOM_DEPLOY_CONFIG_DISKS_RAID1', steps=[steps.raid_step(
                {'logical_disks': [{'size_gb': 'MAX', 'raid_level': '1'}]})],
            extra=deploy_config.template_extra(RAID, []))

    def grant(self, *args):
        columns, rows = self.run_command(cmds.SetProjectDeployConfig, args)
        return [dict(zip(columns, r, strict=True)) for r in rows]

    def refused(self, command, *args):
        return str(self.assertRaises(exceptions.CommandError,
                                     self.run_command, command, list(args)))


class TestGrant(GrantTestCase):
    def test_grant_publishes_runbooks_the_project_owns(self):
        rows = self.grant('demo', 'hyperthreading=disabled')
        self.assertEqual([('hyperthreading=disabled', 'record'),
                          ('hyperthreading=disabled', 'create')],
                         [(r['Config'], r['Action']) for r in rows])
        (runbook,) = self.ironic.runbooks.values()
        self.assertEqual(('project-1', False, [OFF_T]), (
            runbook['owner'], runbook['public'], runbook['traits']))
        (template,) = [t for t in self.ironic.templates.values()
                       if t['name'] == OFF_T]
        self.assertEqual(['project-1'], grants.granted_projects(template))
        # a rerun writes nothing
        writes = len(self.ironic.writes)
        self.assertEqual(['keep'], [r['Action'] for r in self.grant(
            'demo', 'hyperthreading=disabled')])
        self.assertEqual(writes, len(self.ironic.writes))

    def test_a_runbook_the_project_made_itself_is_named_as_no_grant(self):
        # a manager may create runbooks: one that looks like a grant's is
        # no grant (the templates do not record it)
        forged = grants.wanted('project-1', OFF, None, next(
            t for t in self.ironic.templates.values() if t['name'] == OFF_T))
        self.ironic.runbooks['rb'] = dict(forged, uuid='rb')
        # ironic runs it where the project's node carries one of its
        # traits: none yet, so it is nothing the project may run
        node = self.ironic.add_node('bm-1', [fakes.HT])
        node['lessee'] = 'project-1'
        self.assertEqual([], self.run_command(
            cmds.ShowProjectDeployConfig, ['demo'])[1])
        node['traits'].append(OFF_T)
        columns, rows = self.run_command(cmds.ShowProjectDeployConfig,
                                         ['demo'])
        self.assertEqual(1, len(rows))
        self.assertEqual(
            'runnable on bm-1 (traits %s), but not a grant: the operator '
            'has not granted it to the project (openstack baremetal '
            'runbook delete %s)' % (OFF_T, forged['name']), rows[0][-1])

    def test_drift_is_shown_and_repaired_by_a_rerun(self):
        self.grant('demo', 'hyperthreading=disabled')
        (runbook,) = self.ironic.runbooks.values()
        runbook['traits'] = []
        columns, rows = self.run_command(cmds.ShowProjectDeployConfig,
                                         ['demo'])
        self.assertIn('drift: its traits are none', rows[0][-1])
        self.assertEqual(['repair'], [r['Action'] for r in self.grant(
            'demo', 'hyperthreading=disabled')])
        self.assertEqual([OFF_T], runbook['traits'])
        columns, rows = self.run_command(cmds.ListProjectDeployConfig, [])
        self.assertEqual([('demo', 'hyperthreading=disabled', 1, 'ok')],
                         rows)

    def test_unset_takes_every_runbook_under_the_grants_name(self):
        # whatever its annotation says: its managers may rewrite it
        self.grant('demo', 'hyperthreading=disabled')
        (runbook,) = self.ironic.runbooks.values()
        runbook['extra'] = {}
        self.run_command(cmds.UnsetProjectDeployConfig,
                         ['demo', 'hyperthreading=disabled'])
        self.assertEqual({}, self.ironic.runbooks)
        self.grant('demo', 'hyperthreading=disabled')
        (runbook,) = self.ironic.runbooks.values()
        runbook.update(extra={}, traits=['CUSTOM_ELSEWHERE'])
        self.run_command(cmds.UnsetProjectDeployConfig, ['demo', '--all'])
        self.assertEqual({}, self.ironic.runbooks)

    def test_a_grant_outlives_no_deleted_project(self):
        # keystone forgot the project: its grant is still withdrawn
        (template,) = [t for t in self.ironic.templates.values()
                       if t['name'] == OFF_T]
        fakes.grant(template, 'project-gone')
        self.run_command(cmds.UnsetProjectDeployConfig,
                         ['project-gone', '--all'])
        self.assertEqual({}, grants.recorded(template))
        self.assertIn('No project', self.refused(
            cmds.UnsetProjectDeployConfig, 'project-never', '--all'))

    def test_a_template_changed_since_the_grant_shows_it_stale(self):
        self.grant('demo', 'hyperthreading=disabled')
        (template,) = [t for t in self.ironic.templates.values()
                       if t['name'] == OFF_T]
        template['steps'][0]['args']['settings'][0]['value'] = 'Enabled'
        columns, rows = self.run_command(cmds.ShowProjectDeployConfig,
                                         ['demo'])
        self.assertEqual(1, len(rows))
        self.assertIn('stale: template %s changed since the grant, which '
                      'counts for nothing until granted again (openstack '
                      'project deploy-config set project-1 '
                      'hyperthreading=disabled)' % OFF_T, rows[0][-1])
        # set grants it again, of the content now
        self.grant('demo', 'hyperthreading=disabled')
        self.assertEqual(['project-1'], grants.granted_projects(template))

    def test_a_recorded_grant_with_no_runbook_is_shown(self):
        # a template no longer grantable, its runbook gone: one row, no
        # crash
        (template,) = [t for t in self.ironic.templates.values()
                       if t['name'] == OFF_T]
        template['steps'].append({'interface': 'raid',
                                  'step': 'delete_configuration',
                                  'args': {}, 'priority': 10})
        fakes.grant(template, 'project-1')
        columns, rows = self.run_command(cmds.ShowProjectDeployConfig,
                                         ['demo'])
        self.assertEqual([('hyperthreading=disabled', None, None, None)],
                         [r[:4] for r in rows])
        self.assertIn('cannot be granted', rows[0][-1])

    def test_bad_input_changes_nothing(self):
        for args, why in (
                (('nowhere', 'hyperthreading=disabled'), 'No project'),
                (('demo', 'hyperthreading'), 'TYPE=VALUE'),
                (('demo', 'disks=raid1'), 'cannot be granted'),
                (('demo', 'turbo=on'), 'No deploy template realises')):
            self.assertIn(why, self.refused(cmds.SetProjectDeployConfig,
                                            *args))
        self.assertEqual([], self.ironic.writes + self.nova.writes)

    def test_an_ironic_without_project_runbooks_says_the_version(self):
        self.ironic.max_version = (1, 111)
        self.assertIn('supports API version 1.111 at most; deploy templates '
                      'and runbooks of a project, gated by their traits need '
                      '1.112 or later',
                      self.refused(cmds.SetProjectDeployConfig, 'demo',
                                   'hyperthreading=disabled'))
        self.assertEqual([], self.ironic.requests)

    def test_a_flavor_with_a_config_sharing_a_step_gets_their_set(self):
        # turbo=off also runs bios.apply_configuration: the flavor derived
        # from m1.turbo asks for the set of both, made first
        turbo = deploy_config.Config('turbo', 'off')
        self.ironic.add_bios_template(turbo, ('Turbo', 'Disabled'))
        both = 'CUSTOM_DEPLOY_CONFIG_SET_HYPERTHREADING_DISABLED_AND_TURBO_OFF'
        self.add_servers(('m1.tiny', {}), ('m1.turbo', {
            'deploy-config:turbo': 'off',
            'trait:CUSTOM_DEPLOY_CONFIG_TURBO_OFF': 'required'}))
        rows = self.grant('demo', 'hyperthreading=disabled')
        self.assertEqual([
            ('record', OFF_T), ('create', 'deploy-config.project-1.' + OFF_T),
            ('make set', both),
            ('create', 'm1.tiny+hyperthreading=disabled'),
            ('create', 'm1.turbo+hyperthreading=disabled+turbo=off')],
            [(r['Action'], r['Runbook']) for r in rows])
        made = [t for t in self.ironic.templates.values()
                if t['name'] == both]
        self.assertEqual([[{'name': 'HyperThreading', 'value': 'Disabled'},
                           {'name': 'Turbo', 'value': 'Disabled'}]],
                         [t['steps'][0]['args']['settings'] for t in made])
        derived = [f for f in self.nova.flavors.values() if f['name'] ==
                   'm1.turbo+hyperthreading=disabled+turbo=off']
        self.assertEqual({'trait:' + both: 'required'}, {
            k: v for k, v in derived[0]['extra_specs'].items()
            if k.startswith('trait:')})

    def test_a_flavor_whose_configs_clash_is_said_and_skipped(self):
        # turbo=off sets HyperThreading too, otherwise: no set serves both
        turbo = deploy_config.Config('turbo', 'off')
        self.ironic.add_bios_template(turbo, ('HyperThreading', 'Enabled'))
        self.add_servers(('m1.tiny', {}), ('m1.turbo', {
            'deploy-config:turbo': 'off',
            'trait:CUSTOM_DEPLOY_CONFIG_TURBO_OFF': 'required'}))
        rows = self.grant('demo', 'hyperthreading=disabled')
        self.assertEqual([
            ('record', OFF_T), ('create', 'deploy-config.project-1.' + OFF_T),
            ('create', 'm1.tiny+hyperthreading=disabled'),
            ('skip', 'm1.turbo')], [(r['Action'], r['Runbook']) for r in rows])
        self.assertEqual(
            'Deploy configs hyperthreading=disabled and turbo=off set BIOS '
            'setting HyperThreading to Disabled and Enabled: no server can '
            'have both; its servers cannot switch to it', rows[-1]['Why'])
        self.assertEqual(['m1.tiny', 'm1.tiny+hyperthreading=disabled',
                          'm1.turbo'], sorted(
            f['name'] for f in self.nova.flavors.values()))

    def add_servers(self, *flavors):
        """A server of project-1 on each (name, extra specs) flavor."""
        for name, specs in flavors:
            server = self.nova.add_server(name + '-server',
                                          self.nova.add_flavor(name, specs))
            server['tenant_id'] = 'project-1'

    def test_unset_deletes_the_runbooks_and_closes_the_flavors(self):
        server = self.nova.add_server('web-1', self.nova.add_flavor(
            'm1.tiny'))
        server['tenant_id'] = 'project-1'
        self.grant('demo', 'hyperthreading=disabled')
        (derived,) = [f for f in self.nova.flavors.values()
                      if f['name'] != 'm1.tiny']
        self.assertEqual(('m1.tiny+hyperthreading=disabled', False,
                          ['project-1']), (
            derived['name'], derived['os-flavor-access:is_public'],
            self.nova.access[derived['id']]))
        columns, rows = self.run_command(
            cmds.UnsetProjectDeployConfig, ['demo', 'hyperthreading=disabled'])
        self.assertEqual(['delete', 'unrecord', 'close'],
                         [r[3] for r in rows])
        self.assertEqual(({}, []), (self.ironic.runbooks,
                                    self.nova.access[derived['id']]))
        self.assertNotIn(grants.GRANTED, next(
            t for t in self.ironic.templates.values()
            if t['name'] == OFF_T)['extra'])


def flavor_and_server(name, public):
    """A listed flavor 'f1' of that name (1 vCPU, 512 MiB, 1 GiB), and a
    server 's1' that runs it, as nova embeds it."""
    flavor = {'id': 'f1', 'name': name, 'vcpus': 1, 'ram': 512, 'disk': 1,
              'OS-FLV-EXT-DATA:ephemeral': 0, 'swap': 0,
              'os-flavor-access:is_public': public, 'extra_specs': {},
              'description': None}
    server = {'id': 's1', 'flavor': {
        'original_name': name, 'vcpus': 1, 'ram': 512, 'disk': 1,
        'ephemeral': 0, 'swap': 0, 'extra_specs': {}}}
    return flavor, server


class TestGrantFlavors(testtools.TestCase):
    def test_a_private_flavor_a_toggle_did_not_derive_is_never_opened(self):
        flavor, server = flavor_and_server('m1.tiny', public=True)
        specs = {'deploy-config:hyperthreading': 'disabled',
                 'trait:' + OFF_T: 'required'}
        theirs = dict(flavor, id='f2', description='mine', extra_specs=specs,
                      name='m1.tiny+hyperthreading=disabled',
                      **{'os-flavor-access:is_public': False})
        (need,) = grant_flavors.needed(
            [server], [OFF], known().for_class(None), [flavor, theirs],
            {'f2': []}, 'p1')
        self.assertEqual((grant_flavors.SKIP, False), (need.action,
                                                       need.open))
        self.assertIn('never opened by a grant', need.why)
        ours = dict(theirs, description=toggle_plan.derived_description(
            'm1.tiny'))
        (need,) = grant_flavors.needed(
            [server], [OFF], known().for_class(None), [flavor, ours],
            {'f2': []}, 'p1')
        self.assertEqual((None, True), (need.action, need.open))

    def test_nothing_derived_from_a_private_flavor_the_project_lost(self):
        private, server = flavor_and_server('m1.secret', public=False)
        (need,) = grant_flavors.needed(
            [server], [OFF], known().for_class(None), [private],
            {'f1': ['p2']}, 'p1')
        self.assertEqual((grant_flavors.SKIP, False, 'm1.secret'),
                         (need.action, need.open, need.name))
        self.assertIn('no longer has flavor m1.secret', need.why)
        # while it has it: derived, and opened to it
        (need,) = grant_flavors.needed(
            [server], [OFF], known().for_class(None), [private],
            {'f1': ['p1']}, 'p1')
        self.assertEqual((grant_flavors.CREATE, True),
                         (need.action, need.open))

    def test_the_root_flavor_follows_what_each_derived_one_says(self):
        sizes = {'vcpus': 1, 'ram': 512, 'disk': 1,
                 'OS-FLV-EXT-DATA:ephemeral': 0, 'swap': 0}
        public = dict(sizes, id='f1', name='bm', description=None,
                      **{'os-flavor-access:is_public': True})
        # an operator's flavor whose name holds a '+' is its own root
        gpu = dict(public, id='f2', name='bm+gpu',
                   **{'os-flavor-access:is_public': False})
        derived = dict(gpu, id='f3', name='bm+gpu+hyperthreading=disabled',
                       description=toggle_plan.derived_description('bm+gpu'))
        embedded = {'vcpus': 1, 'ram': 512, 'disk': 1, 'ephemeral': 0,
                    'swap': 0}
        listed = [public, gpu, derived]
        for name in ('bm+gpu', 'bm+gpu+hyperthreading=disabled'):
            server = {'flavor': dict(embedded, original_name=name)}
            self.assertEqual('f2', toggle_plan.root_flavor(
                server, listed)['id'])
            # closed to the project: lost, whatever the public 'bm' is
            self.assertEqual('f2', toggle_plan.lost_root(
                server, listed, {'f2': ['p2']}, 'p1')['id'])
        # a derived flavor whose original is gone: no root
        self.assertIsNone(toggle_plan.root_flavor(
            {'flavor': dict(embedded, original_name=derived['name'])},
            [public, derived]))
