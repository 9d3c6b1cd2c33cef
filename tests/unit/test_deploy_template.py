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

import io
import json
import os
import tempfile

import fixtures
from osc_lib import exceptions
from osc_lib.test import base as osc_base

from osc_deploy_config.domain.configs import templates
from osc_deploy_config.domain.grants import grants
from osc_deploy_config.v1 import deploy_template as cmds
from tests.unit import fakes
from tests.unit.fakes import HT
from tests.unit.fakes import ON_T

STEP = {'interface': 'bios', 'step': 'apply_configuration',
        'args': {'settings': [{'name': 'HT', 'value': 'On'}]},
        'priority': 150}
STEPS = json.dumps([STEP])
FIELDS = ('uuid', 'name', 'steps', 'extra', 'created_at', 'updated_at')
ANNOTATION = {'deploy_config_type': 'hyperthreading',
              'deploy_config_value': 'enabled',
              'deploy_config_requires_traits': 'HW_CPU_HYPERTHREADING'}


class TestCreate(fakes.TestCommand):
    def create(self, *args, stdin=None):
        return self.run_command(cmds.CreateDeployTemplate, list(args), stdin)

    def posted(self):
        posts = [r for r in self.ironic.requests if r[0] == 'POST']
        self.assertEqual(1, len(posts))
        self.assertEqual('1.55', posts[0][2])
        (template,) = self.ironic.templates.values()
        return template

    def test_like_ironicclient(self):
        columns, data = self.create('CUSTOM_A', '--steps', STEPS,
                                    '--extra', 'owner=ops',
                                    '--extra', 'n=3')
        self.assertEqual(FIELDS, columns)
        template = self.posted()
        self.assertEqual([STEP], template['steps'])
        self.assertEqual({'owner': 'ops', 'n': 3}, template['extra'])
        self.assertEqual(('CUSTOM_A', [STEP]), data[1:3])
        self.assertEqual([('POST', '/deploy_templates')], self.ironic.writes)

    def test_uuid(self):
        self.create('CUSTOM_A', '--steps', STEPS, '--uuid',
                    '11111111-2222-3333-4444-555555555555')
        self.assertEqual('11111111-2222-3333-4444-555555555555',
                         self.posted()['uuid'])

    def test_steps_from_yaml_file_and_stdin(self):
        fd, path = tempfile.mkstemp()
        with os.fdopen(fd, 'w') as f:
            f.write('- {interface: bios, step: apply_configuration, '
                    'args: {settings: [{name: HT, value: "On"}]}, '
                    'priority: 150}\n')
        self.addCleanup(os.remove, path)
        self.create('CUSTOM_A', '--steps', path)
        self.create('CUSTOM_B', '--steps', '-', stdin=io.StringIO(STEPS))
        self.assertEqual([[STEP], [STEP]], [
            t['steps'] for t in self.ironic.templates.values()])

    def test_a_standard_trait_names_a_template(self):
        self.create('HW_CPU_X86_VMX', '--steps', STEPS)
        self.assertEqual('HW_CPU_X86_VMX', self.posted()['name'])

    def test_config_names_and_annotates(self):
        columns, data = self.create('--config', 'hyperthreading=enabled',
                                    '--bios-setting', 'HT=On')
        template = self.posted()
        self.assertEqual(ON_T, template['name'])
        self.assertEqual(ANNOTATION, template['extra'])
        self.assertEqual([STEP], template['steps'])
        self.assertEqual(FIELDS + ('config', 'capability_traits',
                                   'resource_class'), columns)
        self.assertEqual(('hyperthreading=enabled',
                          ['HW_CPU_HYPERTHREADING'], None), data[-3:])

    def test_config_with_own_traits_or_none(self):
        self.create('CUSTOM_A', '--config', 'ht=on', '--steps', STEPS,
                    '--requires-trait', 'CUSTOM_FAST', '--requires-trait',
                    'HW_CPU_HYPERTHREADING')
        self.create('--config', 'hyperthreading=disabled', '--steps', STEPS,
                    '--no-requires-trait')
        extras = {t['name']: t['extra'] for t in
                  self.ironic.templates.values()}
        self.assertEqual(
            'CUSTOM_FAST,HW_CPU_HYPERTHREADING',
            extras['CUSTOM_A']['deploy_config_requires_traits'])
        self.assertEqual('', extras[
            'CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_DISABLED'][
            'deploy_config_requires_traits'])

    def test_bios_and_raid_profiles(self):
        fd, path = tempfile.mkstemp()
        with os.fdopen(fd, 'w') as f:
            json.dump({'logical_disks': [{'size_gb': 'MAX',
                                          'raid_level': '1'}]}, f)
        self.addCleanup(os.remove, path)
        self.create('--config', 'disks=raid1', '--raid-config', path,
                    '--bios-setting', 'A=1', '--bios-setting', 'B=2')
        steps = self.posted()['steps']
        self.assertEqual(['bios', 'raid'], [s['interface'] for s in steps])
        self.assertEqual([{'name': 'A', 'value': '1'},
                          {'name': 'B', 'value': '2'}],
                         steps[0]['args']['settings'])

    def test_second_template_for_a_config_refused(self):
        self.ironic.add_template(ON_T, extra=ANNOTATION)
        exc = self.assertRaises(
            exceptions.CommandError, self.create, 'CUSTOM_OTHER',
            '--config', 'hyperthreading=enabled', '--steps', STEPS)
        self.assertIn('already has a template, %s' % ON_T, str(exc))
        self.assertEqual([], self.ironic.writes)

    def test_bad_input_makes_no_request(self):
        raid = tempfile.mkstemp()[1]
        self.addCleanup(os.remove, raid)
        for args, why in (
            (['CUSTOM_A', '--steps', '[{"interface":'], 'Malformed'),
            (['CUSTOM_A', '--steps', '/no/such.yaml'], 'no such file'),
            (['CUSTOM_A', '--steps', '[]'], 'must not be empty'),
            (['CUSTOM_A', '--steps', json.dumps([dict(STEP, interface='x')])],
             'unknown interface'),
            (['CUSTOM_A', '--steps', json.dumps([dict(STEP, priority=-2)])],
             'integer >= 0'),
            (['CUSTOM_A', '--steps', json.dumps([dict(STEP, priority='x')])],
             'integer >= 0'),
            (['CUSTOM_A', '--steps', json.dumps(
                [{k: v for k, v in STEP.items() if k != 'args'}])],
             'missing args'),
            (['CUSTOM_A', '--steps', STEPS, '--bios-setting', 'A=1'],
             'duplicate step'),
            (['custom_a', '--steps', STEPS], 'Invalid deploy template name'),
            (['HW_CPU_X', '--steps', STEPS],
             'must be a standard trait (os-traits'),
            (['CUSTOM_' + 'A' * 250, '--steps', STEPS],
             'longer than 255'),
            (['--config', 'hyperthreading', '--steps', STEPS],
             'expected TYPE=VALUE'),
            (['--config', 'ht=', '--steps', STEPS], 'empty value'),
            (['--config', 'HT=on', '--steps', STEPS], 'must be lowercase'),
            (['--config', 'ht=on', '--steps', STEPS, '--requires-trait',
              'HW_NOPE'], "Unknown trait 'HW_NOPE'"),
            (['CUSTOM_A', '--steps', STEPS, '--requires-trait',
              'HW_CPU_HYPERTHREADING'], 'need --config'),
            (['CUSTOM_A', '--bios-setting', 'HT'], 'expected NAME=VALUE'),
            (['CUSTOM_A', '--raid-config', '/no/such'], 'Cannot read RAID'),
            (['CUSTOM_A', '--raid-config', raid], 'logical_disks'),
            (['CUSTOM_A'], 'Give the steps'),
            (['--steps', STEPS], 'Give the template a name'),
            (['CUSTOM_A', '--steps', STEPS, '--extra', 'novalue'],
             'expected KEY=VALUE'),
            (['--config', 'ht=on', '--steps', STEPS, '--extra',
              'deploy_config_value=off'], 'contradicts'),
        ):
            exc = self.assertRaises(exceptions.CommandError, self.create,
                                    *args)
            self.assertIn(why, str(exc), args)
        self.assertEqual([], self.ironic.requests)

    def test_requires_trait_options_exclusive(self):
        self.assertRaises(osc_base.ParserException, self.create, '--config',
                          'a=b', '--steps', STEPS, '--no-requires-trait',
                          '--requires-trait', 'CUSTOM_X')

    def test_forbidden_for_project_scope_says_what_is_needed(self):
        self.without_system_role()
        self.ironic.forbidden = True
        exc = self.assertRaises(exceptions.CommandError, self.create,
                                'CUSTOM_A', '--steps', STEPS)
        self.assertIn('system-scoped token', str(exc))
        self.assertIn('openstack role add --system all', str(exc))

    def test_old_ironic_refused_before_any_request(self):
        # the SDK's version discovery already tells ironic's range
        self.ironic.max_version = (1, 54)
        exc = self.assertRaises(exceptions.CommandError, self.create,
                                '--config', 'a=b', '--steps', STEPS)
        self.assertEqual(
            'The baremetal service at http://ironic.test supports API '
            'version 1.54 at most; deploy templates need 1.55 or later',
            str(exc))
        self.assertEqual([], self.ironic.requests)

    def test_old_ironic_without_discovery_refuses_the_first_request(self):
        # behind an endpoint override, ironic's 406 tells instead
        self.ironic.max_version, self.ironic.discovered = (1, 54), False
        exc = self.assertRaises(exceptions.CommandError, self.create,
                                '--config', 'a=b', '--steps', STEPS)
        self.assertIn('supports API version 1.54 at most; deploy templates '
                      'need 1.55 or later', str(exc))
        self.assertEqual([('GET', '1.55')], [
            (method, version) for method, _, version in self.ironic.requests])

    def test_ironicclient_version_pin_is_reset(self):
        self.conn.config.config['baremetal_api_version'] = '1.115'
        self.create('CUSTOM_A', '--steps', STEPS)
        self.assertEqual('1', self.conn.config.config['baremetal_api_version'])
        self.assertEqual('1.55', self.ironic.requests[-1][2])


