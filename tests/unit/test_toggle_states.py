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

"""The states a toggle starts from and waits through, its lock, and its
record on the node: plain functions over the APIs' dicts."""

import testtools

from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.toggle import toggle_record
from osc_deploy_config.domain.toggle import toggle_states

OFF = deploy_config.Config('hyperthreading', 'disabled')


def server(status='ACTIVE', task=None, **more):
    return dict({'id': 'srv-1', 'name': 'db-1', 'status': status,
                 'OS-EXT-STS:task_state': task}, **more)


def node(state='active', **more):
    return dict({'uuid': 'n-1', 'name': 'bm-0', 'provision_state': state,
                 'target_provision_state': None, 'maintenance': False},
                **more)


class TestStart(testtools.TestCase):
    def test_only_an_active_server_with_no_task(self):
        toggle_states.refuse_server(server())
        for status in ('SHUTOFF', 'ERROR', 'PAUSED', 'SUSPENDED', 'SHELVED',
                       'SHELVED_OFFLOADED', 'RESCUE', 'VERIFY_RESIZE',
                       'BUILD', 'MIGRATING'):
            exc = self.assertRaises(toggle_states.Unavailable,
                                    toggle_states.refuse_server,
                                    server(status))
            self.assertIn('is %s: a toggle starts only on an ACTIVE server'
                          % status, str(exc))
            self.assertIn('Nothing was changed', str(exc))
        exc = self.assertRaises(toggle_states.Unavailable,
                                toggle_states.refuse_server,
                                server(task='rebooting'))
        self.assertIn('busy (ACTIVE, rebooting)', str(exc))

    def test_only_an_active_node_out_of_maintenance(self):
        toggle_states.refuse_node(server(), node())
        for state in ('rescue', 'deploy failed', 'service hold',
                      'service failed', 'servicing', 'deploying'):
            exc = self.assertRaises(toggle_states.Unavailable,
                                    toggle_states.refuse_node, server(),
                                    node(state))
            self.assertIn('which is in "%s"' % state, str(exc))
        exc = self.assertRaises(
            toggle_states.Unavailable, toggle_states.refuse_node, server(),
            node(maintenance=True, maintenance_reason='fans'))
        self.assertIn('in maintenance (fans)', str(exc))
        self.assertRaises(toggle_states.Unavailable,
                          toggle_states.refuse_node, server(),
                          node(target_provision_state='active'))

    def test_our_own_interrupted_servicing_may_be_finished(self):
        for state in ('servicing', 'service wait', 'service failed'):
            toggle_states.refuse_node(server(), node(state),
                                      ours_under_way=True)
        self.assertRaises(toggle_states.Unavailable,
                          toggle_states.refuse_node, server(), node('rescue'),
                          ours_under_way=True)


class TestLock(testtools.TestCase):
    def test_the_reason_names_the_holder(self):
        holder = toggle_states.Holder('host-1', 4242, '4026531836',
                                      '1a2b3c4d', '9f8e')
        reason = toggle_states.lock_reason([OFF], holder)
        self.assertEqual('osc-deploy-config: toggling hyperthreading=disabled'
                         ' (held by host-1 pid 4242 ns 4026531836 boot '
                         '1a2b3c4d nonce 9f8e)', reason)
        self.assertEqual(holder, toggle_states.lock_holder(
            {'locked': True, 'locked_reason': reason}))
        # an older release's reason: host and PID only
        self.assertEqual(('host-1', 4242, '', '', ''),
                         toggle_states.lock_holder({
                             'locked': True, 'locked_reason': (
                                 'osc-deploy-config: toggling x=y (held by '
                                 'host-1 pid 4242)')}))
        self.assertIsNone(toggle_states.lock_holder(
            {'locked': False, 'locked_reason': reason}))
        self.assertIsNone(toggle_states.lock_holder(
            {'locked': True, 'locked_reason': 'kernel upgrade'}))
        self.assertEqual(toggle_states.NOBODY, toggle_states.lock_holder(
            {'locked': True,
             'locked_reason': toggle_states.lock_reason_unnamed()}))

    def test_a_long_reason_fits_nova(self):
        many = [deploy_config.Config('t%d' % n, 'v' * 30) for n in range(9)]
        self.assertLessEqual(len(toggle_states.lock_reason(
            many, toggle_states.Holder('h' * 64, 1, '4026531836',
                                       '1a2b3c4d', 'f' * 12))), 255)

    def test_someone_elses_lock_is_refused(self):
        toggle_states.refuse_foreign_lock(server(locked=False))
        toggle_states.refuse_foreign_lock(server(
            locked=True, locked_reason=toggle_states.lock_reason(
                [OFF], toggle_states.NOBODY)))
        exc = self.assertRaises(
            toggle_states.Unavailable, toggle_states.refuse_foreign_lock,
            server(locked=True, locked_by='owner', locked_reason=None))
        self.assertIn('is locked (by owner: no reason given)', str(exc))

    def test_the_oldest_lock_since_the_last_unlock_holds(self):
        actions = [{'action': 'lock', 'request_id': 'b'},
                   {'action': 'resize', 'request_id': 'x'},
                   {'action': 'lock', 'request_id': 'a'},
                   {'action': 'unlock', 'request_id': 'u'},
                   {'action': 'lock', 'request_id': 'old'}]
        self.assertEqual('a', toggle_states.first_unmatched_lock(actions))
        self.assertIsNone(toggle_states.first_unmatched_lock(actions[3:4]))


