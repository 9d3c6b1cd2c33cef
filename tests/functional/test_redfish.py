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

"""BIOS configs through ironic's own redfish BIOS interface, against the
mini cloud's emulated BMCs (sushy-tools): bm-5 behind a Dell iDRAC with an
R750's BIOS, bm-6 behind an HPE iLO with a DL385 Gen10 Plus v2's (AMD).
Every effect is read from the emulator itself, the way anyone reads a
node's BIOS at its ``redfish_address`` and ``redfish_system_id``."""

import json
import time

import requests

from tests.functional import base
from tests.functional import test_hardware_kinds

BRONZE = 'CUSTOM_BAREMETAL_BRONZE'
COPPER = 'CUSTOM_BAREMETAL_COPPER'
# Each BMC's profiles at their factory values, as the seed leaves them.
FACTORY = {'bm-5': {'SysProfile': 'PerfPerWattOptimizedDapc'},
           'bm-6': {'WorkloadProfile': 'GeneralPowerEfficientCompute',
                    'AMDPerformanceWorkloadProfile': 'Disabled'}}


class RedfishTestCase(test_hardware_kinds.KindsTestCase):
    def bmc(self, node, path='', method='GET', body=None):
        """A request to the node's emulated BMC, at its system's ``path``:
        the JSON answer."""
        info = self.node(node)['driver_info']
        url = info['redfish_address'] + info['redfish_system_id'] + path
        done = requests.request(method, url, json=body, timeout=30)
        self.assertLess(done.status_code, 300, done.text)
        return done.json() if done.content else None

    def resets(self, node):
        """The resets the node's BMC was asked for, oldest first, each
        with whether the OS ran then (the emulator's record)."""
        return self.bmc(node)['Oem']['Minicloud']['Resets']

    def bmc_bios(self, node):
        """{name: value} of the BIOS, as the BMC reports it."""
        return self.bmc(node, '/BIOS')['Attributes']

    def bmc_registry(self, node):
        """{name: entry} of the BMC's BIOS attribute registry."""
        info = self.node(node)['driver_info']
        root = info['redfish_address']
        files = requests.get(root + '/redfish/v1/Registries',
                             timeout=30).json()['Members']
        for member in files:
            found = requests.get(root + member['@odata.id'],
                                 timeout=30).json()
            registry = requests.get(root + found['Location'][0]['Uri'],
                                    timeout=30).json()
            if registry.get('RegistryEntries'):
                return {a['AttributeName']: a for a in
                        registry['RegistryEntries']['Attributes']}
        self.fail('%s serves no BIOS attribute registry' % node)

    def cached(self, node):
        """{name: entry} of ironic's cache of the node's BIOS."""
        return {s['name']: s for s in self._get_json(
            self.sdk(base.SYSTEM_ADMIN).baremetal,
            '/nodes/%s/bios?detail=True' % node, self.ironic_api)['bios']}

    def set_at_the_bmc(self, node, settings=None):
        """Change the BIOS at the BMC, behind ironic's back (an operator at
        the iLO's console): the settings (None: its factory reset), then a
        reset, until it shows them and its OS runs again."""
        if settings is None:
            self.bmc(node, '/BIOS/Actions/Bios.ResetBios', 'POST', {})
        else:
            self.bmc(node, '/BIOS/Settings', 'PATCH',
                     {'Attributes': settings})
        self.bmc(node, '/Actions/ComputerSystem.Reset', 'POST',
                 {'ResetType': 'ForceRestart'})
        shown = settings or FACTORY[node]
        self.wait_for('%s shows %s' % (node, shown), lambda: all(
            self.bmc_bios(node).get(k) == v for k, v in shown.items()),
            60, 0.25)
        self.wait_for('%s runs its OS' % node, lambda: self.bmc(node)[
            'BootProgress']['LastState'] == 'OSRunning', 60, 0.25)

    def os_installed(self, node):
        """An OS on the node's disk again (``Blank`` before), booted at the
        BMC where the node did not run one: a BIOS step that waited for it
        then ends."""
        self.bmc(node, '/Actions/Oem/Minicloud.SetDisk', 'POST',
                 {'Disk': 'OS'})
        if self.bmc(node)['BootProgress']['LastState'] != 'OSRunning':
            self.bmc(node, '/Actions/ComputerSystem.Reset', 'POST',
                     {'ResetType': 'ForceRestart'})
            self.wait_for('%s runs its OS' % node, lambda: self.bmc(node)[
                'BootProgress']['LastState'] == 'OSRunning', 60, 0.25)

    def at_factory(self, node):
        """The node's BMC and ironic's cache at the factory profile (a run
        before this one changed it: reset the BIOS at the BMC, then let
        ironic read it again, manage and provide), the node available."""
        self.os_installed(node)
        (node,) = self.free_nodes(node)
        self.wait_for('%s available' % node, lambda: self.node(node)[
            'provision_state'] == 'available', 120, 0.25)
        if self.node(node)['maintenance']:      # a failed run's clean
            self.openstack('baremetal', 'node', 'maintenance', 'unset', node,
                           cloud=base.SYSTEM_ADMIN, parse=False)
        factory = FACTORY[node]
        if all(self.bmc_bios(node).get(k) == v for k, v in factory.items()):
            cached = self.cached(node)
            if all(cached[k]['value'] == v for k, v in factory.items()):
                return
        self.set_at_the_bmc(node)
        self.provision(node, ('manage', 'manageable'),
                       ('provide', 'available'))

    def provision(self, node, *moves):
        """Each (target, the state it ends in) in turn, as an operator."""
        ironic = self.sdk(base.SYSTEM_ADMIN).baremetal
        for target, state in moves:
            done = ironic.put('/nodes/%s/states/provision' % node,
                              json={'target': target},
                              microversion=self.ironic_api)
            self.assertEqual(202, done.status_code, done.text)
            self.wait_for('%s %s' % (node, state), lambda s=state: (
                self.node(node)['provision_state'] == s), 120, 0.25)
        self.wait_schedulable(node)

    def boot_asking(self, *configs, resource_class=BRONZE, node='bm-6'):
        """A server of a flavor of the class that asks for ``configs``,
        booted through OSC once the node is schedulable: its ID."""
        flavor = self.create_baremetal_flavor(resource_class=resource_class)
        for row in self.openstack('flavor', 'deploy-config', 'set', flavor,
                                  *configs):
            if 'SET_' in row['Extra Spec']:     # made for the flavor
                self.addCleanup(self.forget_template,
                                row['Extra Spec'][len('trait:'):])
        self.wait_schedulable(node)
        return self.create_server(flavor, cli=True)['id']

    def deployed_bios_steps(self, node):
        """The BIOS steps of the node's last deploy, from its history."""
        return [s for s in self.deployed_steps(node)
                if (s['interface'], s['step']) == ('bios',
                                                  'apply_configuration')]

    def not_offered(self, synced, node, template):
        (row,) = [r for r in synced
                  if (r['Node'], r['Template']) == (node, template)]
        self.assertEqual('not offered', row['Action'])
        return row['Reason']


