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

"""openstack server deploy-config show: wanted against actual; the
warning before a rebuild reverts a toggle."""



from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.configs import steps
from osc_deploy_config.domain.toggle import toggle_record
from osc_deploy_config.v1 import server_deploy_config as cmds
from tests.unit import fakes
from tests.unit.fakes import GOLD
from tests.unit.fakes import HT
from tests.unit.fakes import OFF
from tests.unit.fakes import OFF_T
from tests.unit.fakes import ON_T

RAID1 = deploy_config.Config('disks', 'raid1')
RAID1_T = 'CUSTOM_DEPLOY_CONFIG_DISKS_RAID1'


class ServerTestCase(fakes.TestCommand):
    """bm.gold (hyperthreading=enabled) and an image asking for RAID 1: a
    server db-1 on node bm-0, which shows both."""

    def setUp(self):
        super().setUp()
        self.ironic.add_hyperthreading_templates()
        self.ironic.add_template(RAID1_T, steps=[steps.raid_step(
            {'logical_disks': [{'size_gb': 'MAX', 'raid_level': '1'}]})],
            extra=deploy_config.template_extra(RAID1, []))
        self.gold = self.nova.add_flavor('bm.gold', dict(GOLD, **{
            'deploy-config:hyperthreading': 'enabled',
            'trait:' + ON_T: 'required'}))
        self.image = self.glance.add_image('tiny', **{
            'deploy-config:disks': 'raid1',
            'trait:' + RAID1_T: 'required'})
        self.server = self.nova.add_server('db-1', self.gold,
                                           image=self.image['id'])
        self.node = self.ironic.add_node('bm-0', [HT, ON_T, OFF_T, RAID1_T],
                                         instance_uuid=self.server['id'])
        self.node['bios'] = {'HyperThreading': 'Enabled'}
        self.node['raid_config'] = {'logical_disks': [
            {'raid_level': '1', 'size_gb': 100}],
            'last_updated': '2026-11-29 08:00:00.123456'}

    def record_toggle(self, *configs):
        """A toggle's record on the node (where only the operator
        writes)."""
        self.node['properties'] = {toggle_record.APPLIED: {
            'instance_uuid': self.server['id'],
            'configs': {c.type: c.value for c in configs}}}



class TestShow(ServerTestCase):
    def show(self):
        columns, rows = self.run_command(cmds.ShowServerDeployConfig,
                                         [self.server['id']])
        return [dict(zip(columns, r, strict=True)) for r in rows]

    def test_flavor_and_image_configs_in_effect(self):
        # each reading with the time ironic recorded it: the RAID
        # configuration's last_updated, the BIOS setting's timestamp
        self.assertEqual([
            {'Type': 'disks', 'Wanted': 'raid1', 'Source': 'image',
             'Template': RAID1_T, 'Actual': 'RAID 1', 'In Effect': 'yes',
             'Read At': '2026-11-29T08:00:00Z'},
            {'Type': 'hyperthreading', 'Wanted': 'enabled',
             'Source': 'flavor', 'Template': ON_T,
             'Actual': 'HyperThreading=Enabled', 'In Effect': 'yes',
             'Read At': '2026-11-30T12:00:00Z'}],
            self.show())

    def test_a_reading_is_as_old_as_its_oldest_part(self):
        both = deploy_config.Config('tuning', 'both')
        self.ironic.add_template('CUSTOM_BOTH', steps=[steps.bios_step(
            [('HyperThreading', 'Enabled'), ('BootDelay', '5')])],
            extra=deploy_config.template_extra(both, []))
        self.node['bios']['BootDelay'] = '5'
        self.node['bios_at']['HyperThreading'] = fakes.SERVICED_AT
        self.record_toggle(both)
        tuning = self.show()[2]
        self.assertEqual(('BootDelay=5, HyperThreading=Enabled', 'yes',
                          '2026-11-30T12:00:00Z'),
                         (tuning['Actual'], tuning['In Effect'],
                          tuning['Read At']))

    def test_the_servers_metadata_is_no_record(self):
        # its owner writes it: it says nothing of the hardware
        self.nova.servers[self.server['id']]['metadata'] = {
            'deploy-config:hyperthreading': 'disabled'}
        self.assertEqual(('enabled', 'flavor'), (
            self.show()[1]['Wanted'], self.show()[1]['Source']))

    def test_a_toggle_overrides_and_the_hardware_tells(self):
        self.record_toggle(OFF)
        (_, ht) = self.show()
        self.assertEqual(('disabled', 'toggle', OFF_T,
                          'HyperThreading=Enabled', 'no'),
                         (ht['Wanted'], ht['Source'], ht['Template'],
                          ht['Actual'], ht['In Effect']))

    def test_a_virtual_server_is_unknown_not_yes(self):
        tiny = self.nova.add_flavor('m1.tiny', {
            'deploy-config:hyperthreading': 'disabled',
            'trait:' + OFF_T: 'required'})
        self.server = self.nova.add_server('web-1', tiny)
        (row,) = self.show()
        self.assertEqual((OFF_T, None,
                          'unknown (a virtual server: no hardware to read)'),
                         (row['Template'], row['Actual'], row['In Effect']))

    def test_a_config_without_template(self):
        self.record_toggle(deploy_config.Config('hyperthreading', 'auto'))
        ht = self.show()[1]
        self.assertEqual('unknown (no template realises '
                         'hyperthreading=auto)', ht['In Effect'])


