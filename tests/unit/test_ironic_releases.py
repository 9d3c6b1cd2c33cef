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

"""Each rule of ironic's redfish BIOS interface at each release, from the
API maximum and what the BMC reports (``ironic_releases``); and the
commands that follow them: sync does not offer, prepare and the toggle
refuse in one line, a service request keeps the ramdisk off."""

from osc_lib import exceptions
import testtools

from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.configs import steps
from osc_deploy_config.domain.hardware import bios_profiles
from osc_deploy_config.domain.hardware import ironic_releases as ir
from osc_deploy_config.domain.hardware import tagging
from tests.unit.test_node_prepare import PrepareTestCase
from tests.unit.test_toggle_redfish import HPE
from tests.unit.test_toggle_redfish import HPE_FACTORY
from tests.unit.test_toggle_redfish import OFF
from tests.unit.test_toggle_redfish import RedfishToggleCase

# The API maximum of each release (36.0 and 37.0 report the same).
MAXIMA = {'34': (1, 110), '35': (1, 111), '36': (1, 112), '37': (1, 112),
          '38': (1, 113), '39': (1, 115)}
HPE_BIOS = [{'name': 'WorkloadProfile', 'value': 'Custom',
             'attribute_type': 'Enumeration',
             'allowable_values': ['GeneralPowerEfficientCompute', 'Custom']}]
DELL_BIOS = [{'name': 'SysProfile', 'value': 'Custom',
              'attribute_type': 'Enumeration',
              'allowable_values': ['PerfOptimized', 'Custom']}]
LENOVO_BIOS = [{'name': 'OperatingModes_ChooseOperatingMode',
                'value': 'CustomMode', 'attribute_type': 'Enumeration'}]
BOOST_OFF = 'CUSTOM_DEPLOY_CONFIG_TURBO_DISABLED_BRONZE'
REDFISH = {'uuid': 'n', 'name': 'bm-6', 'bios_interface': 'redfish'}


