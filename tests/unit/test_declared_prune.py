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

"""Configs as code, against the fake cloud: a prune that never strands a
server, names judged among the objects a file speaks of, and the file's
own guards (``--prune-all``, standard input, one ``-f``)."""

import io
from unittest import mock

import fixtures
from openstack import exceptions as sdk_exceptions
from osc_lib import exceptions

from osc_deploy_config.domain.configs import config_sets
from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.configs import steps
from osc_deploy_config.domain.configs import templates as dtemplates
from osc_deploy_config.domain.declared import changes
from osc_deploy_config.domain.grants import grants
from osc_deploy_config.domain.toggle import toggle_plan
from osc_deploy_config.domain.toggle import toggle_record
from osc_deploy_config.use_cases.configs import deploy_templates
from osc_deploy_config.use_cases.declared import applying
from osc_deploy_config.use_cases.declared import locking
from osc_deploy_config.use_cases.declared import planning
from osc_deploy_config.use_cases.declared import reading
from osc_deploy_config.use_cases.declared import writing
from tests.unit import fakes

OFF = deploy_config.Config('hyperthreading', 'disabled')
ON = deploy_config.Config('hyperthreading', 'enabled')
OFF_T = 'CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_DISABLED'
ON_T = 'CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_ENABLED'
BOTH = """\
version: 1
configs:
  hyperthreading:
    disabled:
      bios: {LogicalProc: Disabled}
    enabled:
      bios: {LogicalProc: Enabled}
images:
  ubuntu: {hyperthreading: disabled}
"""
ONLY_OFF = """\
version: 1
configs:
  hyperthreading:
    disabled:
      bios: {LogicalProc: Disabled}
images:
  ubuntu: {hyperthreading: disabled}
"""


class DeclaredCase(fakes.TestCommand):

    def setUp(self):
        super().setUp()
        for config, name, value in ((OFF, OFF_T, 'Disabled'),
                                    (ON, ON_T, 'Enabled')):
            self.ironic.add_template(name, steps=[steps.bios_step(
                [('LogicalProc', value)])], extra=deploy_config.template_extra(
                    config, ['HW_CPU_HYPERTHREADING']))
        self.clients = self.app.client_manager.deploy_config

    def file(self, text):
        path = self.useFixture(fixtures.TempDir()).join('f.yaml')
        with open(path, 'w') as f:
            f.write(text)
        return path

    def plan(self, text, prune=False, prune_all=False):
        return planning.plan(self.clients, self.file(text), prune, prune_all)

    def apply(self, plan):
        return writing.Apply(self.clients, lambda line: None, 1).run(plan)

    def applied(self, text, said=None, **options):
        """A whole apply of the file (``said``: its progress lines)."""
        said = [] if said is None else said
        return applying.Applied(self.clients, said.append).apply(
            self.file(text), **options)