class TestList(ServerTestCase):
    def rows(self, *args):
        columns, rows = self.run_command(cmds.ListServerDeployConfig,
                                         list(args))
        return [dict(zip(columns, r, strict=True)) for r in rows]

    def test_every_server_with_what_its_hardware_shows(self):
        tiny = self.nova.add_flavor('m1.tiny', {
            'deploy-config:hyperthreading': 'disabled',
            'trait:' + OFF_T: 'required'})
        self.nova.add_server('web-1', tiny)
        self.nova.hypervisors[self.node['uuid']] = 'ironic'
        for server in self.nova.servers.values():
            if server['name'] == 'db-1':
                server['OS-EXT-SRV-ATTR:hypervisor_hostname'] = \
                    self.node['uuid']
        self.assertEqual(
            [('db-1', 'disks', 'raid1', 'image'),
             ('db-1', 'hyperthreading', 'enabled', 'flavor'),
             ('web-1', 'hyperthreading', 'disabled', 'flavor')],
            [(r['Server'], r['Type'], r['Wanted'], r['Source'])
             for r in self.rows('--all-projects')])
        self.assertEqual(['Server', 'Type', 'Wanted', 'Source', 'Template'],
                         list(self.rows()[0]))
        self.assertEqual(
            ['yes', 'yes', 'unknown (a virtual server: no hardware to read)'],
            [r['In Effect'] for r in self.rows('--long')])

    def test_long_reads_each_node_once_whatever_the_servers(self):
        nodes = [self.node]
        for number in range(1, 4):
            server = self.nova.add_server('db-%d' % (number + 1), self.gold)
            nodes.append(self.ironic.add_node(
                'bm-%d' % number, instance_uuid=server['id']))
            self.nova.add_server('web-%d' % number, self.gold)
        self.assertEqual(7, len({r['Server'] for r in self.rows('--long')}))
        self.assertEqual(
            ['/nodes?fields=uuid%2Cname%2Craid_config%2Cproperties%2C'
             'extra%2Cresource_class%2Cinstance_uuid',
             '/deploy_templates?fields=uuid%2Cname%2Csteps%2Cextra'] +
            sorted('/nodes/%s/bios' % n['uuid'] for n in nodes),
            [r[1] for r in self.ironic.requests[:2]] +
            sorted(r[1] for r in self.ironic.requests[2:]))
