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

"""The declared file: read with line and column, written in a stable
order, and its difference from the cloud (domain.declared)."""

import types
from unittest import mock

import fixtures
from osc_lib import exceptions
import testtools

from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.configs import steps
from osc_deploy_config.domain.declared import changes
from osc_deploy_config.domain.declared import document
from osc_deploy_config.domain.declared import schema
from osc_deploy_config.use_cases.configs import deploy_templates
from osc_deploy_config.use_cases.configs import owner_configs
from osc_deploy_config.use_cases.declared import planning
from osc_deploy_config.use_cases.declared import reading
from osc_deploy_config.use_cases.declared import writing
from tests.unit import fakes

GOOD = """\
version: 1
configs:
  hyperthreading:
    disabled:
      bios: {LogicalProc: Disabled}
    enabled:
      bios: {LogicalProc: Enabled}
      resource_classes:
        baremetal-gold:
          bios: {ProcHyperthreading: Enabled}
  raid:
    r0:
      steps:
      - {interface: raid, step: apply_configuration, priority: 150,
         args: {raid_config: {logical_disks: []}}}
flavors:
  bm.gold: {hyperthreading: disabled}
images: {}
projects:
  demo: [hyperthreading=disabled]
"""
HT = deploy_config.Config('hyperthreading', 'disabled')


def _cloud_template(name, config, steps, rc=None, **extra):
    return {'uuid': name.lower(), 'name': name, 'steps': steps,
            'extra': dict(deploy_config.template_extra(
                config, ['HW_CPU_HYPERTHREADING'], rc), **extra)}


class FileTestCase(testtools.TestCase):
    """Tests of a file ``document.parse`` refuses."""

    def assertRefused(self, text, where, words):
        """One line, at the file's line and column, naming ``words``."""
        exc = self.assertRaises(schema.FileError, document.parse, text,
                                'f.yaml')
        self.assertIn('f.yaml:%s: ' % where, str(exc))
        self.assertIn(words, str(exc))
        self.assertNotIn('\n', str(exc))


class TestReading(FileTestCase):

    def test_a_good_file_reads_into_templates_asks_and_grants(self):
        declared = document.parse(GOOD, 'f.yaml')
        self.assertEqual(
            ['CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_DISABLED',
             'CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_ENABLED',
             'CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_ENABLED_FOR_BAREMETAL_GOLD',
             'CUSTOM_DEPLOY_CONFIG_RAID_R0'],
            sorted(t.name for t in declared.templates.values()))
        self.assertEqual({'bm.gold': {'hyperthreading': 'disabled'}},
                         declared.flavors)
        self.assertEqual({'demo': ['hyperthreading=disabled']},
                         declared.projects)

    def test_written_again_it_reads_the_same_and_writes_the_same(self):
        declared = document.parse(GOOD, 'f.yaml')
        text = document.render(declared)
        again = document.parse(text, 'g.yaml')
        self.assertEqual(declared.templates, again.templates)
        self.assertEqual(text, document.render(again))
        self.assertTrue(text.startswith('version: 1\nconfigs:\n'))

    def test_yaml_syntax(self):
        self.assertRefused('version: 1\nflavors: {a: [\n', '3:1',
                           'YAML syntax')

    def test_unknown_key(self):
        self.assertRefused(GOOD + 'servers: {}\n', '21:1',
                           "unknown key 'servers'")

    def test_wrong_type(self):
        self.assertRefused(GOOD.replace('images: {}', 'images: [a]'),
                           '18:9', 'wrong type')

    def test_unknown_config_value(self):
        self.assertRefused(GOOD.replace('{hyperthreading: disabled}',
                                        '{hyperthreading: off-ish}'),
                           '17:13', 'unknown config value '
                           'hyperthreading=off-ish')

    def test_duplicate_name(self):
        self.assertRefused(GOOD.replace(
            'images: {}', 'images: {}\nflavors: {}'), '19:1',
            "duplicate name 'flavors'")

    def test_a_raid_step_in_a_grant(self):
        self.assertRefused(GOOD.replace('[hyperthreading=disabled]',
                                        '[hyperthreading=disabled, raid=r0]'),
                           '20:35', 'cannot be granted')

    def test_a_bad_step(self):
        self.assertRefused(GOOD.replace('interface: raid', 'interface: x'),
                           '13:7', 'unknown interface')

    def test_the_version(self):
        self.assertRefused(GOOD.replace('version: 1', 'version: 2'), '1:10',
                           'version must be 1')


