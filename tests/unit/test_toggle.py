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

"""A deploy-config toggle carried out against in-memory nova, ironic and
placement: what it leaves on the cloud and what it says."""

import time

import fixtures
from openstack import exceptions as sdk_exceptions
from osc_lib import exceptions

from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.configs import steps
from osc_deploy_config.domain.hardware import bmc_faults
from osc_deploy_config.domain.toggle import toggle_plan
from osc_deploy_config.domain.toggle import toggle_record
from osc_deploy_config.domain.toggle import toggle_states
from osc_deploy_config.use_cases.toggle import recovery
from osc_deploy_config.use_cases.toggle import toggle as server_toggle
from osc_deploy_config.use_cases.toggle import waits
from osc_deploy_config.v1 import project_deploy_config
from tests.unit import fakes
from tests.unit.fakes import GOLD
from tests.unit.fakes import HT
from tests.unit.fakes import OFF
from tests.unit.fakes import OFF_T
from tests.unit.fakes import ON
from tests.unit.fakes import ON_T

# a bare-metal flavor, as nova documents them
BM = dict(GOLD, **{'resources:VCPU': '0', 'resources:MEMORY_MB': '0',
                   'resources:DISK_GB': '0'})
OFF_SPECS = {'deploy-config:hyperthreading': 'disabled',
             'trait:' + OFF_T: 'required'}
DERIVED = 'm1.tiny+hyperthreading=disabled'


def dead_holder():
    """A lock reason of ours whose process is gone (a killed toggle)."""
    return toggle_states.lock_reason([OFF], fakes.mine(pid=fakes.gone_pid()))


class ToggleTestCase(fakes.TestCommand):
    def setUp(self):
        super().setUp()
        self.ironic.add_hyperthreading_templates()
        self.said = []
        self.slept = []

    def toggle(self, server, *configs, dry_run=False, **options):
        return server_toggle.ServerToggle(
            self.app.client_manager.deploy_config, configs, self.said.append,
            sleep=self.slept.append, **options).run(server['id'], dry_run)

    def refused(self, server, *configs, **options):
        exc = self.assertRaises(exceptions.CommandError, self.toggle, server,
                                *configs, **options)
        return str(exc)

    def flavor_names(self):
        return sorted(f['name'] for f in self.nova.flavors.values())