class TestBiosRegistry(fakes.TestCommand):
    """create and set check BIOS settings against the registries of the
    nodes capable of the template."""

    REGISTRY = {'HyperThreading': {'attribute_type': 'Enumeration',
                                   'allowable_values': ['Enabled',
                                                        'Disabled']},
                'SerialNumber': {'attribute_type': 'String',
                                 'read_only': True}}

    def setUp(self):
        super().setUp()
        self.logged = self.useFixture(fixtures.FakeLogger(
            name='osc_deploy_config', format='%(levelname)s %(message)s'))
        for name in ('bm-0', 'bm-1'):
            node = self.ironic.add_node(name, traits=[HT])
            node['bios'] = {'HyperThreading': 'Enabled',
                            'SerialNumber': 'S-' + name}
            self.ironic.bios_registries[node['uuid']] = self.REGISTRY
        self.bare = self.ironic.add_node('bm-2', traits=[HT])
        self.ironic.add_node('incapable')   # no HT: never read

    def create(self, setting):
        return self.run_command(cmds.CreateDeployTemplate, [
            '--config', 'hyperthreading=disabled', '--bios-setting',
            setting])

    def test_refused_in_one_line_naming_setting_and_nodes(self):
        for setting, reason in (
                ('HyperThreding=Disabled',
                 'no such setting in the BIOS registry'),
                ('HyperThreading=Maybe',
                 'allowed values are Enabled, Disabled'),
                ('SerialNumber=X', 'the setting is read-only')):
            exc = self.assertRaises(exceptions.CommandError, self.create,
                                    setting)
            self.assertEqual('BIOS registry refuses %s on bm-0, bm-1: %s'
                             % (setting, reason), str(exc))
        self.assertEqual([], self.ironic.writes)
        self.assertEqual({}, self.ironic.templates)

    def test_accepted_and_nodes_without_registry_reported(self):
        self.create('HyperThreading=Disabled')
        self.assertEqual(1, len(self.ironic.templates))
        self.assertIn('BIOS settings not checked on bm-2: no BIOS registry '
                      'reported', self.logged.output)
        reads = sorted(p for m, p, v in self.ironic.requests
                       if '/bios' in p)
        self.assertEqual(3, len(reads), 'the three capable nodes only')
        self.assertEqual({'1.74'}, {v for m, p, v in self.ironic.requests
                                    if '/bios' in p})

    def test_warnings_only_once_the_template_is_written(self):
        # a template of that name exists (not a config's: no refusal of a
        # second template), so ironic refuses the create: one line only
        self.ironic.add_template('CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_'
                                 'DISABLED')
        exc = self.assertRaises(exceptions.CommandError, self.create,
                                'HyperThreading=Disabled')
        self.assertIn('already exists', str(exc))
        self.assertEqual('', self.logged.output)

    def test_set_steps_checked_and_old_ironic_skips_the_check(self):
        template = self.ironic.add_template(
            'CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_DISABLED',
            extra={'deploy_config_type': 'hyperthreading',
                   'deploy_config_value': 'disabled'})
        exc = self.assertRaises(
            exceptions.CommandError, self.run_command,
            cmds.SetDeployTemplate, [template['name'], '--bios-setting',
                                     'HyperThreading=Maybe'])
        self.assertIn('HyperThreading=Maybe on bm-0, bm-1', str(exc))
        self.ironic.max_version = (1, 73)
        self.run_command(cmds.SetDeployTemplate, [
            template['name'], '--bios-setting', 'HyperThreading=Maybe'])
        self.assertIn('not checked against the nodes\' BIOS registry',
                      self.logged.output)


