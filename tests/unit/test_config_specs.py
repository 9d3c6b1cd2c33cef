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

"""The flavor translation, as plain functions."""

from osc_lib import exceptions
import testtools

from osc_deploy_config.domain.configs import config_specs
from osc_deploy_config.domain.configs import deploy_config

ON = deploy_config.Config('hyperthreading', 'enabled')
OFF = deploy_config.Config('hyperthreading', 'disabled')
RAID = deploy_config.Config('disks', 'raid1')
BIOS = {'interface': 'bios', 'step': 'apply_configuration', 'args': {},
        'priority': 150}
RAID_STEP = dict(BIOS, interface='raid')


def template(config, steps=(BIOS,), name=None):
    return {'name': name or deploy_config.template_trait(config),
            'steps': list(steps)}


TEMPLATES = {ON: template(ON), OFF: template(OFF),
             RAID: template(RAID, [RAID_STEP])}
ON_TRAIT = 'trait:CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_ENABLED'
OFF_TRAIT = 'trait:CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_DISABLED'
RAID_TRAIT = 'trait:CUSTOM_DEPLOY_CONFIG_DISKS_RAID1'
GOLD = {'resources:CUSTOM_BAREMETAL_GOLD': '1', 'resources:VCPU': '0'}


def applied(specs, change):
    result = dict(specs, **change.set)
    for key in change.unset:
        del result[key]
    return result


class TestPlanSet(testtools.TestCase):
    def test_config_and_template_trait_never_capability(self):
        change = config_specs.plan_set(GOLD, [ON], TEMPLATES)
        self.assertEqual({'deploy-config:hyperthreading': 'enabled',
                          ON_TRAIT: 'required'}, change.set)
        self.assertEqual([], change.unset)
        self.assertNotIn('trait:HW_CPU_HYPERTHREADING', change.set)

    def test_new_value_replaces_the_old_configs_specs(self):
        specs = applied(GOLD, config_specs.plan_set(GOLD, [ON], TEMPLATES))
        change = config_specs.plan_set(specs, [OFF], TEMPLATES)
        self.assertEqual({'deploy-config:hyperthreading': 'disabled',
                          OFF_TRAIT: 'required'}, change.set)
        self.assertEqual([ON_TRAIT], change.unset)
        self.assertEqual(dict(GOLD, **{'deploy-config:hyperthreading':
                                       'disabled', OFF_TRAIT: 'required'}),
                         applied(specs, change))

    def test_same_config_again_changes_nothing(self):
        specs = applied(GOLD, config_specs.plan_set(GOLD, [ON], TEMPLATES))
        self.assertEqual(({}, []),
                         config_specs.plan_set(specs, [ON], TEMPLATES))

    def test_two_types_at_once(self):
        change = config_specs.plan_set(GOLD, [ON, RAID], TEMPLATES)
        self.assertEqual({ON_TRAIT, RAID_TRAIT}, {
            k for k in change.set if k.startswith('trait:')})

    def test_refusals(self):
        fast = deploy_config.Config('bios', 'fast')
        clashing = template(fast, [dict(BIOS, args={'settings': [
            {'name': 'LogicalProc', 'value': 'Disabled'}]})])
        enabling = template(ON, [dict(BIOS, args={'settings': [
            {'name': 'LogicalProc', 'value': 'Enabled'}]})])
        templates = {**TEMPLATES, ON: enabling, fast: clashing}
        for specs, configs, why in (
                (GOLD, [ON, OFF], 'Two values for the deploy config type '
                                  'hyperthreading'),
                (GOLD, [deploy_config.Config('hyperthreading', 'auto')],
                 'No deploy template realises hyperthreading=auto'),
                (GOLD, [ON, fast], 'Deploy configs bios=fast and '
                 'hyperthreading=enabled set BIOS setting LogicalProc to '
                 'Disabled and Enabled: no server can have both')):
            exc = self.assertRaises(exceptions.CommandError,
                                    config_specs.plan_set, specs, configs,
                                    templates)
            self.assertIn(why, str(exc))

    def test_a_config_sharing_a_step_with_one_on_the_flavor_asks_a_set(self):
        fast = deploy_config.Config('bios', 'fast')
        templates = {**TEMPLATES, fast: template(fast)}
        specs = applied(GOLD, config_specs.plan_set(GOLD, [ON, RAID],
                                                    templates))
        change = config_specs.plan_set(specs, [fast], templates)
        both = ('trait:CUSTOM_DEPLOY_CONFIG_SET_BIOS_FAST_AND_'
                'HYPERTHREADING_ENABLED')
        self.assertEqual({'deploy-config:bios': 'fast', both: 'required'},
                         change.set)
        self.assertEqual([ON_TRAIT], change.unset)
        # the set's members unset one by one: back to what set wrote
        specs = applied(specs, change)
        alone = applied(specs, config_specs.plan_unset(specs, ['bios'],
                                                       templates))
        self.assertEqual(applied(GOLD, config_specs.plan_set(
            GOLD, [ON, RAID], templates)), alone)

    def test_hand_set_specs_are_kept(self):
        specs = dict(GOLD, **{'trait:CUSTOM_MINE': 'required'})
        change = config_specs.plan_set(specs, [ON], TEMPLATES)
        self.assertNotIn('trait:CUSTOM_MINE', change.unset)


