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

"""Sets of configs: grouping, the merge, the name, staleness, and what
the owners' specs, the tagging, the pre-flight and what holds a set make
of them; plain functions."""

import datetime

from osc_lib import exceptions
import testtools

from osc_deploy_config.domain.configs import config_sets
from osc_deploy_config.domain.configs import config_specs
from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.configs import steps as dsteps
from osc_deploy_config.domain.configs import templates as dtemplates
from osc_deploy_config.domain.hardware import tagging
from osc_deploy_config.domain.servers import preflight
from osc_deploy_config.domain.servers import set_holders
from osc_deploy_config.domain.toggle import toggle_plan

HT_OFF = deploy_config.Config('hyperthreading', 'disabled')
TURBO_OFF = deploy_config.Config('turbo', 'disabled')
TURBO_ON = deploy_config.Config('turbo', 'enabled')
SRIOV = deploy_config.Config('sriov', 'enabled')
RAID1 = deploy_config.Config('disks', 'raid1')
RAID0 = deploy_config.Config('layout', 'raid0')
BOTH = 'CUSTOM_DEPLOY_CONFIG_SET_HYPERTHREADING_DISABLED_AND_TURBO_DISABLED'


def raid(level):
    return dsteps.raid_step({'logical_disks': [{'raid_level': level,
                                                'size_gb': 'MAX'}]})


def template(config, *settings, steps=None, traits=(), rc=None):
    """A config's template setting these BIOS settings (or ``steps``)."""
    return {'uuid': 'uuid-%s' % deploy_config.template_trait(config, rc),
            'name': deploy_config.template_trait(config, rc),
            'steps': steps or [dsteps.bios_step(settings)],
            'extra': deploy_config.template_extra(config, traits, rc)}


TEMPLATES = {
    HT_OFF: template(HT_OFF, ('LogicalProc', 'Disabled'),
                     traits=['HW_CPU_HYPERTHREADING']),
    TURBO_OFF: template(TURBO_OFF, ('ProcTurboMode', 'Disabled'),
                        ('SysProfile', 'Custom')),
    TURBO_ON: template(TURBO_ON, ('ProcTurboMode', 'Enabled'),
                       ('SysProfile', 'Custom')),
    SRIOV: template(SRIOV, ('SriovGlobalEnable', 'Enabled'),
                    ('SysProfile', 'PerfOptimized')),
    RAID1: template(RAID1, steps=[raid('1')]),
    RAID0: template(RAID0, steps=[raid('0')]),
}


def members(*configs, templates=None):
    templates = templates or TEMPLATES
    return {c: templates[c] for c in configs}


class TestGrouping(testtools.TestCase):
    def test_configs_sharing_a_step_go_together_the_others_alone(self):
        found = config_sets.serving([RAID1, TURBO_OFF, HT_OFF], TEMPLATES)
        self.assertEqual([(TEMPLATES[RAID1]['name'], [RAID1]),
                          (BOTH, [HT_OFF, TURBO_OFF])],
                         [(s.name, sorted(s.members, key=lambda c: c.type))
                          for s in found])

    def test_a_group_joins_through_a_third(self):
        # a and c share nothing, but each shares a step with b
        a, b, c = (deploy_config.Config(t, 'on') for t in 'abc')
        templates = {
            a: template(a, steps=[dict(raid('1'), interface='raid')]),
            b: template(b, steps=[raid('1'), dsteps.bios_step([('X', 'on')])]),
            c: template(c, ('Y', 'on'))}
        (one,) = config_sets.groups([a, b, c], templates)
        self.assertEqual([a, b, c], one)

    def test_a_config_without_template_is_left_out(self):
        self.assertEqual([[HT_OFF]], config_sets.groups(
            [HT_OFF, deploy_config.Config('gone', 'x')], TEMPLATES))


