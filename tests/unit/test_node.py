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

import fixtures
from osc_lib import exceptions

from osc_deploy_config.domain.toggle import toggle_record
from osc_deploy_config.v1 import node as cmds
from tests.unit import fakes
from tests.unit.fakes import HT
from tests.unit.fakes import OFF_T
from tests.unit.fakes import ON_T


def annotation(value):
    return {'deploy_config_type': 'hyperthreading',
            'deploy_config_value': value,
            'deploy_config_requires_traits': HT}


class NodeCommandTest(fakes.TestCommand):
    def setUp(self):
        super().setUp()
        self.ironic.add_template(ON_T, extra=annotation('enabled'))
        self.ironic.add_template(OFF_T, extra=annotation('disabled'))
        self.ironic.add_template('CUSTOM_UNRELATED')
        self.bm0 = self.ironic.add_node('bm-0', [HT])
        self.bm2 = self.ironic.add_node('bm-2', [ON_T])
        self.bm3 = self.ironic.add_node('bm-3', [HT], maintenance=True)
        self.bm4 = self.ironic.add_node('bm-4', [ON_T], maintenance=True,
                                        instance_uuid='srv',
                                        instance_traits=[ON_T])

    def rows(self, command, *args):
        columns, rows = self.run_command(command, list(args))
        return [dict(zip(columns, r, strict=True)) for r in rows]


    def provide(self, node, reserved=0):
        """The node as nova makes it a resource provider."""
        return self.placement.add_provider(
            node['uuid'], traits=node['traits'], uuid_=node['uuid'],
            reserved=reserved, resource_class='CUSTOM_BAREMETAL_GOLD')


class TestList(NodeCommandTest):
    def test_a_bios_step_ironic_waits_on_is_shown_with_what_ends_it(self):
        self.bm4.update(
            provision_state='service wait', driver_internal_info={
                'service_disable_ramdisk': True,
                'redfish_bios_state': {
                    'reboot_requested': True,
                    'requested_bios_attrs': {'ProcAMDBoost': 'Disabled'}}},
            properties={toggle_record.PENDING: {
                'instance_uuid': 'srv', 'configs': {'turbo': 'disabled'},
                'since': '2026-12-03T10:00:00'}})
        rows = self.rows(cmds.ListNodeDeployConfig)
        reasons = {r['Reason'] for r in rows if r['Node'] == 'bm-4'}
        self.assertEqual({
            'lacks HW_CPU_HYPERTHREADING; '
            'its BIOS step waits in "service wait" for the node to boot an '
            'OS with ProcAMDBoost=Disabled applied, without the ramdisk: '
            "the node boots its own disk (the server's); the step cannot be "
            'aborted, and a BMC that '
            'reports its boot progress keeps the callback timeout away: boot '
            'an OS at the node\'s BMC (from its disk, media or the network) '
            'with them set, and ironic ends the step'}, reasons)
        # one listing of the nodes in that wait
        self.assertEqual(1, sum(1 for m, p, _ in self.ironic.requests
                                if m == 'GET' and 'driver_internal_info'
                                in p))

    def test_every_node_and_config(self):
        rows = self.rows(cmds.ListNodeDeployConfig)
        self.assertEqual(8, len(rows))
        by = {(r['Node'], r['Template']): r for r in rows}
        self.assertTrue(by['bm-0', ON_T]['Capable'])
        self.assertFalse(by['bm-0', ON_T]['Tagged'])
        self.assertTrue(by['bm-3', ON_T]['Capable'])
        self.assertTrue(by['bm-3', ON_T]['Maintenance'])
        self.assertTrue(by['bm-4', ON_T]['In Use'])
        self.assertEqual(['GET', 'GET'], [r[0] for r in self.ironic.requests])
        # each at the version it needs: the templates 1.55, the nodes with
        # their retirement 1.61
        self.assertEqual(['1.55', '1.61'],
                         [r[2] for r in self.ironic.requests])

    def test_schedulable_from_placement_in_one_request(self):
        self.bm0['traits'].append(ON_T)
        self.bm3['traits'].append(ON_T)
        self.provide(self.bm0)
        self.provide(self.bm3, reserved=1)      # in maintenance
        self.provide(self.bm2)
        self.bm2['traits'].remove(ON_T)         # not yet copied
        rows = self.rows(cmds.ListNodeDeployConfig, '--config',
                         'hyperthreading=enabled')
        self.assertEqual(
            [('bm-0', True, True), ('bm-2', False, True),
             ('bm-3', True, False), ('bm-4', True, False)],
            [(r['Node'], r['Tagged'], r['Schedulable']) for r in rows])
        self.assertEqual(['/allocation_candidates?resources='
                          'CUSTOM_BAREMETAL_GOLD%3A1'],
                         [r[1] for r in self.placement.requests])

    def test_unreadable_placement_leaves_schedulable_unknown(self):
        logged = self.useFixture(fixtures.FakeLogger(
            name='osc_deploy_config', format='%(levelname)s %(message)s'))
        self.placement.proxy.request.side_effect = None
        self.placement.proxy.request.return_value = fakes.error(
            403, 'Access was denied to this resource.')
        rows = self.rows(cmds.ListNodeDeployConfig)
        self.assertEqual({None}, {r['Schedulable'] for r in rows})
        self.assertIn('WARNING Schedulable is unknown: placement could not '
                      'be read', logged.output)

    def test_filters(self):
        rows = self.rows(cmds.ListNodeDeployConfig, '--node', 'bm-2',
                         '--config', 'hyperthreading=enabled')
        self.assertEqual([('bm-2', ON_T, True)],
                         [(r['Node'], r['Template'], r['Tagged'])
                          for r in rows])
        self.assertEqual(2, len(self.rows(cmds.ListNodeDeployConfig,
                                          '--node', self.bm0['uuid'])))

    def test_unknown_node_or_config(self):
        for args, why in ((['--node', 'nope'], 'Node nope not found'),
                          (['--config', 'ht=x'], 'No deploy template'),
                          (['--config', 'bad'], 'TYPE=VALUE')):
            exc = self.assertRaises(exceptions.CommandError, self.rows,
                                    cmds.ListNodeDeployConfig, *args)
            self.assertIn(why, str(exc))