class TestPruneNeverStrands(DeclaredCase):

    def setUp(self):
        super().setUp()
        # the image moved from enabled to disabled by an earlier apply;
        # its server, not rolled out yet, was deployed with enabled
        self.image = self.glance.add_image(
            'ubuntu', **{'deploy-config:hyperthreading': 'disabled',
                         'trait:' + OFF_T: 'required'})
        flavor = self.nova.add_flavor('bm.gold', fakes.GOLD)
        self.server = self.nova.add_server('web-1', flavor,
                                           image=self.image['id'])
        self.node = self.ironic.add_node(
            'node-1', [ON_T, OFF_T], instance_uuid=self.server['id'],
            instance_traits=[ON_T])

    def test_a_template_an_instance_was_deployed_with_is_not_pruned(self):
        """Its image asks for another config now: the node's instance
        says what it was deployed with."""
        exc = self.assertRaises(exceptions.CommandError, self.plan,
                                ONLY_OFF, prune=True)
        self.assertIn('Not pruning template %s: server web-1 was deployed '
                      'with it' % ON_T, str(exc))
        self.assertEqual([], self.ironic.writes + self.nova.writes)

    def test_nor_once_glance_hides_the_image(self):
        del self.glance.images[self.image['id']]
        exc = self.assertRaises(exceptions.CommandError, self.plan,
                                'version: 1\nconfigs:\n  hyperthreading:\n'
                                '    disabled:\n      bios: {LogicalProc: '
                                'Disabled}\n', prune=True)
        self.assertIn('server web-1 was deployed with it', str(exc))

    def test_the_delete_reads_the_nodes_again_right_before(self):
        """A server deployed between the plan and the delete keeps it."""
        self.node['instance_info'] = {}
        plan = self.plan(ONLY_OFF, prune=True)
        self.assertIn((ON_T, 'delete'), [(c.name, c.action)
                                         for c in plan.changes])
        self.node['instance_info'] = {'traits': [ON_T]}
        exc = self.assertRaises(exceptions.CommandError, self.apply, plan)
        self.assertIn('Failed to delete deploy template %s: the instance on '
                      'node node-1 (instance %s) was deployed with it' % (
                          ON_T, self.server['id']), str(exc))
        self.assertIn(ON_T, [t['name'] for t in
                             self.ironic.templates.values()])
        self.assertEqual([], [w for w in self.ironic.writes
                              if 'deploy_templates' in w[1]])

    def test_an_interrupted_delete_shows_and_a_rerun_finishes_it(self):
        self.node['instance_info'] = {}
        template = next(t for t in self.ironic.templates.values()
                        if t['name'] == ON_T)
        template['extra'][dtemplates.DELETING] = True
        plan = self.plan(ONLY_OFF)      # without --prune too
        self.assertEqual([('template', ON_T, 'delete', 'steps',
                           'interrupted delete', None)],
                         [c[:6] for c in plan.changes])
        self.apply(plan)
        self.assertNotIn(template['uuid'], self.ironic.templates)
        self.assertEqual([], self.plan(ONLY_OFF).changes)


class TestPruneGuard(DeclaredCase):

    def test_a_file_that_drops_every_template_needs_prune_all(self):
        exc = self.assertRaises(exceptions.CommandError, self.plan,
                                'version: 1\n', prune=True)
        self.assertEqual(
            '--prune would delete every template of this plugin (%s, %s): '
            'refused without --prune-all (a file emptied by mistake?)' % (
                OFF_T, ON_T), str(exc))
        self.assertEqual([], self.ironic.writes)
        plan = self.plan('version: 1\n', prune=True, prune_all=True)
        self.assertEqual({OFF_T, ON_T}, {c.name for c in plan.changes})
        # one of them kept: no guard
        self.plan(BOTH.replace('    enabled:\n      bios: {LogicalProc: '
                               'Enabled}\n', '').replace(
            'images:\n  ubuntu: {hyperthreading: disabled}\n', ''),
            prune=True)

    def test_a_file_that_withdraws_every_grant_needs_prune_all(self):
        for template in self.ironic.templates.values():
            fakes.grant(template, 'project-1')
        kept = BOTH.replace('images:\n  ubuntu: {hyperthreading: '
                            'disabled}\n', '')
        exc = self.assertRaises(exceptions.CommandError, self.plan, kept,
                                prune=True)
        self.assertIn('--prune would withdraw every grant (demo '
                      'hyperthreading=disabled, demo hyperthreading=enabled)',
                      str(exc))
        self.plan(kept + 'projects:\n  demo: [hyperthreading=enabled]\n',
                  prune=True)