class TestMerge(testtools.TestCase):
    def test_bios_settings_merge_into_one_step_at_the_highest_priority(self):
        templates = dict(TEMPLATES)
        templates[HT_OFF] = dict(templates[HT_OFF], steps=[
            dsteps.bios_step([('LogicalProc', 'Disabled')], priority=160)])
        (step,) = config_sets.merged_steps(members(HT_OFF, TURBO_OFF,
                                                   templates=templates))
        self.assertEqual(
            {'interface': 'bios', 'step': 'apply_configuration',
             'priority': 160, 'args': {'settings': [
                 {'name': 'LogicalProc', 'value': 'Disabled'},
                 {'name': 'ProcTurboMode', 'value': 'Disabled'},
                 {'name': 'SysProfile', 'value': 'Custom'}]}}, step)

    def test_one_setting_set_alike_twice_is_one(self):
        fast = deploy_config.Config('fast', 'on')
        templates = dict(TEMPLATES)
        templates[fast] = template(fast, ('SysProfile', 'Custom'))
        (step,) = config_sets.merged_steps(members(TURBO_OFF, fast,
                                                   templates=templates))
        # in the members' order (by type): fast's first
        self.assertEqual(['SysProfile', 'ProcTurboMode'], [
            s['name'] for s in step['args']['settings']])

    def test_one_setting_set_otherwise_is_refused_naming_both(self):
        exc = self.assertRaises(exceptions.CommandError,
                                config_sets.merged_steps,
                                members(SRIOV, TURBO_OFF))
        self.assertEqual(
            'Deploy configs sriov=enabled and turbo=disabled set BIOS '
            'setting SysProfile to PerfOptimized and Custom: no server can '
            'have both', str(exc))

    def test_another_shared_step_is_kept_only_where_alike(self):
        again = deploy_config.Config('mirror', 'raid1')
        templates = dict(TEMPLATES)
        templates[again] = template(again, steps=[raid('1')])
        self.assertEqual([raid('1')], config_sets.merged_steps(members(
            RAID1, again, templates=templates)))
        exc = self.assertRaises(exceptions.CommandError,
                                config_sets.merged_steps,
                                members(RAID1, RAID0))
        self.assertEqual(
            'Deploy configs disks=raid1 and layout=raid0 both run '
            'raid.apply_configuration, differently: ironic runs one '
            'raid.apply_configuration a deploy, so no server can have both',
            str(exc))

    def test_a_disabled_bios_step_stays_unapplied(self):
        templates = dict(TEMPLATES)
        templates[TURBO_OFF] = dict(templates[TURBO_OFF], steps=[
            dict(templates[TURBO_OFF]['steps'][0], priority=0)])
        (step,) = config_sets.merged_steps(members(HT_OFF, TURBO_OFF,
                                                   templates=templates))
        self.assertEqual((150, ['LogicalProc']), (step['priority'], [
            s['name'] for s in step['args']['settings']]))


class TestName(testtools.TestCase):
    def test_named_for_its_members_and_the_class_one_serves(self):
        self.assertEqual(BOTH, config_sets.set_name(members(HT_OFF,
                                                            TURBO_OFF)))
        templates = dict(TEMPLATES)
        templates[TURBO_OFF] = template(
            TURBO_OFF, ('ProcAMDBoost', 'Disabled'), rc='baremetal-bronze')
        found = members(HT_OFF, TURBO_OFF, templates=templates)
        self.assertEqual(BOTH + '_FOR_BAREMETAL_BRONZE',
                         config_sets.set_name(found))
        self.assertEqual('baremetal-bronze',
                         config_sets.set_extra(found)[
                             deploy_config.EXTRA_CLASS])

    def test_too_long_a_name_is_cut_with_a_hash_of_the_whole(self):
        long = {deploy_config.Config('t%d' % n, 'v' * 60): template(
            deploy_config.Config('t%d' % n, 'v' * 60), ('S%d' % n, 'x'))
            for n in range(5)}
        name = config_sets.set_name(long)
        self.assertEqual(255, len(name))
        self.assertEqual(name, config_sets.set_name(dict(long)))
        other = dict(long)
        other.pop(deploy_config.Config('t4', 'v' * 60))
        self.assertNotEqual(name, config_sets.set_name(other))

    def test_its_extra_names_members_digest_and_every_members_traits(self):
        extra = config_sets.set_extra(members(HT_OFF, TURBO_OFF))
        self.assertEqual('hyperthreading=disabled,turbo=disabled',
                         extra[config_sets.EXTRA_MEMBERS])
        self.assertEqual('HW_CPU_HYPERTHREADING',
                         extra[deploy_config.EXTRA_REQUIRES])
        self.assertNotIn(deploy_config.EXTRA_TYPE, extra)


