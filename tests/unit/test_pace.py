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

"""A rollout at the hardware's speed: polls aimed at when its servicings
end, and a server's place in the budget freed once it is up again."""

import threading

import fixtures
import testtools

from osc_deploy_config.domain.toggle import toggle_record
from osc_deploy_config.domain.toggle import toggle_states
from osc_deploy_config.services import rest
from osc_deploy_config.services import versions
from osc_deploy_config.use_cases.fleet import budget as budgets
from osc_deploy_config.use_cases.fleet import polls
from osc_deploy_config.use_cases.toggle import waits
from tests.unit import fakes
from tests.unit import test_fleet

DISABLED_ONE = test_fleet.DISABLED + ('--max-unavailable', '1')


class TestPace(testtools.TestCase):
    def test_nothing_is_aimed_before_a_servicing_ended(self):
        self.assertEqual([], waits.Pace().aims('steps'))

    def test_halfway_then_the_end_until_the_end_is_known_closely(self):
        pace = waits.Pace()
        pace.ended('steps', 3.75, 6.75)
        self.assertEqual([5.25, 6.75], pace.aims('steps'))
        pace.ended('steps', 5.25, 6.0)
        self.assertEqual([5.625, 6.0], pace.aims('steps'))
        pace.ended('steps', 5.625, 5.75)
        self.assertEqual([5.75], pace.aims('steps'))
        self.assertEqual([], pace.aims('other steps'))

    def test_a_servicing_that_disagrees_starts_it_again(self):
        pace = waits.Pace()
        pace.ended('steps', 5.0, 5.25)
        pace.ended('steps', 5.6, 5.75)      # slower
        self.assertEqual([5.75], pace.aims('steps'))
        pace.ended('steps', 0.0, 9.0)       # agrees: nothing new
        self.assertEqual([5.75], pace.aims('steps'))
        pace.ended('steps', 1.0, 1.1)       # faster
        self.assertEqual([1.1], pace.aims('steps'))


    def test_ended_at_the_aim_after_polls_that_came_before_it(self):
        # a far aim has polls before it (``coarse``): a servicing they
        # saw under way and the aimed poll found ended counts as found
        # ended at once, and the sooner poll comes all the same
        pace = waits.Pace()
        pace.ended('steps', 119.5, 120)
        for _ in range(waits.PACE_PROBE_AFTER):
            pace.ended('steps', 110, 120)
        sooner = waits.PACE_PROBE_SOONER * 119.5
        self.assertEqual([sooner, (sooner + 120) / 2, 120],
                         pace.aims('steps'))
        self.assertEqual([119.75, 120], pace.aims('steps'))     # once


class TestPaceThroughTheWait(testtools.TestCase):
    def test_an_aimed_pause_ends_soon_after_the_rollout_leaves(self):
        clock, leaving = Clock(), threading.Event()

        def sleep(seconds):
            clock.sleep(seconds)
            if clock() >= 10:
                leaving.set()

        waiter = waits.Waiter(lambda line: None, sleep, clock=clock,
                              leaving=leaving)
        waiter.begin()
        waiter.pause(at=300)
        self.assertLessEqual(clock(), 10 + waits.POLL_SECONDS)


class TestBudgetReads(testtools.TestCase):
    def test_of_reads_made_at_once_the_one_begun_last_is_kept(self):
        # a worker's read with nodes listed at 3 ends after the drive's
        # begun at 5: the drive's is kept
        budget = budgets.Budget(
            1, lambda nodes=None, servers=None: {'nodes': nodes},
            clock=lambda: 5.0)
        budget.read()
        budget.read(nodes='listed at 3', began=3.0)
        self.assertEqual({'nodes': None}, budget.seen)
        budget.read(nodes='listed at 6', began=6.0)
        self.assertEqual({'nodes': 'listed at 6'}, budget.seen)


