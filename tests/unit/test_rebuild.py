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

"""OSC's own ``server rebuild``, with and without the hook, over the fake
services: what is sent to nova, at which microversion, and what the hook
reads and does after."""

from unittest import mock

from openstack.compute.v2 import server as sdk_server
from openstack.image.v2 import _proxy as image_proxy
from openstack.image.v2 import image as sdk_image
from openstackclient.compute.v2 import server as osc_server
from osc_lib import exceptions

from osc_deploy_config.domain.grants import grants
from osc_deploy_config.domain.toggle import toggle_record
from tests.unit import fakes
from tests.unit.fakes import GOLD
from tests.unit.fakes import HT
from tests.unit.fakes import OFF
from tests.unit.fakes import OFF_T
from tests.unit.fakes import ON_T

IMAGE_ID = 'a8c1b5a4-0f0e-4c1b-9c65-0123456789ab'
BM_FLAVOR = dict(GOLD, **{'resources:VCPU': '0', 'resources:MEMORY_MB': '0',
                          'resources:DISK_GB': '0',
                          'deploy-config:hyperthreading': 'enabled',
                          'trait:' + ON_T: 'required'})


class RebuildTestCase(fakes.TestCommand):
    def setUp(self):
        super().setUp()
        self.ironic.add_hyperthreading_templates()
        self.compute = self.nova.proxy
        self.compute.default_microversion = None    # OSC negotiates
        self.app.client_manager.compute = self.compute
        self.app.client_manager.image = fakes.proxy_double(
            image_proxy.Proxy, ('find_image',))
        self.app.client_manager.image.find_image.return_value = \
            sdk_image.Image(id=IMAGE_ID, name='tiny')
        self.sent = []      # (rebuild arguments, microversion then)
        self.compute.rebuild_server.side_effect = self.rebuild_server
        self.redeploy = None
        # cliff loads a command's hooks from the app's namespace
        self.app.command_manager = mock.Mock(spec=['namespace'],
                                             namespace='openstack.cli')

    def rebuild_server(self, server, image, **kwargs):
        """As nova: the server shows REBUILD for two reads, then what it
        was (a stopped server stays stopped)."""
        self.sent.append(((server.id, image.id, kwargs),
                          self.compute.default_microversion))
        was = self.nova.servers[server.id]['status']
        self.nova.transitions[server.id] = [('REBUILD', 'rebuilding')] * 2 + [
            (was, None)]
        if self.redeploy:
            self.redeploy()
        return server

    def server(self, name, flavor):
        found = self.nova.add_server(name, flavor, image=IMAGE_ID)
        self.compute.find_server.return_value = sdk_server.Server(
            id=found['id'], name=name, status='ACTIVE',
            image={'id': IMAGE_ID}, flavor=found['flavor'])
        return found

    def rebuild(self, server, *args, hooked=True):
        """OSC's RebuildServer as cliff runs it: with its hooks, ours among
        them, loaded from their entry points (``hooked``)."""
        cmd = osc_server.RebuildServer(
            self.app, None, cmd_name='server rebuild' if hooked else None)
        parser = cmd.get_parser('openstack server rebuild')
        return cmd.run(parser.parse_args([*args, '--image', 'tiny',
                                          server['id']]))


class TestVirtual(RebuildTestCase):
    def test_sends_exactly_what_osc_sends_alone(self):
        server = self.server('web-1', self.nova.add_flavor('m1.tiny'))
        lookup = self.compute.find_server
        self.rebuild(server, hooked=False)
        self.assertEqual(1, lookup.call_count)
        self.nova.transitions.clear()   # that rebuild has ended
        self.rebuild(server)
        self.assertEqual(2, len(self.sent))
        self.assertEqual(self.sent[0], self.sent[1])
        self.assertIsNone(self.sent[1][1])
        # one read of the server, the one OSC no longer makes
        self.assertEqual([('GET', '/servers/%s' % server['id'])],
                         [r[:2] for r in self.nova.requests])
        self.assertEqual(1, lookup.call_count)
        self.assertEqual([], self.ironic.requests + self.placement.requests)