class TestStaleness(testtools.TestCase):
    def made(self):
        found = members(HT_OFF, TURBO_OFF)
        return dict(config_sets.set_body(found), uuid='set-uuid'), found

    def test_a_set_is_current_until_a_member_changes(self):
        made, found = self.made()
        self.assertTrue(config_sets.current(made, found))
        # ironic lists steps in no order of its own: still current
        turned = dict(found)
        turned[HT_OFF] = dict(found[HT_OFF], steps=list(reversed(
            found[HT_OFF]['steps'] + [raid('1')])))
        turned_made = dict(config_sets.set_body(turned), uuid='x')
        turned[HT_OFF] = dict(turned[HT_OFF], steps=list(reversed(
            turned[HT_OFF]['steps'])))
        self.assertTrue(config_sets.current(turned_made, turned))
        changed = dict(found)
        changed[TURBO_OFF] = template(TURBO_OFF, ('ProcTurboMode', 'Auto'))
        self.assertFalse(config_sets.current(made, changed))
        self.assertFalse(config_sets.current(made, None))

    def test_the_patch_builds_it_again_from_its_members(self):
        made, found = self.made()
        changed = dict(found)
        changed[TURBO_OFF] = template(TURBO_OFF, ('ProcTurboMode', 'Auto'))
        patch = config_sets.rebuild_patch(made, changed)
        self.assertEqual(['/steps', '/extra/deploy_config_set_digest'],
                         [p['path'] for p in patch])

    def test_the_listing_knows_sets_their_members_and_members_sets(self):
        made, _ = self.made()
        known = dtemplates.by_config(list(TEMPLATES.values()) + [made])
        self.assertEqual([made], known.every_set())
        self.assertNotIn(made, known.every())
        self.assertEqual({HT_OFF, TURBO_OFF}, set(known.set_members(made)))
        self.assertEqual([made], known.sets_of(TEMPLATES[TURBO_OFF]))
        self.assertEqual([], known.sets_of(TEMPLATES[RAID1]))
        shown = dtemplates.with_set_fields(made, known)
        self.assertEqual((['hyperthreading=disabled', 'turbo=disabled'],
                          True), (shown['members'], shown['current']))
        gone = dtemplates.by_config([TEMPLATES[HT_OFF], made])
        self.assertIsNone(gone.set_members(made))
        self.assertFalse(dtemplates.with_set_fields(made, gone)['current'])

    def test_members_written_wrong_by_hand_are_never_current(self):
        made, found = self.made()
        made['extra'][config_sets.EXTRA_MEMBERS] = 'Not A Config'
        self.assertEqual([], config_sets.members_of(made))
        self.assertIsNone(dtemplates.by_config(
            list(TEMPLATES.values()) + [made]).set_members(made))


class TestGrace(testtools.TestCase):
    def test_just_written_by_any_of_its_times(self):
        now = datetime.datetime(2026, 12, 3, 12, 0,
                                tzinfo=datetime.timezone.utc)
        old, recent = '2026-12-03T11:00:00', '2026-12-03T11:50:00Z'
        for template, written in (
                ({'created_at': old}, False),
                ({'created_at': old, 'updated_at': recent}, True),
                ({'created_at': recent, 'updated_at': None}, True),
                ({'created_at': old, 'extra': {
                    config_sets.EXTRA_ASKED: '2026-12-03T11:59:00+00:00'}},
                 True),
                ({}, True)):
            self.assertEqual(written, config_sets.just_written(template, now),
                             template)


