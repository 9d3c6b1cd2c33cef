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

"""One config, every hardware kind: the vocabulary of BIOS names, the
template of each resource class, and the class each owner, node and
server gets."""

from osc_lib import exceptions
import testtools

from osc_deploy_config.domain.configs import config_specs
from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.configs import steps
from osc_deploy_config.domain.configs import templates
from osc_deploy_config.domain.hardware import bios_vocabulary
from osc_deploy_config.domain.hardware import tagging
from osc_deploy_config.domain.toggle import toggle_record
from osc_deploy_config.use_cases.toggle import toggle as server_toggle
from osc_deploy_config.v1 import deploy_template as template_cmds
from osc_deploy_config.v1 import node as node_cmds
from osc_deploy_config.v1 import owner_deploy_config as owner_cmds
from osc_deploy_config.v1 import server_deploy_config as server_cmds
from tests.unit import fakes
from tests.unit.fakes import HT
from tests.unit.fakes import OFF
from tests.unit.fakes import ON

SWITCH = {'attribute_type': 'Enumeration',
          'allowable_values': ['Enabled', 'Disabled']}
# Two vendors' registries, and a third kind with neither's names.
GOLD_BIOS = {'LogicalProc': SWITCH}
SILVER_BIOS = {'ProcHyperthreading': SWITCH, 'ProcVirtualization': SWITCH}
BRONZE_BIOS = {'SomethingElse': SWITCH}
ON_GOLD = 'CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_ENABLED_FOR_BAREMETAL_GOLD'
ON_SILVER = ('CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_ENABLED_FOR_'
             'BAREMETAL_SILVER')
OFF_SILVER = ('CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_DISABLED_FOR_'
              'BAREMETAL_SILVER')
BM = {'resources:VCPU': '0', 'resources:MEMORY_MB': '0',
      'resources:DISK_GB': '0'}


def registry(fields, values=None):
    return [dict(f, name=n, value=(values or {}).get(n, 'Enabled'))
            for n, f in fields.items()]


class TestVocabulary(testtools.TestCase):
    def test_every_name_says_whose_it_is_and_where_it_comes_from(self):
        for config_type, names in bios_vocabulary.NAMES.items():
            self.assertTrue(names, config_type)
            for meaning in names:
                self.assertTrue(meaning.vendor and meaning.cpu
                                and meaning.source, meaning)
        vendors = {m.vendor for names in bios_vocabulary.NAMES.values()
                   for m in names}
        for vendor in ('Dell iDRAC', 'HPE iLO', 'Lenovo XCC', 'Supermicro'):
            for config_type in ('hyperthreading', 'virtualization', 'sriov',
                                'turbo'):
                self.assertTrue(any(vendor in m.vendor for m in
                                    bios_vocabulary.NAMES[config_type]),
                                (vendor, config_type))
        self.assertLessEqual({'Dell iDRAC', 'HPE iLO'}, vendors)

    def test_the_registrys_spelling_of_the_value(self):
        # Lenovo's first Xeon Scalable UEFI: Enable, Disable
        lenovo = registry({'Processors_HyperThreading': {
            'attribute_type': 'Enumeration',
            'allowable_values': ['Enable', 'Disable']}})
        self.assertEqual('Disable',
                         bios_vocabulary.match(OFF, lenovo).value)

    def test_a_read_only_or_absent_setting_is_no_match(self):
        self.assertIsNone(bios_vocabulary.match(ON, registry(
            {'LogicalProc': dict(SWITCH, read_only=True)})))
        self.assertIsNone(bios_vocabulary.match(ON, registry(BRONZE_BIOS)))

    def test_per_class_the_nodes_of_a_class_agree(self):
        plan = bios_vocabulary.per_class(ON, {
            'gold': {'bm-0': registry(GOLD_BIOS),
                     'bm-1': registry(GOLD_BIOS), 'bm-2': []},
            'silver': {'bm-4': registry(SILVER_BIOS)},
            'bronze': {'bm-7': registry(BRONZE_BIOS)},
            'mixed': {'bm-8': registry(GOLD_BIOS),
                      'bm-9': registry(SILVER_BIOS)},
            'mute': {'bm-6': []}})
        self.assertEqual({'gold': 'LogicalProc',
                          'silver': 'ProcHyperthreading'},
                         {c: m.name for c, m in plan.matched.items()})
        self.assertEqual({
            'bronze': 'no setting of hyperthreading in the BIOS registry '
                      'of bm-7',
            'mixed': 'its nodes name it differently (bm-8: '
                     'LogicalProc=Enabled (Dell iDRAC, Intel, AMD), bm-9: '
                     'ProcHyperthreading=Enabled (HPE iLO, Intel))',
            'mute': 'no BIOS registry reported'},
            {u.resource_class: u.why for u in plan.unmatched})
        # a matched class's node without a registry is named, not judged
        self.assertEqual({'gold': ['bm-2']}, plan.unchecked)


