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

"""The sets' templates over the fake services: made and tagged before a
flavor asks for them, built again once stale, pruned where nothing needs
them, kept with their members while something does; shown."""

import datetime
import logging

import fixtures
from osc_lib import exceptions

from osc_deploy_config.domain.configs import config_sets
from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.use_cases.toggle import toggle
from osc_deploy_config.v1 import deploy_template as template_cmds
from osc_deploy_config.v1 import node as node_cmds
from osc_deploy_config.v1 import owner_deploy_config as cmds
from tests.unit import fakes
from tests.unit.fakes import HT
from tests.unit.fakes import OFF_T

TURBO = deploy_config.Config('turbo', 'off')
TURBO_T = 'CUSTOM_DEPLOY_CONFIG_TURBO_OFF'
BOTH = 'CUSTOM_DEPLOY_CONFIG_SET_HYPERTHREADING_DISABLED_AND_TURBO_OFF'
BM_GOLD = dict(fakes.GOLD, **{'resources:VCPU': '0',
                              'resources:MEMORY_MB': '0',
                              'resources:DISK_GB': '0'})


class SetsCase(fakes.TestCommand):
    def setUp(self):
        super().setUp()
        self.ironic.add_hyperthreading_templates()
        self.turbo = self.ironic.add_bios_template(TURBO,
                                                   ('Turbo', 'Disabled'))
        self.bm0 = self.ironic.add_node('bm-0', [HT])
        self.bm1 = self.ironic.add_node('bm-1', [])
        for node in (self.bm0, self.bm1):
            self.placement.add_provider(
                node['uuid'], uuid_=node['uuid'],
                resource_class='CUSTOM_BAREMETAL_GOLD')
        self.placement.copy_traits_like_nova(self.ironic)
        self.gold = self.nova.add_flavor('bm.gold', BM_GOLD)

    def rows(self, command, *args):
        columns, rows = self.run_command(command, list(args))
        return [dict(zip(columns, r, strict=True)) for r in rows]

    def ask_both(self, *options):
        return self.rows(cmds.SetFlavorDeployConfig, 'bm.gold',
                         'hyperthreading=disabled', 'turbo=off', *options)

    def the_set(self):
        return self.ironic._find_template(BOTH)