class TestWaits(testtools.TestCase):
    def test_a_failed_event_says_why(self):
        self.assertEqual('compute_confirm_resize: UnexpectedTaskStateError',
                         toggle_states.failed_event({'events': [
                             {'event': 'compute_confirm_resize',
                              'result': 'Error',
                              'details': 'UnexpectedTaskStateError'}]}))
        # a member sees no events: the action's message tells
        self.assertEqual('Error', toggle_states.failed_event(
            {'message': 'Error'}))
        self.assertIsNone(toggle_states.failed_event({'events': [
            {'event': 'compute_confirm_resize', 'result': None}]}))

    def test_a_servicing_settles_on_active_or_on_any_failure(self):
        self.assertFalse(toggle_states.node_settled(node('servicing')))
        self.assertFalse(toggle_states.node_settled(node('service wait')))
        self.assertFalse(toggle_states.node_settled(
            node('active', target_provision_state='active')))
        self.assertIsNone(toggle_states.servicing_failure(node()))
        for state, why in (
                ('service failed', 'BIOS refused'),
                ('service hold', 'service hold'),
                ('rescue', 'the node went to "rescue"')):
            found = node(state, last_error='BIOS refused')
            self.assertTrue(toggle_states.node_settled(found))
            self.assertIn(why, toggle_states.servicing_failure(found))


class TestRecord(testtools.TestCase):
    def test_pending_then_complete_on_the_node(self):
        found = node(properties={}, provision_updated_at='T1')
        patch = toggle_record.pending_patch(found, 'srv-1', [OFF])
        found['properties'][toggle_record.PENDING] = patch[0]['value']
        under_way = toggle_record.pending(found, 'srv-1')
        self.assertEqual(({'hyperthreading': OFF}, 'T1', False), under_way)
        self.assertFalse(toggle_record.serviced_since(found, under_way))
        found['provision_updated_at'] = 'T2'
        self.assertTrue(toggle_record.serviced_since(found, under_way))
        self.assertEqual(
            [{'op': 'add', 'path': '/properties/deploy_config_applied',
              'value': {'instance_uuid': 'srv-1',
                        'configs': {'hyperthreading': 'disabled'}}},
             {'op': 'remove', 'path': '/properties/deploy_config_pending'}],
            toggle_record.complete_patch(found, 'srv-1', [OFF]))

    def test_a_record_belongs_to_its_instance(self):
        found = node(properties={toggle_record.APPLIED: {
            'instance_uuid': 'srv-1', 'configs': {'hyperthreading':
                                                  'disabled'}}})
        self.assertEqual({'hyperthreading': OFF},
                         toggle_record.applied(found, 'srv-1'))
        self.assertEqual({}, toggle_record.applied(found, 'srv-2'))
        self.assertIsNone(toggle_record.pending(found, 'srv-1'))

    def test_forgetting_a_type(self):
        found = node(properties={toggle_record.APPLIED: {
            'instance_uuid': 'srv-1', 'configs': {'hyperthreading': 'off',
                                                  'turbo': 'on'}}})
        self.assertEqual([{'op': 'add',
                           'path': '/properties/deploy_config_applied',
                           'value': {'instance_uuid': 'srv-1',
                                     'configs': {'turbo': 'on'}}}],
                         toggle_record.forget_patch(found, 'srv-1',
                                                    ['hyperthreading']))
        self.assertEqual([{'op': 'remove',
                           'path': '/properties/deploy_config_applied'}],
                         toggle_record.forget_patch(
                             found, 'srv-1', ['hyperthreading', 'turbo']))
        self.assertEqual([], toggle_record.forget_patch(found, 'srv-1',
                                                        ['raid']))