def annotated(config, name, resource_class=None, setting='LogicalProc'):
    return {'uuid': name.lower(), 'name': name, 'steps': [steps.bios_step(
        [(setting, config.value.title())])],
        'extra': deploy_config.template_extra(config, [HT], resource_class)}


class TestConfigTemplates(testtools.TestCase):
    def test_a_class_takes_its_own_template_else_the_one_for_every_kind(self):
        known = templates.ConfigTemplates([
            annotated(ON, 'CUSTOM_ON'),
            annotated(ON, ON_SILVER, 'baremetal-silver', 'ProcHyperthreading'),
            annotated(OFF, OFF_SILVER, 'baremetal-silver',
                      'ProcHyperthreading')])
        self.assertEqual({ON: 'CUSTOM_ON'}, {
            c: t['name'] for c, t in known.for_class(None).items()})
        self.assertEqual({ON: ON_SILVER, OFF: OFF_SILVER}, {
            c: t['name'] for c, t in known.for_class(
                'CUSTOM_BAREMETAL_SILVER').items()})
        self.assertEqual(ON_SILVER, known.for_hardware(
            {'resource_class': 'baremetal-silver'})[ON]['name'])
        self.assertEqual(ON_SILVER, known.for_hardware(
            None, dict(BM, **{'resources:CUSTOM_BAREMETAL_SILVER': '1'}))[
                ON]['name'])
        self.assertEqual((True, ['CUSTOM_BAREMETAL_SILVER']),
                         (known.realises(OFF), known.classes(OFF)))

    def test_one_template_per_config_and_kind(self):
        known = templates.ConfigTemplates([
            annotated(ON, ON_SILVER, 'baremetal-silver')])
        templates.refuse_second_template(known, ON, 'CUSTOM_ON')
        templates.refuse_second_template(known, ON, ON_SILVER,
                                         'baremetal-silver')
        self.assertRaises(exceptions.CommandError,
                          templates.refuse_second_template, known, ON,
                          'CUSTOM_OTHER', 'baremetal-silver')

    def test_a_flavor_asks_for_one_resource_class(self):
        self.assertEqual('CUSTOM_GOLD', config_specs.resource_class_of(
            dict(BM, **{'resources:CUSTOM_GOLD': '1'})))
        self.assertIsNone(config_specs.resource_class_of({}))
        self.assertIsNone(config_specs.resource_class_of(
            {'resources:CUSTOM_A': '1', 'resources:CUSTOM_B': '1'}))


class TestTagging(testtools.TestCase):
    def test_the_hardware_decides(self):
        generic = annotated(ON, 'CUSTOM_ON')
        silver = annotated(ON, ON_SILVER, 'baremetal-silver',
                           'ProcHyperthreading')
        bm0 = {'uuid': 'n0', 'name': 'bm-0', 'traits': [HT],
               'resource_class': 'baremetal-gold'}
        bm4 = {'uuid': 'n4', 'name': 'bm-4', 'traits': [HT],
               'resource_class': 'baremetal-silver'}
        registries = {'n0': registry(GOLD_BIOS), 'n4': registry(SILVER_BIOS)}
        self.assertIsNone(tagging.why_incapable(bm0, generic,
                                                registries['n0']))
        self.assertEqual(
            'its BIOS refuses LogicalProc=Enabled (no such setting in '
            'the BIOS registry)',
            tagging.why_incapable(bm4, generic, registries['n4']))
        self.assertIsNone(tagging.why_incapable(bm4, silver,
                                                registries['n4']))
        self.assertEqual('the template serves baremetal-silver, the node is '
                         'baremetal-gold', tagging.why_incapable(bm0, silver))
        # a node whose BIOS settings carry no registry is judged by its
        # traits; one of which ironic caches no setting is not offered
        self.assertIsNone(tagging.why_incapable(bm4, generic, [
            {'name': 'LogicalProc', 'value': 'Disabled'}]))
        self.assertEqual('ironic caches no BIOS setting of it',
                         tagging.why_incapable(bm4, generic, []))
        self.assertEqual('its BIOS interface is no-bios',
                         tagging.why_incapable(dict(
                             bm4, bios_interface='no-bios'), generic))
        self.assertEqual(
            [('bm-0', 'CUSTOM_ON', 'add'), ('bm-4', ON_SILVER, 'add')],
            [(c.node, c.template, c.action) for c in tagging.plan_sync(
                [bm0, bm4], [generic, silver], registries)])