class TestList(fakes.TestCommand):
    def test_field_choices_are_the_domains_fields(self):
        # the parser names them without importing the domain module
        self.assertEqual((templates.FIELDS, templates.CONFIG_FIELDS),
                         (cmds._FIELDS, cmds._CONFIG_FIELDS))

    def setUp(self):
        super().setUp()
        self.on = self.ironic.add_template(ON_T, extra=ANNOTATION)
        self.plain = self.ironic.add_template('CUSTOM_PLAIN')

    def list(self, *args):
        columns, rows = self.run_command(cmds.ListDeployTemplate, list(args))
        return columns, list(rows)

    def test_default_columns_one_request(self):
        columns, rows = self.list()
        self.assertEqual(('uuid', 'name'), columns)
        self.assertEqual(sorted([(self.on['uuid'], ON_T),
                                 (self.plain['uuid'], 'CUSTOM_PLAIN')]),
                         sorted(rows))
        self.assertEqual(1, len(self.ironic.requests))
        # only the fields shown: ironic answers faster
        self.assertIn('fields=uuid%2Cname', self.ironic.requests[0][1])

    def test_long(self):
        columns, rows = self.list('--long', '--sort', 'name')
        self.assertEqual(FIELDS, columns)
        self.assertEqual([ON_T, 'CUSTOM_PLAIN'], [r[1] for r in rows])
        self.assertEqual(ANNOTATION, rows[0][3])
        self.assertIn('detail=True', self.ironic.requests[0][1])

    def test_fields_including_ours(self):
        columns, rows = self.list('--fields', 'name', 'config',
                                  '--sort', 'name:desc')
        self.assertEqual(('name', 'config'), columns)
        self.assertEqual([('CUSTOM_PLAIN', None),
                          (ON_T, 'hyperthreading=enabled')], rows)
        self.assertIn('fields=name%2Cextra', self.ironic.requests[0][1])

    def test_config_filters_add_columns(self):
        self.ironic.add_template('CUSTOM_RAID', extra={
            'deploy_config_type': 'disks', 'deploy_config_value': 'raid1'})
        for args in (['--config-type', 'hyperthreading'],
                     ['--config', 'hyperthreading=enabled']):
            columns, rows = self.list(*args)
            self.assertEqual(('uuid', 'name', 'config', 'capability_traits',
                              'resource_class'),
                             columns)
            self.assertEqual([(self.on['uuid'], ON_T, 'hyperthreading=enabled',
                               ['HW_CPU_HYPERTHREADING'], None)], rows)

    def test_pages(self):
        self.ironic.page_size = 1
        self.assertEqual(1, len(self.list()[1]))
        self.assertEqual(2, len(self.list('--limit', '0')[1]))
        self.assertEqual(1, len(self.list('--limit', '1')[1]))
        first = sorted(self.ironic.templates)[0]
        self.assertEqual([sorted(self.ironic.templates)[1]],
                         [r[0] for r in self.list('--marker', first)[1]])

    def test_negative_limit(self):
        exc = self.assertRaises(exceptions.CommandError, self.list,
                                '--limit', '-1')
        self.assertEqual('Expected non-negative --limit, got -1', str(exc))
        self.assertEqual([], self.ironic.requests)

    def test_long_and_fields_exclusive(self):
        self.assertRaises(osc_base.ParserException, self.list, '--long',
                          '--fields', 'name')