class TestVirtual(ToggleTestCase):
    def setUp(self):
        super().setUp()
        self.tiny = self.nova.add_flavor('m1.tiny')
        self.server = self.nova.add_server('web-1', self.tiny)
        self.host = self.placement.add_provider('fake-compute',
                                                traits=[OFF_T])
        self.placement.allocate(self.server['id'], self.host, {'VCPU': 1})

    def shown(self):
        return self.nova.servers[self.server['id']]

    def test_resized_to_a_derived_flavor_and_confirmed_under_a_lock(self):
        self.toggle(self.server, OFF, auto_confirm=True)
        server = self.shown()
        self.assertEqual(('ACTIVE', DERIVED, OFF_SPECS), (
            server['status'], server['flavor']['original_name'],
            server['flavor']['extra_specs']))
        made = next(f for f in self.nova.flavors.values()
                    if f['name'] == DERIVED)
        self.assertTrue(made['description'].startswith(
            toggle_plan.DERIVED_MARK))
        # private, open to the server's project only
        self.assertEqual((False, ['project-1']), (
            made['os-flavor-access:is_public'], self.nova.access[made['id']]))
        self.assertEqual([
            'Server web-1: deploy configs none -> hyperthreading=disabled: '
            'resize to flavor %s (to be created).' % DERIVED,
            'Server web-1 is ACTIVE on flavor %s.' % DERIVED], self.said)
        actions = [a['action'] for a in self.nova.actions.values()]
        self.assertEqual(['lock', 'resize', 'confirmResize', 'unlock'],
                         actions)
        self.assertFalse(server['locked'])

    def test_a_derived_flavor_is_open_to_the_project_and_the_grantees(self):
        # not to every project that may use the original
        # granted and may use the original: project-7 only
        private = self.nova.add_flavor('m1.secret', public=False)
        self.nova.access[private['id']] = ['project-1', 'project-2',
                                           'project-7']
        self.server['flavor'] = self.nova.embedded(private)
        self.nova.servers[self.server['id']]['flavor'] = self.server['flavor']
        (template,) = [t for t in self.ironic.templates.values()
                       if t['name'] == OFF_T]
        fakes.grant(template, 'project-7', 'project-9')
        self.toggle(self.server, OFF, auto_confirm=True)
        made = next(f for f in self.nova.flavors.values()
                    if f['name'] == 'm1.secret+hyperthreading=disabled')
        self.assertFalse(made['os-flavor-access:is_public'])
        self.assertEqual(['project-1', 'project-7'],
                         self.nova.access[made['id']])

    def test_a_derived_flavor_found_is_opened_to_the_servers_project(self):
        # derived for project-1's server, then used for project-2's
        self.toggle(self.server, OFF, auto_confirm=True)
        other = self.nova.add_server('web-2', self.nova.flavors[next(
            i for i, f in self.nova.flavors.items()
            if f['name'] == 'm1.tiny')])
        other['tenant_id'] = 'project-2'
        self.toggle(other, OFF, auto_confirm=True)
        made = next(f for f in self.nova.flavors.values()
                    if f['name'] == DERIVED)
        self.assertEqual(['project-1', 'project-2'],
                         self.nova.access[made['id']])

    def test_another_projects_private_flavor_is_never_reused(self):
        theirs = self.nova.add_flavor('their-no-ht', OFF_SPECS, public=False)
        self.nova.access[theirs['id']] = ['project-9']
        self.toggle(self.server, OFF, auto_confirm=True)
        self.assertEqual(DERIVED, self.shown()['flavor']['original_name'])

    def test_rerun_finishes_the_access_of_a_half_made_private_flavor(self):
        private = self.nova.add_flavor('m1.secret', public=False)
        self.nova.access[private['id']] = ['project-1', 'project-2']
        self.nova.servers[self.server['id']]['flavor'] = \
            self.nova.embedded(private)
        half = self.nova.add_flavor(
            'm1.secret+hyperthreading=disabled', public=False,
            description=toggle_plan.derived_description('m1.secret'))
        self.toggle(self.server, OFF, auto_confirm=True)
        self.assertEqual(['project-1'], self.nova.access[half['id']])
        self.assertEqual(OFF_SPECS, half['extra_specs'])

    def test_a_project_that_lost_the_original_gets_nothing_derived(self):
        # the operator closed the private flavor the server booted from:
        # a flavor derived from it is not opened to the server's project
        private = self.nova.add_flavor('m1.secret', public=False)
        self.nova.access[private['id']] = ['project-2']
        self.nova.servers[self.server['id']]['flavor'] = \
            self.nova.embedded(private)
        self.toggle(self.server, OFF, auto_confirm=True)
        (derived,) = [f for f in self.nova.flavors.values()
                      if f['name'] == 'm1.secret+hyperthreading=disabled']
        self.assertEqual([], self.nova.access.get(derived['id'], []))

    def test_rerun_after_success_does_nothing(self):
        self.toggle(self.server, OFF, auto_confirm=True)
        flavors = self.flavor_names()
        writes = len(self.nova.writes)
        self.toggle(self.server, OFF, auto_confirm=True)
        self.assertEqual('Server web-1 already runs with '
                         'hyperthreading=disabled: nothing to do.',
                         self.said[-1])
        self.assertEqual(flavors, self.flavor_names())
        self.assertEqual(writes, len(self.nova.writes))

    def test_reuses_an_identical_flavor(self):
        self.nova.add_flavor('tiny-no-ht', OFF_SPECS)
        self.toggle(self.server, OFF, auto_confirm=True)
        self.assertEqual(['m1.tiny', 'tiny-no-ht'], self.flavor_names())
        self.assertEqual('tiny-no-ht',
                         self.shown()['flavor']['original_name'])

    def test_dry_run_changes_nothing(self):
        self.toggle(self.server, OFF, dry_run=True)
        self.assertEqual(['m1.tiny'], self.flavor_names())
        self.assertEqual([], self.nova.writes)
        self.assertEqual(['Dry run, nothing changed. Server web-1: deploy '
                          'configs none -> hyperthreading=disabled: would '
                          'resize to flavor %s (to be created).' % DERIVED],
                         self.said)

    def test_refused_when_the_host_lacks_the_template_trait(self):
        why = self.refused(self.server, ON, auto_confirm=True)
        self.assertEqual(
            'Server web-1 cannot take hyperthreading=enabled on its host: '
            'fake-compute lacks %s. Nothing was changed; make the host '
            'capable and tag it (openstack resource provider trait set on '
            'the host), or migrate the server first.' % ON_T, why)
        self.assertEqual(['m1.tiny'], self.flavor_names())
        self.assertEqual([], self.nova.writes)

    def test_refused_on_a_reserved_host(self):
        self.host['inventories']['VCPU']['reserved'] = 1
        self.assertIn('fake-compute is reserved (VCPU reserved=1 of 1: in '
                      'maintenance?)', self.refused(self.server, OFF))
        self.assertEqual([], self.nova.writes)

    def test_each_state_a_toggle_does_not_start_from_is_one_line(self):
        for status, task, fix in (
                ('SHUTOFF', None, 'start it (openstack server start %s)'),
                ('ERROR', None, 'repair it'),
                ('PAUSED', None, 'unpause it'),
                ('SHELVED_OFFLOADED', None, 'unshelve it'),
                ('RESCUE', None, 'unrescue it'),
                ('ACTIVE', 'rebooting', 'rerun when it ends'),
                ('RESIZE', 'resize_migrating', 'rerun when it ends')):
            self.shown().update(status=status,
                                **{'OS-EXT-STS:task_state': task})
            why = self.refused(self.server, OFF, auto_confirm=True)
            self.assertIn('Server web-1 is ', why)
            self.assertIn(status, why)
            self.assertIn(fix.replace('%s', self.server['id']), why)
            self.assertIn('Nothing was changed', why)
        self.assertEqual([], self.nova.writes)

    def test_no_valid_host_from_the_instance_action_is_an_error(self):
        # nova answers the resize 202, then puts the server back
        self.nova.no_valid_host = True
        why = self.refused(self.server, OFF, wait=True)
        self.assertEqual('Resize of server web-1 failed: '
                         'conductor_migrate_server: No valid host was '
                         'found. ', why)
        self.assertEqual('m1.tiny', self.shown()['flavor']['original_name'])
        self.assertFalse(self.shown()['locked'])
        # a rerun once the scheduler can place it uses the same flavor
        self.nova.no_valid_host = False
        self.toggle(self.server, OFF, auto_confirm=True)
        self.assertEqual(['m1.tiny', DERIVED], self.flavor_names())

    def test_a_failed_confirmation_ends_the_wait_within_two_polls(self):
        # nova's race: the confirmation fails on the compute host, and the
        # server stays in VERIFY_RESIZE, which nothing will move
        self.nova.confirm_error = 'UnexpectedTaskStateError: Conflict'
        why = self.refused(self.server, OFF, auto_confirm=True)
        self.assertEqual(
            'Nova failed to confirm the resize of server web-1 '
            '(compute_confirm_resize: UnexpectedTaskStateError: Conflict): '
            'it stays in VERIFY_RESIZE, and no action of nova\'s will move '
            'it. Nothing more was changed; reset it (openstack server set '
            '--state active %s), then rerun to check.' % self.server['id'],
            why)
        self.assertLessEqual(len(self.slept), 2, self.slept)
        self.assertEqual(('VERIFY_RESIZE', False), (
            self.shown()['status'], self.shown()['locked']))

    def test_the_whole_wait_is_bounded_and_says_what_still_runs(self):
        self.nova.resize_reads = -1
        why = self.refused(self.server, OFF, auto_confirm=True,
                           wait_seconds=0)
        self.assertEqual(
            'The resize of server web-1 is still under way '
            '(resize_migrating); nova goes on: rerun to finish the toggle '
            'after 0s of waiting (--wait-timeout)', why)
        self.assertFalse(self.shown()['locked'])

    def test_rerun_finishes_a_flavor_an_interrupted_toggle_half_made(self):
        half = self.nova.add_flavor(DERIVED, description=(
            toggle_plan.derived_description('m1.tiny')))
        self.toggle(self.server, OFF, auto_confirm=True)
        self.assertEqual(OFF_SPECS, half['extra_specs'])
        self.assertEqual(['m1.tiny', DERIVED], self.flavor_names())
        self.assertEqual(DERIVED, self.shown()['flavor']['original_name'])

    def test_an_operators_flavor_with_the_derived_name_is_refused(self):
        self.nova.add_flavor(DERIVED, description='mine')
        self.assertIn('Flavor %s exists but differs from the target'
                      % DERIVED, self.refused(self.server, OFF))
        self.assertEqual({}, next(f for f in self.nova.flavors.values()
                                  if f['name'] == DERIVED)['extra_specs'])

    def test_rerun_after_an_interruption_before_the_confirm(self):
        self.toggle(self.server, OFF)     # resized, not confirmed
        self.assertEqual(('VERIFY_RESIZE', False), (
            self.shown()['status'], self.shown()['locked']))
        self.toggle(self.server, OFF, auto_confirm=True)
        self.assertEqual('ACTIVE', self.shown()['status'])
        self.assertEqual('Server web-1 is ACTIVE on flavor %s.' % DERIVED,
                         self.said[-1])

    def test_a_rerun_waits_for_the_resize_its_killed_toggle_left(self):
        self.shown().update(locked=True, locked_by='admin',
                            locked_reason=dead_holder())
        self.nova.transitions[self.server['id']] = [
            ('RESIZE', 'resize_finish'), ('ACTIVE', None)]
        self.toggle(self.server, OFF, auto_confirm=True)
        self.assertIn('  finishing the resize of an interrupted toggle',
                      self.said)
        self.assertEqual(('ACTIVE', DERIVED, False), (
            self.shown()['status'], self.shown()['flavor']['original_name'],
            self.shown()['locked']))

    def test_another_change_awaiting_confirmation_is_refused(self):
        self.toggle(self.server, OFF)
        self.host['traits'].append(ON_T)
        self.assertIn('is VERIFY_RESIZE: a toggle starts only on an ACTIVE '
                      'server. Nothing was changed; confirm or revert its '
                      'resize', self.refused(self.server, ON))

    def test_a_server_someone_else_locked_is_refused(self):
        self.shown().update(locked=True, locked_by='owner',
                            locked_reason='kernel upgrade')
        self.assertEqual(
            'Server web-1 is locked (by owner: kernel upgrade): a toggle '
            'does not act on a server someone else holds. Nothing was '
            'changed; rerun once it is unlocked (openstack server unlock '
            '%s).' % self.server['id'], self.refused(self.server, OFF))
        self.assertEqual([], self.nova.writes)

    def test_a_running_toggle_holds_the_server(self):
        reason = toggle_states.lock_reason([ON], fakes.holder(
            'elsewhere.example', 42))
        self.shown().update(locked=True, locked_by='admin',
                            locked_reason=reason)
        self.assertEqual(
            'Server web-1 is being toggled by another command (pid 42 on '
            'elsewhere.example). Nothing was changed; rerun when it ends (if '
            'that command is gone, unlock the server first: openstack server '
            'unlock %s).' % self.server['id'], self.refused(self.server, OFF))
        self.assertEqual([], self.nova.writes)

    def test_the_later_of_two_locks_gives_up_and_leaves_the_lock(self):
        # another toggle locked the server between our read and our lock
        real = self.nova.handle

        def other_locks_first(path, method, **kwargs):
            if method == 'POST' and 'lock' in (kwargs.get('json') or {}):
                self.nova.proxy.request.side_effect = real
                theirs = toggle_states.lock_reason([OFF], fakes.holder(
                    'elsewhere', 7))
                real('/servers/%s/action' % self.server['id'], 'POST',
                     microversion='2.73',
                     json={'lock': {'locked_reason': theirs}})
            return real(path, method, **kwargs)

        self.nova.proxy.request.side_effect = other_locks_first
        why = self.refused(self.server, OFF, auto_confirm=True)
        self.assertTrue(why.startswith('Server web-1 is being toggled by '
                                       'another command'), why)
        self.assertEqual(['lock', 'lock', 'lock'],
                         self.nova.locks(self.server))
        self.assertTrue(self.shown()['locked'])
        self.assertEqual(toggle_states.lock_reason_unnamed(),
                         self.shown()['locked_reason'])
        self.assertEqual('m1.tiny', self.shown()['flavor']['original_name'])

    def test_ctrl_c_unlocks_the_server(self):
        def interrupt(seconds):
            raise KeyboardInterrupt()

        self.nova.resize_reads = -1
        self.assertRaises(KeyboardInterrupt, server_toggle.ServerToggle(
            self.app.client_manager.deploy_config, [OFF], self.said.append,
            sleep=interrupt, auto_confirm=True).run, self.server['id'])
        self.assertEqual(['lock', 'unlock'], self.nova.locks(self.server))
        self.assertIn('Interrupted: the server is unlocked; rerun the same '
                      'command to finish the toggle.', self.said)

    def test_a_member_looks_up_its_own_servers_and_takes_no_lock(self):
        self.with_roles('member', 'reader')
        self.nova.add_flavor('tiny-no-ht', OFF_SPECS)
        self.toggle(self.server, OFF, auto_confirm=True)
        self.assertEqual([], self.nova.locks(self.server))
        self.assertNotIn('all_tenants', ' '.join(
            p for _, p, _ in self.nova.requests))

    def test_a_confirmation_that_ends_in_error_is_no_toggle(self):
        self.nova.confirm_leaves = 'ERROR'
        why = self.refused(self.server, OFF, auto_confirm=True)
        self.assertTrue(why.startswith(
            'Nova ended the resize of server web-1 with it ERROR on flavor '
            '%s, not ACTIVE on %s.' % (DERIVED, DERIVED)), why)
        self.assertFalse(self.shown()['locked'])

    def test_a_dry_run_neither_waits_for_nor_unlocks_a_left_resize(self):
        self.shown().update(locked=True, locked_by='admin',
                            locked_reason=dead_holder())
        self.nova.transitions[self.server['id']] = [
            ('RESIZE', 'resize_migrating')]
        outcome = self.toggle(self.server, OFF, dry_run=True)
        self.assertEqual(('planned', [], []), (
            outcome.result, self.slept, self.nova.writes))
        self.assertIn('would finish its resize to flavor', self.said[-1])

    def test_a_lock_left_on_a_server_with_nothing_to_do(self):
        self.toggle(self.server, OFF, auto_confirm=True)
        self.shown().update(locked=True, locked_by='admin',
                            locked_reason=dead_holder())
        writes = len(self.nova.writes)
        self.toggle(self.server, OFF, dry_run=True)
        self.assertEqual(writes, len(self.nova.writes))
        self.toggle(self.server, OFF)
        self.assertEqual(('unlock', False), (
            self.nova.locks(self.server)[-1], self.shown()['locked']))

    def test_no_takeover_of_such_a_lock_starts_past_the_deadline(self):
        # a rollout's toggle that finds the server there past its
        # deadline leaves the dead lock to the rerun
        self.toggle(self.server, OFF, auto_confirm=True)
        self.shown().update(locked=True, locked_by='admin',
                            locked_reason=dead_holder())
        writes = len(self.nova.writes)
        outcome = self.toggle(self.server, OFF,
                              wait_until=time.monotonic() - 1)
        self.assertEqual('unchanged', outcome.result)
        self.assertEqual((writes, True), (len(self.nova.writes),
                                          self.shown()['locked']))
        self.assertIn('  server web-1 stays locked by an interrupted toggle '
                      '(--wait-timeout reached): a rerun unlocks it',
                      self.said)

    def test_a_lock_is_taken_over_only_if_it_is_still_left(self):
        # read when planned: a killed toggle's lock; read again before the
        # takeover: another toggle, alive, holds the server now
        self.shown().update(locked=True, locked_by='admin',
                            locked_reason=dead_holder())
        real = self.nova.handle
        reads = []

        def taken_meanwhile(path, method, **kwargs):
            answer = real(path, method, **kwargs)
            if method == 'GET' and path == '/servers/%s' % self.server['id']:
                reads.append(path)
                self.shown()['locked_reason'] = toggle_states.lock_reason(
                    [OFF], fakes.holder('elsewhere.example', 42))
            return answer

        self.nova.proxy.request.side_effect = taken_meanwhile
        why = self.refused(self.server, OFF, auto_confirm=True)
        self.assertIn('being toggled by another command (pid 42 on '
                      'elsewhere.example)', why)
        self.assertEqual((2, []), (len(reads), self.nova.locks(self.server)))

    def test_a_failure_between_the_lock_and_the_hold_leaves_no_lock(self):
        real = self.nova.handle
        failed = []

        def actions_fail_once(path, method, **kwargs):
            if 'os-instance-actions?' in path and not failed:
                failed.append(path)
                return fakes.error(500, 'database went away')
            return real(path, method, **kwargs)

        self.nova.proxy.request.side_effect = actions_fail_once
        why = self.refused(self.server, OFF, auto_confirm=True)
        self.assertIn('failed to answer', why)
        self.assertEqual((['lock', 'unlock'], False, 'm1.tiny'), (
            self.nova.locks(self.server), self.shown()['locked'],
            self.shown()['flavor']['original_name']))