class TestOwnersSpecs(testtools.TestCase):
    def test_a_flavor_asks_for_the_set_not_its_members(self):
        change = config_specs.plan_set({}, [HT_OFF, TURBO_OFF, RAID1],
                                       TEMPLATES)
        self.assertEqual({'trait:' + BOTH, 'trait:' + TEMPLATES[RAID1][
            'name']}, {k for k in change.set if k.startswith('trait:')})
        self.assertEqual([BOTH], [s.name for s in config_specs.needed_sets(
            [HT_OFF, TURBO_OFF, RAID1], TEMPLATES)])

    def test_unset_of_a_member_asks_for_what_serves_the_rest(self):
        specs = {'deploy-config:hyperthreading': 'disabled',
                 'deploy-config:turbo': 'disabled', 'trait:' + BOTH:
                 'required', 'trait:CUSTOM_MINE': 'required'}
        change = config_specs.plan_unset(specs, ['turbo'], TEMPLATES)
        self.assertEqual(({'trait:' + TEMPLATES[HT_OFF]['name']:
                           'required'},
                          ['deploy-config:turbo', 'trait:' + BOTH]),
                         change)

    def test_drift_names_a_set_not_made_and_a_member_trait_beside_it(self):
        specs = {'deploy-config:hyperthreading': 'disabled',
                 'deploy-config:turbo': 'disabled', 'trait:' + BOTH:
                 'required', 'trait:' + TEMPLATES[HT_OFF]['name']:
                     'required'}
        found = config_specs.drift(specs, TEMPLATES, sets={})
        self.assertEqual([
            'hyperthreading=disabled,turbo=disabled: their set %s is not '
            'made (openstack flavor deploy-config set)' % BOTH,
            'trait:%s=required: its set %s serves it here: ironic would run '
            'both and fail the deploy' % (TEMPLATES[HT_OFF]['name'], BOTH)],
            found)
        self.assertEqual([], config_specs.drift(
            {k: v for k, v in specs.items()
             if k != 'trait:' + TEMPLATES[HT_OFF]['name']}, TEMPLATES,
            sets={BOTH: {}}))

    def test_a_concurrent_writer_that_left_members_traits_is_repaired(self):
        specs = {'deploy-config:hyperthreading': 'disabled',
                 'deploy-config:turbo': 'disabled',
                 'trait:' + TEMPLATES[HT_OFF]['name']: 'required',
                 'trait:' + TEMPLATES[TURBO_OFF]['name']: 'required'}
        self.assertEqual(({'trait:' + BOTH: 'required'}, sorted(
            ['trait:' + TEMPLATES[HT_OFF]['name'],
             'trait:' + TEMPLATES[TURBO_OFF]['name']])),
            config_specs.reconcile(specs, ['hyperthreading', 'turbo'],
                                   TEMPLATES))


