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

"""A rollout's toggles prepared ahead of their place (``fleet.ahead``):
locked while every place is held, written only once they have one."""

import threading

from osc_deploy_config.domain.toggle import toggle_record
from osc_deploy_config.use_cases.fleet import budget as budgets
from tests.unit import fakes
from tests.unit import test_fleet
from tests.unit import test_pace


class TestAhead(test_fleet.FleetTestCase):
    def setUp(self):
        super().setUp()
        self.db_1 = self.server('db-1')
        self.bm_1 = self.nodes['bm-1']
        self.locks = []     # server IDs

        own = self.nova.proxy.request.side_effect

        def request(path, method, json=None, **kwargs):
            answer = own(path, method, json=json, **kwargs)
            if json and 'lock' in json:
                self.locks.append(path.split('/')[2])
                self.on_lock(path.split('/')[2])
            return answer

        self.nova.proxy.request.side_effect = request

    def on_lock(self, server_id):
        """What a test does once nova took a lock."""

    def assert_untouched(self):
        """db-1 was locked ahead, then unlocked, and its node never
        written to nor serviced."""
        self.assertIn(self.db_1['id'], self.locks)
        self.assertFalse(self.db_1['locked'])
        self.assertNotIn(toggle_record.PENDING, self.bm_1['properties'])
        self.assertNotIn(('bm-1', 'service'), self.ironic.provision_requests)
        self.assertFalse([p for m, p, _ in self.ironic.requests
                          if m == 'PATCH' and self.bm_1['uuid'] in p])

    def hold_bm_0_until_db_1_is_locked(self, then=lambda: None):
        """bm-0's servicing ends (its first poll is answered) only once
        db-1 is locked (and ``then()`` ran): whether it was, a list."""
        locked = threading.Event()
        bm_0, held = self.nodes['bm-0']['uuid'], []

        def polled(path, method, json):
            if method == 'GET' and path.startswith('/nodes/%s?' % bm_0) and (
                    self.ironic.provision_requests) and not held:
                held.append(locked.wait(10))
                then()

        self.on_lock = lambda server_id: (
            server_id == self.db_1['id'] and locked.set())
        fakes.intercept(self.ironic, polled)
        return held

    def test_the_next_is_locked_while_the_one_before_is_serviced(self):
        # one place: db-1 waits for it locked, and is serviced once db-0
        # is up again
        held = self.hold_bm_0_until_db_1_is_locked()
        status, rows, _, _ = self.roll('db-0', 'db-1',
                                       *test_pace.DISABLED_ONE)
        self.assertEqual({'db-0': 'done', 'db-1': 'done'},
                         self.outcomes(rows))
        self.assertEqual((0, [True]), (status, held))
        self.assertEqual(1, self.peak)
        self.assertEqual([('bm-0', 'service'), ('bm-1', 'service')],
                         self.ironic.provision_requests)
        self.assertFalse(self.db_1['locked'])

    def test_one_that_gets_no_place_is_unlocked_untouched(self):
        # bm-0 ignores the step: db-0 fails, and with --max-failures 0
        # db-1, locked ahead, does not start
        self.ironic.bios_ignores_steps = True
        self.hold_bm_0_until_db_1_is_locked()
        status, rows, _, _ = self.roll('db-0', 'db-1',
                                       *test_pace.DISABLED_ONE)
        self.assertEqual(1, status)
        self.assertEqual('not started: more than --max-failures 0 failures',
                         rows['db-1']['Outcome'])
        self.assert_untouched()

    def test_one_whose_node_went_down_meanwhile_is_refused_at_its_place(self):
        # bm-1 goes into maintenance once db-1 is locked ahead: once db-0
        # is done, db-1 gets the place (it is down already), is refused
        # on the budget's read, and unlocked
        self.hold_bm_0_until_db_1_is_locked(
            lambda: self.bm_1.update(maintenance=True))
        status, rows, _, _ = self.roll('db-0', 'db-1',
                                       *test_pace.DISABLED_ONE)
        self.assertEqual('done', rows['db-0']['Outcome'])
        self.assertEqual('unavailable: node bm-1 in maintenance',
                         rows['db-1']['Outcome'])
        self.assert_untouched()

    def test_a_lock_put_over_ours_meanwhile_is_left_to_its_holder(self):
        # an operator locks db-1 over our lock while it waits: at its
        # place it is refused, and the operator's lock stays
        held = self.hold_bm_0_until_db_1_is_locked(lambda: self.db_1.update(
            locked=True, locked_by='admin', locked_reason='firmware check'))
        status, rows, _, _ = self.roll('db-0', 'db-1',
                                       *test_pace.DISABLED_ONE)
        self.assertEqual([True], held)
        self.assertEqual({'db-0': 'done', 'db-1': 'unavailable: locked by '
                          'admin'}, self.outcomes(rows))
        self.assertEqual((True, 'firmware check'), (
            self.db_1['locked'], self.db_1['locked_reason']))
        self.assertNotIn(('bm-1', 'service'), self.ironic.provision_requests)

    def test_one_done_by_another_meanwhile_is_unchanged_at_its_place(self):
        # another toggle's record shows bm-1 on the target once db-1 is
        # locked ahead: at its place it is planned again, and unchanged
        def done_elsewhere():
            record = toggle_record.complete_patch(
                self.bm_1, self.db_1['id'], [fakes.OFF], None)
            for op in record:
                if op['op'] == 'add':
                    self.bm_1[op['path'].split('/')[1]][
                        op['path'].split('/')[2]] = op['value']

        held = self.hold_bm_0_until_db_1_is_locked(done_elsewhere)
        status, rows, _, _ = self.roll('db-0', 'db-1',
                                       *test_pace.DISABLED_ONE)
        self.assertEqual([True], held)
        self.assertEqual({'db-0': 'done', 'db-1': 'unchanged'},
                         self.outcomes(rows))
        self.assertEqual([('bm-0', 'service')],
                         self.ironic.provision_requests)
        self.assertFalse(self.db_1['locked'])

    def test_one_refused_on_an_older_read_is_judged_again_at_its_place(self):
        # an operator's lock on db-1 shows only in the read that gave db-0
        # its place, which db-1 is prepared ahead on: refused then, it
        # waits, and its place's read finds it free
        real, reads = budgets.Budget.read, []

        def read(budget, *args, **kwargs):
            locked = not reads
            reads.append(locked)
            self.db_1.update(locked=locked, locked_by='admin' if locked
                             else None, locked_reason='firmware check'
                             if locked else None)
            return real(budget, *args, **kwargs)

        self.patch(budgets.Budget, 'read', read)
        bm_0, slowed = self.nodes['bm-0']['uuid'], []

        def slow(path, method, json):
            if method == 'GET' and path.startswith('/nodes/%s?' % bm_0) and (
                    self.ironic.provision_requests) and not slowed:
                slowed.append(threading.Event().wait(1.5))  # db-1 prepared

        fakes.intercept(self.ironic, slow)
        status, rows, _, _ = self.roll('db-0', 'db-1',
                                       *test_pace.DISABLED_ONE)
        self.assertEqual((0, {'db-0': 'done', 'db-1': 'done'}),
                         (status, self.outcomes(rows)))

    def test_a_lock_it_leaves_when_no_place_comes_is_in_its_row(self):
        # as above, but nova fails db-1's unlock
        self.ironic.bios_ignores_steps = True
        self.hold_bm_0_until_db_1_is_locked()
        fakes.intercept(self.nova, lambda path, method, json: fakes.error(
            500, 'nova is down') if json == {'unlock': None} and (
                self.db_1['id'] in path) else None)
        status, rows, _, _ = self.roll('db-0', 'db-1',
                                       *test_pace.DISABLED_ONE)
        self.assertTrue(self.db_1['locked'])
        self.assertEqual(
            'not started: more than --max-failures 0 failures; Server db-1 '
            'stays locked: unlocking it failed. Once no toggle runs on it: '
            'openstack server unlock %s' % self.db_1['id'],
            rows['db-1']['Outcome'])

    def test_the_deadline_while_it_waits_for_its_place(self):
        self.hold_bm_0_until_db_1_is_locked(
            lambda: threading.Event().wait(3))
        status, rows, _, _ = self.roll('db-0', 'db-1', '--wait-timeout',
                                       '2', *test_pace.DISABLED_ONE)
        self.assertFalse(self.db_1['locked'])
        self.assertEqual('not started: --wait-timeout reached',
                         rows['db-1']['Outcome'])
        self.assert_untouched()

    def test_none_is_prepared_before_those_holding_places_wait(self):
        # db-1 is locked only once db-0's servicing was asked for: the
        # starts first, and no lock sooner than that
        serviced_then, bm_0 = [], self.nodes['bm-0']['uuid']
        self.on_lock = lambda server_id: server_id == self.db_1['id'] and (
            serviced_then.append(list(self.ironic.provision_requests)))

        def late(path, method, json):
            if method == 'PUT' and bm_0 in path:    # asked half a second late
                threading.Event().wait(0.5)

        fakes.intercept(self.ironic, late)
        status, rows, _, _ = self.roll('db-0', 'db-1',
                                       *test_pace.DISABLED_ONE)
        self.assertEqual(0, status)
        self.assertEqual([[('bm-0', 'service')]], serviced_then)

    def test_none_is_prepared_ahead_while_places_are_free(self):
        # only toggles that wait for a place are: with room for both,
        # each server is locked once, when it starts
        status, rows, _, _ = self.roll('db-0', 'db-1', *test_fleet.DISABLED,
                                       '--max-unavailable', '2')
        self.assertEqual(0, status)
        self.assertEqual(2, len(self.locks))
