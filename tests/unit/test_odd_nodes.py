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

"""The fleet's odd nodes (issue 34): a node without a resource class, a
node without a BIOS registry inside a matched class or under two templates
of one config, and a class whose template has another name."""

import fixtures
from osc_lib import exceptions

from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.configs import steps
from osc_deploy_config.domain.hardware import tagging
from osc_deploy_config.v1 import deploy_template as template_cmds
from osc_deploy_config.v1 import node as node_cmds
from tests.unit import bios_fixtures as fx
from tests.unit import fakes
from tests.unit.fakes import HT
from tests.unit.fakes import ON
from tests.unit.test_vendor_templates import enrol

ON_GOLD = 'CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_ENABLED_FOR_BAREMETAL_GOLD'
ON_SILVER = ('CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_ENABLED_FOR_'
             'BAREMETAL_SILVER')
ON_ALL = 'CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_ENABLED'


class OddNodesTestCase(fakes.TestCommand):
    """bm-0 (gold, a Dell's BIOS) and bm-4 (silver, an HPE's)."""

    def setUp(self):
        super().setUp()
        self.logged = self.useFixture(fixtures.FakeLogger(
            name='osc_deploy_config', format='%(levelname)s %(message)s'))
        self.bm0 = enrol(self.ironic, 'bm-0', fx.DELL_R750, 'baremetal-gold')
        self.bm4 = enrol(self.ironic, 'bm-4', fx.HPE_GEN10_INTEL,
                         'baremetal-silver')

    def create(self, *args):
        columns, data = self.run_command(template_cmds.CreateDeployTemplate,
                                         list(args))
        return dict(zip(columns, data, strict=True))

    def sync(self, *args):
        return self.run_command(node_cmds.SyncNodeDeployConfig,
                                ['--no-wait', *args])[1]


class TestNoResourceClass(OddNodesTestCase):
    def test_a_node_without_a_class_is_named_and_left_out(self):
        enrol(self.ironic, 'bm-9', fx.DELL_R750, None)
        planned = self.create('--config', 'hyperthreading=enabled',
                              '--dry-run')
        self.assertEqual(['baremetal-gold', 'baremetal-silver'],
                         sorted(planned['templates']))
        self.assertIn(
            'WARNING bm-9 has no resource class: nova cannot schedule it, '
            'and no template of a class serves it; give it one: openstack '
            'baremetal node set --resource-class CLASS bm-9',
            self.logged.output)
        self.create('--config', 'hyperthreading=enabled')
        self.assertEqual([ON_GOLD, ON_SILVER], sorted(
            t['name'] for t in self.ironic.templates.values()))

    def test_only_nodes_without_a_class_is_one_line(self):
        for node in (self.bm0, self.bm4):
            node['resource_class'] = None
        exc = self.assertRaises(exceptions.CommandError, self.create,
                                '--config', 'hyperthreading=enabled')
        self.assertEqual(
            'No node can take hyperthreading=enabled: none has '
            'HW_CPU_HYPERTHREADING and a resource class. Nothing was '
            'created; give the steps (--bios-setting NAME=VALUE).', str(exc))
        self.assertEqual({}, self.ironic.templates)


class TestEveryClassIsHandled(OddNodesTestCase):
    def test_a_class_whose_template_has_another_name_keeps_it(self):
        own = self.ironic.add_template('CUSTOM_MY_GOLD_HT', [steps.bios_step(
            [('LogicalProc', 'Enabled')])], deploy_config.template_extra(
                ON, [HT], 'baremetal-gold'))
        for dry_run in (['--dry-run'], []):
            made = self.create('--config', 'hyperthreading=enabled',
                               *dry_run)
            self.assertEqual(
                ({'baremetal-gold': 'CUSTOM_MY_GOLD_HT',
                  'baremetal-silver': ON_SILVER},
                 'served by CUSTOM_MY_GOLD_HT'),
                (made['templates'], made['settings']['baremetal-gold']))
        self.assertEqual([ON_SILVER], made['created'])
        self.assertEqual(sorted([own['name'], ON_SILVER]), sorted(
            t['name'] for t in self.ironic.templates.values()))


class TestUncheckedNodes(OddNodesTestCase):
    def test_nodes_without_a_registry_in_a_matched_class_are_named(self):
        enrol(self.ironic, 'bm-1', None, 'baremetal-gold')
        planned = self.create('--config', 'hyperthreading=enabled',
                              '--dry-run')
        self.assertEqual('not checked: no BIOS registry reported (nodes '
                         'bm-1)', planned['notes']['baremetal-gold'])
        self.assertIn(
            "WARNING baremetal-gold: no BIOS registry reported (nodes bm-1): "
            "the class's template sets LogicalProc=Enabled on them "
            "unchecked; if their BIOS names it otherwise, give them a class "
            "of their own and its setting: openstack baremetal node set "
            "--resource-class CLASS bm-1; openstack baremetal deploy "
            "template create --config hyperthreading=enabled "
            "--resource-class CLASS --bios-setting NAME=VALUE",
            self.logged.output)


class TestOneTemplatePerConfig(OddNodesTestCase):
    """A node without a registry passes the checks of both the template
    for every kind and its class's own: it carries its class's own."""

    def setUp(self):
        super().setUp()
        self.bare = enrol(self.ironic, 'bm-7', None, 'baremetal-silver')
        self.create('--config', 'hyperthreading=enabled', '--bios-setting',
                    'LogicalProc=Enabled')
        self.create('--config', 'hyperthreading=enabled', '--resource-class',
                    'baremetal-silver', '--bios-setting',
                    'ProcHyperthreading=Enabled')

    def test_sync_tags_the_class_template_and_removes_the_other(self):
        self.bare['traits'].append(ON_ALL)
        rows = self.sync()
        self.assertEqual(
            [('bm-0', ON_ALL, 'added'), ('bm-4', ON_SILVER, 'added'),
             ('bm-7', ON_ALL, 'removed'), ('bm-7', ON_SILVER, 'added')],
            sorted(r[:3] for r in rows))
        (reason,) = [r[3] for r in rows if r[:3] == ('bm-7', ON_ALL,
                                                     'removed')]
        self.assertEqual('its class has a template of its own for '
                         'hyperthreading=enabled: %s' % ON_SILVER, reason)
        self.assertEqual([], self.sync())       # settled

    def test_a_tag_its_instance_was_deployed_with_is_kept(self):
        self.bare.update(traits=[HT, ON_ALL], instance_uuid='i-7',
                         provision_state='active',
                         instance_info={'traits': [ON_ALL]})
        rows = {r[:3] for r in self.sync()}
        self.assertIn(('bm-7', ON_ALL, 'keep'), rows)
        self.assertIn(ON_ALL, self.bare['traits'])

    def test_list_says_why(self):
        node = dict(self.bare, traits=[HT])
        known = list(self.ironic.templates.values())
        (status,) = [s for s in tagging.statuses([node], known)
                     if s.template == ON_ALL]
        self.assertEqual((False, 'its class has a template of its own for '
                          'hyperthreading=enabled: %s' % ON_SILVER),
                         (status.capable, status.reason))