class TestNamesOfTheFile(DeclaredCase):
    """A name means, of the objects bearing it, those the plugin's state
    speaks of: export, then diff, is empty on an ordinary cloud."""

    def setUp(self):
        super().setUp()
        self.public = self.glance.add_image(
            'ubuntu', **{'deploy-config:hyperthreading': 'disabled',
                         'trait:' + OFF_T: 'required'})
        self.private = self.glance.add_image('ubuntu', visibility='private')
        self.keystone.projects['project-3'] = ('demo', 'domain-2')
        for template in self.ironic.templates.values():
            fakes.grant(template, 'project-1')
        # a toggle's private flavor, and a flavor asking for a config whose
        # templates were deleted since
        self.nova.add_flavor(
            'bm.gold+hyperthreading=enabled', dict(fakes.GOLD, **{
                'deploy-config:hyperthreading': 'enabled',
                'trait:' + ON_T: 'required'}),
            description=toggle_plan.derived_description('bm.gold'),
            public=False)
        self.nova.add_flavor('bm.old', dict(fakes.GOLD, **{
            'deploy-config:turbo': 'on'}))

    def test_export_then_diff_is_empty(self):
        exported = reading.export(self.clients)
        self.assertNotIn('bm.gold+', exported)
        self.assertNotIn('bm.old', exported)
        self.assertIn('ubuntu', exported)
        self.assertEqual([], self.plan(exported).changes)

    def test_writes_go_to_the_object_the_name_means(self):
        exported = reading.export(self.clients)
        plan = self.plan(exported.replace(
            'ubuntu:\n    hyperthreading: disabled',
            'ubuntu:\n    hyperthreading: enabled').replace(
            "demo:\n  - hyperthreading=disabled\n", 'demo:\n'))
        self.apply(plan)
        self.assertEqual('enabled', self.public[
            'deploy-config:hyperthreading'])
        self.assertNotIn('deploy-config:hyperthreading', self.private)

    def test_a_name_meaning_two_is_refused_with_their_ids(self):
        """Neither asks for a config: which one the file means is not
        known."""
        one = self.glance.add_image('debian')
        two = self.glance.add_image('debian')
        # asking for nothing, of several asking for nothing: equal
        self.assertEqual([], self.plan(ONLY_OFF + '  debian: {}\n').changes)
        exc = self.assertRaises(exceptions.CommandError, self.plan,
                                ONLY_OFF + '  debian: {hyperthreading: '
                                'disabled}\n')
        self.assertIn('image debian is the name of 2 of them (%s): a '
                      'declared state names each once' % ', '.join(
                          sorted((one['id'], two['id']))), str(exc))


class TestFileOptions(DeclaredCase):

    def test_a_dash_reads_standard_input(self):
        with mock.patch('sys.stdin', io.StringIO('version: 1\nflavors: [\n')):
            exc = self.assertRaises(exceptions.CommandError, planning.plan,
                                    self.clients, '-')
        self.assertIn('<stdin>:3:1: YAML syntax', str(exc))
        with mock.patch('sys.stdin', io.StringIO(BOTH.replace(
                'images:\n  ubuntu: {hyperthreading: disabled}\n', ''))):
            self.assertEqual([], planning.plan(self.clients, '-').changes)

    def test_a_second_file_is_refused_before_any_read(self):
        from osc_deploy_config.v1 import declared

        for command in (declared.ApplyDeclared, declared.DiffDeclared):
            parser = command(self.app, None).get_parser('openstack')
            stderr = io.StringIO()
            with mock.patch('sys.stderr', stderr):
                self.assertRaises(SystemExit, parser.parse_args, [
                    '-f', 'a.yaml', '-f', 'b.yaml', '--prune'])
            self.assertEqual(
                'openstack: error: -f is given twice (a.yaml, '
                'b.yaml): give one file, the whole declared state (see '
                '--help)\n', stderr.getvalue())

    def test_prune_all_goes_with_prune(self):
        from osc_deploy_config.v1 import declared

        exc = self.assertRaises(exceptions.CommandError, self.run_command,
                                declared.ApplyDeclared,
                                ['-f', 'a.yaml', '--prune-all'])
        self.assertEqual('--prune-all goes with --prune', str(exc))