class TestShow(fakes.TestCommand):
    def setUp(self):
        super().setUp()
        self.on = self.ironic.add_template(ON_T, extra=ANNOTATION)

    def show(self, *args):
        return self.run_command(cmds.ShowDeployTemplate, list(args))

    def test_sorted_fields_without_links(self):
        columns, data = self.show(ON_T)
        self.assertEqual(tuple(sorted(FIELDS)), columns)
        self.assertEqual(ON_T, dict(zip(columns, data, strict=True))['name'])

    def test_fields(self):
        columns, data = self.show(self.on['uuid'], '--fields', 'name',
                                  'steps')
        self.assertEqual(('name', 'steps'), columns)
        self.assertIn('fields=name,steps', self.ironic.requests[0][1])

    def test_by_config(self):
        columns, data = self.show('--config', 'hyperthreading=enabled')
        shown = dict(zip(columns, data, strict=True))
        self.assertEqual(ON_T, shown['name'])
        self.assertEqual(['HW_CPU_HYPERTHREADING'],
                         shown['capability_traits'])

    def test_refusals(self):
        for args, why in ((['CUSTOM_NOPE'], 'not found'),
                          (['--config', 'hyperthreading=disabled'],
                           'No deploy template realises'),
                          ([], 'Give either'),
                          ([ON_T, '--config', 'a=b'], 'Give either')):
            exc = self.assertRaises(exceptions.CommandError, self.show, *args)
            self.assertIn(why, str(exc))