class TestBaremetal(ToggleTestCase):
    def setUp(self):
        super().setUp()
        gold = self.nova.add_flavor('bm.gold', dict(BM, **{
            'deploy-config:hyperthreading': 'enabled',
            'trait:' + ON_T: 'required'}))
        self.server = self.nova.add_server('db-1', gold)
        self.node = self.deploy_on_node(self.server, 'bm-0',
                                        [HT, ON_T, OFF_T],
                                        {'HyperThreading': 'Enabled'})

    def shown(self):
        return self.nova.servers[self.server['id']]

    def record(self):
        return toggle_record.applied(self.node, self.server['id'])

    def test_serviced_in_place_under_a_lock_and_recorded_on_the_node(self):
        self.toggle(self.server, OFF)
        self.assertEqual({'HyperThreading': 'Disabled'}, self.node['bios'])
        self.assertEqual('active', self.node['provision_state'])
        self.assertEqual({'hyperthreading': OFF}, self.record())
        self.assertNotIn(toggle_record.PENDING, self.node['properties'])
        # pending before the servicing, complete after the read-back
        (pending,), complete = [p for _, p in self.ironic.patches]
        self.assertEqual('/properties/%s' % toggle_record.PENDING,
                         pending['path'])
        self.assertEqual(['add', 'remove'], [op['op'] for op in complete])
        server = self.shown()
        self.assertEqual(({}, 'bm.gold', False), (
            server['metadata'], server['flavor']['original_name'],
            server['locked']))
        self.assertEqual(['lock', 'unlock'], self.nova.locks(self.server))
        self.assertEqual([
            'Server db-1: deploy configs hyperthreading=enabled -> '
            'hyperthreading=disabled: service node bm-0 with '
            'bios.apply_configuration (reboots).',
            'Server db-1: node bm-0 serviced, now hyperthreading=disabled.'],
            self.said)
        self.toggle(self.server, OFF)
        self.assertIn('already runs with hyperthreading=disabled',
                      self.said[-1])
        self.assertEqual(1, len(self.ironic.serviced))

    def test_the_servers_metadata_decides_nothing(self):
        # the owner writes its server's metadata: a "record" there is
        # nobody's word
        self.shown()['metadata'] = toggle_plan_metadata = {
            'deploy-config:hyperthreading': 'disabled'}
        self.toggle(self.server, OFF)
        self.assertEqual(1, len(self.ironic.serviced))
        self.assertEqual(toggle_plan_metadata, self.shown()['metadata'])

    def test_a_record_of_an_earlier_instance_means_nothing(self):
        self.node['properties'][toggle_record.APPLIED] = {
            'instance_uuid': 'an-earlier-server',
            'configs': {'hyperthreading': 'disabled'}}
        self.toggle(self.server, OFF)
        self.assertEqual({'HyperThreading': 'Disabled'}, self.node['bios'])

    def test_a_stopped_server_is_refused_and_its_node_not_serviced(self):
        self.shown()['status'] = 'SHUTOFF'
        self.assertEqual(
            'Server db-1 is SHUTOFF: a toggle starts only on an ACTIVE '
            'server. Nothing was changed; start it (openstack server start '
            '%s), then rerun.' % self.server['id'],
            self.refused(self.server, OFF))
        self.assertEqual([], self.ironic.writes + self.nova.writes)

    def test_each_node_state_a_toggle_does_not_start_from_is_one_line(self):
        for state, fix in (
                ('rescue', 'unrescue the server (openstack server unrescue '
                           '%s)' % self.server['id']),
                ('deploy failed', 'its deploy failed: rebuild or delete the '
                                  'server'),
                ('service hold', 'a servicing step holds it: release it '
                                 '(openstack baremetal node unhold bm-0)'),
                ('service failed', 'its servicing failed: abort it (openstack '
                                   'baremetal node abort bm-0) once the '
                                   'hardware is checked'),
                ('servicing', 'another servicing is under way')):
            self.node['provision_state'] = state
            why = self.refused(self.server, OFF)
            self.assertEqual(
                'Server db-1 runs on node bm-0, which is in "%s": a toggle '
                'starts only on an active node. Nothing was changed; %s, '
                'then rerun.' % (state, fix), why)
        self.assertEqual([], self.ironic.writes + self.nova.writes)

    def test_refused_in_maintenance(self):
        self.node.update(maintenance=True, maintenance_reason='fan')
        self.assertEqual(
            'Server db-1 runs on node bm-0, which is in maintenance (fan): a '
            'toggle starts only on a node out of maintenance. Nothing was '
            'changed; once the hardware is checked: openstack baremetal node '
            'maintenance unset bm-0', self.refused(self.server, OFF))
        self.assertEqual({'HyperThreading': 'Enabled'}, self.node['bios'])
        self.assertEqual([], self.ironic.writes + self.nova.writes)

    def test_a_member_is_told_its_projects_managers_may(self):
        self.as_project('member', 'reader')
        self.assertEqual(
            'Server db-1 runs on bare metal: its project\'s managers may '
            'switch it, within the configs the operator granted (ironic lets '
            'the manager of a node\'s lessee service it): ask one of them to '
            'run openstack server resize --deploy-config '
            'hyperthreading=disabled %s. Nothing was changed.'
            % self.server['id'], self.refused(self.server, OFF))
        self.assertEqual([], self.ironic.writes + self.nova.writes)

    def test_a_member_is_told_so_when_ironic_hides_the_node_too(self):
        self.as_project('member', 'reader')
        self.ironic.nodes.clear()
        del self.shown()['OS-EXT-SRV-ATTR:hypervisor_hostname']
        self.assertIn('its project\'s managers may switch it',
                      self.refused(self.server, OFF))

    def test_refused_when_the_node_is_not_tagged(self):
        provider = self.placement.providers[self.node['uuid']]
        provider['traits'].remove(OFF_T)
        self.assertIn('node bm-0 lacks %s' % OFF_T,
                      self.refused(self.server, OFF))
        self.assertEqual([], self.ironic.writes)

    def test_a_type_the_image_asks_for_is_refused(self):
        image = self.glance.add_image('ht-on', **{
            'deploy-config:hyperthreading': 'enabled',
            'trait:' + ON_T: 'required'})
        self.shown()['image'] = {'id': image['id']}
        self.assertEqual(
            'Server db-1 cannot toggle hyperthreading: its image ht-on asks '
            'for hyperthreading=enabled, which every deploy of the server '
            'applies again. Nothing was changed; rebuild it from an image '
            'without it (openstack image deploy-config unset).',
            self.refused(self.server, OFF))
        self.assertEqual([], self.ironic.writes + self.nova.writes)

    def test_dry_run_services_nothing(self):
        self.toggle(self.server, OFF, dry_run=True)
        self.assertEqual({'HyperThreading': 'Enabled'}, self.node['bios'])
        self.assertEqual([], self.ironic.writes + self.nova.writes)
        self.assertIn('would service node bm-0 with bios.apply_configuration',
                      self.said[0])

    def test_a_bios_that_ignores_the_step_fails_the_toggle(self):
        # ironic reports success: only the node's settings tell
        self.ironic.bios_ignores_steps = True
        self.assertEqual(
            'Servicing node bm-0 finished, but the hardware does not show '
            'hyperthreading=disabled: BIOS HyperThreading=Disabled (the node '
            'has Enabled). Nothing was recorded; rerun to retry once the '
            'node takes the settings.', self.refused(self.server, OFF))
        self.assertEqual({}, self.record())
        self.assertFalse(self.shown()['locked'])
        self.ironic.bios_ignores_steps = False
        self.toggle(self.server, OFF)
        self.assertEqual({'HyperThreading': 'Disabled'}, self.node['bios'])

    def test_a_node_ironic_hides_is_bare_metal_all_the_same(self):
        # a project-scoped token under ironic's secure RBAC sees no node
        self.without_system_role()
        self.ironic.nodes.clear()
        why = self.refused(self.server, OFF)
        self.assertIn('Server db-1 is a bare-metal server, but ironic does '
                      'not show its node to these credentials', why)
        self.assertIn('openstack role add --system all', why)
        self.assertEqual([], self.nova.writes)

    def test_failed_servicing_is_aborted_and_the_node_runs_on(self):
        self.ironic.service_error = 'BIOS interface timed out'
        self.assertEqual(
            'Servicing node bm-0 failed: BIOS interface timed out. Ironic '
            'returned the node to active and server db-1 runs on: its '
            'hardware shows HyperThreading=Enabled (as ironic read it at '
            '2026-11-30T12:00:00Z); the node is held in maintenance until '
            'its hardware is checked (openstack baremetal node maintenance '
            'unset bm-0). Nothing was recorded; fix the cause, then rerun.',
            self.refused(self.server, OFF))
        self.assertEqual(('active', True, 'osc-deploy-config: servicing '
                          'failed: BIOS interface timed out'), (
            self.node['provision_state'], self.node['maintenance'],
            self.node['maintenance_reason']))
        self.assertEqual([('bm-0', 'service'), ('bm-0', 'abort')],
                         self.ironic.provision_requests)
        self.assertEqual(({}, {}), (self.record(), self.node['properties']))
        self.assertFalse(self.shown()['locked'])
        # the operator checks the hardware, then a rerun toggles it
        self.node['maintenance'] = False
        self.ironic.service_error = None
        self.toggle(self.server, OFF)
        self.assertEqual({'HyperThreading': 'Disabled'}, self.node['bios'])

    def test_a_second_ctrl_c_in_the_hold_says_how_to_hold_the_node(self):
        # one server's toggle, as a rollout's: the line with the command
        self.addCleanup(recovery.UNHELD.discard, self.node)
        self.ironic.service_error = 'BIOS interface timed out'
        real = self.ironic.proxy.request.side_effect

        def interrupted_hold(path, method, **kwargs):
            if method == 'PUT' and path.endswith('/maintenance'):
                raise KeyboardInterrupt()
            return real(path, method, **kwargs)

        self.ironic.proxy.request.side_effect = interrupted_hold
        self.assertRaises(KeyboardInterrupt, self.toggle, self.server, OFF)
        self.assertIn(
            'Node bm-0 was left in the middle of the recovery of a failed '
            'servicing, which lifts its maintenance: hold it before '
            'anything runs on it: openstack baremetal node maintenance set '
            '%s --reason "osc-deploy-config: servicing failed: BIOS '
            'interface timed out"' % self.node['uuid'], self.said)
        self.assertFalse(self.shown()['locked'])

    def test_a_scheduled_idrac_job_is_named_with_what_ends_it(self):
        self.ironic.service_error = (
            "Redfish BIOS apply configuration failed. Error: HTTP PATCH "
            "returned code 400. Extended information: [{'MessageId': "
            "'IDRAC.2.8.SYS011'}]")
        why = self.refused(self.server, OFF)
        self.assertIn(
            'Servicing node bm-0 failed: the iDRAC refuses a BIOS change '
            'while a configuration job is scheduled (SYS011): an interrupted '
            'step, or a change at the iDRAC, left one; delete its jobs at '
            'the iDRAC (racadm jobqueue delete -i JID_CLEARALL) before the '
            'node next resets, which runs them (freeing the node resets '
            'it, as a power on does where ironic powered it off for the '
            'failure), then rerun. Ironic returned the node to active', why)
        # a project's toggle: the operator's task
        self.assertIn("ask the cloud's operator to delete its jobs at the "
                      'iDRAC', bmc_faults.running_node_remedy(project=True))

    def test_an_ironic_that_cannot_abort_says_how_to_recover(self):
        self.ironic.service_error = 'BIOS interface timed out'
        self.ironic.abort_unsupported = True
        why = self.refused(self.server, OFF)
        self.assertTrue(why.startswith(
            'Servicing node bm-0 failed: BIOS interface timed out. This '
            'ironic cannot take a node out of "service failed" (abort needs '
            'ironic 32.0 or later)'), why)
        self.assertTrue(why.endswith(
            "openstack baremetal node service %s --service-steps "
            "'[{\"interface\": \"bios\", \"step\": "
            "\"apply_configuration\", \"args\": {\"settings\": "
            "[{\"name\": \"HyperThreading\", \"value\": "
            "\"Disabled\"}]}}]'" % self.node['uuid']), why)
        self.assertIn('openstack baremetal node maintenance unset %s && '
                      'openstack baremetal node service' % self.node['uuid'],
                      why)
        self.assertEqual(('service failed', True), (
            self.node['provision_state'], self.node['maintenance']))

    def test_waits_for_the_servicing_saying_each_state_once(self):
        self.ironic.servicing_reads = 6
        self.toggle(self.server, OFF)
        self.assertEqual({'HyperThreading': 'Disabled'}, self.node['bios'])
        self.assertEqual(['  node bm-0 servicing'],
                         [s for s in self.said if s.startswith('  ')])
        # polls back off: soon at first, then less often
        self.assertEqual([0.25, 0.5, 1, 2, 3, 3], self.slept)

    def test_a_servicing_past_the_timeout_says_what_runs_and_unlocks(self):
        self.ironic.servicing_reads = 10 ** 6
        self.assertEqual(
            'Node bm-0 is still in "servicing"; ironic goes on: rerun to '
            'finish the toggle once it ends after 0s of waiting '
            '(--wait-timeout)',
            self.refused(self.server, OFF, wait_seconds=0))
        self.assertEqual({}, self.record())
        self.assertFalse(self.shown()['locked'])
        # the rerun finishes it: serviced once
        self.node['service_reads_left'] = 1
        self.toggle(self.server, OFF)
        self.assertEqual({'hyperthreading': OFF}, self.record())
        self.assertEqual([('bm-0', 'service')],
                         self.ironic.provision_requests)

    def failed_later(self):
        """The toggle gave up waiting (--wait-timeout), then its servicing
        failed: ironic left the node in "service failed" and in
        maintenance, with the pending record still there."""
        self.ironic.servicing_reads = 10 ** 6
        self.refused(self.server, OFF, wait_seconds=0)
        self.ironic.set_state(
            self.node, 'service failed', 'active', last_error='BIOS refused',
            maintenance=True, maintenance_reason='BIOS refused',
            fault='service failure')
        self.ironic.record(self.node, 'servicing_end', error=True)

    def test_a_rerun_recovers_the_servicing_that_failed_after_it_gave_up(self):
        self.failed_later()
        why = self.refused(self.server, OFF)
        self.assertTrue(why.startswith(
            'Servicing node bm-0 failed: BIOS refused. Ironic returned the '
            'node to active and server db-1 runs on'), why)
        self.assertEqual(('active', True, 'osc-deploy-config: servicing '
                          'failed: BIOS refused'), (
            self.node['provision_state'], self.node['maintenance'],
            self.node['maintenance_reason']))
        self.assertEqual(({}, {}), (self.record(), self.node['properties']))
        self.assertEqual([('bm-0', 'service'), ('bm-0', 'abort')],
                         self.ironic.provision_requests)
        self.assertFalse(self.shown()['locked'])

    def test_an_abort_past_its_bound_leaves_the_node_held(self):
        self.failed_later()
        self.ironic.aborts_hang = True
        self.useFixture(fixtures.MockPatch(
            'osc_deploy_config.use_cases.toggle.waits.ABORT_SECONDS', 0))
        why = self.refused(self.server, OFF)
        self.assertIn('Aborting it did not return the node to active', why)
        self.assertEqual(('service failed', True, 'osc-deploy-config: '
                          'servicing failed: BIOS refused'), (
            self.node['provision_state'], self.node['maintenance'],
            self.node['maintenance_reason']))

    def test_ctrl_c_while_aborting_leaves_the_node_held(self):
        self.failed_later()
        self.ironic.aborts_hang = True

        def interrupt(seconds):
            raise KeyboardInterrupt()

        self.assertRaises(KeyboardInterrupt, server_toggle.ServerToggle(
            self.app.client_manager.deploy_config, [OFF], self.said.append,
            sleep=interrupt).run, self.server['id'])
        self.assertEqual((True, 'osc-deploy-config: servicing failed: BIOS '
                          'refused', False), (
            self.node['maintenance'], self.node['maintenance_reason'],
            self.shown()['locked']))
        # the pending record was marked before the hold was lifted: the
        # rerun holds the node and refuses, servicing nothing
        self.assertTrue(toggle_record.pending(
            self.node, self.server['id']).recovering)
        self.ironic.aborts_hang = False
        why = self.refused(self.server, OFF)
        self.assertIn('its recovery was interrupted. Nothing was serviced',
                      why)
        self.assertEqual([('bm-0', 'service'), ('bm-0', 'abort')],
                         self.ironic.provision_requests)
        self.assertTrue(self.node['maintenance'])

    def test_an_unlock_that_fails_hides_neither_outcome_nor_error(self):
        real = self.nova.handle
        # the toggle's unlock fails, and the rerun's
        fails = [True, True]

        def unlock_fails(path, method, **kwargs):
            if 'unlock' in (kwargs.get('json') or {}) and fails.pop(0):
                raise ConnectionResetError('reset by peer')
            return real(path, method, **kwargs)

        self.nova.proxy.request.side_effect = unlock_fails
        why = self.refused(self.server, OFF)
        # toggled, but the server is not the owner's again: exit 1
        self.assertEqual(
            'Server db-1 stays locked: unlocking it failed. Once no toggle '
            'runs on it: openstack server unlock %s' % self.server['id'],
            why)
        self.assertEqual({'hyperthreading': OFF}, self.record())
        self.assertIn(
            '  server db-1 stays locked: unlocking it failed (reset by '
            'peer); a rerun, once this command has ended, takes the lock '
            'over, or: openstack server '
            'unlock %s' % self.server['id'], self.said)
        # the rerun (another process) locks over the lock left, and never
        # unlocks what it did not lock; its failure is said all the same
        self.shown()['locked_reason'] = dead_holder()
        self.ironic.service_error = 'BIOS interface timed out'
        why = self.refused(self.server, ON)
        self.assertTrue(why.startswith('Servicing node bm-0 failed'), why)
        self.assertEqual(([], True, ['lock', 'lock']), (
            fails, self.shown()['locked'], self.nova.locks(self.server)))

    def test_the_abort_waits_for_its_worker_before_the_hold(self):
        # ironic shows active at once; its worker holds the node's lock a
        # few reads more, refusing maintenance (409) meanwhile
        self.ironic.service_error = 'BIOS interface timed out'
        self.ironic.abort_lock_reads = 3
        why = self.refused(self.server, OFF)
        self.assertIn('the node is held in maintenance', why)
        self.assertEqual((True, None), (self.node['maintenance'],
                                        self.node['reservation']))

    def redact(self, *fields):
        """Ironic shows these fields of a node as a banner, as to a
        lessee."""
        real = self.ironic.handle

        def redacted(path, method, **kwargs):
            answer = real(path, method, **kwargs)
            shown = answer.json() if answer.content else None
            if not isinstance(shown, dict) or not set(fields) & set(shown):
                return answer
            for field in set(fields) & set(shown):
                shown[field] = ('** Redacted - requires baremetal:node:get:'
                                '%s permission. **' % field)
            return fakes.response(answer.status_code, shown)

        self.ironic.proxy.request.side_effect = redacted

    def test_a_lessee_waits_for_no_reservation_it_cannot_read(self):
        # ironic shows a lessee a banner for the reservation, whatever it
        # holds
        self.ironic.service_error = 'BIOS interface timed out'
        self.redact('reservation')
        why = self.refused(self.server, OFF)
        self.assertTrue(why.startswith(
            'Servicing node bm-0 failed: BIOS interface timed out. Ironic '
            'returned the node to active'), why)
        self.assertEqual([], [s for s in self.slept if s >= 1])
        self.assertTrue(self.node['maintenance'])

    def test_a_hold_not_known_for_ironics_own_is_not_lifted(self):
        # the error hidden, the reason cannot be told for ironic's own
        # (an operator's keeps the fault); an empty reason, or one hidden,
        # is no one's known either
        self.ironic.service_error = 'BIOS interface timed out'
        self.redact('last_error')
        why = self.refused(self.server, OFF)
        self.assertIn('failed: service failed (ironic shows why to its '
                      'operators only). The node is in maintenance (BIOS '
                      'interface timed out), and ironic hides its last error '
                      'from these credentials: whether that hold is its own '
                      'cannot be told, where ironic refuses to abort it',
                      why)
        self.assertEqual([('bm-0', 'service')],
                         self.ironic.provision_requests)
        self.assertTrue(self.node['maintenance'])
        for reason, said in (('', 'for no reason given'), (
                '** Redacted - requires baremetal:node:get:maintenance_reason'
                ' permission. **', 'for a reason ironic hides')):
            self.node.update(maintenance_reason=reason,
                             last_error='BIOS interface timed out')
            self.ironic.proxy.request.side_effect = self.ironic.handle
            self.assertFalse(recovery.held_by_toggle(self.node))
            self.assertTrue(recovery.whose_hold(self.node).startswith(said))

    def test_a_hold_refused_says_how_to_hold(self):
        self.ironic.service_error = 'BIOS interface timed out'
        self.ironic.abort_lock_reads = 10 ** 6
        self.useFixture(fixtures.MockPatch(
            'osc_deploy_config.use_cases.toggle.waits.ABORT_SECONDS', 0))
        why = self.refused(self.server, OFF)
        self.assertEqual(
            'Node bm-0 could not be put back in maintenance after a failed '
            'servicing (409 Node %s is locked by host conductor-1, please '
            'retry after the current operation is completed.): put it there '
            'before anything runs on it: openstack baremetal node '
            'maintenance set %s --reason "osc-deploy-config: servicing '
            'failed: BIOS interface timed out"' % (
                self.node['uuid'], self.node['uuid']), why)
        self.assertFalse(self.node['maintenance'])

    def test_a_hold_of_someone_elses_is_not_lifted(self):
        # the step failed; then an operator put the node in maintenance
        # for a reason of theirs, before the toggle read it
        self.ironic.service_error = 'BIOS interface timed out'
        original = self.ironic.record

        def operator_holds(node, *args, **kwargs):
            # maintenance set --reason: ironic keeps the step's fault
            original(node, *args, **kwargs)
            node.update(maintenance_reason='RMA 4411')
        self.useFixture(fixtures.MockPatchObject(
            self.ironic, 'record', operator_holds))
        why = self.refused(self.server, OFF)
        self.assertEqual(
            'Servicing node bm-0 failed: BIOS interface timed out. The node '
            'is in maintenance for a reason of someone else\'s (RMA 4411), '
            'where ironic refuses to abort it: nothing was recorded. Once '
            'the hardware is checked: openstack baremetal node maintenance '
            'unset bm-0, then rerun.', why)
        self.assertEqual(('service failed', True, 'RMA 4411'), (
            self.node['provision_state'], self.node['maintenance'],
            self.node['maintenance_reason']))
        self.assertEqual([('bm-0', 'service')],
                         self.ironic.provision_requests)
        self.assertEqual(({}, [toggle_record.PENDING]), (
            self.record(), list(self.node['properties'])))
        # the operator lifts their hold: a rerun aborts, and is held again
        self.useFixture(fixtures.MockPatchObject(
            self.ironic, 'record', original))
        self.node.update(maintenance=False, maintenance_reason=None,
                         fault=None)
        why = self.refused(self.server, OFF)
        self.assertIn('the node is held in maintenance', why)
        self.assertEqual(('active', True, {}), (
            self.node['provision_state'], self.node['maintenance'],
            self.node['properties']))
        self.node['maintenance'] = False
        self.ironic.service_error = None
        self.toggle(self.server, OFF)
        self.assertEqual({'hyperthreading': OFF}, self.record())

    def pending_then(self, history):
        """A toggle to vendor=mine (a step whose effect ironic does not
        report) killed after its service request; the servicing ended, and
        ironic's history says how (``history``: an event type and whether
        it is an error, or None: no history kept)."""
        mine = self.vendor_template('vendor.tune_fans')
        self.node['properties'][toggle_record.PENDING] = \
            toggle_record.pending_patch(self.node, self.server['id'],
                                        [mine])[0]['value']
        self.ironic.records_history = history is not None
        self.ironic.set_state(self.node, 'servicing', 'active')
        self.ironic.record_start(self.node, [{
            'interface': 'vendor', 'step': 'tune_fans', 'args': {}}])
        self.ironic.set_state(self.node, 'active')
        if history:
            self.ironic.record(self.node, *history)
        return mine

    def test_a_servicing_that_failed_is_never_recorded_as_applied(self):
        # failed, then aborted by someone: active again, as if serviced;
        # no one said the hardware was checked: held, and refused
        mine = self.pending_then(('servicing_end', True))
        why = self.refused(self.server, mine,
                           allowed_steps=['vendor.tune_fans'])
        self.assertEqual(
            'Node bm-0, under server db-1, is held in maintenance: an '
            'earlier servicing of it by a toggle failed, and ironic\'s '
            'history shows it failed. Nothing was serviced; once its '
            'hardware is checked: openstack baremetal node maintenance '
            'unset bm-0, then rerun with --retry-failed.', why)
        self.assertEqual(([], True, {}), (
            self.ironic.provision_requests, self.node['maintenance'],
            self.record()))
        self.assertFalse(self.shown()['locked'])
        # checked: the operator lifts the hold and says so
        self.node['maintenance'] = False
        self.toggle(self.server, mine, allowed_steps=['vendor.tune_fans'],
                    retry_failed=True)
        self.assertEqual([('bm-0', 'service')],
                         self.ironic.provision_requests)
        self.assertEqual({'vendor': mine}, self.record())

    def test_a_servicing_ironic_recorded_as_done_is_not_run_twice(self):
        mine = self.pending_then(('servicing_end', False))
        self.toggle(self.server, mine, allowed_steps=['vendor.tune_fans'])
        self.assertEqual([], self.ironic.provision_requests)
        self.assertEqual({'vendor': mine}, self.record())

    def test_an_ended_servicing_of_other_steps_is_not_ours(self):
        # someone serviced the node with steps of their own after the
        # pending record: ours never ran, and runs now
        mine = self.pending_then(None)
        self.ironic.records_history = True
        self.ironic.record_start(self.node, [{
            'interface': 'vendor', 'step': 'tune_fans', 'args': {
                'speed': 'max'}}])
        self.ironic.set_state(self.node, 'active')
        self.ironic.record(self.node, 'servicing_end')
        self.toggle(self.server, mine, allowed_steps=['vendor.tune_fans'])
        self.assertEqual([('bm-0', 'service')],
                         self.ironic.provision_requests)

    def test_without_history_an_effect_not_read_back_is_serviced_again(self):
        mine = self.pending_then(None)
        self.toggle(self.server, mine, allowed_steps=['vendor.tune_fans'])
        self.assertEqual([('bm-0', 'service')],
                         self.ironic.provision_requests)

    def killed_after(self, point):
        """The cloud as a toggle to OFF killed at ``point`` leaves it."""
        self.shown().update(locked=True, locked_by='admin',
                            locked_reason=dead_holder())
        if point == 'lock':
            return
        self.node['properties'][toggle_record.PENDING] = \
            toggle_record.pending_patch(self.node, self.server['id'],
                                        [OFF])[0]['value']
        if point == 'pending record':
            return
        self.ironic.servicing_reads = 2
        self.ironic.route('PUT', ['nodes', self.node['uuid'], 'states',
                                  'provision'], {}, {
            'target': 'service', 'service_steps': toggle_plan.service_steps(
                self.ironic.templates[next(
                    u for u, t in self.ironic.templates.items()
                    if t['name'] == OFF_T)])}, '1.87')
        if point == 'service request':
            return
        self.node['service_reads_left'] = 0
        self.ironic.route('GET', ['nodes', self.node['uuid']], {}, None,
                          '1.87')
        self.assertEqual('active', self.node['provision_state'])
        if point == 'servicing':
            return
        self.node['properties'][toggle_record.APPLIED] = {
            'instance_uuid': self.server['id'],
            'configs': {'hyperthreading': 'disabled'}}
        del self.node['properties'][toggle_record.PENDING]

    def rerun_after_a_kill(self, point):
        """Killed at ``point``, then run again: the node is serviced once,
        the toggle recorded, the server unlocked."""
        self.killed_after(point)
        self.toggle(self.server, OFF)
        self.assertEqual(
            ({'HyperThreading': 'Disabled'}, {'hyperthreading': OFF},
             [('bm-0', 'service')], False),
            (self.node['bios'], self.record(),
             self.ironic.provision_requests, self.shown()['locked']))
        self.assertNotIn(toggle_record.PENDING, self.node['properties'])

    def test_a_rerun_after_a_kill_after_the_lock(self):
        self.rerun_after_a_kill('lock')

    def test_a_rerun_after_a_kill_after_the_pending_record(self):
        self.rerun_after_a_kill('pending record')

    def test_a_rerun_after_a_kill_after_the_service_request(self):
        self.rerun_after_a_kill('service request')

    def test_a_rerun_after_a_kill_after_the_servicing(self):
        self.rerun_after_a_kill('servicing')

    def test_a_rerun_after_a_kill_before_the_unlock(self):
        self.rerun_after_a_kill('unlock')

    def test_past_a_rollouts_deadline_no_write_starts(self):
        past = time.monotonic() - 1
        self.assertRaises(waits.PastDeadline, self.toggle, self.server, OFF,
                          wait_until=past)
        self.assertEqual([], self.ironic.writes + self.nova.writes)
        # an interrupted toggle's servicing: no takeover past the deadline
        # either (a lock is a write); a rerun finishes it
        self.killed_after('servicing')
        writes = len(self.ironic.writes + self.nova.writes)
        self.assertRaises(waits.PastDeadline, self.toggle, self.server, OFF,
                          wait_until=past)
        self.assertEqual(writes, len(self.ironic.writes + self.nova.writes))
        self.toggle(self.server, OFF)
        self.assertEqual(({'hyperthreading': OFF}, False), (
            self.record(), self.shown()['locked']))

    def test_a_rerun_after_a_servicing_that_did_not_take_services_again(self):
        # the hardware ignored the first servicing: its pending record is
        # dropped with the one line, and the rerun services anew
        self.ironic.bios_ignores_steps = True
        self.refused(self.server, OFF)
        self.assertEqual({}, self.node['properties'])
        self.ironic.bios_ignores_steps = False
        self.toggle(self.server, OFF)
        self.assertEqual(2, len(self.ironic.serviced))

    def test_a_profile_that_destroys_data_is_refused(self):
        raid = deploy_config.Config('disks', 'raid0')
        self.ironic.add_template(
            'CUSTOM_DEPLOY_CONFIG_DISKS_RAID0', steps=[steps.raid_step(
                {'logical_disks': [{'size_gb': 'MAX', 'raid_level': '0',
                                    'is_root_volume': True}]})],
            extra=deploy_config.template_extra(raid, []))
        self.assertEqual(
            'Server db-1 cannot take disks=raid0 while it runs: '
            'raid.apply_configuration would destroy the RAID volumes and '
            'everything on them. Nothing was changed; it applies at deploy '
            'only: boot a new server from a flavor that asks for it '
            '(openstack flavor deploy-config set FLAVOR disks=raid0) and '
            'move the workload there.', self.refused(self.server, raid))
        self.assertEqual([], self.ironic.writes + self.nova.writes)

    def vendor_template(self, *step_names, priority=150):
        mine = deploy_config.Config('vendor', 'mine')
        self.ironic.add_template('CUSTOM_DEPLOY_CONFIG_VENDOR_MINE', steps=[
            {'interface': name.split('.')[0], 'step': name.split('.')[1],
             'args': {}, 'priority': priority} for name in step_names],
            extra=deploy_config.template_extra(mine, []))
        self.placement.providers[self.node['uuid']]['traits'].append(
            'CUSTOM_DEPLOY_CONFIG_VENDOR_MINE')
        return mine

    def test_a_step_no_table_knows_is_refused_unless_allowed(self):
        mine = self.vendor_template('vendor.tune_fans')
        self.assertEqual(
            'Server db-1 cannot take vendor=mine while it runs: '
            'vendor.tune_fans is not known to be safe on a running server '
            '(it may destroy its data). Nothing was changed; if you know it '
            'is safe there, allow it: --allow-step vendor.tune_fans',
            self.refused(self.server, mine))
        self.assertEqual([], self.ironic.writes + self.nova.writes)
        self.toggle(self.server, mine, allowed_steps=['vendor.tune_fans'])
        self.assertEqual([('bm-0', [{'interface': 'vendor',
                                     'step': 'tune_fans', 'args': {}}])],
                         self.ironic.serviced)

    def test_a_vendor_step_that_destroys_data_is_refused_even_allowed(self):
        mine = self.vendor_template('management.import_configuration')
        self.assertIn('management.import_configuration would destroy the '
                      'RAID volumes and settings',
                      self.refused(self.server, mine, allowed_steps=[
                          'management.import_configuration']))
        self.assertEqual([], self.ironic.writes + self.nova.writes)

    def test_a_disabled_step_is_not_run(self):
        mine = self.vendor_template('vendor.tune_fans',
                                    'management.reset_idrac')
        template = next(t for t in self.ironic.templates.values()
                        if t['name'] == 'CUSTOM_DEPLOY_CONFIG_VENDOR_MINE')
        template['steps'][0]['priority'] = 0
        self.toggle(self.server, mine)
        self.assertEqual([('bm-0', [{'interface': 'management',
                                     'step': 'reset_idrac', 'args': {}}])],
                         self.ironic.serviced)

    def test_a_bios_reset_is_refused_naming_the_boot_it_risks(self):
        mine = self.vendor_template('bios.factory_reset')
        self.assertEqual(
            'Server db-1 cannot take vendor=mine while it runs: '
            'bios.factory_reset risks the boot mode and Secure Boot settings, '
            'which the BIOS defaults may change (the server may not boot '
            'again). Nothing was changed; if you know it is safe there, allow '
            'it: --allow-step bios.factory_reset',
            self.refused(self.server, mine))
        self.assertEqual([], self.ironic.writes + self.nova.writes)