class Clock:
    """time.monotonic and time.sleep of a wait, in step."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


class ServicingWait(fakes.TestCommand):
    """A toggle's wait for its node's servicing, on a clock in step."""

    def setUp(self):
        super().setUp()
        self.ironic.add_hyperthreading_templates()
        self.node = self.deploy_on_node(
            self.nova.add_server('db-0', self.nova.add_flavor('bm', {})),
            'bm-0', [], {'HyperThreading': 'Enabled'})
        self.clock = Clock()
        self.read_at = []
        self.ironic.after_request = lambda method, path: (
            self.read_at.append(self.clock()))
        self.waits = waits.Waits(
            waits.Waiter(lambda line: None, self.clock.sleep,
                         clock=self.clock), None,
            self.app.client_manager.deploy_config.ironic(
                versions.NODE_SERVICING))
        self.waits.pace = waits.Pace()

    def serviced(self, reads):
        """A servicing that ends at the read after ``reads`` reads of the
        node, waited for: the node then."""
        self.node.update(provision_state='servicing',
                         target_provision_state='active',
                         service_reads_left=reads, service_steps=[])
        self.clock.now, self.read_at[:] = 0.0, []
        return self.waits.servicing(self.node, pace='steps')


class TestAimedPolls(ServicingWait):
    def test_the_polls_come_when_the_servicings_before_ended(self):
        self.waits.pace.ended('steps', 4.0, 5.0)
        self.assertEqual('active', self.serviced(1)['provision_state'])
        # halfway (under way still), then where the last one had ended
        self.assertEqual([4.5, 5.0], self.read_at)
        self.assertEqual([4.75, 5.0], self.waits.pace.aims('steps'))
        self.serviced(0)
        self.assertEqual([4.75], self.read_at)
        self.assertEqual([4.625, 4.75], self.waits.pace.aims('steps'))

    def test_a_servicing_past_the_aim_is_polled_as_ever(self):
        self.waits.pace.ended('steps', 4.9, 5.0)
        self.serviced(2)
        self.assertEqual([5.0, 5.25, 5.75], self.read_at)

    def test_servicings_that_got_faster_are_found_by_a_sooner_poll(self):
        self.waits.pace.ended('steps', 4.9, 5.0)
        for _ in range(waits.PACE_PROBE_AFTER):
            self.serviced(0)
            self.assertEqual([5.0], self.read_at)
        # 10 % faster: under way at the sooner poll, ended halfway from
        # there to the end, and known again from there
        self.serviced(1)
        self.assertEqual([3.92, 4.46], [round(a, 6) for a in self.read_at])
        self.assertEqual([4.19, 4.46], [
            round(a, 6) for a in self.waits.pace.aims('steps')])

    def test_servicings_as_fast_as_before_are_found_at_the_end(self):
        self.waits.pace.ended('steps', 4.9, 5.0)
        for _ in range(waits.PACE_PROBE_AFTER):
            self.serviced(0)
        # under way at the sooner poll and halfway: found at the end, as
        # known, with two polls more and none after it
        self.serviced(2)
        self.assertEqual([3.92, 4.46, 5.0], [
            round(a, 6) for a in self.read_at])
        self.assertEqual([5.0], self.waits.pace.aims('steps'))

    def test_an_early_end_before_a_far_aim_is_seen_soon(self):
        # servicings of 300 s: one that ends (or fails) at 70 s is seen
        # at the third poll of one every 30 s, not at 300 s
        self.waits.pace.ended('steps', 299, 301)
        self.serviced(2)
        self.assertEqual([30.0, 60.0, 90.0], self.read_at)

    def test_a_failed_servicing_is_not_learnt_from(self):
        self.waits.pace.ended('steps', 4.0, 5.0)

        def fails(method, path):
            self.read_at.append(self.clock())
            self.node.update(provision_state='service failed',
                             target_provision_state=None)

        self.ironic.after_request = fails
        self.assertEqual('service failed',
                         self.serviced(5)['provision_state'])
        self.assertEqual([4.5, 5.0], self.waits.pace.aims('steps'))

    def test_an_aimed_wait_ends_at_the_deadline(self):
        self.waits.waiter.seconds = 100
        self.waits.pace.ended('steps', 299, 301)
        self.node.update(provision_state='servicing',
                         target_provision_state='active',
                         service_reads_left=50, service_steps=[])
        self.clock.now, self.read_at[:] = 0.0, []
        self.assertRaises(waits.TimedOut, self.waits.servicing, self.node,
                          pace='steps')
        self.assertEqual([30.0, 60.0, 90.0, 100.0], self.read_at)

    def test_without_a_pace_the_first_poll_comes_soon(self):
        self.waits.pace = None
        self.serviced(1)
        self.assertEqual([0.25, 0.75], self.read_at)


class Listings:
    """A rollout's fleet to Polls: its listings of the nodes (each node up
    as ``state`` says) and of the servers, counted."""

    def __init__(self, clock, state):
        self.clock = clock
        self.state = state
        self.nodes_at, self.servers_at = [], []

    def read_nodes(self):
        self.nodes_at.append(self.clock())
        return {s: {'uuid': 'node of ' + s, 'provision_state': p,
                    'target_provision_state': None if p == 'active' else
                    'active'} for s, p in self.state.items()}

    def list_servers(self):
        self.servers_at.append(self.clock())
        return {}


class TestSharedPolls(testtools.TestCase):
    """The polls of servicings in flight at once, but those aimed at the
    end, share listings of the nodes."""

    def setUp(self):
        super().setUp()
        self.clock = Clock()
        self.fleet = Listings(self.clock, {'a': 'servicing',
                                           'b': 'servicing'})
        self.budget = budgets.Budget(
            2, lambda nodes=None, servers=None: dict(nodes or {}),
            clock=self.clock)
        self.polls = polls.Polls(self.budget, self.fleet, self.clock,
                                 lambda: True, None)
        self.polls.polling('a', True)
        self.polls.polling('b', True)

    def node(self, server, since):
        return self.polls.node(server, 'node of ' + server, since)

    def test_a_listing_begun_since_a_poll_allows_serves_it(self):
        self.clock.now = 10.0
        self.assertEqual('servicing', self.node('a', 9.9)['provision_state'])
        self.clock.now = 10.1
        self.assertEqual('servicing', self.node('b', 9.95)['provision_state'])
        self.assertEqual([10.0], self.fleet.nodes_at)
        self.node('b', 10.05)
        self.assertEqual([10.0, 10.1], self.fleet.nodes_at)
        # none listed the servers: no poll of theirs was aimed at the end
        self.assertEqual([], self.fleet.servers_at)

    def test_a_poll_alone_in_flight_reads_its_node_itself(self):
        self.polls.polling('b', False)
        self.assertIsNone(self.node('a', 0.0))
        self.assertEqual([], self.fleet.nodes_at)

    def test_a_listing_that_failed_is_not_shared_for_a_while(self):
        def fails():
            self.fleet.nodes_at.append(self.clock())
            raise RuntimeError('502')

        self.fleet.read_nodes = fails
        self.assertIsNone(self.node('a', 0.0))
        self.clock.now = waits.POLL_SECONDS - 0.1
        self.assertIsNone(self.node('b', 0.0))
        self.assertEqual([0.0], self.fleet.nodes_at)

    def test_servers_found_up_at_one_listing_share_the_budgets_read(self):
        self.fleet.state.update(a='active', b='active')
        self.clock.now = 1.0
        self.node('a', 0.5)
        self.node('b', 0.5)
        self.clock.now = 1.5
        self.polls.listed[2].result()   # begun once the first was found up
        self.assertTrue(self.polls.read_budget('a'))
        self.assertTrue(self.polls.read_budget('b'))
        # the servers listed once, when the first was found up
        self.assertEqual(([1.0], [1.0]), (self.fleet.nodes_at,
                                          self.fleet.servers_at))

    def test_an_aimed_poll_takes_a_listing_begun_since_it_asked(self):
        self.clock.now = 2.0
        self.node('a', 1.0)
        self.clock.now = 2.1
        self.polls.node('b', 'node of b')
        self.polls.listed[2].result()
        self.assertEqual(([2.0, 2.1], [2.1]), (self.fleet.nodes_at,
                                               self.fleet.servers_at))


class TestPollsSince(ServicingWait):
    """What each poll of a servicing asks of the rollout's listings."""

    def setUp(self):
        super().setUp()
        self.asked = []
        self.waits.look = lambda uuid, since: self.asked.append(
            (self.clock(), since))

    def test_a_poll_takes_a_listing_a_quarter_of_its_interval_old(self):
        self.waits.pace = None
        self.serviced(1)
        # at 0.25 and 0.75 (each then read alone: no listing served it)
        self.assertEqual([(0.25, 0.1875), (0.75, 0.625)], self.asked)
        self.assertEqual([0.25, 0.75], self.read_at)

    def test_a_shared_listing_under_way_is_learnt_as_of_its_bound(self):
        def look(uuid, since):
            self.asked.append((self.clock(), since))
            if since is None:
                return None     # the aimed poll reads it alone
            self.waits.looked = True
            return dict(self.node, provision_state='servicing')

        self.waits.look = look
        self.waits.pace.ended('steps', 4.0, 5.0)
        self.serviced(0)
        # at 4.5, a listing begun since 3.75 found it under way: learnt as
        # under way at 3.75 (nothing new), not at 4.5
        self.assertEqual([(4.5, 3.75), (5.0, None)], self.asked)
        self.assertEqual([4.5, 5.0], self.waits.pace.aims('steps'))

    def test_the_poll_aimed_at_the_end_takes_none_older_than_it(self):
        self.waits.pace.ended('steps', 4.0, 5.0)
        self.serviced(1)
        self.assertEqual([(4.5, 4.5 - 0.25 * waits.POLL_SECONDS),
                          (5.0, None)],
                         self.asked)