class TestResumedRollout(DeclaredCase):
    """``apply --rollout`` rolls out every server not in line with the
    file, also those an interrupted run left: not only those whose flavor
    or image this run changes."""

    def setUp(self):
        super().setUp()
        self.image = self.glance.add_image(
            'ubuntu', **{'deploy-config:hyperthreading': 'disabled',
                         'trait:' + OFF_T: 'required'})
        self.flavor = self.nova.add_flavor('bm.gold', dict(fakes.GOLD, **{
            'deploy-config:hyperthreading': 'disabled',
            'trait:' + OFF_T: 'required'}))
        self.plain = self.nova.add_flavor('bm.plain', fakes.GOLD)
        self.text = BOTH + 'flavors:\n  bm.gold: {hyperthreading: disabled}\n'

    def boot(self, name, flavor_asks, image=None, deployed=(),
             toggled=None):
        server = self.nova.add_server(
            name, self.flavor if flavor_asks else self.plain,
            image=image and image['id'])
        if flavor_asks:     # as booted
            server['flavor']['extra_specs'][
                'deploy-config:hyperthreading'] = flavor_asks
        node = self.ironic.add_node('node-' + name,
                                    instance_uuid=server['id'],
                                    instance_traits=deployed)
        if toggled:
            node['properties']['deploy_config_applied'] = {
                'instance_uuid': server['id'],
                'configs': {'hyperthreading': toggled}}
        return server

    def test_servers_left_outdated_are_found_with_nothing_to_change(self):
        self.boot('flavor-left', 'enabled', deployed=[ON_T])
        self.boot('flavor-done', 'disabled', deployed=[OFF_T])
        # toggled in place: its flavor as booted is as it was
        self.boot('flavor-toggled', 'enabled', deployed=[ON_T],
                  toggled='disabled')
        left = self.boot('image-left', None, self.image, deployed=[ON_T])
        self.boot('image-done', None, self.image, deployed=[OFF_T])
        # a virtual server a toggle moved to a derived flavor, back to
        # another config than the file's now
        derived = self.nova.add_flavor(
            'bm.gold+hyperthreading=enabled', dict(fakes.GOLD, **{
                'deploy-config:hyperthreading': 'enabled',
                'trait:' + ON_T: 'required'}),
            description=toggle_plan.derived_description('bm.gold'),
            public=False)
        virtual = self.nova.add_server('vm-derived', derived)
        # a tenant's own private image and flavor of the file's names
        theirs = self.glance.add_image('ubuntu', visibility='private')
        tenants = self.nova.add_flavor('bm.gold', fakes.GOLD, public=False)
        tenants['vcpus'] = 8
        tenant = self.nova.add_server('tenant-bm', tenants,
                                      image=theirs['id'])
        self.ironic.add_node('node-tenant', instance_uuid=tenant['id'],
                             instance_traits=[ON_T])
        plan = self.plan(self.text)
        self.assertEqual([], plan.changes)
        outdated = writing.outdated(plan)
        flavor_left = next(s for s in self.nova.servers.values()
                           if s['name'] == 'flavor-left')
        self.assertEqual(
            [('flavor-left', 'flavor', 'bm.gold',
              ['hyperthreading=disabled'], flavor_left['id']),
             ('image-left', 'image', 'ubuntu', ['hyperthreading=disabled'],
              left['id']),
             ('vm-derived', 'flavor', 'bm.gold',
              ['hyperthreading=disabled'], virtual['id'])],
            outdated)
        self.assertEqual(
            ['openstack server deploy-config set --flavor bm.gold '
             '--all-projects --max-unavailable 1',
             'openstack server rebuild --image ubuntu image-left'],
            changes.rollout_commands(outdated))

    def test_a_projects_own_choice_is_left_to_it(self):
        server = self.boot('project-toggled', 'enabled', deployed=[ON_T])
        node = next(n for n in self.ironic.nodes.values()
                    if n['instance_uuid'] == server['id'])
        node['extra'][toggle_record.PROJECT_APPLIED] = {
            'instance_uuid': server['id'],
            'configs': {'hyperthreading': 'disabled'}}
        self.assertEqual([], writing.outdated(self.plan(self.text)))

    def test_a_set_deployed_runs_its_members(self):
        both = self.ironic.add_template(
            'CUSTOM_DEPLOY_CONFIG_SET_X', extra={
                config_sets.EXTRA_MEMBERS: 'hyperthreading=disabled'})
        self.boot('image-set', None, self.image, deployed=[both['name']])
        self.assertEqual([], writing.outdated(self.plan(self.text)))


class TestSingleDelete(DeclaredCase):

    def test_the_flavors_still_asking_are_named(self):
        self.nova.add_flavor('bm.gold', dict(fakes.GOLD, **{
            'deploy-config:hyperthreading': 'enabled',
            'trait:' + ON_T: 'required'}))
        logged = self.useFixture(fixtures.FakeLogger())
        deleted, failures = deploy_templates.delete(self.clients, [ON_T])
        self.assertEqual(([ON_T], []), (deleted, failures))
        self.assertIn('Flavor bm.gold still asks for hyperthreading=enabled, '
                      'which no template serves now (openstack flavor '
                      'deploy-config unset bm.gold hyperthreading)',
                      logged.output)


