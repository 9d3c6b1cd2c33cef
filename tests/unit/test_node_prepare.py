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

"""The honest offer (sync tags only what a node can take now) and
``baremetal node deploy-config prepare`` in each node state, over a Dell
whose SysProfile locks turbo, as ironic 39 caches its registry."""

from osc_lib import exceptions

from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.configs import steps
from osc_deploy_config.v1 import node as cmds
from tests.unit import fakes

COPPER = 'baremetal-copper'
TURBO_OFF = 'CUSTOM_DEPLOY_CONFIG_TURBO_DISABLED_COPPER'
SWITCH = {'attribute_type': 'Enumeration',
          'allowable_values': ['Enabled', 'Disabled']}
DELL = {
    'SysProfile': {'attribute_type': 'Enumeration', 'read_only': False,
                   'allowable_values': ['PerfPerWattOptimizedDapc',
                                        'PerfOptimized', 'Custom']},
    'ProcTurboMode': dict(SWITCH, read_only=True),
    'LogicalProc': dict(SWITCH, read_only=False),
}
FACTORY = {'SysProfile': 'PerfPerWattOptimizedDapc',
           'ProcTurboMode': 'Enabled', 'LogicalProc': 'Enabled'}


class PrepareTestCase(fakes.TestCommand):
    # whether ironic first cached ProcTurboMode under the profile that
    # locks it (read-only, which ironic 36 to 39 then keep: prepare cannot
    # help, ``TestKeptReadOnly``), or under Custom (a node enrolled so)
    turbo_cached_read_only = False

    def setUp(self):
        super().setUp()
        self.ironic.add_template(TURBO_OFF, steps=[steps.bios_step(
            [('ProcTurboMode', 'Disabled')])],
            extra=deploy_config.template_extra(
                deploy_config.parse_config('turbo=disabled'), [], COPPER))
        self.ironic.locked_by = {'ProcTurboMode': ('SysProfile', 'Custom')}
        self.bm5 = self.dell('bm-5')

    def dell(self, name, **node):
        found = self.ironic.add_node(name, resource_class=COPPER, **node)
        found['bios'] = dict(FACTORY)
        registry = {k: dict(v) for k, v in DELL.items()}
        registry['ProcTurboMode']['read_only'] = self.turbo_cached_read_only
        self.ironic.bios_registries[found['uuid']] = registry
        return found

    def rows(self, command, *args):
        columns, rows = self.run_command(command, list(args))
        return [dict(zip(columns, r, strict=True)) for r in rows]

    def prepare(self, *args):
        """The rows; raises the error the command exits with after them
        (``not_prepared``), its rows kept in ``self.printed``."""
        cmd = cmds.PrepareNodeDeployConfig(self.app, None)
        parsed = self.check_parser(cmd, ['--no-wait'] + list(args), [])
        columns, rows = cmd.take_action(parsed)
        self.printed = [dict(zip(columns, r, strict=True)) for r in rows]
        if cmd.not_prepared is not None:
            raise cmd.not_prepared
        return self.printed

    def results(self):
        return {r['Node']: r['Result'] for r in self.printed}

    def failed_clean(self, error, *args):
        """bm-5's row, prepared with ``args``, where ironic's clean fails
        with ``error``."""
        self.ironic.failing_nodes.add('bm-5')
        self.ironic.service_error = error
        self.assertRaises(exceptions.CommandError, self.prepare, 'bm-5',
                          *args)
        return self.results()['bm-5']