class KindsTestCase(fakes.TestCommand):
    """bm-0 (baremetal-gold, one vendor's BIOS), bm-4 (baremetal-silver,
    another's) and bm-7 (baremetal-bronze, a BIOS with neither's names),
    all capable of hyperthreading; a flavor of each kind."""

    def setUp(self):
        super().setUp()
        self.bios = {}
        for name, kind, fields in (('bm-0', 'baremetal-gold', GOLD_BIOS),
                                   ('bm-4', 'baremetal-silver', SILVER_BIOS),
                                   ('bm-7', 'baremetal-bronze',
                                    BRONZE_BIOS)):
            node = self.ironic.add_node(name, [HT], resource_class=kind)
            node['bios'] = dict.fromkeys(fields, 'Enabled')
            self.ironic.bios_registries[node['uuid']] = fields
            self.bios[name] = node
        self.flavors = {kind: self.nova.add_flavor('bm.%s' % kind, dict(
            BM, **{'resources:CUSTOM_BAREMETAL_%s' % kind.upper(): '1'}))
            for kind in ('gold', 'silver', 'bronze')}

    def create(self, *args):
        columns, data = self.run_command(template_cmds.CreateDeployTemplate,
                                         list(args))
        return dict(zip(columns, data, strict=True))


class TestCreatePerClass(KindsTestCase):
    def test_no_vendor_names_a_template_per_class(self):
        planned = self.create('--config', 'hyperthreading=enabled',
                              '--dry-run')
        self.assertEqual({}, self.ironic.templates)
        self.assertEqual(
            {'baremetal-gold':
                'LogicalProc=Enabled (Dell iDRAC, Intel, AMD)',
             'baremetal-silver':
                'ProcHyperthreading=Enabled (HPE iLO, Intel)'},
            planned['settings'])
        self.assertEqual(
            'baremetal-bronze: no setting of hyperthreading in the BIOS '
            'registry of bm-7 (nodes bm-7); give its setting: openstack '
            'baremetal deploy template create --config '
            'hyperthreading=enabled --resource-class baremetal-bronze '
            '--bios-setting NAME=VALUE',
            planned['unmatched']['baremetal-bronze'])
        made = self.create('--config', 'hyperthreading=enabled')
        self.assertEqual([ON_GOLD, ON_SILVER], made['created'])
        silver = next(t for t in self.ironic.templates.values()
                      if t['name'] == ON_SILVER)
        self.assertEqual(
            ([{'name': 'ProcHyperthreading', 'value': 'Enabled'}],
             'baremetal-silver'),
            (silver['steps'][0]['args']['settings'],
             silver['extra']['deploy_config_resource_class']))
        # a rerun keeps what was made
        self.assertEqual([], self.create('--config',
                                         'hyperthreading=enabled')['created'])
        self.assertEqual(2, len(self.ironic.templates))

    def test_a_class_the_template_for_every_kind_serves_gets_none(self):
        self.create('--config', 'hyperthreading=enabled', '--bios-setting',
                    'LogicalProc=Enabled')
        made = self.create('--config', 'hyperthreading=enabled')
        self.assertEqual(
            ({'baremetal-gold': 'CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_ENABLED',
              'baremetal-silver': ON_SILVER}, [ON_SILVER]),
            (made['templates'], made['created']))
        self.assertEqual('served by CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_'
                         'ENABLED', made['settings']['baremetal-gold'])

    def test_explicit_settings_still_make_one_template(self):
        self.create('--config', 'hyperthreading=enabled', '--bios-setting',
                    'ProcHyperthreading=Enabled', '--resource-class',
                    'baremetal-silver')
        (made,) = self.ironic.templates.values()
        self.assertEqual(ON_SILVER, made['name'])

    def test_no_class_matched_is_one_line(self):
        exc = self.assertRaises(exceptions.CommandError, self.create,
                                '--config', 'sriov=enabled',
                                '--no-requires-trait')
        self.assertTrue(str(exc).startswith('No BIOS setting of '
                                            'sriov=enabled found: '), exc)
        self.assertEqual({}, self.ironic.templates)