class TestUpAgain(test_fleet.FleetTestCase):
    def test_the_next_servicing_starts_before_the_last_servers_unlock(self):
        # the unlock of db-0 is held until bm-1's servicing was asked
        # for: with one place, it is, as db-0 is up again once its node
        # is active, read back and recorded, before its unlock
        asked, held = threading.Event(), []
        db_0 = self.server('db-0')['id']
        bm_1 = self.nodes['bm-1']['uuid']

        def unlock(path, method, json):
            if json == {'unlock': None} and db_0 in path:
                held.append(asked.wait(10))

        def servicing_asked(method, path):
            self.sample(method, path)
            if method == 'PUT' and path.startswith('/nodes/%s/' % bm_1):
                asked.set()

        fakes.intercept(self.nova, unlock)
        self.ironic.after_request = servicing_asked
        status, rows, _, _ = self.roll('db-0', 'db-1', *DISABLED_ONE)
        self.assertEqual((0, [True]), (status, held))
        self.assertEqual(1, self.peak)
        self.assertEqual({'db-0': 'done', 'db-1': 'done'},
                         self.outcomes(rows))

    def test_a_read_back_that_fails_counts_before_the_next_starts(self):
        # bm-0 ignores the step: its read-back, held a second, fails it,
        # and with --max-failures 0 db-1 does not start
        self.ironic.bios_ignores_steps = True
        bm_0 = self.nodes['bm-0']['uuid']

        def read_back(path, method, json):
            if path.startswith('/nodes/%s/bios' % bm_0) and (
                    self.ironic.provision_requests):
                threading.Event().wait(1)

        fakes.intercept(self.ironic, read_back)
        self.assert_db_1_not_started()

    def test_a_record_that_fails_counts_before_the_next_starts(self):
        # ironic answers bm-0's record 409 (its conductor still holds it)
        # to every retry, a second late: with --max-failures 0, db-1 does
        # not start
        self.useFixture(fixtures.MockPatch(
            'osc_deploy_config.services.rest.RETRY_SECONDS', 0.01))
        bm_0, patches = self.nodes['bm-0']['uuid'], []

        def record(path, method, json):
            if method == 'PATCH' and path == '/nodes/%s' % bm_0:
                patches.append(path)
                if len(patches) > 1:
                    threading.Event().wait(0.2)
                    return fakes.error(409, 'Node %s is locked' % bm_0)
            return None

        fakes.intercept(self.ironic, record)
        self.assert_db_1_not_started()
        self.assertEqual(1 + 1 + rest.WRITE_RETRIES, len(patches))

    def assert_db_1_not_started(self):
        """A rollout of db-0 and db-1, one at a time: db-0's failure stops
        it before db-1's node is serviced."""
        status, rows, _, _ = self.roll('db-0', 'db-1', *DISABLED_ONE)
        self.assertEqual(1, status)
        self.assertEqual('not started: more than --max-failures 0 failures',
                         rows['db-1']['Outcome'])
        self.assertEqual([('bm-0', 'service')],
                         self.ironic.provision_requests)