def event(kind, at, error=False, text=''):
    """A node history entry, as ironic's API shows it."""
    return {'event_type': kind, 'created_at': at, 'event': text,
            'severity': 'ERROR' if error else 'INFO'}


BIOS_STEP = {'interface': 'bios', 'step': 'apply_configuration'}
STARTED = ("Starting servicing with steps=[{'interface': 'bios', 'step': "
           "'apply_configuration', 'args': {}, 'priority': 0}]")


class TestServicingOutcome(testtools.TestCase):
    def outcome(self, *newest_first, since='2026-12-01T10:00:00+00:00'):
        return toggle_record.servicing_outcome(
            list(newest_first), since, [BIOS_STEP])

    def test_the_end_of_a_servicing_of_our_steps(self):
        self.assertEqual(toggle_record.SERVICED, self.outcome(
            event('servicing_end', '2026-12-01T10:00:02'),
            event('servicing_start', '2026-12-01T10:00:01', text=STARTED)))
        self.assertEqual(toggle_record.SERVICE_FAILED, self.outcome(
            event('servicing', '2026-12-01T10:00:03', error=True),
            event('servicing_end', '2026-12-01T10:00:02', error=True),
            event('servicing_start', '2026-12-01T10:00:01', text=STARTED)))

    def test_a_servicing_of_other_steps_is_not_ours(self):
        other = STARTED.replace('apply_configuration', 'factory_reset')
        self.assertEqual(toggle_record.OTHER_STEPS, self.outcome(
            event('servicing_end', '2026-12-01T10:00:02'),
            event('servicing_start', '2026-12-01T10:00:01', text=other)))

    def test_an_end_whose_start_is_not_shown_is_not_known(self):
        # ironic writes both: the start was past the page, or too early
        self.assertIsNone(self.outcome(
            event('servicing_end', '2026-12-01T10:00:02')))
        self.assertIsNone(self.outcome(
            event('servicing_end', '2026-12-01T10:00:02'),
            event('servicing_start', '2026-12-01T10:00:01',
                  text='Starting servicing with steps=[unreadable')))

    def test_the_steps_ironic_listed_are_compared_whole(self):
        def started(**step):
            return event('servicing_start', '2026-12-01T10:00:01',
                         text='Starting servicing with steps=%s' % (
                             [dict(BIOS_STEP, priority=0, **step)],))

        end = event('servicing_end', '2026-12-01T10:00:02')
        self.assertEqual(toggle_record.SERVICED, self.outcome(
            end, started(args={})))
        self.assertEqual(toggle_record.OTHER_STEPS, self.outcome(
            end, started(args={'settings': []})))
        self.assertEqual(toggle_record.OTHER_STEPS, self.outcome(
            end, started(args={}, interface='raid')))
        # a secret ironic masked matches any value
        self.assertEqual(toggle_record.SERVICED, toggle_record.
                         servicing_outcome([end, started(args={
                             'password': '***'})], '2026-12-01T10:00:00Z', [
                             dict(BIOS_STEP, args={'password': 's3cret'})]))

    def test_nothing_at_or_before_the_pending_record_counts(self):
        self.assertIsNone(self.outcome(
            event('servicing_end', '2026-12-01T10:00:00Z'),
            event('servicing_start', '2026-12-01T09:59:59', text=STARTED)))
        # no end yet: under way, or not recorded
        self.assertIsNone(self.outcome(
            event('servicing_start', '2026-12-01T10:00:01', text=STARTED)))

    def test_without_the_time_of_the_pending_record_nothing_counts(self):
        self.assertIsNone(self.outcome(
            event('servicing_end', '2026-12-01T10:00:02'), since=None))