class TestEachRuleAtEachRelease(testtools.TestCase):

    def rules(self, release):
        found = ir.of_api(MAXIMA[release])
        return (found.agentless, found.validates, found.pending_read_right,
                found.without_boot_progress)

    def test_the_rules_by_release(self):
        self.assertEqual((False, False, False, False), self.rules('34'))
        self.assertEqual((True, False, False, False), self.rules('35'))
        # 36 and 37 report 1.112: read as 36, the careful reading
        self.assertEqual((True, True, False, False), self.rules('36'))
        self.assertEqual(self.rules('36'), self.rules('37'))
        self.assertEqual((True, True, True, True), self.rules('38'))
        self.assertEqual((True, True, True, True), self.rules('39'))
        self.assertEqual('39.0 or later', ir.of_api((1, 120)).label)
        self.assertIs(ir.NEWEST, ir.of_api(None))

    def test_hpe_and_lenovo_never_end_before_38(self):
        for release in ('35', '36', '37'):
            for bios, who in ((HPE_BIOS, 'HPE iLO'),
                              (LENOVO_BIOS, 'Lenovo XCC')):
                why = ir.stall(ir.of_api(MAXIMA[release]), REDFISH, bios)
                self.assertIn('never ends a BIOS step on %s' % who, why)
                self.assertIn('ironic 38.0 or later does', why)
        for release in ('38', '39'):
            self.assertIsNone(ir.stall(ir.of_api(MAXIMA[release]), REDFISH,
                                       HPE_BIOS))
        for release in MAXIMA:
            self.assertIsNone(ir.stall(ir.of_api(MAXIMA[release]), REDFISH,
                                       DELL_BIOS))

    def test_a_bmc_without_boot_progress_waits_out_the_timeout_before_37(
            self):
        for release in ('35', '36'):
            self.assertIn('only at its callback timeout', ir.stall(
                ir.of_api(MAXIMA[release]), REDFISH, DELL_BIOS,
                boot_progress=False))
        for release in ('38', '39'):
            self.assertIsNone(ir.stall(ir.of_api(MAXIMA[release]), REDFISH,
                                       DELL_BIOS, boot_progress=False))
        # not known (ironic's API does not show it): not refused
        self.assertIsNone(ir.stall(ir.of_api(MAXIMA['35']), REDFISH,
                                   DELL_BIOS))

    def test_the_vendor_from_the_registry_else_ironic(self):
        self.assertEqual('HPE iLO', ir.vendor(HPE_BIOS))
        self.assertEqual('Dell iDRAC', ir.vendor(DELL_BIOS))
        self.assertEqual('Lenovo XCC', ir.vendor([], {'properties': {
            'vendor': 'lenovo'}}))
        self.assertIsNone(ir.vendor([], {'properties': {}}))
        # another driver's BIOS interface has rules of its own
        self.assertIsNone(ir.stall(ir.of_api(MAXIMA['35']), dict(
            REDFISH, bios_interface='ilo'), HPE_BIOS))

    def test_a_waiting_step_says_what_ends_it_by_release(self):
        node = dict(REDFISH, provision_state='service wait',
                    properties={'vendor': 'HPE'}, driver_internal_info={
                        'redfish_bios_state': {
                            'reboot_requested': True,
                            'requested_bios_attrs': {'ProcSMT': 'Disabled'}}})
        self.assertTrue(ir.waiting_step(
            node, ir.of_api(MAXIMA['39'])).endswith(
                'with them set, and ironic ends the step'))
        # where ironic records no wait without the ramdisk (a deploy step's
        # reboot boots it), no word of the disk
        self.assertNotIn('own disk', ir.waiting_step(node))
        self.assertIn('never ends a BIOS step on HPE iLO', ir.waiting_step(
            node, ir.of_api(MAXIMA['37'])))
        self.assertIsNone(ir.waiting_step(dict(node, driver_internal_info={})))

    def test_sync_removes_a_stalled_tag_without_a_prepare_hint(self):
        template = {'name': 'CUSTOM_T', 'steps': [
            {'interface': 'bios', 'step': 'apply_configuration', 'args': {
                'settings': [{'name': 'ProcAMDBoost', 'value': 'Disabled'}]},
             'priority': 150}], 'extra': {}}
        node = dict(REDFISH, traits=['CUSTOM_T'],
                    resource_class='baremetal-gold')
        registry = [{'name': 'WorkloadProfile',
                     'value': 'GeneralPowerEfficientCompute',
                     'attribute_type': 'Enumeration', 'allowable_values': [
                         'GeneralPowerEfficientCompute', 'Custom']},
                    {'name': 'ProcAMDBoost', 'value': 'Enabled',
                     'attribute_type': 'Enumeration'}]
        (change,) = tagging.plan_sync([node], [template], {'n': registry},
                                      None, ir.of_api(MAXIMA['37']))
        self.assertEqual(tagging.REMOVE, change.action)
        self.assertIn('never ends a BIOS step on HPE iLO', change.reason)
        self.assertNotIn('prepare', change.reason)

    def test_sync_does_not_offer_and_says_why(self):
        template = {'name': 'CUSTOM_T', 'steps': [
            {'interface': 'bios', 'step': 'apply_configuration', 'args': {
                'settings': [{'name': 'ProcAMDBoost', 'value': 'Disabled'}]},
             'priority': 150}], 'extra': {}}
        node = dict(REDFISH, traits=[], resource_class='baremetal-gold')
        registries = {'n': HPE_BIOS + [{
            'name': 'ProcAMDBoost', 'value': 'Enabled',
            'attribute_type': 'Enumeration'}]}
        release = ir.of_api(MAXIMA['37'])
        self.assertEqual([], tagging.plan_sync([node], [template],
                                               registries, None, release))
        (row,) = tagging.left_out([node], [template], registries, None,
                                  release)
        self.assertEqual((tagging.LEFT_OUT, 'ironic 36.x or 37.x never ends '
                          'a BIOS step on HPE iLO, whose pending settings '
                          'list every setting; ironic 38.0 or later does'),
                         row[3:])
        (change,) = tagging.plan_sync([node], [template], registries, None,
                                      ir.of_api(MAXIMA['38']))
        self.assertEqual(tagging.ADD, change.action)


class TestTheToggleByRelease(RedfishToggleCase):
    """An HPE server's toggle, on ironic 37 (refused) and 39 (sent with
    the ramdisk off)."""

    def test_refused_in_one_line_before_any_write(self):
        self.node['bios']['WorkloadProfile'] = 'Custom'
        self.ironic.max_version = (1, 112)
        exc = self.assertRaises(exceptions.CommandError, self.toggle, OFF)
        self.assertEqual(
            'Server db-1 cannot take turbo=disabled on node bm-5: ironic '
            '36.x or 37.x never ends a BIOS step on HPE iLO, whose pending '
            'settings list every setting; ironic 38.0 or later does. '
            'Nothing was changed.', str(exc))
        self.assertEqual([], self.ironic.writes)
        self.assertEqual([], self.nova.locks(self.server))

    def test_below_1_108_the_request_says_nothing_of_the_ramdisk(self):
        self.node['bios']['WorkloadProfile'] = 'Custom'
        self.ironic.max_version = (1, 107)
        self.toggle(OFF)
        (body,) = [b for name, b in self.ironic.provision_bodies
                   if b['target'] == 'service']
        self.assertNotIn('disable_ramdisk', body)

    def test_serviced_with_the_ramdisk_off(self):
        self.node['bios']['WorkloadProfile'] = 'Custom'
        self.toggle(OFF)
        (body,) = [b for name, b in self.ironic.provision_bodies
                   if b['target'] == 'service']
        self.assertIs(True, body['disable_ramdisk'])