class TestTagging(testtools.TestCase):
    def node(self, **more):
        return dict({'uuid': 'n1', 'name': 'bm-0', 'resource_class':
                     'baremetal-gold', 'traits': ['HW_CPU_HYPERTHREADING']},
                    **more)

    def test_a_set_needs_every_members_traits_and_bios(self):
        made = config_sets.set_body(members(HT_OFF, TURBO_OFF))
        self.assertTrue(tagging.capable(self.node(), made))
        self.assertEqual('lacks HW_CPU_HYPERTHREADING', tagging.why_incapable(
            self.node(traits=[]), made))
        registry = [{'name': n, 'value': v, 'attribute_type': 'String',
                     'read_only': n == 'ProcTurboMode'}
                    for n, v in (('LogicalProc', 'Enabled'),
                                 ('ProcTurboMode', 'Enabled'),
                                 ('SysProfile', 'PerfPerWattOptimizedDapc'))]
        self.assertIn('ProcTurboMode', tagging.why_incapable(
            self.node(), made, registry))

    def test_a_set_for_every_kind_is_not_for_a_class_with_its_own_member(
            self):
        made = config_sets.set_body(members(HT_OFF, TURBO_OFF))
        own = template(TURBO_OFF, ('ProcAMDBoost', 'Disabled'),
                       rc='baremetal-gold')
        known = dtemplates.by_config([*TEMPLATES.values(), own])
        self.assertIn('its class has a template of its own for turbo',
                      tagging.superseded(self.node(), made, known.per_class))
        (status,) = tagging.statuses([self.node()], [made])
        self.assertEqual('hyperthreading=disabled,turbo=disabled',
                         status.config)


class TestPreflight(testtools.TestCase):
    FLAVOR = {'name': 'bm.gold', 'extra_specs': {
        'deploy-config:hyperthreading': 'disabled',
        'deploy-config:turbo': 'disabled', 'trait:' + BOTH: 'required'}}

    def sets(self):
        return {BOTH: config_sets.set_body(members(HT_OFF, TURBO_OFF))}

    def test_a_flavors_set_deploys(self):
        found = preflight.asked(self.FLAVOR, {}, TEMPLATES, self.sets())
        self.assertEqual({BOTH}, {a.template for a in found})
        self.assertIsNone(preflight.refuse_conflicts(found, TEMPLATES,
                                                     self.sets()))

    def test_an_image_that_shares_the_step_is_refused_naming_a_flavor(self):
        image = {'name': 'nfv', 'deploy-config:sriov': 'enabled',
                 'trait:' + TEMPLATES[SRIOV]['name']: 'required'}
        found = preflight.asked(self.FLAVOR, image, TEMPLATES, self.sets())
        conflict = preflight.step_conflict(found, TEMPLATES, self.sets())
        nfv = {'name': 'bm.nfv', 'extra_specs': {
            'deploy-config:sriov': 'enabled',
            'deploy-config:turbo': 'disabled',
            'deploy-config:hyperthreading': 'disabled'}}
        line = preflight.describe_step_conflict(found, conflict, (
            preflight.instead(found, conflict, [self.FLAVOR, nfv],
                              self.FLAVOR)))
        self.assertEqual(
            'Deploy config conflict: hyperthreading=disabled, '
            'turbo=disabled (flavor bm.gold) and sriov=enabled (image nfv) '
            'both run bios.apply_configuration; ironic would fail the '
            'deploy. Nothing was created; use flavor bm.nfv, which asks for '
            'all of them, and boot it from an image that asks for none.',
            line)
        # the booted flavor asks for all of them: only the image is wrong
        self.assertEqual(
            'flavor bm.nfv asks for all of them: boot it from an image that '
            'asks for none', preflight.instead(found, conflict, [], nfv))
        # never the booted flavor itself; without another, the command
        self.assertEqual(
            'ask for all of them in one flavor (openstack flavor '
            'deploy-config set FLAVOR hyperthreading=disabled sriov=enabled '
            'turbo=disabled), and boot it from an image that asks for none',
            preflight.instead(found, conflict, [self.FLAVOR], self.FLAVOR))

    def test_a_flavor_asking_a_set_and_a_members_own_is_refused(self):
        # a write left half-made: ironic runs both templates
        flavor = dict(self.FLAVOR, extra_specs=dict(
            self.FLAVOR['extra_specs'],
            **{'trait:' + TEMPLATES[TURBO_OFF]['name']: 'required'}))
        found = preflight.asked(flavor, {}, TEMPLATES, self.sets())
        conflict = preflight.step_conflict(found, TEMPLATES, self.sets())
        self.assertIsNotNone(conflict)
        self.assertEqual(
            'the flavor asks for them apart: ask for them again, and their '
            'set serves them (openstack flavor deploy-config set bm.gold '
            'hyperthreading=disabled turbo=disabled)',
            preflight.instead(found, conflict, [], flavor))
        self.assertEqual('hyperthreading=disabled (flavor bm.gold), '
                         'turbo=disabled (flavor bm.gold)',
                         preflight.asks_text(found))