class TestSetUnset(fakes.TestCommand):
    def setUp(self):
        super().setUp()
        self.plain = self.ironic.add_template('CUSTOM_PLAIN',
                                              extra={'owner': 'ops'})

    def set(self, *args):
        return self.run_command(cmds.SetDeployTemplate, list(args))

    def unset(self, *args):
        return self.run_command(cmds.UnsetDeployTemplate, list(args))

    def test_name_steps_extra(self):
        self.set('CUSTOM_PLAIN', '--name', 'CUSTOM_NEW', '--steps', STEPS,
                 '--extra', 'n=1')
        self.assertEqual('CUSTOM_NEW', self.plain['name'])
        self.assertEqual([STEP], self.plain['steps'])
        self.assertEqual({'owner': 'ops', 'n': 1}, self.plain['extra'])
        self.set('CUSTOM_NEW', '--name', 'HW_CPU_X86_VMX')
        self.assertEqual('HW_CPU_X86_VMX', self.plain['name'])

    def test_annotate_existing_template(self):
        self.set('CUSTOM_PLAIN', '--config', 'hyperthreading=enabled')
        self.assertEqual(dict(ANNOTATION, owner='ops'), self.plain['extra'])
        self.set('CUSTOM_PLAIN', '--requires-trait', 'CUSTOM_FAST')
        self.assertEqual('CUSTOM_FAST', self.plain['extra'][
            'deploy_config_requires_traits'])
        self.set('CUSTOM_PLAIN', '--config', 'hyperthreading=on')
        self.assertEqual('CUSTOM_FAST', self.plain['extra'][
            'deploy_config_requires_traits'], 'kept when not given')

    def test_config_taken_by_another_template(self):
        self.ironic.add_template(ON_T, extra=ANNOTATION)
        exc = self.assertRaises(exceptions.CommandError, self.set,
                                'CUSTOM_PLAIN', '--config',
                                'hyperthreading=enabled')
        self.assertIn('one template per config', str(exc))
        self.assertEqual([], self.ironic.writes)

    def test_refusals_change_nothing(self):
        for args, why in (
                (['CUSTOM_NOPE', '--name', 'CUSTOM_X'], 'not found'),
                (['CUSTOM_PLAIN', '--requires-trait', 'CUSTOM_X'],
                 'has no deploy config'),
                (['CUSTOM_PLAIN', '--name', 'bad'], 'Invalid deploy template'),
                (['CUSTOM_PLAIN', '--steps', '[]'], 'must not be empty'),
                (['CUSTOM_PLAIN', '--extra', 'a:b=c'], 'cannot be changed')):
            exc = self.assertRaises(exceptions.CommandError, self.set, *args)
            self.assertIn(why, str(exc))
        for args, why in (
                (['CUSTOM_PLAIN', '--extra', 'nope'], 'has no extra nope'),
                (['CUSTOM_PLAIN', '--config'], 'has no deploy config'),
                (['CUSTOM_NOPE', '--extra', 'owner'], 'not found'),
                (['CUSTOM_PLAIN', '--extra', 'a/b'], 'cannot be changed')):
            exc = self.assertRaises(exceptions.CommandError, self.unset,
                                    *args)
            self.assertIn(why, str(exc))
        self.assertEqual([], self.ironic.writes)

    def test_nothing_to_set_warns_and_asks_nothing(self):
        logged = self.useFixture(fixtures.FakeLogger(
            name='osc_deploy_config', format='%(levelname)s %(message)s'))
        self.set('CUSTOM_PLAIN')
        self.unset('CUSTOM_PLAIN')
        self.assertEqual('WARNING Please specify what to set.\n'
                         'WARNING Please specify what to unset.\n',
                         logged.output)
        self.assertEqual([], self.ironic.requests)

    def test_unset_extra_and_config(self):
        self.set('CUSTOM_PLAIN', '--config', 'hyperthreading=enabled')
        self.unset('CUSTOM_PLAIN', '--config', '--extra', 'owner')
        self.assertEqual({}, self.plain['extra'])