class TestOneApplyAtATime(DeclaredCase):

    def held(self):
        return [t for t in self.ironic.templates.values()
                if t['name'] == locking.NAME]

    def test_a_second_apply_stops_in_one_line_before_any_read(self):
        lock = locking.Lock(self.clients, print)
        lock.take()
        self.assertEqual(1, len(self.held()))
        self.nova.requests.clear()
        exc = self.assertRaises(exceptions.CommandError, self.applied,
                                ONLY_OFF)
        self.assertRegex(str(exc), r'^Another apply holds the lock \(taken '
                         r'by .*, pid \d+ since 20\d\d-\d\d-\d\dT\S+Z, 0 s '
                         r'ago\): wait for it to end; if it was killed, '
                         r'rerun with --break-lock$')
        self.assertEqual([], self.nova.requests)
        lock.release()
        self.assertEqual([], self.held())

    def test_the_lock_is_released_when_the_apply_fails(self):
        self.glance.add_image('ubuntu')
        self.glance.add_image('ubuntu')
        self.assertRaises(exceptions.CommandError, self.applied, ONLY_OFF)
        self.assertEqual([], self.held())
        self.assertIn(('POST', '/deploy_templates'), [
            w[:2] for w in self.ironic.writes])

    def test_break_lock_takes_a_lock_a_killed_apply_left(self):
        locking.Lock(self.clients, print).take()
        said = []
        self.applied(BOTH.replace('images:\n  ubuntu: {hyperthreading: '
                                  'disabled}\n', ''), said, break_lock=True)
        self.assertTrue(said[0].startswith('Breaking the lock (taken by '))
        self.assertEqual([], self.held())

    def test_a_dry_run_and_a_bad_file_take_no_lock(self):
        self.applied(BOTH.replace('images:\n  ubuntu: {hyperthreading: '
                                  'disabled}\n', ''), dry_run=True)
        self.assertRaises(exceptions.CommandError, self.applied, 'version: 2')
        self.assertEqual([], self.ironic.writes)


class TestDiffShowsEveryWrite(DeclaredCase):
    """What apply writes through the single commands' use cases beside
    its rows (node tags, runbooks, records, derived flavors) is a row of
    diff, and apply writes nothing else."""

    def test_the_node_tags_of_a_template_written_and_no_others(self):
        capable = self.ironic.add_node('node-1', ['HW_CPU_HYPERTHREADING'])
        capable['bios'] = {'LogicalProc': 'Enabled'}
        plan = self.plan(BOTH.replace('LogicalProc: Enabled',
                                      'LogicalProc: Disabled').replace(
            'images:\n  ubuntu: {hyperthreading: disabled}\n', ''))
        self.assertIn(('node sync', ON_T, 'update', 'node tags', None,
                       'tag node-1'), [c[:6] for c in plan.changes])
        # node-1 is capable of OFF_T too, untagged: not this apply's
        self.assertNotIn(OFF_T, [c.name for c in plan.changes])
        self.apply(plan)
        self.assertEqual([ON_T], capable['traits'][1:])

    def test_a_grants_runbooks_and_records(self):
        plan = self.plan(BOTH.replace(
            'images:\n  ubuntu: {hyperthreading: disabled}\n',
            'projects:\n  demo: [hyperthreading=enabled]\n'))
        runbook = 'deploy-config.project-1.' + ON_T
        self.assertEqual(
            [('project', 'demo', 'update', 'hyperthreading=enabled', None,
              'granted'),
             ('grant record', ON_T, 'record', 'hyperthreading=enabled', None,
              'demo'),
             ('runbook', runbook, 'create', 'hyperthreading=enabled', None,
              'no runbook yet')], [c[:6] for c in plan.changes])
        self.apply(plan)
        self.assertEqual(['PATCH /deploy_templates/', 'POST /runbooks',
                          'PUT /runbooks/'], [
            '%s %s' % (m, p[:p.index('/', 1) + 1] if p.count('/') > 1
                       else p) for m, p in self.ironic.writes])
        withdrawn = self.plan(BOTH.replace(
            'images:\n  ubuntu: {hyperthreading: disabled}\n',
            'projects:\n  demo: []\n'))
        self.assertEqual(
            [('project', 'demo', 'update', 'hyperthreading=enabled',
              'granted', None),
             ('runbook', runbook, 'delete', 'hyperthreading=enabled', None,
              'withdrawn'),
             ('grant record', ON_T, 'unrecord', 'hyperthreading=enabled',
              None, 'demo')], [c[:6] for c in withdrawn.changes])