class TestHonestOffer(PrepareTestCase):
    def test_a_locked_setting_is_not_offered_and_says_how_to_prepare(self):
        rows = self.rows(cmds.SyncNodeDeployConfig, '--no-wait')
        self.assertEqual([('bm-5', TURBO_OFF, 'not offered')],
                         [(r['Node'], r['Template'], r['Action'])
                          for r in rows])
        self.assertIn('ProcTurboMode=Disabled', rows[0]['Reason'])
        self.assertIn('openstack baremetal node deploy-config prepare bm-5 '
                      '(SysProfile=Custom)', rows[0]['Reason'])
        self.assertEqual([], self.bm5['traits'])
        self.assertEqual([], self.ironic.writes)

    def test_a_running_server_s_node_is_told_what_ironic_allows(self):
        self.dell('bm-7', instance_uuid='srv-7')
        rows = {r['Node']: r['Reason'] for r in self.rows(
            cmds.SyncNodeDeployConfig, '--no-wait')}
        # the profile lives in the BMC's Dependencies only: the server's
        # toggle sets it first
        self.assertIn("its server's toggle sets SysProfile=Custom first",
                      rows['bm-7'])
        self.assertIn('prepare it: openstack baremetal node deploy-config '
                      'prepare bm-5', rows['bm-5'])

    def test_an_older_ironic_takes_the_profile_in_the_same_step(self):
        # before 36.0 (API 1.112) ironic lets the BMC judge the step, and a
        # Dell takes SysProfile=Custom beside the setting it unlocks: a
        # template that sends both is offered
        self.ironic.max_version = (1, 111)
        template = self.ironic.templates[next(iter(self.ironic.templates))]
        template['steps'] = [steps.bios_step(
            [('SysProfile', 'Custom'), ('ProcTurboMode', 'Disabled')])]
        rows = self.rows(cmds.SyncNodeDeployConfig, '--no-wait')
        self.assertEqual([('bm-5', TURBO_OFF, 'added')],
                         [(r['Node'], r['Template'], r['Action'])
                          for r in rows])

    def test_a_prepared_node_is_offered(self):
        self.bm5['bios']['SysProfile'] = 'Custom'
        self.ironic.bios_registries[self.bm5['uuid']]['ProcTurboMode'][
            'read_only'] = False
        rows = self.rows(cmds.SyncNodeDeployConfig, '--no-wait')
        self.assertEqual([('bm-5', TURBO_OFF, 'added')],
                         [(r['Node'], r['Template'], r['Action'])
                          for r in rows])