class TestToggle(testtools.TestCase):
    SERVER = {'id': 's1', 'name': 'db-1', 'tenant_id': 'p1', 'flavor': {
        'original_name': 'bm.gold', 'vcpus': 0, 'ram': 0, 'disk': 0,
        'ephemeral': 0, 'swap': 0, 'extra_specs': {
            'deploy-config:hyperthreading': 'disabled',
            'deploy-config:turbo': 'disabled',
            'trait:' + BOTH: 'required'}}}

    def test_the_target_is_the_whole_set_with_the_record_over_it(self):
        sriov_off = deploy_config.Config('sriov', 'disabled')
        templates = dict(TEMPLATES)
        templates[sriov_off] = template(sriov_off, ('SriovGlobalEnable',
                                                    'Disabled'))
        templates[SRIOV] = template(SRIOV, ('SriovGlobalEnable', 'Enabled'))
        plan = toggle_plan.plan(self.SERVER, [TURBO_ON], templates, [],
                                {'sriov': SRIOV})
        self.assertEqual({HT_OFF, TURBO_ON, SRIOV},
                         set(plan.target.values()))
        self.assertEqual(
            ['CUSTOM_DEPLOY_CONFIG_SET_HYPERTHREADING_DISABLED_AND_SRIOV_'
             'ENABLED_AND_TURBO_ENABLED'],
            sorted(config_specs.required_traits(plan.target_specs)))
        # a node needs each target config's own tag
        self.assertEqual({templates[c]['name']
                          for c in (HT_OFF, TURBO_ON, SRIOV)},
                         toggle_plan.node_traits(plan, templates))

    def test_a_toggle_that_would_clash_is_refused(self):
        exc = self.assertRaises(exceptions.CommandError, toggle_plan.plan,
                                self.SERVER, [SRIOV], TEMPLATES, [])
        self.assertIn('set BIOS setting SysProfile', str(exc))


class TestHolders(testtools.TestCase):
    def test_what_needs_a_set(self):
        made = dict(config_sets.set_body(members(HT_OFF, TURBO_OFF)),
                    uuid='u')
        known = dtemplates.by_config([*TEMPLATES.values(), made])
        other = 'CUSTOM_DEPLOY_CONFIG_SET_OTHER'
        asking = {'trait:' + BOTH: 'required'}
        holders = set_holders.Holders(
            [{'id': 'f', 'name': 'bm.gold', 'extra_specs': asking}],
            [{'id': 'i', 'name': 'hpc', **asking}],
            [{'id': 's', 'name': 'db-1', 'flavor': {'extra_specs': {
                'deploy-config:hyperthreading': 'disabled'}},
              'image': {'id': 'i'}}],
            [{'uuid': 'n', 'name': 'bm-0', 'instance_uuid': 's',
              'instance_info': {'traits': [BOTH]},
              'resource_class': 'baremetal-gold', 'properties': {
                  'deploy_config_applied': {
                      'instance_uuid': 's',
                      'configs': {'turbo': 'disabled'}}}}])
        found = set_holders.needs([BOTH, other], holders, known)
        self.assertEqual({BOTH}, set(found))
        self.assertEqual([
            'flavor bm.gold', 'image hpc',
            'node bm-0 (its instance was deployed with it)',
            'node bm-0 (what its server runs now)'], found[BOTH])
        self.assertEqual({}, set_holders.needs(
            [BOTH], holders._replace(images=[], nodes=[]), known, {'f'}))
        self.assertEqual('a, b, c and 2 more',
                         set_holders.describe(list('abcde')))