class TestMadeBeforeAsked(SetsCase):
    def test_made_then_tagged_then_asked_for(self):
        rows = self.ask_both()
        self.assertEqual({'deploy-config:hyperthreading': 'disabled',
                          'deploy-config:turbo': 'off',
                          'trait:' + BOTH: 'required'},
                         {r['Extra Spec']: r['Value'] for r in rows})
        self.assertEqual([{'name': 'HyperThreading', 'value': 'Disabled'},
                          {'name': 'Turbo', 'value': 'Disabled'}],
                         self.the_set()['steps'][0]['args']['settings'])
        # bm-1 lacks what hyperthreading=disabled needs
        self.assertEqual(([BOTH], []), (self.bm0['traits'][1:],
                                        self.bm1['traits']))
        writes = self.ironic.writes + self.nova.writes
        self.assertEqual([
            ('POST', '/deploy_templates'),
            ('PUT', '/nodes/%s/traits/%s' % (self.bm0['uuid'], BOTH)),
            ('POST', '/flavors/%s/os-extra_specs' % self.gold['id'])],
            writes)
        said = self.fake_stderr.getvalue()
        self.assertIn('Made set %s of hyperthreading=disabled,turbo=off'
                      % BOTH, said)
        self.assertIn('Placement shows all 1 trait change(s)', said)

    def test_a_dry_run_writes_nothing_and_says_what_it_would_make(self):
        rows = self.ask_both('--dry-run')
        self.assertEqual({'would set'}, {r['Action'] for r in rows})
        self.assertEqual([], self.ironic.writes + self.nova.writes)
        self.assertIn('Would make set %s' % BOTH,
                      self.fake_stderr.getvalue())

    def test_a_rerun_tags_what_an_interrupted_run_made(self):
        self.ironic.add_template(BOTH, **{k: v for k, v in (
            config_sets.set_body({
                deploy_config.Config('hyperthreading', 'disabled'):
                    self.ironic._find_template(OFF_T),
                TURBO: self.turbo}).items()) if k != 'name'})
        self.ask_both()
        self.assertIn(BOTH, self.bm0['traits'])
        self.assertNotIn(('POST', '/deploy_templates'), self.ironic.writes)

    def test_unset_of_a_member_asks_for_the_other_alone(self):
        self.ask_both()
        rows = self.rows(cmds.UnsetFlavorDeployConfig, 'bm.gold', 'turbo')
        self.assertEqual({('set', 'trait:' + OFF_T), ('unset',
                                                      'trait:' + BOTH),
                          ('unset', 'deploy-config:turbo')},
                         {(r['Action'], r['Extra Spec']) for r in rows})
        self.assertEqual({'trait:' + OFF_T: 'required',
                          'deploy-config:hyperthreading': 'disabled'},
                         {k: v for k, v in self.gold['extra_specs'].items()
                          if k not in BM_GOLD})

    def test_list_and_show_say_the_set(self):
        self.ask_both()
        (listed,) = self.rows(cmds.ListFlavorDeployConfig)
        self.assertEqual([BOTH], list(listed['Sets'].machine_readable()))
        columns, values = self.run_command(cmds.ShowFlavorDeployConfig,
                                           ['bm.gold'])
        shown = dict(zip(columns, values, strict=True))
        self.assertEqual({'hyperthreading=disabled': BOTH,
                          'turbo=off': BOTH},
                         shown['sets'].machine_readable())
        columns, values = self.run_command(template_cmds.ShowDeployTemplate,
                                           [BOTH])
        shown = dict(zip(columns, values, strict=True))
        self.assertEqual((['hyperthreading=disabled', 'turbo=off'], True),
                         (shown['members'], shown['current']))


class TestKept(SetsCase):
    def test_a_changed_member_makes_its_set_stale_until_sync(self):
        self.ask_both()
        logged = self.useFixture(fixtures.FakeLogger(level=logging.WARNING))
        self.run_command(template_cmds.SetDeployTemplate,
                         [TURBO_T, '--bios-setting', 'Turbo=Auto'])
        self.assertIn('Set %s is stale until sync builds it again' % BOTH,
                      logged.output)
        columns, rows = self.run_command(template_cmds.ListDeployTemplate,
                                         ['--long'])
        shown = {r[columns.index('name')]: r[columns.index('current')]
                 for r in rows}
        self.assertEqual((False, None), (shown[BOTH], shown[TURBO_T]))
        self.run_command(node_cmds.SyncNodeDeployConfig, ['--no-wait'])
        self.assertIn('Built again set %s' % BOTH,
                      self.fake_stderr.getvalue())
        self.assertIn({'name': 'Turbo', 'value': 'Auto'},
                      self.the_set()['steps'][0]['args']['settings'])

    def test_a_member_change_no_set_could_take_is_refused(self):
        self.ask_both()
        exc = self.assertRaises(
            exceptions.CommandError, self.run_command,
            template_cmds.SetDeployTemplate,
            [TURBO_T, '--bios-setting', 'HyperThreading=Enabled'])
        self.assertIn('Not changing deploy template %s: its set %s could not '
                      'be built again' % (TURBO_T, BOTH), str(exc))
        self.assertEqual([], [w for w in self.ironic.writes
                              if w[0] == 'PATCH'])

    def test_a_member_is_kept_while_its_set_is_asked_for(self):
        self.ask_both()
        exc = self.assertRaises(
            exceptions.CommandError, self.run_command,
            template_cmds.DeleteDeployTemplate, [TURBO_T])
        self.assertIn('it is a member of set %s, needed by flavor bm.gold '
                      '(it is built from its members)' % BOTH, str(exc))
        # nor may the set itself go
        exc = self.assertRaises(
            exceptions.CommandError, self.run_command,
            template_cmds.DeleteDeployTemplate, [BOTH])
        self.assertIn('it is the set %s, needed by flavor bm.gold. Ask for '
                      'other configs there first' % BOTH, str(exc))
        self.assertIsNotNone(self.the_set())
        # asked for no more: the set goes with its member
        self.rows(cmds.UnsetFlavorDeployConfig, 'bm.gold', 'turbo')
        self.run_command(template_cmds.DeleteDeployTemplate, [TURBO_T])
        self.assertIsNone(self.the_set())
        self.assertNotIn(BOTH, self.bm0['traits'])

    def test_prune_deletes_only_the_sets_nothing_needs(self):
        self.ask_both()
        self.rows(cmds.UnsetFlavorDeployConfig, 'bm.gold', 'turbo')
        server = self.nova.add_server('db-1', self.nova.add_flavor(
            'bm.old', dict(BM_GOLD, **{'trait:' + BOTH: 'required'})))
        columns, rows = self.run_command(node_cmds.SyncNodeDeployConfig,
                                         ['--prune', '--no-wait'])
        self.assertIsNotNone(self.the_set(), 'a server booted with it')
        self.nova.servers.pop(server['id'])
        self.nova.flavors.pop(next(i for i, f in self.nova.flavors.items()
                                   if f['name'] == 'bm.old'))
        columns, rows = self.run_command(node_cmds.SyncNodeDeployConfig,
                                         ['--prune', '--no-wait'])
        self.assertIn(('', BOTH, 'deleted', 'a set nothing needs any more'),
                      rows)
        self.assertIsNone(self.the_set())
        self.assertNotIn(BOTH, self.bm0['traits'])


