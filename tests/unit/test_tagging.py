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

import testtools

from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.hardware import tagging
from osc_deploy_config.services import ironic
from osc_deploy_config.services import versions
from tests.unit import fakes
from tests.unit.fakes import HT
from tests.unit.fakes import ON_T


def template(name=ON_T, config=('hyperthreading', 'enabled'), traits=(HT,)):
    return {'uuid': name.lower(), 'name': name,
            'extra': deploy_config.template_extra(
                deploy_config.Config(*config), traits)}


def node(name, traits=(), **kw):
    return dict({'uuid': name + '-uuid', 'name': name,
                 'traits': list(traits), 'maintenance': False,
                 'retired': False, 'provision_state': 'available',
                 'instance_uuid': None, 'instance_info': {}}, **kw)


class TestCapable(testtools.TestCase):
    def test_needs_every_capability_trait(self):
        two = template(traits=(HT, 'CUSTOM_X'))
        self.assertTrue(tagging.capable(node('a', [HT, 'CUSTOM_X']), two))
        self.assertFalse(tagging.capable(node('a', [HT]), two))

    def test_maintenance_does_not_matter_retirement_does(self):
        # nova reserves a node in maintenance: placement keeps the
        # scheduler away, the tag stays for the node's return
        self.assertTrue(tagging.capable(node('a', [HT], maintenance=True),
                                        template()))
        self.assertFalse(tagging.capable(node('a', [HT], retired=True),
                                         template()))

    def test_resource_class_as_nova_names_it(self):
        # nova.utils.normalize_rc_name: each run of other characters one
        # "_", upper case, CUSTOM_ always prefixed (even to CUSTOM_)
        for ironic_name, placement_name in (
                ('baremetal-gold', 'CUSTOM_BAREMETAL_GOLD'),
                ('CUSTOM_GOLD', 'CUSTOM_CUSTOM_GOLD'),
                ('gold--x', 'CUSTOM_GOLD_X'),
                ('CUSTOM_gold--x', 'CUSTOM_CUSTOM_GOLD_X'),
                ('a. b', 'CUSTOM_A_B')):
            self.assertEqual(placement_name, tagging.resource_class(
                node('a', resource_class=ironic_name)), ironic_name)
        self.assertIsNone(tagging.resource_class(node('a')))

    def test_no_capability_traits_means_any_node(self):
        self.assertTrue(tagging.capable(node('a'), template(traits=())))

    def test_only_annotated_templates_count_from_every_page(self):
        fake = fakes.FakeIronic(page_size=2)
        fake.add_template('CUSTOM_PLAIN')
        configs = [deploy_config.Config('t', 'v%d' % n) for n in range(3)]
        for config in configs:
            fake.add_template(deploy_config.template_trait(config),
                              extra=deploy_config.template_extra(config, []))
        found = ironic.Ironic(fake.proxy, versions.DEPLOY_TEMPLATES
                              ).config_templates()
        self.assertEqual({c: deploy_config.template_trait(c)
                          for c in configs},
                         {c: t['name'] for c, t in found.items()})
        self.assertEqual(2, len(fake.requests))     # 4 templates, 2 pages
        self.assertIn('fields=uuid%2Cname%2Cextra', fake.requests[0][1])


class TestPlanSync(testtools.TestCase):
    def test_tags_capable_untags_incapable(self):
        nodes = [node('bm-0', [HT]), node('bm-2', [ON_T]),
                 node('bm-3', [HT], maintenance=True),
                 node('bm-5', [HT, ON_T], retired=True)]
        plan = tagging.plan_sync(nodes, [template()])
        self.assertEqual(
            [('bm-0', ON_T, 'add', 'capable'),
             ('bm-2', ON_T, 'remove', 'lacks %s' % HT),
             ('bm-3', ON_T, 'add', 'capable'),
             ('bm-5', ON_T, 'remove', 'retired')],
            [(c.node, c.template, c.action, c.reason) for c in plan])

    def test_keeps_a_tag_an_instance_uses(self):
        used = node('bm-1', [ON_T], instance_uuid='srv-1',
                    instance_info={'traits': [ON_T]},
                    provision_state='active')
        (change,) = tagging.plan_sync([used], [template()])
        self.assertEqual('keep', change.action)
        self.assertIn('instance srv-1 uses it', change.reason)

    def test_instance_without_the_trait_does_not_keep_it(self):
        other = node('bm-1', [ON_T], instance_uuid='srv-1',
                     instance_info={'traits': []})
        (change,) = tagging.plan_sync([other], [template()])
        self.assertEqual('remove', change.action)

    def test_nothing_to_do_when_in_sync(self):
        self.assertEqual([], tagging.plan_sync(
            [node('bm-0', [HT, ON_T]), node('bm-2')], [template()]))


class TestPlanPrune(testtools.TestCase):
    GONE = 'CUSTOM_DEPLOY_CONFIG_GONE_X'

    def test_traits_of_deleted_templates_only_ours(self):
        nodes = [node('bm-0', [HT, ON_T, self.GONE, 'CUSTOM_MINE']),
                 node('bm-1', [self.GONE], instance_uuid='srv',
                      instance_info={'traits': [self.GONE]})]
        self.assertEqual(
            [('bm-0', self.GONE, 'stale',
              'template deleted (--prune removes it)'),
             ('bm-1', self.GONE, 'keep',
              'template deleted, but instance srv uses it')],
            [(c.node, c.template, c.action, c.reason) for c in
             tagging.plan_prune(nodes, {ON_T})])
        self.assertEqual(['remove', 'keep'], [
            c.action for c in tagging.plan_prune(nodes, {ON_T}, True)])

    def test_an_unannotated_template_is_not_deleted(self):
        self.assertEqual([], tagging.plan_prune(
            [node('bm-0', [self.GONE])], {self.GONE}, True))


class TestStatuses(testtools.TestCase):
    def test_one_row_per_node_and_template(self):
        off = template('CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_DISABLED',
                       ('hyperthreading', 'disabled'))
        rows = tagging.statuses([node('bm-1', [HT, ON_T]), node('bm-0')],
                                [off, template()])
        self.assertEqual(
            [('bm-0', off['name'], False, False),
             ('bm-0', ON_T, False, False),
             ('bm-1', off['name'], True, False),
             ('bm-1', ON_T, True, True)],
            [(r.node, r.template, r.capable, r.tagged) for r in rows])
        self.assertEqual('hyperthreading=enabled', rows[-1].config)
        self.assertEqual({None}, {r.schedulable for r in rows})

    def test_schedulable_is_placements_answer(self):
        free = {'bm-1-uuid': {HT, ON_T}, 'bm-0-uuid': {HT}}
        rows = tagging.statuses([node('bm-1', [HT, ON_T]),
                                 node('bm-0', [HT, ON_T]),
                                 node('bm-3', [HT, ON_T], maintenance=True)],
                                [template()], free)
        # bm-0: tagged in ironic, not yet in placement; bm-3: reserved
        self.assertEqual([('bm-0', True, False), ('bm-1', True, True),
                          ('bm-3', True, False)],
                         [(r.node, r.tagged, r.schedulable) for r in rows])