class TestPrepareByRelease(PrepareTestCase):
    """An HPE node to prepare (its WorkloadProfile locks ProcAMDBoost)."""

    def setUp(self):
        super().setUp()
        self.ironic.add_template(BOOST_OFF, steps=[steps.bios_step(
            [('ProcAMDBoost', 'Disabled')])],
            extra=deploy_config.template_extra(OFF, [], 'baremetal-bronze'))
        self.bm6 = self.ironic.add_node('bm-6',
                                        resource_class='baremetal-bronze')
        self.bm6['bios'] = dict(HPE_FACTORY)
        self.ironic.bios_registries[self.bm6['uuid']] = {
            k: dict(v) for k, v in HPE.items()}

    def test_refused_on_ironic_37_named_on_its_row(self):
        self.ironic.max_version = (1, 112)
        self.assertRaises(exceptions.CommandError, self.prepare, 'bm-6')
        self.assertEqual(
            'cannot prepare: ironic 36.x or 37.x never ends a BIOS step on '
            'HPE iLO, whose pending settings list every setting; ironic '
            '38.0 or later does', self.results()['bm-6'])
        self.assertEqual([], self.ironic.writes)

    def test_prepared_on_ironic_38(self):
        self.ironic.max_version = (1, 113)
        self.prepare('bm-6')
        self.assertEqual('set WorkloadProfile=Custom',
                         self.results()['bm-6'])


class TestHeldByItsProfile(testtools.TestCase):
    """An iLO's profile locks a setting in its Dependencies only: ironic
    35.0 and later skip a step whose every value the node has, so the
    template of the value the node has is taken, not another."""

    REGISTRY = [{'name': 'WorkloadProfile',
                 'value': 'GeneralPowerEfficientCompute',
                 'attribute_type': 'Enumeration', 'allowable_values': [
                     'GeneralPowerEfficientCompute', 'Custom']},
                {'name': 'ProcAMDBoost', 'value': 'Enabled',
                 'attribute_type': 'Enumeration', 'read_only': False,
                 'allowable_values': ['Enabled', 'Disabled']}]

    def template(self, value):
        return {'name': 'CUSTOM_T', 'steps': [
            {'interface': 'bios', 'step': 'apply_configuration', 'args': {
                'settings': [{'name': 'ProcAMDBoost', 'value': value}]},
             'priority': 150}], 'extra': {}}

    def test_the_value_the_node_has_is_offered_with_what_leaving_needs(self):
        node = dict(REDFISH, traits=[], resource_class='baremetal-gold')
        (change,) = tagging.plan_sync([node], [self.template('Enabled')],
                                      {'n': self.REGISTRY})
        self.assertEqual(tagging.ADD, change.action)
        self.assertEqual(
            "capable; ProcAMDBoost=Enabled is the node's value, which "
            'WorkloadProfile=GeneralPowerEfficientCompute locks: switching '
            'away from it needs WorkloadProfile changed first (prepare '
            'does it on a free node, the toggle on a running server)',
            change.reason)
        # another value is not offered
        self.assertEqual([], tagging.plan_sync(
            [node], [self.template('Disabled')], {'n': self.REGISTRY}))

    def test_a_value_ironic_caches_read_only_is_not_held(self):
        registry = [dict(e, read_only=True) if e['name'] == 'ProcAMDBoost'
                    else e for e in self.REGISTRY]
        self.assertEqual({}, bios_profiles.held(
            {'ProcAMDBoost': 'Enabled'}, {e['name']: e for e in registry}))
        self.assertEqual({'ProcAMDBoost': (
            'WorkloadProfile', 'GeneralPowerEfficientCompute')},
            bios_profiles.held({'ProcAMDBoost': 'Enabled'}, {
                e['name']: e for e in self.REGISTRY}))

    def test_held_only_where_ironic_skips_the_whole_step(self):
        by_name = {e['name']: e for e in self.REGISTRY}
        # another setting to change: ironic writes them all, and the BMC
        # refuses the locked one
        self.assertEqual({}, bios_profiles.held({
            'ProcAMDBoost': 'Enabled', 'WorkloadProfile': 'Custom'},
            by_name))
        # before 35.0 ironic writes even the values the node has
        wanted = {'ProcAMDBoost': 'Enabled'}
        self.assertEqual(['ProcAMDBoost'], list(bios_profiles.locked_on(
            wanted, by_name, skips_unchanged=False)))
        self.assertEqual({}, bios_profiles.locked_on(wanted, by_name))
        # sync offers it by the rule of the release alone
        node = dict(REDFISH, traits=[], resource_class='baremetal-gold')
        writes_all = ir.NEWEST._replace(agentless=False)
        self.assertEqual([], tagging.plan_sync(
            [node], [self.template('Enabled')], {'n': self.REGISTRY},
            release=writes_all))
        self.assertEqual([tagging.ADD], [c.action for c in tagging.plan_sync(
            [node], [self.template('Enabled')], {'n': self.REGISTRY},
            release=ir.NEWEST)])