class TestFromCloud(testtools.TestCase):

    def test_the_cloud_exported_reads_back_equal(self):
        steps = [{'interface': 'bios', 'step': 'apply_configuration',
                  'args': {'settings': [{'name': 'LogicalProc',
                                         'value': 'Disabled'}]},
                  'priority': 150}]
        listed = [_cloud_template(
            'CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_DISABLED', HT, steps,
            deploy_config_granted={'p1': 'digest'}),
            {'uuid': 'x', 'name': 'CUSTOM_OTHER', 'steps': steps,
             'extra': {}}]
        flavors = [{'name': 'bm.gold', 'extra_specs': {
            'deploy-config:hyperthreading': 'disabled'}},
            {'name': 'm1.tiny', 'extra_specs': {}}]
        current = document.from_cloud(listed, flavors, [], {'p1': 'demo'})
        text = document.render(current)
        self.assertIn('LogicalProc: Disabled', text)
        self.assertNotIn('CUSTOM_OTHER', text)
        declared = document.parse(text, 'f.yaml')
        self.assertEqual([], changes.diff(declared, current, prune=True))


class TestDiff(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.declared = document.parse(GOOD, 'f.yaml')
        self.current = document.parse(GOOD, 'f.yaml')

    def test_one_edited_value_is_one_change(self):
        edited = document.parse(GOOD.replace('LogicalProc: Disabled',
                                             'LogicalProc: Off'), 'f.yaml')
        found = changes.diff(edited, self.current)
        self.assertEqual([('template',
                           'CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_DISABLED',
                           'update', 'steps')],
                         [c[:4] for c in found])
        self.assertIn('Disabled', changes.shown(found[0].before))
        self.assertIn('Off', changes.shown(found[0].after))

    def test_prune_deletes_only_with_prune(self):
        dropped = document.parse(GOOD.replace(
            "  raid:\n    r0:\n      steps:\n      - {interface: raid, "
            "step: apply_configuration, priority: 150,\n         args: "
            "{raid_config: {logical_disks: []}}}\n", ''), 'f.yaml')
        self.assertEqual([], changes.diff(dropped, self.current))
        found = changes.diff(dropped, self.current, prune=True)
        self.assertEqual({('template', 'CUSTOM_DEPLOY_CONFIG_RAID_R0',
                           'delete')}, {c[:3] for c in found})

    def test_prune_refuses_a_template_a_flavor_not_listed_asks_for(self):
        dropped = document.parse(GOOD.replace(
            "    disabled:\n      bios: {LogicalProc: Disabled}\n", '')
            .replace('bm.gold: {hyperthreading: disabled}', 'bm.gold: {}')
            .replace('[hyperthreading=disabled]', '[]'), 'f.yaml')
        current = self.current._replace(flavors=dict(
            self.current.flavors, other={'hyperthreading': 'disabled'}))
        found = changes.diff(dropped, current, prune=True)
        exc = self.assertRaises(
            exceptions.CommandError, changes.refuse_pruning_asked, found,
            dropped,
            current, [])
        self.assertIn('flavor other still asks for hyperthreading='
                      'disabled', str(exc))
        # the same apply removes the ask: pruned
        changes.refuse_pruning_asked(found, dropped, self.current, [])

    def test_prune_refuses_a_template_a_running_server_was_deployed_with(
            self):
        dropped = document.parse(GOOD.replace(
            "    disabled:\n      bios: {LogicalProc: Disabled}\n", '')
            .replace('bm.gold: {hyperthreading: disabled}', 'bm.gold: {}')
            .replace('[hyperthreading=disabled]', '[]'), 'f.yaml')
        found = changes.diff(dropped, self.current, prune=True)
        server = {'id': 's-1', 'name': 'web-1', 'flavor': {'extra_specs': {
            'trait:CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_DISABLED':
                'required'}}}
        exc = self.assertRaises(
            exceptions.CommandError, changes.refuse_pruning_asked, found,
            dropped,
            self.current, [server])
        self.assertIn('server web-1 was deployed with it', str(exc))

    def dropped_disabled(self):
        return document.parse(GOOD.replace(
            "    disabled:\n      bios: {LogicalProc: Disabled}\n", '')
            .replace('bm.gold: {hyperthreading: disabled}', 'bm.gold: {}')
            .replace('[hyperthreading=disabled]', '[]'), 'f.yaml')

    def test_prune_refuses_a_template_a_toggle_recorded_on_a_node(self):
        dropped = self.dropped_disabled()
        found = changes.diff(dropped, self.current, prune=True)
        holders = changes.Holders({}, {}, [
            ('node-1', 'CUSTOM_BAREMETAL_GOLD', {HT})])
        exc = self.assertRaises(
            exceptions.CommandError, changes.refuse_pruning_asked, found,
            dropped, self.current, [], holders)
        self.assertIn('a toggle recorded hyperthreading=disabled on node '
                      'node-1', str(exc))

    def test_prune_refuses_a_template_an_image_booted_server_runs(self):
        """Judged from what ironic deployed the instance with (its node's
        instance_info/traits), not from the image's properties now: the
        image was moved to another config, or glance hides it."""
        dropped = self.dropped_disabled()
        found = changes.diff(dropped, self.current, prune=True)
        server = {'id': 's-2', 'name': 'web-2', 'flavor': {'extra_specs': {}},
                  'image': {'id': 'img-1'}}
        holders = changes.Holders({}, {'s-2': {
            'CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_DISABLED'}}, [])
        exc = self.assertRaises(
            exceptions.CommandError, changes.refuse_pruning_asked, found,
            dropped, self.current, [server], holders)
        self.assertIn('server web-2 was deployed with it', str(exc))
        # an instance no server listing shows is named by its ID
        exc = self.assertRaises(
            exceptions.CommandError, changes.refuse_pruning_asked, found,
            dropped, self.current, [], holders)
        self.assertIn('server s-2 was deployed with it', str(exc))
        changes.refuse_pruning_asked(found, dropped, self.current, [server],
                                     changes.Holders({}, {'s-2': set()}, []))

    def test_a_template_per_class_is_held_by_the_flavors_of_its_class(self):
        dropped = document.parse(GOOD.replace(
            '      resource_classes:\n        baremetal-gold:\n'
            '          bios: {ProcHyperthreading: Enabled}\n', ''), 'f.yaml')
        found = changes.diff(dropped, self.current, prune=True)
        current = self.current._replace(flavors=dict(
            self.current.flavors, silver={'hyperthreading': 'enabled'}))
        holders = changes.Holders({'silver': 'CUSTOM_BAREMETAL_SILVER'}, {},
                                  [])
        changes.refuse_pruning_asked(found, dropped, current, [], holders)
        holders.flavor_classes['silver'] = 'CUSTOM_BAREMETAL_GOLD'
        exc = self.assertRaises(
            exceptions.CommandError, changes.refuse_pruning_asked, found,
            dropped, current, [], holders)
        self.assertIn('flavor silver still asks', str(exc))

    def test_outdated_servers_and_their_rollout(self):
        edited = document.parse(GOOD.replace(
            'bm.gold: {hyperthreading: disabled}',
            'bm.gold: {hyperthreading: enabled}'), 'f.yaml')
        server = {'id': 's-1', 'name': 'web-1', 'flavor': {
            'original_name': 'bm.gold', 'vcpus': 1, 'ram': 512, 'disk': 1,
            'extra_specs': {'deploy-config:hyperthreading': 'disabled'}}}
        outdated = changes.outdated_servers([server], edited, {}, None,
                                            {'s-1': 'bm.gold'})
        self.assertEqual([('web-1', 'flavor', 'bm.gold',
                           ['hyperthreading=enabled'], 's-1')], outdated)
        # a server of no flavor the file means (a tenant's of that name)
        self.assertEqual([], changes.outdated_servers(
            [server], edited, {}, None, {}))
        self.assertEqual(
            ['openstack server deploy-config set --flavor bm.gold '
             '--all-projects --max-unavailable 2'],
            changes.rollout_commands(outdated, 2))


class TestSchema(testtools.TestCase):

    def test_the_schema_in_the_docs_is_the_one_enforced(self):
        import json
        import pathlib

        published = pathlib.Path(__file__).parents[2] / 'doc' / 'source' / \
            'user' / 'declared-schema.json'
        self.assertEqual(schema.SCHEMA, json.loads(published.read_text()))


PER_CLASS = """\
version: 1
configs:
  hyperthreading:
    disabled:
      bios: {HyperThreading: Disabled}
      resource_classes:
        baremetal-gold:
          bios: {LogicalProc: Disabled}
flavors:
  bm.gold: {hyperthreading: disabled}
"""
GOLD_OFF_T = OFF_T = 'CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_DISABLED'
GOLD_OFF_T += '_FOR_BAREMETAL_GOLD'


class TestAgainstTheCloud(fakes.TestCommand):
    """Planning and writing against the fake cloud."""

    def setUp(self):
        super().setUp()
        self.ironic.add_template(OFF_T, steps=[steps.bios_step(
            [('HyperThreading', 'Disabled')])],
            extra=deploy_config.template_extra(HT, ['HW_CPU_HYPERTHREADING']))
        self.flavor = self.nova.add_flavor('bm.gold', dict(
            fakes.GOLD, **{'deploy-config:hyperthreading': 'disabled',
                           'trait:' + OFF_T: 'required'}))
        self.clients = self.app.client_manager.deploy_config

    def plan(self, text, prune=False, prune_all=False):
        path = self.useFixture(fixtures.TempDir()).join('f.yaml')
        with open(path, 'w') as f:
            f.write(text)
        return planning.plan(self.clients, path, prune, prune_all)

    def test_no_rollout_starts_once_one_was_interrupted(self):
        from osc_deploy_config.use_cases.declared import applying

        said = []
        applied = applying.Applied(self.clients, said.append, True, 1, 0)
        interrupted = types.SimpleNamespace(interrupted=True)
        applied.rollouts.append((interrupted, []))
        self.assertEqual([], applied.one_rollout('bm.gold', ['s-1'], []))
        self.assertEqual(['Not rolled out (interrupted): flavor bm.gold'],
                         said)
        self.assertEqual([], self.nova.requests + self.ironic.requests)

    def test_a_template_per_class_added_makes_the_flavors_trait_drift(self):
        found = self.plan(PER_CLASS).changes
        self.assertIn(('flavor', 'bm.gold', 'update', changes.TRAITS,
                       ['trait:' + OFF_T], ['trait:' + GOLD_OFF_T]),
                      [c[:6] for c in found])

    def test_set_exact_requires_the_serving_templates_trait_alone(self):
        self.ironic.add_template(GOLD_OFF_T, steps=[steps.bios_step(
            [('LogicalProc', 'Disabled')])],
            extra=deploy_config.template_extra(
                HT, ['HW_CPU_HYPERTHREADING'], 'baremetal-gold'))
        owner_configs.set_exact(self.clients, 'flavor', 'bm.gold', [HT])
        specs = self.nova.flavors[self.flavor['id']]['extra_specs']
        self.assertEqual('required', specs['trait:' + GOLD_OFF_T])
        self.assertNotIn('trait:' + OFF_T, specs)
        # and the flavor no longer drifts
        self.assertEqual([], [c for c in self.plan(PER_CLASS).changes
                              if c.kind == 'flavor'])

    def test_switching_between_two_types_that_share_a_step(self):
        turbo = deploy_config.Config('turbo', 'on')
        self.ironic.add_bios_template(turbo, ('Turbo', 'Enabled'))
        # set_configs asks for both: their set (a shared BIOS step)
        owner_configs.set_configs(self.clients, 'flavor', 'bm.gold', [turbo])
        specs = self.nova.flavors[self.flavor['id']]['extra_specs']
        both = ('trait:CUSTOM_DEPLOY_CONFIG_SET_HYPERTHREADING_DISABLED_AND_'
                'TURBO_ON')
        self.assertEqual(
            {'deploy-config:hyperthreading': 'disabled',
             'deploy-config:turbo': 'on', both: 'required'},
            {k: v for k, v in specs.items() if not k.startswith('res')})
        owner_configs.set_exact(self.clients, 'flavor', 'bm.gold', [turbo])
        self.assertEqual(
            {'deploy-config:turbo': 'on',
             'trait:CUSTOM_DEPLOY_CONFIG_TURBO_ON': 'required'},
            {k: v for k, v in specs.items() if not k.startswith('res')})

    def test_a_pending_sync_mark_is_a_change(self):
        template = next(iter(self.ironic.templates.values()))
        template['extra'][reading.SYNC_PENDING] = 'true'
        found = self.plan(PER_CLASS.replace(
            '      resource_classes:\n        baremetal-gold:\n'
            '          bios: {LogicalProc: Disabled}\n', '')).changes
        self.assertEqual([('node sync', OFF_T, 'update', 'node tags',
                           'pending', 'synced')], [c[:6] for c in found])

    def test_the_vocabulary_marks_the_templates_it_made(self):
        apply = writing.Apply(self.clients, lambda text: None)
        want = document.Template(HT, None, None, None, None)
        fields = [changes.Change('template', str(HT), 'create', 'steps',
                                 None, changes.FROM_VOCABULARY, (HT, None))]
        with mock.patch.object(deploy_templates, 'create', autospec=True,
                               return_value={'created': [GOLD_OFF_T]}):
            self.assertEqual([GOLD_OFF_T], apply.template(want, fields, {}))
        refused = exceptions.CommandError('No node can take it')
        with mock.patch.object(deploy_templates, 'create', autospec=True,
                               side_effect=refused):
            exc = self.assertRaises(exceptions.CommandError, apply.template,
                                    want, fields, {})
        self.assertIs(refused, exc)


    def test_a_config_of_the_vocabulary_is_served_per_class_only(self):
        on_gold = 'CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_ENABLED' \
            '_FOR_BAREMETAL_GOLD'
        self.ironic.add_template(on_gold, steps=[steps.bios_step(
            [('LogicalProc', 'Enabled')])],
            extra=deploy_config.template_extra(
                fakes.ON, ['HW_CPU_HYPERTHREADING'], 'baremetal-gold'))
        self.nova.add_flavor('bm.silver', {
            'resources:CUSTOM_BAREMETAL_SILVER': '1'})
        exc = self.assertRaises(
            schema.FileError, self.plan, PER_CLASS.replace(
                'flavors:\n', '    enabled: {}\nflavors:\n  bm.silver: '
                '{hyperthreading: enabled}\n'))
        self.assertIn('f.yaml:11:3: No deploy template realises', str(exc))
        self.assertIn('hyperthreading=enabled', str(exc))

    def test_a_name_the_cloud_holds_as_another_template_is_refused(self):
        self.ironic.add_template(
            'CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_ENABLED')
        exc = self.assertRaises(
            schema.FileError, self.plan, PER_CLASS.replace(
                'flavors:\n', '    enabled:\n      bios: {LogicalProc: '
                'Enabled}\nflavors:\n'))
        self.assertIn('f.yaml:9:5: template CUSTOM_DEPLOY_CONFIG_'
                      'HYPERTHREADING_ENABLED exists in the cloud as a '
                      'template of no deploy config', str(exc))

    def test_a_grant_is_checked_as_its_command_checks_it_at_planning(self):
        self.ironic.max_version = (1, 91)     # before runbooks
        exc = self.assertRaises(
            exceptions.CommandError, self.plan, PER_CLASS + 'projects:\n'
            '  demo: [hyperthreading=disabled]\n')
        self.assertIn('runbooks', str(exc))
        self.assertEqual([], self.ironic.writes)

    def test_prune_reads_the_toggle_records_of_the_nodes(self):
        node = self.ironic.add_node('node-1', instance_uuid='i-1')
        node['properties']['deploy_config_applied'] = {
            'instance_uuid': 'i-1', 'configs': {'hyperthreading':
                                                'disabled'}}
        exc = self.assertRaises(
            exceptions.CommandError, self.plan,
            'version: 1\nflavors:\n  bm.gold: {}\n', prune=True,
            prune_all=True)
        self.assertIn('on node node-1', str(exc))

    def test_a_template_being_deleted_is_finished_first(self):
        template = next(iter(self.ironic.templates.values()))
        template['extra']['deploy_config_deleting'] = True
        exc = self.assertRaises(schema.FileError, self.plan, PER_CLASS)
        self.assertIn('f.yaml:4:5: template %s is being deleted' % OFF_T,
                      str(exc))

    def test_a_class_spelled_otherwise_is_a_second_template(self):
        self.ironic.add_template(GOLD_OFF_T, steps=[steps.bios_step(
            [('LogicalProc', 'Disabled')])],
            extra=deploy_config.template_extra(
                HT, ['HW_CPU_HYPERTHREADING'], 'baremetal-gold'))
        exc = self.assertRaises(schema.FileError, self.plan,
                                PER_CLASS.replace('baremetal-gold',
                                                  'baremetal_gold'))
        self.assertIn('f.yaml:7:9: template %s exists in the cloud for '
                      'hyperthreading=disabled on resource class '
                      'baremetal-gold, one kind in placement with '
                      'baremetal_gold' % GOLD_OFF_T, str(exc))

class TestGrantedTemplates(testtools.TestCase):

    def setUp(self):
        super().setUp()
        steps_now = [steps.bios_step([('LogicalProc', 'Disabled')])]
        self.template = _cloud_template(
            'CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_DISABLED', HT, steps_now)
        fakes.grant(self.template, 'p1')
        self.current = document.from_cloud([self.template], [], [],
                                           {'p1': 'demo'})
        self.changed = document.parse(
            'version: 1\nconfigs:\n  hyperthreading:\n    disabled:\n'
            '      bios: {LogicalProc: Enabled}\n'
            '      capability_traits: [HW_CPU_HYPERTHREADING]\n'
            '    enabled:\n      bios: {LogicalProc: Enabled}\n'
            'projects:\n  demo: [hyperthreading=enabled]\n', 'f.yaml')

    def test_a_template_whose_grants_the_file_withdraws_may_change(self):
        found = changes.diff(self.changed, self.current)
        withdrawn = changes.withdrawn_grants(found, {'demo': ['p1']})
        self.assertEqual({('p1', 'hyperthreading=disabled')}, withdrawn)
        fields = [c for c in found if c.kind == 'template']
        changes.refuse_granted_changes(
            fields, {self.template['name']: self.template}, withdrawn)
        self.assertRaises(
            exceptions.CommandError, changes.refuse_granted_changes, fields,
            {self.template['name']: self.template}, set())

    def test_every_withdrawal_is_made_before_the_templates_are_written(self):
        found = [changes.Change('template', self.template['name'], 'update',
                                'steps', None, [], (HT, None)),
                 changes.Change('project', 'demo', 'update',
                                'hyperthreading=disabled', 'granted', None,
                                'demo'),
                  changes.Change('project', 'demo', 'update',
                                'hyperthreading=enabled', None, 'granted',
                                'demo')]
        cloud = reading.cloud_of([self.template], [], [], {'p1': 'demo'})
        self.assertEqual(self.current, cloud.current)
        declared = self.current._replace(templates={
            (HT, None): self.current.templates[HT, None]._replace(
                steps=[])})
        done = mock.Mock()
        done.deploy_templates.find.return_value = self.template
        for name in ('deploy_templates', 'project_grants', 'node_tags'):
            self.useFixture(fixtures.MockPatchObject(
                writing, name, getattr(done, name)))
        plan = planning.Plan(declared, cloud, found, 'f.yaml', [])
        clients = mock.Mock()
        clients.ironic.return_value.deploy_templates.return_value = [
            self.template]
        writing.Apply(clients, lambda text: None).run(plan)
        self.assertEqual(
            ['project_grants.withdraw', 'deploy_templates.find',
             'deploy_templates.update', 'node_tags.sync',
             'deploy_templates.unset', 'project_grants.grant'],
            [c[0] for c in done.mock_calls])


class TestCommands(fakes.TestCommand):

    def test_a_bad_budget_is_refused_before_the_file_is_read(self):
        from osc_deploy_config.v1 import declared

        for option in (['--max-unavailable', '0'], ['--max-failures', '-1']):
            exc = self.assertRaises(
                exceptions.CommandError, self.run_command,
                declared.ApplyDeclared, ['-f', '/no/such/file'] + option)
            self.assertIn('Expected --max-unavailable of 1 or more',
                          str(exc))

    def test_a_wait_timeout_of_0_is_kept(self):
        from osc_deploy_config.use_cases.declared import applying

        made = mock.Mock()
        made.return_value.run.return_value = []
        self.useFixture(fixtures.MockPatchObject(writing, 'Apply', made))
        self.useFixture(fixtures.MockPatchObject(
            planning, 'plan', return_value=mock.Mock(changes=[])))
        self.useFixture(fixtures.MockPatchObject(
            planning, 'read_file', return_value=(None, 'f.yaml')))
        self.useFixture(fixtures.MockPatchObject(
            writing, 'outdated', return_value=[]))
        applying.Applied(self.app.client_manager.deploy_config,
                         lambda t: None, wait_seconds=0).apply('f.yaml')
        self.assertEqual(0, made.call_args[0][2])

    def test_diff_shows_the_traceback_with_debug(self):
        from osc_deploy_config.v1 import declared

        self.app.options = mock.Mock(debug=True)
        self.app.LOG = mock.Mock()
        self.app.prepare_to_run_command = mock.Mock()  # the token: got
        cmd = declared.DiffDeclared(self.app, None)
        parsed = self.check_parser(cmd, ['-f', '/no/such/file'], [])
        self.assertEqual(2, cmd.run(parsed))
        self.assertTrue(self.app.LOG.error.call_args[1]['exc_info'])

    def test_an_image_named_as_a_flavor_rebuilds_its_own_servers(self):
        """An image's configs are applied by a deploy (the toggle refuses
        a type the image asks for): its servers are rebuilt."""
        outdated = [('a', 'flavor', 'x', ['hyperthreading=enabled']),
                    ('b', 'image', 'x', ['hyperthreading=disabled'])]
        self.assertEqual(
            ['openstack server deploy-config set --flavor x --all-projects '
             '--max-unavailable 1',
             'openstack server rebuild --image x b'],
            changes.rollout_commands(outdated))


class TestExportedGrants(testtools.TestCase):

    def setUp(self):
        super().setUp()
        self.template = _cloud_template(
            'CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_DISABLED', HT,
            [steps.bios_step([('LogicalProc', 'Disabled')])])

    def test_a_project_keystone_no_longer_knows_is_left_out(self):
        fakes.grant(self.template, 'p1', 'gone-id')
        current = document.from_cloud([self.template], [], [],
                                      {'p1': 'demo'})
        self.assertEqual({'demo': ['hyperthreading=disabled']},
                         current.projects)
        self.assertNotIn('gone-id', document.render(current))
        self.assertEqual(['gone-id'], document.unnamed_grants(
            [self.template], {'p1': 'demo'}))

    def test_a_name_granted_in_two_domains_is_refused(self):
        fakes.grant(self.template, 'p1', 'p2')
        exc = self.assertRaises(
            exceptions.CommandError, document.refuse_doubled_project_names,
            [self.template], {'p1': 'demo', 'p2': 'demo'})
        self.assertIn('Project name demo is granted configs in 2 projects',
                      str(exc))

    def test_a_stale_grant_is_not_exported_and_diffs_as_an_update(self):
        fakes.grant(self.template, 'p1')
        self.template['steps'][0]['args']['settings'][0]['value'] = 'Off'
        current = document.from_cloud([self.template], [], [],
                                      {'p1': 'demo'})
        self.assertEqual({}, current.projects)
        declared = document.parse(document.render(current).replace(
            'projects: {}', 'projects: {demo: [hyperthreading=disabled]}'),
            'f.yaml')
        self.assertEqual([('project', 'demo', 'update',
                           'hyperthreading=disabled', None, 'granted')],
                         [c[:6] for c in changes.diff(declared, current)])


class TestYaml(FileTestCase):

    def test_anchors_and_aliases_are_refused(self):
        self.assertRefused('version: 1\nflavors:\n  a: &x {}\n  b: *x\n',
                           '3:6', 'anchors and aliases')
        bomb = 'version: 1\nx: &a [1, 1]\ny: &b [*a, *a]\nz: [*b, *b]\n'
        self.assertRefused(bomb, '2:4', 'anchors and aliases')

    def test_what_safe_yaml_cannot_construct_is_one_line(self):
        self.assertRefused('version: 1\nflavors:\n  a: {<<: {b: c}}\n',
                           '3:7', 'merge keys ("<<") are not taken')
        self.assertRefused('version: !thing 1\n', '1:10', 'YAML')

    def test_the_version_is_the_integer_1(self):
        for written in ('true', '1.0'):
            self.assertRefused('version: %s\n' % written, '1:10',
                               'version must be 1')

    def test_a_word_yaml_reads_as_a_boolean_is_to_be_quoted(self):
        self.assertRefused(GOOD.replace('{hyperthreading: disabled}',
                                        '{hyperthreading: true}'),
                           '17:29', 'quote it, "true"')

    def test_a_steps_bios_value_is_a_word_unless_true_or_false(self):
        text = GOOD.replace(
            '      bios: {LogicalProc: Disabled}\n',
            '      steps:\n      - {interface: bios, step: '
            'apply_configuration, priority: 150,\n         args: {settings: '
            '[{name: LogicalProc, value: Off}]}}\n')
        declared = document.parse(text, 'f.yaml')
        self.assertEqual('Off', declared.templates[HT, None].steps[0][
            'args']['settings'][0]['value'])
        declared = document.parse(text.replace('value: Off',
                                               'value: false'), 'f.yaml')
        self.assertIs(False, declared.templates[HT, None].steps[0]['args'][
            'settings'][0]['value'])

    def test_a_non_string_bios_value_of_the_cloud_round_trips(self):
        listed = [_cloud_template(
            'CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_DISABLED', HT,
            [steps.bios_step([('LogicalProc', False), ('Cores', 1)])])]
        current = document.from_cloud(listed, [], [], {})
        text = document.render(current)
        self.assertNotIn('bios:', text)
        self.assertEqual([], changes.diff(document.parse(text, 'f.yaml'),
                                          current, prune=True))


class TestVocabulary(testtools.TestCase):

    def test_an_image_may_not_ask_for_a_config_of_the_vocabulary(self):
        text = GOOD.replace('    enabled:\n', '    enabled: {}\n    x:\n'
                            ).replace('images: {}', 'images:\n  '
                                      'centos: {hyperthreading: enabled}')
        exc = self.assertRaises(schema.FileError, document.parse, text,
                                'f.yaml')
        self.assertIn('hyperthreading=enabled is served per resource class',
                      str(exc))


class TestSchemaRules(FileTestCase):
    """What the code enforces, the published schema says."""

    def test_bios_or_steps_not_both(self):
        self.assertRefused(GOOD.replace(
            '      bios: {LogicalProc: Disabled}\n',
            '      bios: {LogicalProc: Disabled}\n      steps: []\n'),
            '6:7', 'give bios or steps, not both')
        self.assertEqual({'required': ['bios', 'steps']}, schema.SCHEMA[
            'properties']['configs']['additionalProperties'][
                'additionalProperties']['not'])

    def test_a_template_name_needs_bios_or_steps(self):
        self.assertRefused(GOOD.replace(
            '    disabled:\n      bios: {LogicalProc: Disabled}\n',
            '    disabled:\n      template: CUSTOM_X\n'),
            '5:7', 'template needs bios or steps')

    def test_a_template_per_class_needs_bios_or_steps(self):
        self.assertRefused(GOOD.replace(
            '          bios: {ProcHyperthreading: Enabled}\n',
            '          capability_traits: []\n'), '10:11', 'lacks bios or '
            'steps')

    def test_names_are_not_empty(self):
        self.assertRefused(GOOD.replace('bm.gold:', '"":'), '17:3',
                           'an empty name in flavors')
        self.assertRefused(GOOD.replace(
            '    disabled:\n      bios: {LogicalProc: Disabled}\n',
            '    disabled:\n      template: ""\n      bios: {A: B}\n'),
            '5:17', 'is empty')


class TestExportOrder(testtools.TestCase):

    def test_configs_by_type_then_value_and_args_keys_sorted(self):
        raid = [{'interface': 'raid', 'step': 'apply_configuration',
                 'priority': 150, 'args': {'raid_config': {
                     'logical_disks': [{'size_gb': 'MAX', 'raid_level': '0'
                                        }]}, 'delete_existing': True}}]
        listed = [_cloud_template('CUSTOM_A', deploy_config.Config(t, 'on'),
                                  raid) for t in ('ht-x', 'ht')]
        listed[0]['name'] = 'CUSTOM_B'
        text = document.render(document.from_cloud(listed, [], [], {}))
        self.assertLess(text.index('  ht:'), text.index('  ht-x:'))
        self.assertLess(text.index('delete_existing'),
                        text.index('raid_config'))
        self.assertLess(text.index('raid_level'), text.index('size_gb'))

    def test_a_template_being_deleted_is_not_exported(self):
        listed = [_cloud_template(
            'CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_DISABLED', HT,
            [steps.bios_step([('LogicalProc', 'Disabled')])],
            deploy_config_deleting=True)]
        self.assertEqual({}, document.from_cloud(listed, [], [],
                                                 {}).templates)


class TestOneKind(testtools.TestCase):

    def test_two_spellings_of_one_class_in_the_file(self):
        text = GOOD.replace(
            "          bios: {ProcHyperthreading: Enabled}\n",
            "          bios: {ProcHyperthreading: Enabled}\n"
            "        baremetal_gold:\n"
            "          bios: {ProcHyperthreading: Enabled}\n")
        exc = self.assertRaises(schema.FileError, document.parse, text,
                                'f.yaml')
        self.assertIn('resource classes baremetal-gold and baremetal_gold '
                      'are one kind', str(exc))


class TestSetsAgainstTheCloud(TestAgainstTheCloud):
    def test_a_running_servers_flavor_and_image_that_share_a_step(self):
        turbo = deploy_config.Config('turbo', 'fast')
        self.ironic.add_bios_template(turbo, ('Turbo', 'Enabled'))
        image = self.glance.add_image('hpc')
        server = self.nova.add_server('db-1', self.flavor)
        server['image'] = {'id': image['id']}
        text = ('version: 1\nconfigs:\n  hyperthreading:\n    disabled:\n'
                '      bios: {HyperThreading: Disabled}\n  turbo:\n    fast:\n'
                '      bios: {Turbo: Enabled}\nflavors:\n  bm.gold:\n'
                '    hyperthreading: disabled\nimages:\n  hpc:\n'
                '    turbo: fast\n')
        exc = self.assertRaises(exceptions.CommandError, self.plan, text)
        self.assertIn('hyperthreading=disabled (flavor bm.gold) and '
                      'turbo=fast (image hpc) both run '
                      'bios.apply_configuration', str(exc))
        self.assertIn('(server db-1 runs both)', str(exc))
        # asked for together by the flavor: their set serves them
        found = self.plan(text.replace(
            '    hyperthreading: disabled\n', '    hyperthreading: disabled\n'
            '    turbo: fast\n').replace('images:\n  hpc:\n    turbo: fast\n',
                                         'images: {}\n')).changes
        self.assertIn(('set', 'CUSTOM_DEPLOY_CONFIG_SET_HYPERTHREADING_'
                       'DISABLED_AND_TURBO_FAST', 'create'),
                      [c[:3] for c in found])