class TestPrepare(PrepareTestCase):
    def test_an_available_node_is_cleaned_and_provided_then_tagged(self):
        rows = self.prepare('bm-5')
        self.assertEqual(
            [{'Node': 'bm-5', 'State': 'available',
              'Profile Settings': 'SysProfile=Custom',
              'Result': 'set SysProfile=Custom'}],
            [{k: v for k, v in r.items() if k != 'Also Governs'}
             for r in rows])
        self.assertEqual([('bm-5', 'manage'), ('bm-5', 'clean'),
                          ('bm-5', 'provide')],
                         self.ironic.provision_requests)
        self.assertEqual([('bm-5', [{
            'interface': 'bios', 'step': 'apply_configuration',
            'args': {'settings': [{'name': 'SysProfile',
                                   'value': 'Custom'}]}}], True)],
            self.ironic.cleaned)
        self.assertEqual('available', self.bm5['provision_state'])
        self.assertEqual('Custom', self.bm5['bios']['SysProfile'])
        # the turbo it locked keeps its value; the node now takes turbo
        self.assertEqual('Enabled', self.bm5['bios']['ProcTurboMode'])
        self.assertEqual([TURBO_OFF], self.bm5['traits'])

    def test_a_rerun_changes_nothing(self):
        self.prepare('bm-5')
        before = len(self.ironic.writes)
        rows = self.prepare('bm-5')
        self.assertEqual('prepared', rows[0]['Result'])
        self.assertEqual(before, len(self.ironic.writes))

    def test_dry_run_says_what_and_changes_nothing(self):
        rows = self.prepare('--resource-class', COPPER, '--dry-run')
        self.assertEqual('would set SysProfile=Custom (manage, clean, '
                         'provide)', rows[0]['Result'])
        self.assertEqual([], self.ironic.writes)

    def test_an_active_node_is_refused_with_the_toggle(self):
        self.dell('bm-6', instance_uuid='srv-1')
        exc = self.assertRaises(exceptions.CommandError, self.prepare,
                                'bm-6', 'bm-5')
        self.assertEqual('1 of 2 node(s) not prepared: bm-6', str(exc))
        # the other node was prepared all the same, and bm-6 untouched
        self.assertEqual('Custom', self.bm5['bios']['SysProfile'])
        self.assertEqual([n for n, _ in self.ironic.provision_requests],
                         ['bm-5'] * 3)
        self.assertIn('not prepared: bm-6 runs instance srv-1',
                      self.results()['bm-6'])
        self.assertIn('openstack server resize --deploy-config',
                      self.results()['bm-6'])

    def test_other_states_and_maintenance_are_refused(self):
        self.bm5['provision_state'] = 'deploy failed'
        self.dell('bm-6', maintenance=True)
        exc = self.assertRaises(exceptions.CommandError, self.prepare,
                                '--resource-class', COPPER)
        self.assertEqual('2 of 2 node(s) not prepared: bm-5, bm-6',
                         str(exc))
        self.assertEqual([], self.ironic.writes)

    def test_a_failed_clean_returns_the_node_and_says_why(self):
        self.ironic.failing_nodes.add('bm-5')
        self.ironic.service_error = 'Redfish BIOS apply_configuration ' \
            'failed: invalid value for setting(s): SysProfile'
        exc = self.assertRaises(exceptions.CommandError, self.prepare,
                                'bm-5')
        self.assertIn('not prepared: bm-5', str(exc))
        self.assertIn('invalid value for setting(s): SysProfile',
                      self.results()['bm-5'])
        self.assertIn('ironic holds it in maintenance for the failed clean: '
                      'check its BIOS, then openstack baremetal node '
                      'maintenance unset bm-5, then rerun (the rerun provides '
                      'the node)', self.results()['bm-5'])
        self.assertEqual(('manageable', True), (self.bm5['provision_state'],
                                                self.bm5['maintenance']))
        # the operator looked: the rerun cleans again, and provides it
        self.ironic.failing_nodes.clear()
        self.bm5['maintenance'] = False
        self.assertEqual('set SysProfile=Custom',
                         self.prepare('bm-5')[0]['Result'])
        self.assertEqual('available', self.bm5['provision_state'])
        self.assertNotIn('deploy_config_prepare_from', self.bm5['extra'])

    def test_a_refused_clean_leaves_the_node_manageable_and_says_so(self):
        self.ironic.clean_http_errors['bm-5'] = 400
        self.assertRaises(exceptions.CommandError, self.prepare, 'bm-5')
        self.assertIn('failed: ironic refused to clean bm-5: Failed to '
                      'validate power driver interface; it is manageable: '
                      'check it, then rerun', self.results()['bm-5'])
        self.assertEqual('manageable', self.bm5['provision_state'])

    def test_a_failed_provide_is_no_success(self):
        self.ironic.provide_fails.add('bm-5')
        self.assertRaises(exceptions.CommandError, self.prepare, 'bm-5')
        self.assertIn('set SysProfile=Custom, but the automated cleaning of '
                      '"provide" failed: agent lost', self.results()['bm-5'])
        self.assertEqual([], self.bm5['traits'])

    def test_a_rerun_after_an_interruption_provides_the_node(self):
        # an earlier run was stopped between its clean and its provide
        self.bm5.update(provision_state='manageable', extra={
            'deploy_config_prepare_from': 'available'})
        self.bm5['bios']['SysProfile'] = 'Custom'
        self.ironic.bios_registries[self.bm5['uuid']]['ProcTurboMode'][
            'read_only'] = False
        self.assertEqual('would provide it', self.prepare(
            'bm-5', '--dry-run')[0]['Result'])
        self.assertEqual([], self.ironic.provision_requests)
        self.assertEqual('provided again', self.prepare('bm-5')[0]['Result'])
        self.assertEqual([('bm-5', 'provide')],
                         self.ironic.provision_requests)
        self.assertEqual(('available', {}), (self.bm5['provision_state'],
                                             self.bm5['extra']))

    def test_a_provide_past_the_wait_leaves_no_mark(self):
        self.ironic.provide_hangs = True
        self.assertRaises(exceptions.CommandError, self.prepare, 'bm-5',
                          '--wait-timeout', '0')
        self.assertIn('is still in "clean wait"', self.results()['bm-5'])
        self.assertEqual(('clean wait', {}), (self.bm5['provision_state'],
                                              self.bm5['extra']))

    def test_a_blank_disk_ends_at_the_bound_with_what_ends_its_wait(self):
        # ironic runs the BIOS-only clean without its ramdisk: the node
        # boots its own disk, which has nothing to boot
        self.ironic.blank_disks.add('bm-5')
        self.assertRaises(exceptions.CommandError, self.prepare, 'bm-5',
                          '--wait-timeout', '0')
        result = self.results()['bm-5']
        self.assertIn('bm-5 is still in "clean wait"; ironic goes on: rerun '
                      'once it ends after 0s of waiting (--wait-timeout); '
                      'its BIOS step waits in "clean wait" for the node to '
                      'boot an OS with SysProfile=Custom applied, without '
                      'the ramdisk: the node boots its own disk, and a disk '
                      'with nothing to boot never ends the wait', result)
        self.assertTrue(result.endswith(
            'boot an OS at the node\'s BMC (from its disk, media or the '
            'network) with them set, and ironic ends the step'), result)
        # the mark stays: the rerun, once the clean ends, provides it
        self.assertEqual(('clean wait', {
            'deploy_config_prepare_from': 'available'}), (
                self.bm5['provision_state'], self.bm5['extra']))

    def test_a_scheduled_idrac_job_is_named_with_its_remedy(self):
        self.bm5['management_interface'] = 'idrac-redfish'
        result = self.failed_clean(
            'Redfish BIOS apply configuration failed for node x. Error: HTTP '
            'PATCH .../BIOS/Settings returned code 400. Base.1.12.General'
            'Error: Pending configuration values are already committed, '
            "unable to perform another set operation. Extended information: "
            "[{'MessageId': 'IDRAC.2.8.SYS011'}]")
        self.assertEqual(
            'failed: ironic failed to set SysProfile=Custom on bm-5: the '
            'iDRAC refuses a BIOS change while a configuration job is '
            'scheduled (SYS011): an interrupted step, or a change at the '
            'iDRAC, left one; it is manageable, and ironic holds it in '
            'maintenance for the failed clean: check its BIOS, then '
            'openstack baremetal node maintenance unset bm-5, then rerun '
            'with --clear-job-queue, whose clear_job_queue step deletes the '
            'jobs first (the rerun provides the node)', result)

    def test_a_scheduled_job_without_idrac_management_is_deleted_there(self):
        result = self.failed_clean("[{'MessageId': 'IDRAC.2.8.SYS011'}]")
        self.assertTrue(result.endswith(
            'maintenance unset bm-5, then delete its jobs at the iDRAC '
            '(racadm jobqueue delete -i JID_CLEARALL), then rerun, or move '
            'it to the idrac hardware type with idrac-redfish management '
            '(openstack baremetal node set bm-5 --driver idrac '
            '--management-interface idrac-redfish) and rerun with '
            '--clear-job-queue (the rerun provides the node)'), result)

    def test_clear_job_queue_comes_first_in_the_same_clean(self):
        self.bm5['management_interface'] = 'idrac-redfish'
        self.assertEqual('cleared the job queue; set SysProfile=Custom',
                         self.prepare('bm-5', '--clear-job-queue')[0][
                             'Result'])
        (_, steps, no_ramdisk), = self.ironic.cleaned
        self.assertEqual(['clear_job_queue', 'apply_configuration'],
                         [s['step'] for s in steps])
        self.assertEqual('management', steps[0]['interface'])
        self.assertTrue(no_ramdisk)
        self.assertEqual('available', self.bm5['provision_state'])
        # with nothing else to set, the node is cleaned for the queue alone
        self.ironic.cleaned.clear()
        self.assertEqual('cleared the job queue', self.prepare(
            'bm-5', '--clear-job-queue')[0]['Result'])
        self.assertEqual(['clear_job_queue'], [
            s['step'] for s in self.ironic.cleaned[0][1]])
        self.assertEqual('would clear the job queue '
                         '(manage, clean, provide)', self.prepare(
                             'bm-5', '--clear-job-queue', '--dry-run')[0][
                                 'Result'])

    def test_a_job_the_clear_left_is_deleted_by_force_at_the_idrac(self):
        # clear_job_queue keeps a job that runs: the step is refused again
        self.bm5['management_interface'] = 'idrac-redfish'
        result = self.failed_clean("[{'MessageId': 'IDRAC.2.8.SYS011'}]",
                                   '--clear-job-queue')
        self.assertIn('ironic failed to clear the job queue and set '
                      'SysProfile=Custom on bm-5', result)
        self.assertTrue(result.endswith(
            'then delete the job that runs at the iDRAC (racadm jobqueue '
            'delete -i JID_CLEARALL_FORCE), then rerun (the rerun provides '
            'the node)'), result)

    def test_a_clear_alone_that_fails_says_so(self):
        self.bm5['management_interface'] = 'idrac-redfish'
        self.bm5['bios']['SysProfile'] = 'Custom'
        self.assertIn('ironic failed to clear the job queue on bm-5: iDRAC '
                      'job service is missing', self.failed_clean(
                          'iDRAC job service is missing',
                          '--clear-job-queue'))

    def test_a_clear_alone_needs_no_agentless_bios_release(self):
        self.bm5['management_interface'] = 'idrac-redfish'
        self.bm5['bios']['SysProfile'] = 'Custom'
        self.ironic.max_version = (1, 80)
        self.assertEqual('cleared the job queue', self.prepare(
            'bm-5', '--clear-job-queue')[0]['Result'])
        # a step to set needs it: the dry run refuses as the run does
        self.bm5['bios']['SysProfile'] = 'PerfPerWattOptimizedDapc'
        for dry_run in (('--dry-run',), ()):
            exc = self.assertRaises(exceptions.CommandError, self.prepare,
                                    'bm-5', *dry_run)
            self.assertIn('need 1.111', str(exc))

    def test_clear_job_queue_without_idrac_management_changes_nothing(self):
        exc = self.assertRaises(exceptions.CommandError, self.prepare,
                                'bm-5', '--clear-job-queue')
        self.assertEqual(
            "--clear-job-queue runs ironic's clear_job_queue step of the "
            'idrac-redfish management interface; bm-5 has redfish: delete '
            'its jobs at the iDRAC (racadm jobqueue delete -i JID_CLEARALL), '
            'or move it to the idrac hardware type with idrac-redfish '
            'management (openstack baremetal node set bm-5 --driver idrac '
            '--management-interface idrac-redfish) and rerun with '
            '--clear-job-queue', str(exc))
        self.assertEqual([], self.ironic.writes)

    def test_an_ironic_before_35_is_refused_before_any_write(self):
        self.ironic.max_version = (1, 109)
        exc = self.assertRaises(exceptions.CommandError, self.prepare,
                                'bm-5')
        self.assertIn('BIOS steps finished without the agent need 1.111',
                      str(exc))
        self.assertEqual([], self.ironic.writes)
        self.assertEqual('PerfPerWattOptimizedDapc',
                         self.bm5['bios']['SysProfile'])

    def test_bad_input_changes_nothing(self):
        for args, why in (
                ((), 'one of the two'),
                (('bm-5', '--resource-class', COPPER), 'one of the two'),
                (('nope',), 'Node nope not found'),
                (('--resource-class', 'baremetal-tin'),
                 'No node of resource class baremetal-tin'),
                (('bm-5', '--config', 'turbo=maybe'),
                 'No deploy template realises the deploy config '
                 'turbo=maybe'),
                (('bm-5', '--config', 'turbo'), 'TYPE=VALUE')):
            exc = self.assertRaises(exceptions.CommandError, self.prepare,
                                    *args)
            self.assertIn(why, str(exc))
        self.assertEqual([], self.ironic.writes)