class TestReviewed(DeclaredCase):
    """What a hostile review of this round found."""

    def test_a_lock_whose_create_answer_is_lost_is_released(self):
        own = self.ironic.proxy.request.side_effect

        def lost(path, method, json=None, **kwargs):
            answer = own(path, method, json=json, **kwargs)
            if method == 'POST' and path.endswith('/deploy_templates'):
                return fakes.error(503, 'Service Unavailable')  # made
            return answer

        self.ironic.proxy.request.side_effect = lost
        self.assertRaises(sdk_exceptions.HttpException, self.applied,
                          ONLY_OFF)
        self.assertEqual([], [t for t in self.ironic.templates.values()
                              if t['name'] == locking.NAME])

    def test_a_lock_ironic_refuses_is_one_line(self):
        fakes.intercept(self.ironic, lambda path, method, json: fakes.error(
            403, 'Access was denied') if method == 'POST' else None)
        exc = self.assertRaises(exceptions.CommandError, self.applied,
                                ONLY_OFF)
        self.assertIn('Cannot take the lock that one apply at a time holds '
                      '(deploy template %s): Ironic refused to create deploy '
                      'templates (403)' % locking.NAME, str(exc))

    def test_an_interrupted_delete_is_finished_before_a_template_made(self):
        template = next(t for t in self.ironic.templates.values()
                        if t['name'] == ON_T)
        template['extra'][dtemplates.DELETING] = True
        self.applied(BOTH.replace(
            '    enabled:\n', '    enabled:\n      template: '
            'CUSTOM_HT_ON\n').replace(
            'images:\n  ubuntu: {hyperthreading: disabled}\n', ''))
        self.assertEqual({OFF_T, 'CUSTOM_HT_ON'}, {
            t['name'] for t in self.ironic.templates.values()})

    def test_a_name_whose_asks_the_file_removed_means_it_still(self):
        self.nova.add_flavor('bm.gold', dict(fakes.GOLD, **{
            'deploy-config:hyperthreading': 'disabled',
            'trait:' + OFF_T: 'required'}))
        self.nova.add_flavor('bm.gold', fakes.GOLD, public=False)
        text = BOTH.replace('images:\n  ubuntu: {hyperthreading: '
                            'disabled}\n', 'flavors:\n  bm.gold: {}\n')
        self.applied(text)
        self.assertEqual([], self.plan(text).changes)

    def test_two_granted_projects_of_one_name_are_refused(self):
        self.keystone.projects['project-3'] = ('demo', 'domain-2')
        for template in self.ironic.templates.values():
            fakes.grant(template, 'project-1', 'project-3')
        text = BOTH.replace('images:\n  ubuntu: {hyperthreading: '
                            'disabled}\n', '')
        # a file that does not name them, without --prune: not its concern
        self.plan(text)
        for withdraws in ({'prune': True}, {}):
            exc = self.assertRaises(
                exceptions.CommandError, self.plan, text if withdraws else
                text + 'projects:\n  demo: []\n', **withdraws)
            self.assertIn('Project name demo is granted configs in 2 '
                          'projects', str(exc))

    def test_each_nodes_registry_is_read_once_per_apply(self):
        self.ironic.add_node('node-1', ['HW_CPU_HYPERTHREADING'])
        self.applied(BOTH.replace('Disabled', 'Off').replace(
            'Enabled', 'On').replace('images:\n  ubuntu: {hyperthreading: '
                                     'disabled}\n', ''))
        self.assertEqual(1, sum(1 for _, path, _ in self.ironic.requests
                                if 'bios?detail' in path))

    def test_a_flavor_is_unset_first_then_set_in_one_request(self):
        self.nova.add_flavor('bm.gold', dict(fakes.GOLD, **{
            'deploy-config:hyperthreading': 'disabled',
            'trait:' + OFF_T: 'required'}))
        self.applied(BOTH.replace('images:\n  ubuntu: {hyperthreading: '
                                  'disabled}\n', 'flavors:\n  bm.gold: '
                                  '{hyperthreading: enabled}\n'))
        self.assertEqual(['DELETE', 'POST'], [
            m for m, p in self.nova.writes if 'extra_specs' in p])

    def test_an_instance_deployed_with_it_is_rebuilt_not_toggled(self):
        image = self.glance.add_image('ubuntu', **{
            'deploy-config:hyperthreading': 'disabled',
            'trait:' + OFF_T: 'required'})
        server = self.nova.add_server('web-1', self.nova.add_flavor(
            'bm.plain', fakes.GOLD), image=image['id'])
        self.ironic.add_node('node-1', instance_uuid=server['id'],
                             instance_traits=[ON_T])
        exc = self.assertRaises(exceptions.CommandError, self.plan,
                                ONLY_OFF, prune=True)
        self.assertIn('rebuild the server from an image that asks for '
                      'another config (openstack server rebuild --image ... '
                      'web-1), or delete it, first', str(exc))


