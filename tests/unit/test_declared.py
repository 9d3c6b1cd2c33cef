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

from osc_lib import exceptions
import testtools

from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.declared import changes
from osc_deploy_config.domain.declared import document
from osc_deploy_config.domain.declared import schema

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


class TestReading(testtools.TestCase):

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

    def assertRefused(self, text, where, words):
        exc = self.assertRaises(schema.FileError, document.parse, text,
                                'f.yaml')
        self.assertIn('f.yaml:%s: ' % where, str(exc))
        self.assertIn(words, str(exc))
        self.assertNotIn('\n', str(exc))

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
        server = {'name': 'web-1', 'flavor': {'extra_specs': {
            'trait:CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_DISABLED':
                'required'}}}
        exc = self.assertRaises(
            exceptions.CommandError, changes.refuse_pruning_asked, found,
            dropped,
            self.current, [server])
        self.assertIn('server web-1 was deployed with it', str(exc))

    def test_outdated_servers_and_their_rollout(self):
        edited = document.parse(GOOD.replace(
            'bm.gold: {hyperthreading: disabled}',
            'bm.gold: {hyperthreading: enabled}'), 'f.yaml')
        found = changes.diff(edited, self.current)
        server = {'name': 'web-1', 'flavor': {
            'original_name': 'bm.gold',
            'extra_specs': {'deploy-config:hyperthreading': 'disabled'}}}
        outdated = changes.outdated_servers(found, [server], edited, {})
        self.assertEqual([('web-1', 'flavor', 'bm.gold',
                           ['hyperthreading=enabled'])], outdated)
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