class TestStaleCache(PrepareTestCase):
    """Ironic 36 to 39 write a cached setting's read_only again only when
    its value changes: turbo, cached read-only under the factory profile,
    stays so once SysProfile is Custom, and ironic refuses it."""

    turbo_cached_read_only = True

    def setUp(self):
        super().setUp()
        self.ironic.locked_by = {}      # as ironic 39 caches it

    def test_prepare_refuses_before_any_write(self):
        exc = self.assertRaises(exceptions.CommandError, self.prepare,
                                'bm-5')
        self.assertEqual('1 of 1 node(s) not prepared: bm-5', str(exc))
        self.assertIn('cannot prepare: ironic caches ProcTurboMode '
                      'read-only under the profile that locks it, and ironic '
                      '36 to 39 keep it so once the profile is unlocked',
                      self.results()['bm-5'])
        self.assertEqual([], self.ironic.writes)
        self.assertEqual('PerfPerWattOptimizedDapc',
                         self.bm5['bios']['SysProfile'])

    def test_its_job_queue_is_cleared_all_the_same(self):
        self.bm5['management_interface'] = 'idrac-redfish'
        self.assertRaises(exceptions.CommandError, self.prepare, 'bm-5',
                          '--clear-job-queue', '--dry-run')
        self.assertTrue(self.results()['bm-5'].startswith(
            'would clear the job queue (manage, clean, provide); cannot '
            'prepare: ironic caches ProcTurboMode'), self.results()['bm-5'])
        self.assertEqual([], self.ironic.writes)
        exc = self.assertRaises(exceptions.CommandError, self.prepare,
                                'bm-5', '--clear-job-queue')
        self.assertEqual('1 of 1 node(s) not prepared: bm-5', str(exc))
        self.assertTrue(self.results()['bm-5'].startswith(
            'cleared the job queue; cannot prepare: ironic caches '
            'ProcTurboMode read-only'), self.results()['bm-5'])
        (_, steps, _), = self.ironic.cleaned
        self.assertEqual(['clear_job_queue'], [s['step'] for s in steps])
        self.assertEqual(('available', 'PerfPerWattOptimizedDapc'), (
            self.bm5['provision_state'], self.bm5['bios']['SysProfile']))

    def test_a_failed_provide_after_the_clear_says_what_was_done(self):
        self.bm5['management_interface'] = 'idrac-redfish'
        self.ironic.provide_fails.add('bm-5')
        exc = self.assertRaises(exceptions.CommandError, self.prepare,
                                'bm-5', '--clear-job-queue')
        self.assertEqual('1 of 1 node(s) not prepared: bm-5', str(exc))
        result = self.results()['bm-5']
        self.assertTrue(result.startswith(
            'failed: cleared the job queue, but the automated cleaning of '
            '"provide" failed: '), result)
        self.assertIn('; cannot prepare: ironic caches ProcTurboMode',
                      result)

    def test_an_interrupted_run_is_provided_all_the_same(self):
        self.bm5.update(provision_state='manageable', extra={
            'deploy_config_prepare_from': 'available'})
        self.assertRaises(exceptions.CommandError, self.prepare, 'bm-5')
        self.assertTrue(self.results()['bm-5'].startswith(
            'provided again; cannot prepare: ironic caches ProcTurboMode'),
            self.results()['bm-5'])
        self.assertEqual(('available', {}), (self.bm5['provision_state'],
                                             self.bm5['extra']))
        self.assertEqual([], self.ironic.cleaned)

    def test_sync_offers_no_prepare_that_cannot_help(self):
        (row,) = self.rows(cmds.SyncNodeDeployConfig, '--no-wait')
        self.assertEqual('not offered', row['Action'])
        self.assertIn('preparing the node would not make it take the '
                      'config', row['Reason'])
        self.assertNotIn('prepare it', row['Reason'])

    def test_ironic_35_lets_the_profile_unlock_it(self):
        # before 36.0 ironic passes the step to the BMC: prepare helps
        self.ironic.max_version = (1, 111)
        self.assertEqual('set SysProfile=Custom',
                         self.prepare('bm-5')[0]['Result'])

    def test_sync_says_why_and_offers_no_prepare(self):
        self.bm5['bios']['SysProfile'] = 'Custom'
        (row,) = self.rows(cmds.SyncNodeDeployConfig, '--no-wait')
        self.assertEqual('not offered', row['Action'])
        self.assertIn('ironic still caches ProcTurboMode read-only',
                      row['Reason'])
        self.assertNotIn('prepare it', row['Reason'])