class TestBaremetal(RebuildTestCase):
    def setUp(self):
        super().setUp()
        gold = self.nova.add_flavor('bm.gold', BM_FLAVOR)
        self.db = self.server('db-1', gold)
        # toggled to hyperthreading=disabled; a rebuild deploys the
        # flavor's enabled again
        self.node = self.deploy_on_node(self.db, 'bm-0', [HT, ON_T, OFF_T],
                                        {'HyperThreading': 'Disabled'})
        self.node['properties'][toggle_record.APPLIED] = {
            'instance_uuid': self.db['id'],
            'configs': {'hyperthreading': 'disabled'}}
        self.redeploy = lambda: self.node['bios'].update(
            HyperThreading='Enabled')

    def test_sent_at_2_92_and_the_toggle_applied_again_once_rebuilt(self):
        self.rebuild(self.db)
        self.assertEqual('2.92', self.sent[0][1])
        self.assertEqual({'HyperThreading': 'Disabled'}, self.node['bios'])
        self.assertEqual([('bm-0', 'service')],
                         self.ironic.provision_requests)
        self.assertEqual({'hyperthreading': OFF}, toggle_record.applied(
            self.node, self.db['id']))
        # the hook waited through REBUILD before it serviced the node
        said = self.fake_stderr.getvalue().splitlines()
        self.assertIn('  REBUILD (rebuilding)', said)
        self.assertLess(said.index('  REBUILD (rebuilding)'), said.index(
            'Server db-1: node bm-0 serviced, now hyperthreading=disabled.'))
        self.assertEqual([], self.nova.transitions[self.db['id']][:-1])

    def test_a_stopped_server_is_rebuilt_stopped_and_told_what_to_run(self):
        self.nova.servers[self.db['id']]['status'] = 'SHUTOFF'
        exc = self.assertRaises(exceptions.CommandError, self.rebuild,
                                self.db)
        self.assertEqual(
            "Server db-1 was rebuilt and is SHUTOFF, as it was: it runs its "
            "flavor's deploy configs, and hyperthreading=disabled cannot be "
            "applied again to a stopped server (a toggle needs it ACTIVE). "
            "Once it runs (openstack server start %s): openstack server "
            "resize --deploy-config hyperthreading=disabled %s"
            % (self.db['id'], self.db['id']), str(exc))
        self.assertEqual(('SHUTOFF', []), (
            self.nova.servers[self.db['id']]['status'],
            self.ironic.provision_requests))

    def test_the_servers_metadata_asks_for_nothing(self):
        # its owner writes it; only the node's record counts
        self.node['properties'] = {}
        self.nova.servers[self.db['id']]['metadata'] = {
            'deploy-config:hyperthreading': 'disabled'}
        self.rebuild(self.db)
        self.assertEqual({'HyperThreading': 'Enabled'}, self.node['bios'])
        self.assertEqual([], self.ironic.provision_requests)

    def project_recorded(self, granted):
        """The project's record (its toggle, or a member's forgery) says
        the server runs hyperthreading=disabled; the operator's says
        nothing; the templates record the grant or not."""
        self.node['properties'] = {}
        self.node['extra'][toggle_record.PROJECT_APPLIED] = {
            'instance_uuid': self.db['id'], 'project_id': 'project-1',
            'configs': {'hyperthreading': 'disabled'}}
        (template,) = [t for t in self.ironic.templates.values()
                       if t['name'] == OFF_T]
        if granted:
            fakes.grant(template, 'project-1')
        return template

    def runbook_ran(self, template):
        """The node's history shows the grant's runbook run."""
        self.ironic.set_state(self.node, 'active')
        self.ironic.record_start(self.node, grants.runbook_steps(template))
        self.ironic.record(self.node, 'servicing_end')

    def test_a_projects_record_of_what_it_was_granted_is_applied_again(self):
        self.runbook_ran(self.project_recorded(granted=True))
        self.rebuild(self.db)
        self.assertEqual(({'HyperThreading': 'Disabled'},
                          [('bm-0', 'service')]), (
            self.node['bios'], self.ironic.provision_requests))

    def test_a_forged_record_of_a_granted_config_is_applied_by_no_one(self):
        # a member may write the record; only a manager may run the
        # grant's runbook, which the node's history would show
        self.project_recorded(granted=True)
        self.rebuild(self.db)
        self.assertEqual(({'HyperThreading': 'Enabled'}, []), (
            self.node['bios'], self.ironic.provision_requests))

    def test_a_forged_record_of_an_earlier_switch_is_applied_by_no_one(self):
        # the manager switched off, then on again: a member's record of
        # off is proven by no servicing, the last of its type ran on
        off = self.project_recorded(granted=True)
        self.runbook_ran(off)
        self.runbook_ran(next(t for t in self.ironic.templates.values()
                              if t['name'] == ON_T))
        self.rebuild(self.db)
        self.assertEqual(({'HyperThreading': 'Enabled'}, []), (
            self.node['bios'], self.ironic.provision_requests))

    def test_a_record_of_what_was_never_granted_is_applied_by_no_one(self):
        # a manager may create a runbook that looks like a grant's: the
        # operator trusts only the templates' record
        self.project_recorded(granted=False)
        self.ironic.runbooks['forged'] = dict(grants.wanted(
            'project-1', OFF, None, next(
                t for t in self.ironic.templates.values()
                if t['name'] == OFF_T)), uuid='forged')
        self.rebuild(self.db)
        self.assertEqual(({'HyperThreading': 'Enabled'}, []), (
            self.node['bios'], self.ironic.provision_requests))

    def test_the_flavors_configs_when_asked(self):
        self.rebuild(self.db, '--deploy-config-from-flavor')
        self.assertEqual({'HyperThreading': 'Enabled'}, self.node['bios'])
        self.assertEqual([], self.ironic.provision_requests)
        self.assertEqual({}, self.node['properties'])
        self.assertIn("runs its flavor's deploy configs again: "
                      'hyperthreading=enabled', self.fake_stderr.getvalue())

    def test_what_only_a_later_version_offers_is_refused(self):
        exc = self.assertRaises(exceptions.CommandError, self.rebuild,
                                self.db, '--reimage-boot-volume')
        self.assertIn('leave out --reimage-boot-volume', str(exc))
        self.compute.default_microversion = '2.95'
        exc = self.assertRaises(exceptions.CommandError, self.rebuild,
                                self.db)
        self.assertIn('rebuild at 2.92 or lower', str(exc))
        self.assertEqual([], self.sent)

    def test_an_old_enough_compute_version_is_left_alone(self):
        self.compute.default_microversion = '2.90'
        self.rebuild(self.db)
        self.assertEqual('2.90', self.sent[0][1])

    def test_when_it_cannot_apply_again_it_says_how_to(self):
        self.ironic.service_error = 'BIOS interface timed out'
        exc = self.assertRaises(exceptions.CommandError, self.rebuild,
                                self.db)
        self.assertTrue(str(exc).startswith(
            "Server db-1 was rebuilt and runs its flavor's deploy configs: "
            'applying hyperthreading=disabled again failed: Servicing node '
            'bm-0 failed: BIOS interface timed out.'), exc)
        self.assertTrue(str(exc).endswith(
            'Restore it with: openstack server resize --deploy-config '
            'hyperthreading=disabled %s' % self.db['id']), exc)
        self.assertEqual(1, len(self.sent))