class TestRedfish(RedfishTestCase):
    def never_ending(self, synced, *templates):
        """On ironic 36.x and 37.x an iLO's BIOS step never ends: sync
        offers neither template, and prepare refuses before any write."""
        for template in templates:
            self.assertIn('ironic 36.x or 37.x never ends a BIOS step on HPE '
                          'iLO', self.not_offered(synced, 'bm-6', template))
        done = self.openstack('baremetal', 'node', 'deploy-config',
                              'prepare', 'bm-6', fail_ok=True)
        self.assertEqual(1, done.returncode, done.stderr)
        self.assertIn('cannot prepare: ironic 36.x or 37.x never ends',
                      done.stdout)
        self.assertEqual('GeneralPowerEfficientCompute',
                         self.bmc_bios('bm-6')['WorkloadProfile'])

    def test_a_dell_at_its_factory_profile(self):
        """Sync does not offer turbo where SysProfile locks it, and offers
        no prepare: ironic 36 to 39 keep turbo read-only in their cache
        once the profile is unlocked, as they cached it under the factory
        profile; prepare refuses before any write.  Hyperthreading, which no
        profile locks, deploys through the real driver."""
        self.at_factory('bm-5')
        self.addCleanup(self.at_factory, 'bm-5')
        self.assertTrue(self.bmc_registry('bm-5')['ProcTurboMode'][
            'ReadOnly'])
        turbo = self.made_per_class('turbo=disabled')['templates'][
            'baremetal-copper']
        self.made_per_class('hyperthreading=disabled')
        self.made_per_class('hyperthreading=enabled')
        synced = self.openstack('baremetal', 'node', 'deploy-config', 'sync')
        reason = self.not_offered(synced, 'bm-5', turbo)
        self.assertIn('ProcTurboMode=Disabled (locked by SysProfile='
                      'PerfPerWattOptimizedDapc', reason)
        self.assertIn('preparing the node would not make it take the '
                      'config', reason)
        self.assertNotIn(turbo, self.node('bm-5')['traits'])

        done = self.openstack('baremetal', 'node', 'deploy-config',
                              'prepare', 'bm-5', '--config',
                              'turbo=disabled', fail_ok=True)
        self.assertEqual(1, done.returncode, done.stderr)
        self.assertIn('cannot prepare: ironic caches ProcTurboMode '
                      'read-only', done.stdout)
        # nothing was written: the BMC keeps its profile
        self.assertEqual('PerfPerWattOptimizedDapc',
                         self.bmc_bios('bm-5')['SysProfile'])
        self.assertEqual('available', self.node('bm-5')['provision_state'])
        self.assertTrue(self.cached('bm-5')['ProcTurboMode']['read_only'])

        server = self.boot_asking('hyperthreading=disabled',
                                  resource_class=COPPER, node='bm-5')
        self.assertEqual('bm-5', self.node(self.server_details(server)[
            'OS-EXT-SRV-ATTR:hypervisor_hostname'])['name'])
        self.assertEqual('Disabled', self.bmc_bios('bm-5')['LogicalProc'])
        self.a_scheduled_job_then_cleared(server)

    def a_scheduled_job_then_cleared(self, server):
        """An interrupted step leaves the iDRAC a configuration job (here
        a change asked OnReset at the iDRAC, with no reset): the iDRAC
        refuses the toggle's change (SYS011), named in one line with what
        ends it.  Freed (here with no reset: the mini cloud's nodes deploy
        and unprovision with ironic's fake interfaces, where a real
        ironic's cleaning would reset the node and run the job), prepare
        --clear-job-queue deletes the job (ironic's clear_job_queue step)
        and its settings, on a node it cannot otherwise prepare."""
        self.bmc('bm-5', '/BIOS/Settings', 'PATCH', {
            'Attributes': {'ProcVirtualization': 'Disabled'},
            '@Redfish.SettingsApplyTime': {'ApplyTime': 'OnReset'}})
        refused = self.toggle(server, 'hyperthreading=enabled',
                              fail_ok=True)
        self.assertEqual(1, refused.returncode, refused.stderr)
        self.assertIn('the iDRAC refuses a BIOS change while a configuration '
                      'job is scheduled (SYS011)', refused.stderr)
        self.assertIn('racadm jobqueue delete -i JID_CLEARALL',
                      refused.stderr)
        self.assertEqual('Disabled', self.bmc_bios('bm-5')['LogicalProc'])
        self.assertEqual('ACTIVE', self.server_details(server)['status'])

        self._delete_server(server)
        self.wait_for('bm-5 available', lambda: self.node('bm-5')[
            'provision_state'] == 'available', 120, 0.25)
        # the operator checked the hardware the failed step held
        self.openstack('baremetal', 'node', 'maintenance', 'unset', 'bm-5',
                       cloud=base.SYSTEM_ADMIN, parse=False)
        done = self.openstack('baremetal', 'node', 'deploy-config',
                              'prepare', 'bm-5', '--clear-job-queue',
                              fail_ok=True)
        self.assertEqual(1, done.returncode, done.stderr)
        self.assertIn('1 of 1 node(s) not prepared: bm-5', done.stderr)
        (row,) = json.loads(done.stdout)
        self.assertTrue(row['Result'].startswith(
            'cleared the job queue; cannot prepare: ironic caches '
            'ProcTurboMode read-only'), row['Result'])
        self.assertEqual({}, self.bmc('bm-5', '/BIOS/Settings')[
            'Attributes'])
        self.assertEqual(('available', 'Enabled'), (
            self.node('bm-5')['provision_state'],
            self.bmc_bios('bm-5')['ProcVirtualization']))

    def prepared_from_a_blank_disk(self):
        """bm-6's disk has nothing to boot: ironic runs prepare's BIOS-only
        clean without its ramdisk, the node boots its disk, and the step
        waits for an OS for ever.  The bound ends prepare, its row saying
        what the node waits for and what ends it; an OS booted at the BMC
        ends the clean, and the rerun provides the node."""
        self.bmc('bm-6', '/Actions/Oem/Minicloud.SetDisk', 'POST',
                 {'Disk': 'Blank'})
        self.addCleanup(self.os_installed, 'bm-6')
        refused = self.bmc('bm-6')['Oem']['Minicloud']['PreconditionsFailed']
        done = self.openstack('baremetal', 'node', 'deploy-config',
                              'prepare', 'bm-6', '--wait-timeout', '20',
                              fail_ok=True)
        self.assertEqual(1, done.returncode, done.stderr)
        self.assertIn('1 of 1 node(s) not prepared: bm-6', done.stderr)
        (row,) = json.loads(done.stdout)
        self.assertIn('bm-6 is still in "clean wait"', row['Result'])
        self.assertIn('WorkloadProfile=Custom applied, without the ramdisk: '
                      'the node boots its own disk, and a disk with nothing '
                      'to boot never ends the wait', row['Result'])
        self.assertEqual('clean wait', self.node('bm-6')['provision_state'])
        # the BIOS took the setting at its reset; only the OS is missing
        self.assertEqual('Custom', self.bmc_bios('bm-6')['WorkloadProfile'])
        self.assertEqual('SystemHardwareInitializationComplete', self.bmc(
            'bm-6')['BootProgress']['LastState'])

        # the iLO lists no apply time, and refuses the If-Match sushy
        # sends (the settings' ETag of the BIOS, not Settings'): sushy
        # sends the change again without it
        self.assertNotIn('SupportedApplyTimes', self.bmc(
            'bm-6', '/BIOS')['@Redfish.Settings'])
        self.assertLess(refused, self.bmc('bm-6')['Oem']['Minicloud'][
            'PreconditionsFailed'])

        self.os_installed('bm-6')
        self.wait_for('bm-6 manageable', lambda: self.node('bm-6')[
            'provision_state'] == 'manageable', 120, 0.5)
        rows = self.openstack('baremetal', 'node', 'deploy-config',
                              'prepare', 'bm-6')
        self.assertEqual([('bm-6', 'provided again')],
                         [(r['Node'], r['Result']) for r in rows])
        self.assertEqual('available', self.node('bm-6')['provision_state'])

    def test_an_hpe_prepared_booted_toggled_and_refused(self):
        """bm-6's default WorkloadProfile locks ProcAMDBoost only in its
        Dependencies: turbo off is not offered until prepared (from a
        blank disk first), while hyperthreading (ProcSMT) is, and turbo on
        (the value the profile holds) is; once prepared a server of a
        flavor asking for both boots with both off, applied by one BIOS
        step (their set's), toggles turbo on with hyperthreading kept
        off, and a rebuild through OSC keeps both, all read from the BMC.
        A setting the BMC refuses at its reset (the profile changed at the
        iLO behind ironic's back) ends the toggle in one line; ironic goes
        on once the BMC has it."""
        self.at_factory('bm-6')
        self.addCleanup(self.at_factory, 'bm-6')
        turbo = self.made_per_class('turbo=disabled')['templates'][
            'baremetal-bronze']
        boost = self.made_per_class('turbo=enabled')['templates'][
            'baremetal-bronze']
        smt = self.made_per_class('hyperthreading=disabled')['templates'][
            'baremetal-bronze']
        synced = self.openstack('baremetal', 'node', 'deploy-config', 'sync')
        if self.ironic_max == '1.112':      # tox -e functional-ironic-37
            return self.never_ending(synced, turbo, smt)
        self.assertIn('locked by WorkloadProfile=GeneralPowerEfficientCompute',
                      self.not_offered(synced, 'bm-6', turbo))
        self.assertIn(smt, self.node('bm-6')['traits'])
        # the value the profile locks the node at is offered (ironic skips
        # a step whose every value the node has), with what leaving it needs
        (row,) = [r for r in synced if r['Template'] == boost
                  and r['Node'] == 'bm-6']
        self.assertIn("ProcAMDBoost=Enabled is the node's value, which "
                      'WorkloadProfile=GeneralPowerEfficientCompute locks: '
                      'switching away from it needs WorkloadProfile changed '
                      'first',
                      row['Reason'])
        self.assertIn(boost, self.node('bm-6')['traits'])

        self.prepared_from_a_blank_disk()
        self.assertIn(turbo, self.node('bm-6')['traits'])

        server = self.boot_asking('hyperthreading=disabled',
                                  'turbo=disabled')
        bios = self.bmc_bios('bm-6')
        self.assertEqual(('Disabled', 'Disabled'), (bios['ProcSMT'],
                                                    bios['ProcAMDBoost']))
        (step,) = self.deployed_bios_steps('bm-6')
        self.assertLessEqual({'ProcSMT', 'ProcAMDBoost'},
                             {s['name'] for s in step['args']['settings']})
        began = time.time()     # the emulator's clock: this machine's
        self.toggle(server, 'turbo=enabled')
        bios = self.bmc_bios('bm-6')
        self.assertEqual(('Disabled', 'Enabled'), (bios['ProcSMT'],
                                                   bios['ProcAMDBoost']))
        # ironic's reboot for the step is a hard one, the OS running (a
        # known limit: the concepts guide); and the server runs again
        resets = [(r['ResetType'], r['OsRunning'])
                  for r in self.resets('bm-6') if r['At'] >= began]
        self.assertEqual(('ForceOff', True), resets[0], resets)
        self.wait_for('%s ACTIVE and running' % server, lambda: (
            lambda d: (d['status'], d['OS-EXT-STS:power_state']))(
                self.server_details(server)) == ('ACTIVE', 1), 60, 0.5)
        shown = self.openstack('server', 'deploy-config', 'show', server)
        self.assertEqual({('hyperthreading', 'disabled', 'flavor', 'yes'),
                          ('turbo', 'enabled', 'toggle', 'yes')},
                         {(r['Type'], r['Wanted'], r['Source'],
                           r['In Effect']) for r in shown})
        self.openstack('server', 'rebuild', '--image', base.IMAGE, '--wait',
                       server, parse=False)
        bios = self.bmc_bios('bm-6')
        self.assertEqual(('Disabled', 'Enabled'), (bios['ProcSMT'],
                                                   bios['ProcAMDBoost']))

        self.set_at_the_bmc('bm-6', {
            'WorkloadProfile': 'GeneralPowerEfficientCompute'})
        refused = self.toggle(server, 'turbo=disabled', '--wait-timeout',
                              '20', fail_ok=True)
        self.assertEqual(1, refused.returncode, refused.stderr)
        self.assertIn('ironic waits for its BMC to apply '
                      'ProcAMDBoost=Disabled', refused.stderr)
        messages = self.bmc(node='bm-6', path='/BIOS')[
            '@Redfish.Settings']['Messages']
        self.assertIn('ProcAMDBoost', str(messages))
        node = self.node('bm-6')
        self.assertEqual(('service wait', False),
                         (node['provision_state'], node['maintenance']))
        self.assertEqual('ACTIVE', self.server_details(server)['status'])
        # the list says what holds the node, and what ends it
        rows = self.openstack('baremetal', 'node', 'deploy-config', 'list',
                              '--node', 'bm-6')
        self.assertTrue(rows)
        for row in rows:
            self.assertIn('its BIOS step waits in "service wait" for the '
                          'node to boot an OS', row['Reason'])
            self.assertIn('ProcAMDBoost=Disabled applied', row['Reason'])
        # the operator sets it at the iLO: ironic's step ends, and the rerun
        # finishes the toggle
        self.set_at_the_bmc('bm-6', {'WorkloadProfile': 'Custom',
                                     'ProcAMDBoost': 'Disabled'})
        self.toggle(server, 'turbo=disabled')
        self.assertEqual('active', self.node('bm-6')['provision_state'])
        self.assertEqual('Disabled', self.bmc_bios('bm-6')['ProcAMDBoost'])