class TestPollsServeTheBudget(test_fleet.FleetTestCase):
    def test_a_poll_that_finds_its_node_up_is_the_next_starts_read(self):
        for number in range(3, 5):
            self.baremetal('db-%d' % number, 'bm-%d' % number, tagged=True)
        self.ironic.servicing_reads = 0     # ended at the first poll
        names = ['db-0', 'db-1', 'db-3', 'db-4']
        status, rows, _, _ = self.roll(*names, *DISABLED_ONE)
        self.assertEqual((0, ['done'] * 4), (
            status, [rows[n]['Outcome'] for n in names]))
        reads = [path.split('?')[0] for method, path, _ in
                 self.ironic.requests if method == 'GET' and '?fields=' in (
                     path) and path.startswith('/nodes')]
        # the first servicing's poll (no pace yet) and the last one's (no
        # server waits) read their node alone; the two between are
        # listings of the nodes that found them up, which the next start
        # took as the budget's read: one listing of the servers and one
        # of the nodes at planning, at the first two starts, at these
        # two polls, and at the read-back
        self.assertEqual(2, sum(1 for p in reads if p != '/nodes'))
        self.assertEqual(6, reads.count('/nodes'))
        self.assertEqual(6, sum(
            1 for method, path, _ in self.nova.requests
            if path.startswith('/servers/detail')))

    def test_the_servers_are_listed_beside_the_polls_nodes(self):
        # bm-1's read-back waits for a listing of the servers begun since
        # its servicing was asked for: its poll's, begun beside the nodes
        for number in range(3, 5):
            self.baremetal('db-%d' % number, 'bm-%d' % number, tagged=True)
        self.ironic.servicing_reads = 0     # ended at the first poll
        bm_1 = self.nodes['bm-1']['uuid']
        serviced, listed, held = threading.Event(), threading.Event(), []

        def read_back(path, method, json):
            if method == 'PUT' and bm_1 in path:
                serviced.set()
            elif path.startswith('/nodes/%s/bios' % bm_1) and (
                    serviced.is_set() and not held):
                held.append(listed.wait(5))

        def servers_listed(path, method, json):
            if path.startswith('/servers/detail') and serviced.is_set():
                listed.set()

        fakes.intercept(self.ironic, read_back)
        fakes.intercept(self.nova, servers_listed)
        status, rows, _, _ = self.roll('db-0', 'db-1', 'db-3', 'db-4',
                                       *DISABLED_ONE)
        self.assertEqual((0, [True]), (status, held))

    def test_the_drives_read_lists_the_servers_beside_the_nodes(self):
        # the drive's read once db-0 is up (its poll read bm-0 alone: no
        # pace yet) lists the nodes only once a listing of the servers
        # was asked for: begun beside it
        listed, held = threading.Event(), []

        def nodes_listed(path, method, json):
            if path.startswith('/nodes?') and (
                    self.ironic.provision_requests) and not held:
                held.append(listed.wait(5))

        def servers_listed(path, method, json):
            if path.startswith('/servers/detail') and (
                    self.ironic.provision_requests):
                listed.set()

        fakes.intercept(self.ironic, nodes_listed)
        fakes.intercept(self.nova, servers_listed)
        status, rows, _, _ = self.roll('db-0', 'db-1', *DISABLED_ONE)
        self.assertEqual((0, [True]), (status, held))

    def test_a_node_finished_then_serviced_again_keeps_its_place(self):
        # a killed rollout to enabled left bm-0 servicing; this one, to
        # disabled, finishes that servicing, then services bm-0 again:
        # db-1 may not start meanwhile
        db_0, node = self.server('db-0'), self.nodes['bm-0']
        db_0.update(locked=True, locked_by='admin', locked_reason=(
            toggle_states.lock_reason([fakes.ON], fakes.mine(
                pid=fakes.gone_pid()))))
        node['properties'][toggle_record.PENDING] = (
            toggle_record.pending_patch(node, db_0['id'], [fakes.ON])[0][
                'value'])
        self.ironic.set_state(node, 'servicing', 'active',
                              service_reads_left=2, service_steps=[])
        # bm-0's servicing anew is held a second: time for db-1 to start,
        # were db-0's place given back
        def servicing_anew(path, method, json):
            if method == 'PUT' and node['uuid'] in path:
                threading.Event().wait(1)

        fakes.intercept(self.ironic, servicing_anew)
        status, rows, _, _ = self.roll('db-0', 'db-1', *DISABLED_ONE)
        self.assertEqual({'db-0': 'done', 'db-1': 'done'},
                         self.outcomes(rows))
        self.assertEqual(1, self.peak)
        self.assertEqual([('bm-0', 'service'), ('bm-1', 'service')],
                         self.ironic.provision_requests)