class TestUnified(DeclaredCase):

    def test_a_unified_diff_of_the_files_objects(self):
        from osc_deploy_config.v1 import declared

        self.glance.add_image('ubuntu', **{
            'deploy-config:hyperthreading': 'disabled',
            'trait:' + OFF_T: 'required'})
        path = self.file(BOTH.replace('ubuntu: {hyperthreading: disabled}',
                                      'ubuntu: {hyperthreading: enabled}'))
        self.app.stdout = io.StringIO()
        cmd = declared.DiffDeclared(self.app, None)
        parsed = cmd.get_parser('openstack').parse_args(
            ['-f', path, '-o', 'unified'])
        cmd.produce_output(parsed, *cmd.take_action(parsed))
        self.assertEqual(
            ['--- cloud', '+++ ' + path, '@@ -10,5 +10,5 @@',
             ' flavors: {}', ' images:', '   ubuntu:',
             '-    hyperthreading: disabled', '+    hyperthreading: enabled',
             ' projects: {}'], self.app.stdout.getvalue().splitlines())
        self.assertTrue(cmd.changed)


class TestUnrecordedGrants(DeclaredCase):
    """Records that grant nothing a file can name (stale, or of a project
    keystone no longer knows) block a template's change; --prune
    withdraws them."""

    def test_prune_withdraws_stale_and_orphaned_records(self):
        on = next(t for t in self.ironic.templates.values()
                  if t['name'] == ON_T)
        fakes.grant(on, 'project-1', 'gone-project')
        on['extra'][grants.GRANTED]['project-1'] = 'other content'
        text = BOTH.replace('images:\n  ubuntu: {hyperthreading: '
                            'disabled}\n', '')
        self.assertEqual([], [c for c in self.plan(text).changes
                              if c.kind == 'project'])
        exc = self.assertRaises(exceptions.CommandError, self.plan,
                                text.replace('LogicalProc: Enabled',
                                             'LogicalProc: On'))
        self.assertIn('is granted to projects gone-project, project-1',
                      str(exc))
        plan = self.plan(text.replace('LogicalProc: Enabled',
                                      'LogicalProc: On'), prune=True,
                         prune_all=True)
        self.assertEqual(
            [('project', 'demo', 'delete', 'hyperthreading=enabled',
              'granted (a stale record)'),
             ('project', 'gone-project', 'delete', 'hyperthreading=enabled',
              'granted (a project keystone no longer knows)')],
            [c[:5] for c in plan.changes if c.kind == 'project'])
        self.apply(plan)
        self.assertEqual({}, on['extra'].get(grants.GRANTED) or {})
        self.assertEqual([{'name': 'LogicalProc', 'value': 'On'}],
                         on['steps'][0]['args']['settings'])


class TestSyncOfAConfigsTemplates(DeclaredCase):

    def test_a_class_template_pruned_gives_its_nodes_the_other(self):
        gold_off = OFF_T + '_FOR_BAREMETAL_GOLD'
        self.ironic.add_template(
            gold_off, steps=[steps.bios_step([('LogicalProc', 'Disabled')])],
            extra=deploy_config.template_extra(
                OFF, ['HW_CPU_HYPERTHREADING'], 'baremetal-gold'))
        node = self.ironic.add_node('node-1', ['HW_CPU_HYPERTHREADING',
                                               gold_off, ON_T])
        node['bios'] = {'LogicalProc': 'Enabled'}
        plan = self.plan(BOTH.replace('images:\n  ubuntu: {hyperthreading: '
                                      'disabled}\n', ''), prune=True)
        self.assertIn(('node sync', OFF_T, 'update', 'node tags', None,
                       'tag node-1'), [c[:6] for c in plan.changes])
        self.apply(plan)
        self.assertEqual({'HW_CPU_HYPERTHREADING', ON_T, OFF_T},
                         set(node['traits']))