class TestVirtualToggle(SetsCase):
    def test_the_derived_flavor_asks_for_the_set_made_first(self):
        on = deploy_config.Config('turbo', 'on')
        self.ironic.add_bios_template(on, ('Turbo', 'Enabled'))
        tiny = self.nova.add_flavor('m1.tiny', {
            'deploy-config:hyperthreading': 'disabled',
            'trait:' + OFF_T: 'required'})
        server = self.nova.add_server('web-1', tiny)
        wanted = BOTH.replace('TURBO_OFF', 'TURBO_ON')
        self.placement.allocate(server['id'], self.placement.add_provider(
            'fake-compute', traits=[OFF_T, wanted]), {'VCPU': 1})
        said = []
        toggle.ServerToggle(self.app.client_manager.deploy_config, [on],
                            said.append, auto_confirm=True).run(server['id'])
        shown = self.nova.servers[server['id']]['flavor']
        self.assertEqual(('m1.tiny+hyperthreading=disabled+turbo=on', {
            'deploy-config:hyperthreading': 'disabled',
            'deploy-config:turbo': 'on', 'trait:' + wanted: 'required'}),
            (shown['original_name'], shown['extra_specs']))
        made = self.ironic._find_template(wanted)
        self.assertEqual('hyperthreading=disabled,turbo=on',
                         made['extra'][config_sets.EXTRA_MEMBERS])
        self.assertIn('  Made set %s of hyperthreading=disabled,turbo=on'
                      % wanted, said)