class TestPlanUnset(testtools.TestCase):
    def test_removes_exactly_what_set_added(self):
        specs = dict(GOLD, **{'trait:CUSTOM_MINE': 'required'})
        set_specs = applied(specs, config_specs.plan_set(
            specs, [ON, RAID], TEMPLATES))
        change = config_specs.plan_unset(
            set_specs, ['hyperthreading', 'disks'], TEMPLATES)
        self.assertEqual(specs, applied(set_specs, change))

    def test_template_gone_still_removes_the_conventional_trait(self):
        specs = applied(GOLD, config_specs.plan_set(GOLD, [ON], TEMPLATES))
        change = config_specs.plan_unset(specs, ['hyperthreading'], {})
        self.assertEqual(GOLD, applied(specs, change))

    def test_forbidden_trait_set_by_hand_is_not_ours(self):
        specs = dict(GOLD, **{'deploy-config:hyperthreading': 'enabled',
                              ON_TRAIT: 'forbidden'})
        change = config_specs.plan_unset(specs, ['hyperthreading'], TEMPLATES)
        self.assertEqual(['deploy-config:hyperthreading'], change.unset)

    def test_type_not_on_the_flavor(self):
        exc = self.assertRaises(exceptions.CommandError,
                                config_specs.plan_unset, GOLD,
                                ['hyperthreading'], TEMPLATES)
        self.assertIn('no deploy config of type hyperthreading', str(exc))


class TestDrift(testtools.TestCase):
    def test_in_sync(self):
        specs = applied(GOLD, config_specs.plan_set(GOLD, [ON], TEMPLATES))
        self.assertEqual([], config_specs.drift(specs, TEMPLATES))

    def test_config_without_its_trait(self):
        specs = dict(GOLD, **{'deploy-config:hyperthreading': 'enabled'})
        (found,) = config_specs.drift(specs, TEMPLATES)
        self.assertIn('%s=required is missing' % ON_TRAIT, found)

    def test_template_gone(self):
        specs = applied(GOLD, config_specs.plan_set(GOLD, [ON], TEMPLATES))
        (found,) = config_specs.drift(specs, {})
        self.assertEqual('hyperthreading=enabled: no deploy template '
                         'realises it', found)

    def test_template_renamed(self):
        specs = applied(GOLD, config_specs.plan_set(GOLD, [ON], TEMPLATES))
        renamed = {ON: template(ON, name='CUSTOM_DEPLOY_CONFIG_HT_ON')}
        found = config_specs.drift(specs, renamed)
        self.assertEqual(2, len(found))
        self.assertIn('trait:CUSTOM_DEPLOY_CONFIG_HT_ON=required is missing',
                      found[0])
        self.assertIn('%s=required: no such deploy template' % ON_TRAIT,
                      found[1])


class TestReconcile(testtools.TestCase):
    SPEC = 'deploy-config:hyperthreading'

    def test_consistent_flavor_needs_nothing(self):
        specs = dict(GOLD, **{self.SPEC: 'enabled', ON_TRAIT: 'required'})
        self.assertEqual(({}, []), config_specs.reconcile(
            specs, ['hyperthreading'], TEMPLATES))

    def test_two_writers_left_both_traits(self):
        # A set enabled, B set disabled from the same old state: the value
        # is B's, the traits both
        specs = {self.SPEC: 'disabled', ON_TRAIT: 'required',
                 OFF_TRAIT: 'required', RAID_TRAIT: 'required'}
        self.assertEqual(({}, [ON_TRAIT]), config_specs.reconcile(
            specs, ['hyperthreading'], TEMPLATES))

    def test_winner_trait_removed_by_the_loser_is_restored(self):
        specs = {self.SPEC: 'disabled', ON_TRAIT: 'required'}
        self.assertEqual(({OFF_TRAIT: 'required'}, [ON_TRAIT]),
                         config_specs.reconcile(specs, ['hyperthreading'],
                                           TEMPLATES))

    def test_type_unset_concurrently_leaves_no_trait(self):
        specs = {OFF_TRAIT: 'required', RAID_TRAIT: 'required'}
        self.assertEqual(({}, [OFF_TRAIT]), config_specs.reconcile(
            specs, ['hyperthreading'], TEMPLATES))