class TestSync(NodeCommandTest):
    def test_tags_and_untags_keeps_in_use(self):
        rows = self.rows(cmds.SyncNodeDeployConfig)
        self.assertEqual(
            [('bm-0', OFF_T, 'added'), ('bm-0', ON_T, 'added'),
             ('bm-2', ON_T, 'removed'), ('bm-3', OFF_T, 'added'),
             ('bm-3', ON_T, 'added'), ('bm-4', ON_T, 'keep')],
            [(r['Node'], r['Template'], r['Action']) for r in rows])
        self.assertEqual(sorted([HT, ON_T, OFF_T]), sorted(self.bm0['traits']))
        self.assertEqual([], self.bm2['traits'])
        self.assertEqual([ON_T], self.bm4['traits'])
        # in maintenance, yet tagged: placement keeps the scheduler away
        self.assertEqual(sorted([HT, ON_T, OFF_T]), sorted(self.bm3['traits']))
        self.assertEqual(5, len(self.ironic.writes))
        self.assertEqual(2, len(self.ironic.requests) - 5, 'two listings')

    def test_waits_until_placement_shows_the_tags(self):
        for node in (self.bm0, self.bm2, self.bm3):
            self.provide(node)
        self.placement.copy_traits_like_nova(self.ironic, after_polls=2)
        self.useFixture(fixtures.MockPatch('time.sleep'))
        self.rows(cmds.SyncNodeDeployConfig, ON_T)
        self.assertEqual(sorted([HT, ON_T]), sorted(self.placement.providers[
            self.bm0['uuid']]['traits']))
        said = self.fake_stderr.getvalue().splitlines()
        self.assertEqual([
            'Waiting for placement to show 3 trait change(s) (nova copies '
            'node traits on its periodic task)...',
            'Placement shows all 3 trait change(s) after 0 s'], said)
        # one provider listing, then one listing by trait a poll
        self.assertEqual(['/resource_providers'] + [
            '/resource_providers?required=' + ON_T] * 3,
            [r[1] for r in self.placement.requests])

    def test_names_what_placement_does_not_show_in_time(self):
        self.provide(self.bm0)
        exc = self.assertRaises(exceptions.CommandError, self.rows,
                                cmds.SyncNodeDeployConfig, ON_T,
                                '--wait-timeout', '0')
        self.assertEqual(
            'Placement does not show 1 of 1 trait change(s) after 0 s: '
            'bm-0 +%s. Ironic has them; nova\'s ironic compute copies them '
            'on its periodic task (is it running?). See openstack baremetal '
            'node deploy-config list, column Schedulable.' % ON_T, str(exc))
        self.assertIn(ON_T, self.bm0['traits'])   # rerun is safe
        self.assertIn('Not waiting for bm-2, bm-3: not resource providers',
                      self.fake_stderr.getvalue())

    def test_stale_traits_reported_then_pruned(self):
        gone = 'CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_AUTO'
        self.bm0['traits'].append(gone)
        self.bm2['traits'].append('CUSTOM_UNRELATED')   # a template's
        rows = self.rows(cmds.SyncNodeDeployConfig, '--no-wait')
        self.assertIn(('bm-0', gone, 'stale'),
                      [(r['Node'], r['Template'], r['Action']) for r in rows])
        self.assertIn(gone, self.bm0['traits'])
        rows = self.rows(cmds.SyncNodeDeployConfig, '--no-wait', '--prune')
        self.assertEqual([('bm-0', gone, 'removed')],
                         [(r['Node'], r['Template'], r['Action'])
                          for r in rows if r['Action'] != 'keep'])
        self.assertNotIn(gone, self.bm0['traits'])
        self.assertIn('CUSTOM_UNRELATED', self.bm2['traits'])

    def test_prune_is_for_every_template(self):
        exc = self.assertRaises(exceptions.CommandError, self.rows,
                                cmds.SyncNodeDeployConfig, '--prune', ON_T)
        self.assertIn('give it no template names', str(exc))
        self.assertEqual([], self.ironic.requests)

    def test_placement_refusing_the_scope_is_a_warning(self):
        # the tags are written; only the wait for placement is impossible
        logged = self.useFixture(fixtures.FakeLogger(
            name='osc_deploy_config', format='%(levelname)s %(message)s'))
        self.placement.proxy.request.side_effect = None
        self.placement.proxy.request.return_value = fakes.error(
            403, 'Access was denied to this resource.')
        self.rows(cmds.SyncNodeDeployConfig, ON_T)
        self.assertIn(ON_T, self.bm0['traits'])
        self.assertIn('WARNING Placement refused these credentials (403): '
                      'it cannot be told when the scheduler sees the tags',
                      logged.output)

    def test_no_wait_asks_placement_nothing(self):
        self.provide(self.bm0)
        self.rows(cmds.SyncNodeDeployConfig, '--no-wait')
        self.assertIn(ON_T, self.bm0['traits'])
        self.assertEqual([], self.placement.requests)

    def test_rerun_changes_nothing(self):
        self.rows(cmds.SyncNodeDeployConfig)
        before = len(self.ironic.writes)
        rows = self.rows(cmds.SyncNodeDeployConfig)
        self.assertEqual([('bm-4', 'keep')],
                         [(r['Node'], r['Action']) for r in rows])
        self.assertEqual(before, len(self.ironic.writes))

    def test_dry_run(self):
        rows = self.rows(cmds.SyncNodeDeployConfig, '--dry-run')
        self.assertEqual(['would add', 'would add', 'would remove',
                          'would add', 'would add', 'keep'],
                         [r['Action'] for r in rows])
        self.assertEqual([], self.ironic.writes)

    def test_only_named_templates(self):
        rows = self.rows(cmds.SyncNodeDeployConfig, OFF_T)
        self.assertEqual([('bm-0', OFF_T, 'added'), ('bm-3', OFF_T, 'added')],
                         [(r['Node'], r['Template'], r['Action'])
                          for r in rows])

    def test_unknown_or_unannotated_template(self):
        for name in ('CUSTOM_NOPE', 'CUSTOM_UNRELATED'):
            exc = self.assertRaises(exceptions.CommandError, self.rows,
                                    cmds.SyncNodeDeployConfig, name)
            self.assertIn('No deploy template with a deploy config', str(exc))
        self.assertEqual([], self.ironic.writes)

    def test_failed_writes_reported_after_the_others(self):
        logged = self.useFixture(fixtures.FakeLogger(
            name='osc_deploy_config', format='%(levelname)s %(message)s'))
        self.ironic.locked_nodes.add(self.bm2['uuid'])
        exc = self.assertRaises(exceptions.CommandError, self.rows,
                                cmds.SyncNodeDeployConfig)
        self.assertEqual('1 of 5 trait changes failed; rerun to retry',
                         str(exc))
        self.assertIn('ERROR Failed to remove %s on bm-2: Node %s is locked'
                      % (ON_T, self.bm2['uuid']), logged.output)
        self.assertEqual(sorted([HT, ON_T, OFF_T]), sorted(self.bm0['traits']))
        self.assertEqual('', self.fake_stdout.make_string())
        self.ironic.locked_nodes.clear()
        rows = self.rows(cmds.SyncNodeDeployConfig)
        self.assertEqual([('bm-2', 'removed'), ('bm-4', 'keep')],
                         [(r['Node'], r['Action']) for r in rows])