class TestReviewed(SetsCase):
    def test_a_set_just_made_or_asked_for_is_kept_from_a_prune(self):
        self.ask_both()
        self.rows(cmds.UnsetFlavorDeployConfig, 'bm.gold', 'turbo')
        self.the_set()['updated_at'] = datetime.datetime.now(
            datetime.timezone.utc).isoformat()
        self.run_command(node_cmds.SyncNodeDeployConfig,
                         ['--prune', '--no-wait'])
        self.assertIsNotNone(self.the_set())
        # an older set a flavor asks for again is marked asked for: a prune
        # that read what needs it before that flavor's write keeps it
        self.the_set()['updated_at'] = None
        self.ask_both()
        asked = self.the_set()['extra'][config_sets.EXTRA_ASKED]
        self.assertTrue(config_sets.just_written(
            self.the_set(), datetime.datetime.now(datetime.timezone.utc)))
        self.assertTrue(asked.endswith('+00:00'))

    def test_a_set_a_prune_took_meanwhile_is_said_and_nothing_asks(self):
        def prune_meanwhile(path, method, json):
            if method == 'GET' and path.startswith(
                    '/deploy_templates/%s' % BOTH):
                set_ = self.the_set()
                if set_:
                    del self.ironic.templates[set_['uuid']]
            return None

        fakes.intercept(self.ironic, prune_meanwhile)
        exc = self.assertRaises(exceptions.CommandError, self.ask_both)
        self.assertEqual('Set %s was deleted meanwhile (a concurrent '
                         'prune?); nothing asks for it yet: rerun' % BOTH,
                         str(exc))
        self.assertEqual([], self.nova.writes)

    def test_a_concurrent_writer_that_left_members_gets_their_set(self):
        handle = self.nova.handle

        posts = []

        def then_theirs(path, method, **kwargs):
            answer = handle(path, method, **kwargs)
            if method == 'POST' and not posts:  # another command, before
                posts.append(path)              # ours settles
                self.gold['extra_specs'].update({
                    'deploy-config:turbo': 'off',
                    'trait:' + TURBO_T: 'required'})
            return answer

        self.nova.proxy.request.side_effect = then_theirs
        self.rows(cmds.SetFlavorDeployConfig, 'bm.gold',
                  'hyperthreading=disabled')
        # theirs asked for turbo beside ours: repaired, their set made and
        # tagged before the flavor asks for it, the members' traits gone
        self.assertIsNotNone(self.the_set())
        self.assertIn(BOTH, self.bm0['traits'])
        self.assertEqual({'trait:' + BOTH}, {
            k for k in self.gold['extra_specs'] if k.startswith('trait:')})

    def test_bad_input_writes_nothing(self):
        exc = self.assertRaises(exceptions.CommandError, self.ask_both,
                                '--wait-timeout', '-5')
        self.assertIn('non-negative --wait-timeout', str(exc))
        self.assertEqual([], self.ironic.writes + self.nova.writes)
        self.ask_both()
        self.run_command(template_cmds.SetDeployTemplate,
                         [TURBO_T, '--bios-setting', 'Turbo=Auto'])
        written = list(self.ironic.writes)
        self.assertRaises(exceptions.CommandError, self.run_command,
                          node_cmds.SyncNodeDeployConfig, [BOTH, 'NOPE'])
        self.assertEqual(written, self.ironic.writes, 'the stale set stays')

    def test_a_set_is_the_plugins_and_its_members_keep_their_config(self):
        self.ask_both()
        for command, args in (
                (template_cmds.UnsetDeployTemplate, [BOTH, '--extra',
                                                     'deploy_config_set']),
                (template_cmds.SetDeployTemplate, [BOTH, '--extra', 'a=b']),
                (template_cmds.SetDeployTemplate, [TURBO_T, '--config',
                                                   'turbo=auto']),
                (template_cmds.UnsetDeployTemplate, [TURBO_T, '--config'])):
            before = list(self.ironic.writes)
            self.assertRaises(exceptions.CommandError, self.run_command,
                              command, args)
            self.assertEqual(before, self.ironic.writes, args)

    def test_a_name_another_set_holds_is_refused(self):
        self.ironic.add_template(BOTH, steps=self.turbo['steps'], extra={
            config_sets.EXTRA_MEMBERS: 'hyperthreading=disabled,'
                                       'turbo_off=x'})
        exc = self.assertRaises(exceptions.CommandError, self.ask_both)
        self.assertIn('is the set of hyperthreading=disabled,turbo_off=x',
                      str(exc))