class TestProject(ToggleTestCase):
    """A project switches its own servers within its grant: its managers a
    bare-metal server through its runbooks, its members a virtual one to
    the flavors the grant opened."""

    def setUp(self):
        super().setUp()
        gold = self.nova.add_flavor('bm.gold', dict(BM, **{
            'deploy-config:hyperthreading': 'enabled',
            'trait:' + ON_T: 'required'}))
        self.server = self.nova.add_server('db-1', gold)
        self.node = self.deploy_on_node(self.server, 'bm-0',
                                        [HT, ON_T, OFF_T],
                                        {'HyperThreading': 'Enabled'})
        self.tiny = self.nova.add_flavor('m1.tiny')
        self.web = self.nova.add_server('web-1', self.tiny)

    def grant(self, *configs):
        """The operator's grant to project-1 (demo); what was written
        since is the toggle's (``written``)."""
        self.run_command(project_deploy_config.SetProjectDeployConfig,
                         ['demo', *configs])
        self.granted_writes = len(self.ironic.writes + self.nova.writes)

    def written(self):
        return (self.ironic.writes + self.nova.writes)[self.granted_writes:]

    def shown(self, server):
        return self.nova.servers[server['id']]

    def test_a_manager_switches_through_the_projects_runbook(self):
        self.grant('hyperthreading=disabled')
        self.as_project('manager', 'member', 'reader')
        self.toggle(self.server, OFF)
        (runbook,) = self.ironic.runbooks.values()
        self.assertEqual(
            ({'HyperThreading': 'Disabled'}, [('bm-0', 'service')],
             {'instance_uuid': self.server['id'], 'project_id': 'project-1',
              'configs': {'hyperthreading': 'disabled'}}, {}, False),
            (self.node['bios'], self.ironic.provision_requests,
             self.node['extra'][toggle_record.PROJECT_APPLIED],
             self.node['properties'], self.shown(self.server)['locked']))
        self.assertEqual(['lock', 'unlock'], self.nova.locks(self.server))
        self.assertIn(('PUT', '/nodes/%s/states/provision'
                       % self.node['uuid']), self.ironic.writes)
        self.assertNotIn('service_steps', str(self.ironic.requests))
        # its record counts for what was granted: the rerun has nothing
        self.toggle(self.server, OFF)
        self.assertIn('already runs', self.said[-1])

    def test_a_runbook_ran_before_one_refused_is_not_run_again(self):
        """Two configs, a runbook each: ironic refuses the second (the
        node busy meanwhile); the rerun services the second alone."""
        turbo_off = deploy_config.Config('turbo', 'disabled')
        self.ironic.add_template(
            'CUSTOM_DEPLOY_CONFIG_TURBO_DISABLED', steps=[steps.bios_step(
                [('Turbo', 'Disabled')])],
            extra=deploy_config.template_extra(turbo_off, []))
        self.node['traits'].append('CUSTOM_DEPLOY_CONFIG_TURBO_DISABLED')
        self.node['bios']['Turbo'] = 'Enabled'
        self.grant('hyperthreading=disabled', 'turbo=disabled')
        self.as_project('manager', 'member', 'reader')
        real, ran = self.ironic.proxy.request.side_effect, []

        def second_refused(path, method, **kwargs):
            body = kwargs.get('json') or {}
            if 'runbook' in body:
                ran.append(self.ironic.runbooks[body['runbook']]['name'])
                if len(ran) == 2:
                    return fakes.error(400, (
                        'The requested action "service" can not be '
                        'performed on node "%s" while it is in state '
                        '"servicing".' % self.node['uuid']))
            return real(path, method, **kwargs)

        self.ironic.proxy.request.side_effect = second_refused
        self.assertRaises(sdk_exceptions.BadRequestException, self.toggle,
                          self.server, OFF, turbo_off)
        first = ran[0]
        self.assertEqual(1, len(self.node['bios']) - list(
            self.node['bios'].values()).count('Enabled'))
        self.toggle(self.server, OFF, turbo_off)
        self.assertEqual(3, len(ran))
        self.assertEqual(1, ran.count(first), ran)
        self.assertEqual({'HyperThreading': 'Disabled', 'Turbo': 'Disabled'},
                         self.node['bios'])
        self.assertIn('its runbook is not run again', '\n'.join(self.said))

    def test_a_node_a_project_owns_is_not_self_service(self):
        # its owner may write the node's properties and traits and clean
        # it with raw steps around any grant: leased elsewhere, or to
        # nobody ([conductor]automatic_lessee_source = none), refused
        self.grant('hyperthreading=disabled')
        self.as_project('manager', 'member', 'reader')
        for lessee in ('project-2', 'project-1', None):
            self.node.update(owner='project-1', lessee=lessee)
            self.assertEqual(
                'Server db-1 runs on node bm-0, which project project-1 '
                'owns: self-service does not switch a node a project owns '
                '(its managers may clean it with raw steps, set its RAID '
                'target and write its properties and traits, around any '
                'grant). Nothing was changed; the operator may switch it.',
                self.refused(self.server, OFF))
        self.assertEqual([], self.written())

    def test_a_node_leased_to_another_project_is_refused(self):
        # a custom ironic policy shows the project a node leased to
        # another (no owner): the project may not service it
        self.grant('hyperthreading=disabled')
        self.node.update(owner=None, lessee='project-2')
        self.ironic.leased = lambda node: True
        self.as_project('manager', 'member', 'reader')
        self.assertEqual(
            "Server db-1 runs on node bm-0, whose lessee is project-2, not "
            "the server's project project-1: a project services only the "
            "nodes it leases for its own servers. Nothing was changed; the "
            "operator may set it right (openstack baremetal node set %s "
            "--lessee project-1)." % self.node['uuid'],
            self.refused(self.server, OFF))
        self.assertEqual([], self.written())

    def test_another_projects_ownership_is_the_operators_choice(self):
        # an infrastructure project owns the node, leased to the server's
        # project: its toggle goes on
        self.grant('hyperthreading=disabled')
        self.node.update(owner='project-ops', lessee='project-1')
        self.as_project('manager', 'member', 'reader')
        self.toggle(self.server, OFF)
        self.assertEqual({'HyperThreading': 'Disabled'}, self.node['bios'])

    def test_what_was_not_granted_is_refused_with_nothing_changed(self):
        self.grant('hyperthreading=enabled')
        self.as_project('manager', 'member', 'reader')
        self.assertEqual(
            'Server db-1 cannot switch to hyperthreading=disabled: the '
            'operator has not granted it to its project (openstack project '
            'deploy-config set project-1 hyperthreading=disabled). Nothing '
            'was changed.', self.refused(self.server, OFF))
        self.assertEqual([], self.written())

    def test_another_project_cannot_see_the_server(self):
        self.grant('hyperthreading=disabled')
        self.as_project('manager', 'member', 'reader', project='project-2')
        self.assertIn('No server named', self.refused(self.server, OFF))
        self.assertEqual([], self.written())

    def test_a_forged_record_makes_the_operator_apply_nothing_ungranted(
            self):
        # a member writes the node's extra: a record of a config the
        # project was never granted counts for nothing
        self.grant('hyperthreading=enabled')
        self.node['extra'][toggle_record.PROJECT_APPLIED] = {
            'instance_uuid': self.server['id'], 'project_id': 'project-1',
            'configs': {'hyperthreading': 'disabled'}}
        self.toggle(self.server, OFF)
        self.assertEqual([('bm-0', 'service')],
                         self.ironic.provision_requests)
        # the operator's toggle supersedes the project's record
        self.assertNotIn(toggle_record.PROJECT_APPLIED, self.node['extra'])

    def test_a_member_switches_a_virtual_server_to_the_granted_flavor(self):
        self.web['tenant_id'] = 'project-1'
        self.placement.allocate(self.web['id'], self.placement.add_provider(
            'fake-compute', traits=[OFF_T]), {'VCPU': 1})
        self.grant('hyperthreading=disabled')
        self.as_project('member', 'reader')
        flavors = set(self.nova.flavors)
        self.toggle(self.web, OFF, auto_confirm=True)
        self.assertEqual(('ACTIVE', 'm1.tiny+hyperthreading=disabled'), (
            self.shown(self.web)['status'],
            self.shown(self.web)['flavor']['original_name']))
        self.assertEqual(flavors, set(self.nova.flavors))
        self.assertEqual([], self.nova.locks(self.web))

    def test_without_a_grant_a_member_is_told_the_command(self):
        self.web['tenant_id'] = 'project-1'
        self.grant('hyperthreading=disabled')
        self.nova.flavors = {i: f for i, f in self.nova.flavors.items()
                             if '+' not in f['name']}
        self.as_project('member', 'reader')
        self.assertIn('no flavor m1.tiny+hyperthreading=disabled is open to '
                      'its project; the operator\'s grant opens the flavors '
                      'its virtual servers need (openstack project '
                      'deploy-config set project-1 hyperthreading=disabled)',
                      self.refused(self.web, OFF, auto_confirm=True))
        self.assertEqual([], self.written())

    def test_a_projects_toggle_costs_no_more_than_the_operators(self):
        self.grant('hyperthreading=disabled', 'hyperthreading=enabled')
        counts = []
        for project in (False, True):
            if project:
                self.as_project('manager', 'member', 'reader')
                self.toggle(self.server, ON)    # back, by the project
            before = len(self.ironic.requests + self.nova.requests
                         + self.placement.requests + self.glance.requests)
            self.toggle(self.server, OFF)
            counts.append(len(self.ironic.requests + self.nova.requests
                              + self.placement.requests
                              + self.glance.requests) - before)
        self.assertLessEqual(counts[1], counts[0], counts)