class TestDelete(fakes.TestCommand):
    def test_collects_failures(self):
        a = self.ironic.add_template('CUSTOM_A')
        self.ironic.add_template('CUSTOM_B')
        cmd = cmds.DeleteDeployTemplate(self.app, None)
        parsed = self.check_parser(
            cmd, [a['uuid'], 'CUSTOM_NOPE', 'CUSTOM_B'], [])
        exc = self.assertRaises(exceptions.CommandError, cmd.take_action,
                                parsed)
        self.assertEqual('Failed to delete deploy template CUSTOM_NOPE: not '
                         'found', str(exc))
        self.assertEqual({}, self.ironic.templates)
        self.assertEqual(
            'Deleted deploy template %s\nDeleted deploy template CUSTOM_B\n'
            % a['uuid'], self.fake_stdout.make_string())


class TestGrantedTemplates(fakes.TestCommand):
    """A grant is of the template's content: the operator changes or
    deletes a granted template only once it is withdrawn; a delete takes
    with it what lets ironic still run its steps."""

    def setUp(self):
        super().setUp()
        self.template = self.ironic.add_template(ON_T, extra=dict(ANNOTATION))
        self.node = self.ironic.add_node('bm-0', traits=[ON_T, 'CUSTOM_X'])

    def run_delete(self, *idents):
        cmd = cmds.DeleteDeployTemplate(self.app, None)
        return cmd.take_action(self.check_parser(cmd, list(idents), []))

    def test_set_and_delete_refuse_a_granted_template(self):
        fakes.grant(self.template, 'project-1')
        for args in (['--steps', STEPS], ['--name', 'CUSTOM_NEW'],
                     ['--config', 'hyperthreading=on'],
                     ['--resource-class', 'baremetal-gold']):
            exc = self.assertRaises(
                exceptions.CommandError, self.run_command,
                cmds.SetDeployTemplate, [ON_T, *args])
            self.assertIn('Deploy template %s is granted to project '
                          'project-1: changing its ' % ON_T, str(exc))
            self.assertIn('withdraw it first (openstack project '
                          'deploy-config unset project-1 '
                          'hyperthreading=enabled)', str(exc))
        for command, args in (
                (cmds.UnsetDeployTemplate, ['--config']),
                (cmds.UnsetDeployTemplate, ['--extra', 'deploy_config_type']),
                (cmds.SetDeployTemplate, ['--extra',
                                          'deploy_config_value=off'])):
            exc = self.assertRaises(exceptions.CommandError,
                                    self.run_command, command, [ON_T, *args])
            self.assertIn('changing its config', str(exc))
        exc = self.assertRaises(exceptions.CommandError, self.run_delete,
                                ON_T)
        self.assertIn('Failed to delete deploy template %s: Deploy template '
                      '%s is granted to project project-1: deleting it'
                      % (ON_T, ON_T), str(exc))
        self.assertEqual([], self.ironic.writes)
        # what the grant does not cover may change
        self.run_command(cmds.SetDeployTemplate, [ON_T, '--extra', 'n=1',
                                                  '--requires-trait',
                                                  'CUSTOM_FAST'])
        self.assertEqual((1, 'CUSTOM_FAST', ['project-1']), (
            self.template['extra']['n'],
            self.template['extra']['deploy_config_requires_traits'],
            grants.granted_projects(self.template)))

    def test_delete_cascades_to_runbooks_and_node_traits(self):
        self.ironic.runbooks['rb-1'] = {
            'uuid': 'rb-1', 'name': 'theirs', 'owner': 'project-2',
            'traits': [ON_T], 'steps': [], 'extra': {}, 'public': False}
        self.ironic.runbooks['rb-2'] = {
            'uuid': 'rb-2', 'name': 'other', 'owner': 'project-2',
            'traits': ['CUSTOM_X'], 'steps': [], 'extra': {}, 'public': False}
        self.ironic.runbooks['rb-3'] = {
            'uuid': 'rb-3', 'name': 'both', 'owner': 'project-2',
            'traits': [ON_T, 'CUSTOM_Y'], 'steps': [], 'extra': {},
            'public': False}
        # deployed with the trait: ironic would refuse its rebuild
        used = self.ironic.add_node('bm-1', traits=[ON_T],
                                    instance_uuid='i-1',
                                    instance_traits=[ON_T])
        self.run_delete(ON_T)
        self.assertEqual(['rb-2', 'rb-3'], list(self.ironic.runbooks))
        self.assertEqual(['CUSTOM_Y'], self.ironic.runbooks['rb-3']['traits'])
        self.assertEqual((['CUSTOM_X'], [ON_T]), (self.node['traits'],
                                                  used['traits']))
        self.assertEqual({}, self.ironic.templates)
        # a rerun finds nothing left, and says so
        exc = self.assertRaises(exceptions.CommandError, self.run_delete,
                                ON_T)
        self.assertEqual('Failed to delete deploy template %s: not found'
                         % ON_T, str(exc))

    def test_a_stale_grant_counts_for_nothing(self):
        fakes.grant(self.template, 'project-1')
        self.assertEqual(['project-1'], grants.granted_projects(
            self.template))
        self.template['steps'][0]['args'] = {'settings': []}
        self.assertEqual(([], ['project-1']), (
            grants.granted_projects(self.template),
            grants.stale_projects(self.template)))
        # an earlier release's record, a list of projects, is stale too
        self.template['extra']['deploy_config_granted'] = ['project-1']
        self.assertEqual(([], ['project-1']), (
            grants.granted_projects(self.template),
            grants.stale_projects(self.template)))

    def test_a_config_template_is_never_a_standard_trait(self):
        exc = self.assertRaises(
            exceptions.CommandError, self.run_command,
            cmds.CreateDeployTemplate,
            ['HW_CPU_X86_VMX', '--config', 'turbo=on', '--steps', STEPS])
        self.assertIn('Deploy template HW_CPU_X86_VMX cannot realise a '
                      'deploy config: its name is a standard trait', str(exc))
        plain = self.ironic.add_template('HW_CPU_X86_AVX2')
        exc = self.assertRaises(
            exceptions.CommandError, self.run_command,
            cmds.SetDeployTemplate,
            ['HW_CPU_X86_AVX2', '--config', 'turbo=on'])
        self.assertIn('its name is a standard trait', str(exc))
        self.assertEqual({}, plain['extra'])
        self.assertEqual([], self.ironic.writes)

    def test_resource_classes_that_normalize_alike_are_refused(self):
        self.ironic.add_node('bm-1', resource_class='baremetal_gold')
        exc = self.assertRaises(
            exceptions.CommandError, self.run_command,
            cmds.CreateDeployTemplate,
            ['--config', 'turbo=on', '--steps', STEPS, '--resource-class',
             'baremetal-gold'])
        self.assertEqual(
            "Resource class baremetal-gold is CUSTOM_BAREMETAL_GOLD in "
            "placement, as the nodes' baremetal_gold: nova schedules them "
            "as one kind, so a template for one reaches the other. Give the "
            "nodes one spelling (openstack baremetal node set "
            "--resource-class), then create the template.", str(exc))
        self.assertEqual([], self.ironic.writes)