class TestLastServiced(testtools.TestCase):
    """What proves a project's record: the last servicing of its type on
    the node since the instance was created ran its steps to their
    end."""

    ON_STEP = dict(BIOS_STEP, args={'v': 'on'})
    OFF_STEP = dict(BIOS_STEP, args={'v': 'off'})

    def started(self, step, at):
        return event('servicing_start', at, text='Starting servicing with '
                     'steps=%s' % ([dict(step, priority=0)],))

    def last(self, *newest_first, since='2026-12-01T10:00:00Z'):
        return toggle_record.last_serviced(list(newest_first), since, {
            'on': [self.ON_STEP], 'off': [self.OFF_STEP]})

    def test_the_last_servicing_of_the_type_decides(self):
        other = STARTED.replace('apply_configuration', 'factory_reset')
        self.assertEqual('off', self.last(
            event('servicing_end', '2026-12-01T10:00:06'),
            event('servicing_start', '2026-12-01T10:00:05', text=other),
            event('servicing_end', '2026-12-01T10:00:04'),
            self.started(self.OFF_STEP, '2026-12-01T10:00:03'),
            event('servicing_end', '2026-12-01T10:00:02'),
            self.started(self.ON_STEP, '2026-12-01T10:00:01')))

    def test_a_failed_an_unfinished_or_an_older_one_proves_nothing(self):
        self.assertIsNone(self.last(
            event('servicing_end', '2026-12-01T10:00:04', error=True),
            self.started(self.OFF_STEP, '2026-12-01T10:00:03'),
            event('servicing_end', '2026-12-01T10:00:02'),
            self.started(self.ON_STEP, '2026-12-01T10:00:01')))
        self.assertIsNone(self.last(
            self.started(self.ON_STEP, '2026-12-01T10:00:01')))
        self.assertIsNone(self.last(
            event('servicing_end', '2026-12-01T09:59:02'),
            self.started(self.ON_STEP, '2026-12-01T09:59:01')))
        self.assertIsNone(self.last(
            event('servicing_end', '2026-12-01T10:00:02'),
            self.started(self.ON_STEP, '2026-12-01T10:00:01'), since=None))


    def test_the_last_switch_not_yet_ended_proves_nothing(self):
        # switched off, then on: the second's end not written yet (ironic
        # shows the node active first), a record of "off" counts for
        # nothing, nor for "on" until the end is there
        self.assertIsNone(self.last(
            self.started(self.ON_STEP, '2026-12-01T10:00:03'),
            event('servicing_end', '2026-12-01T10:00:02'),
            self.started(self.OFF_STEP, '2026-12-01T10:00:01')))
        self.assertEqual('on', self.last(
            event('servicing_end', '2026-12-01T10:00:04'),
            self.started(self.ON_STEP, '2026-12-01T10:00:03'),
            event('servicing_end', '2026-12-01T10:00:02'),
            self.started(self.OFF_STEP, '2026-12-01T10:00:01')))

    def test_a_redeploy_after_the_switch_voids_it(self):
        # a rebuild through nova deploys the flavor's configs again
        switched = (event('servicing_end', '2026-12-01T10:00:02'),
                    self.started(self.OFF_STEP, '2026-12-01T10:00:01'))
        self.assertIsNone(self.last(
            event('deployment_end', '2026-12-01T10:00:06'),
            event('deployment_start', '2026-12-01T10:00:05'), *switched))
        # the instance's own deploy came before it: it counts; and a
        # switch after the rebuild counts again
        self.assertEqual('off', self.last(
            *switched, event('deployment_end', '2026-12-01T10:00:00.5')))
        self.assertEqual('on', self.last(
            event('servicing_end', '2026-12-01T10:00:08'),
            self.started(self.ON_STEP, '2026-12-01T10:00:07'),
            event('deployment_end', '2026-12-01T10:00:06'), *switched))


class TestStillServicing(testtools.TestCase):
    def test_a_bios_step_names_what_ironic_waits_for_at_the_bmc(self):
        state = {'provision_state': 'service wait', 'driver_internal_info': {
            'redfish_bios_state': {'reboot_requested': True,
                                   'requested_bios_attrs': {
                                       'ProcAMDBoost': 'Disabled'}}}}
        line = toggle_states.still_servicing({'name': 'bm-6'}, state)
        self.assertIn('Node bm-6 is still in "service wait": ironic waits '
                      'for its BMC to apply ProcAMDBoost=Disabled', line)
        self.assertIn('@Redfish.Settings.Messages', line)

    def test_otherwise_ironic_goes_on(self):
        self.assertEqual(
            'Node bm-0 is still in "servicing"; ironic goes on: rerun to '
            'finish the toggle once it ends', toggle_states.still_servicing(
                {'name': 'bm-0'}, {'provision_state': 'servicing'}))