class TestOwnersAndServers(KindsTestCase):
    def setUp(self):
        super().setUp()
        self.create('--config', 'hyperthreading=enabled')
        self.create('--config', 'hyperthreading=disabled')

    def set_flavor(self, kind, *configs):
        return self.run_command(owner_cmds.SetFlavorDeployConfig,
                                ['bm.%s' % kind, *configs])

    def test_a_flavor_takes_its_classs_template(self):
        self.set_flavor('silver', 'hyperthreading=enabled')
        self.assertEqual(
            {'deploy-config:hyperthreading': 'enabled',
             'trait:' + ON_SILVER: 'required'},
            {k: v for k, v in self.flavors['silver']['extra_specs'].items()
             if not k.startswith('resources:')})
        self.set_flavor('gold', 'hyperthreading=enabled')
        self.assertEqual('required', self.flavors['gold']['extra_specs'][
            'trait:' + ON_GOLD])

    def test_a_flavor_of_a_class_without_a_template_is_refused(self):
        exc = self.assertRaises(exceptions.CommandError, self.set_flavor,
                                'bronze', 'hyperthreading=enabled')
        self.assertIn('No deploy template realises hyperthreading=enabled '
                      'on resource class CUSTOM_BAREMETAL_BRONZE', str(exc))
        tiny = self.nova.add_flavor('m1.tiny')
        exc = self.assertRaises(
            exceptions.CommandError, self.run_command,
            owner_cmds.SetFlavorDeployConfig, [tiny['name'],
                                               'hyperthreading=enabled'])
        self.assertIn('Flavor m1.tiny asks for no resource class', str(exc))
        self.assertEqual([], self.nova.writes)

    def test_an_image_is_refused_and_told_the_flavors(self):
        image = self.glance.add_image('hpc')
        exc = self.assertRaises(
            exceptions.CommandError, self.run_command,
            owner_cmds.SetImageDeployConfig, [image['id'],
                                              'hyperthreading=enabled'])
        self.assertEqual(
            'hyperthreading=enabled is served per hardware kind '
            '(CUSTOM_BAREMETAL_GOLD, CUSTOM_BAREMETAL_SILVER), and an image '
            'cannot know the kind it lands on: ask for it in the flavors of '
            'those kinds instead (openstack flavor deploy-config set FLAVOR '
            'hyperthreading=enabled: bm.gold, bm.silver)', str(exc))

    def deployed(self, kind, node):
        self.set_flavor(kind, 'hyperthreading=enabled')
        server = self.nova.add_server('db-%s' % kind, self.flavors[kind])
        found = self.bios[node]
        found.update(instance_uuid=server['id'], provision_state='active')
        self.nova.servers[server['id']][
            'OS-EXT-SRV-ATTR:hypervisor_hostname'] = found['uuid']
        self.nova.hypervisors[found['uuid']] = 'ironic'
        trait = OFF_SILVER if kind == 'silver' else \
            OFF_SILVER.replace('SILVER', 'GOLD')
        provider = self.placement.add_provider(
            found['uuid'], traits=[HT, trait], uuid_=found['uuid'],
            reserved=1, resource_class='CUSTOM_BAREMETAL_%s' % kind.upper())
        self.placement.allocate(server['id'], provider, {})
        return server

    def test_a_toggle_and_show_use_the_nodes_own_template(self):
        server = self.deployed('silver', 'bm-4')
        server_toggle.ServerToggle(self.app.client_manager.deploy_config,
                                   [OFF], lambda text: None).run(server['id'])
        self.assertEqual('Disabled', self.bios['bm-4']['bios'][
            'ProcHyperthreading'])
        self.assertEqual({'hyperthreading': OFF}, toggle_record.applied(
            self.bios['bm-4'], server['id']))
        columns, rows = self.run_command(server_cmds.ShowServerDeployConfig,
                                         [server['id']])
        (row,) = [dict(zip(columns, r, strict=True)) for r in rows]
        self.assertEqual((OFF_SILVER, 'ProcHyperthreading=Disabled', 'yes'),
                         (row['Template'], row['Actual'], row['In Effect']))

    def test_node_list_says_why_a_node_is_not_capable(self):
        self.create('--config', 'virtualization=enabled',
                    '--no-requires-trait', '--bios-setting',
                    'LogicalProc=Enabled')
        columns, rows = self.run_command(node_cmds.ListNodeDeployConfig,
                                         ['--config',
                                          'virtualization=enabled'])
        found = {r[0]: dict(zip(columns, r, strict=True)) for r in rows}
        self.assertEqual((True, ''), (found['bm-0']['Capable'],
                                      found['bm-0']['Reason']))
        self.assertEqual((False, 'its BIOS refuses LogicalProc=Enabled '
                                 '(no such setting in the BIOS registry)'),
                         (found['bm-4']['Capable'], found['bm-4']['Reason']))
