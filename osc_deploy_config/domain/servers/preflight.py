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

"""Before nova is asked to boot: the deploy configs of a flavor and an
image together.

nova hands ironic the flavor's and the image's required traits at once,
and ironic then runs every template they name: two values of one config
type, or two templates that run the same step, fail the deploy after the
scheduler has chosen a node.  And a config no node can take now ends in
NoValidHost.  Both are known before the boot.  Plain functions over the
APIs' dicts.
"""

import collections

from osc_lib import exceptions

from osc_deploy_config.domain.configs import config_sets
from osc_deploy_config.domain.configs import config_specs
from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.hardware import bios_registry
from osc_deploy_config.domain.hardware import tagging

# A config a boot asks for, where it comes from ("flavor bm.gold"), and
# the template its owner's required trait names for it (a set's, where a
# set serves it; None where the owner requires none for it).
Asked = collections.namedtuple('Asked', ['config', 'source', 'template'],
                               defaults=(None,))
# Extra specs whose request nova translates into more than the flavor's
# sizes and traits (numbered groups, dedicated CPUs, PCI, accelerators):
# a placement query of ours would not be the scheduler's.
_UNMODELLED = ('resources', 'trait', 'hw:cpu_policy', 'hw:cpu_thread_policy',
               'hw:pmem', 'pci_passthrough:', 'accel:', 'group_policy')


def asked(flavor, image, templates_by_config, sets=None):
    """[Asked] of a boot: the configs of the flavor's extra specs and the
    image's properties, and those of the templates their
    ``trait:*=required`` name without a config (set by hand; a set's
    members).  ``sets``: {name: template} of the sets' templates."""
    found = []
    for specs, source in ((flavor.get('extra_specs') or {},
                           'flavor %s' % flavor['name']),
                          (image or {}, 'image %s' % (image or {}).get(
                              'name', (image or {}).get('id')))):
        found += _asked_by(specs, source, templates_by_config, sets or {})
    return found


def _asked_by(specs, source, templates_by_config, sets):
    """[Asked] of one owner's specs."""
    required = config_specs.required_traits(specs)
    served = {t['name']: [c] for c, t in templates_by_config.items()}
    served.update((name, config_sets.members_of(t) or [])
                  for name, t in sets.items())
    configs = config_specs.configs_of(specs)
    for name in sorted(required & set(served)):
        configs += [c for c in served[name] if c not in configs]
    # one for each template that serves a config: a set's and a member's
    # both required (a write left half-made) are both run by ironic
    return [Asked(c, source, name) for c in configs
            for name in [n for n in sorted(required)
                         if c in served.get(n, ())] or [None]]


def refuse_conflicts(found, templates_by_config, sets=None, instead=None):
    """CommandError naming both configs and their sources when two ask for
    different values of one type, or two templates ironic would run share
    a step (``instead``: where the asks could go together, in words)."""
    refuse_doubled_types(found)
    conflict = step_conflict(found, templates_by_config, sets)
    if conflict:
        raise exceptions.CommandError(describe_step_conflict(
            found, conflict, instead))


def refuse_doubled_types(found):
    """CommandError when two ask for different values of one type."""
    by_type = {}
    for one in found:
        other = by_type.setdefault(one.config.type, one)
        if other.config != one.config:
            raise exceptions.CommandError(
                'Deploy config conflict: %s asks for %s, %s for %s; ironic '
                'would run both templates and fail the deploy. Nothing was '
                'created.' % (other.source, other.config, one.source,
                              one.config))


def step_conflict(found, templates_by_config, sets=None):
    """(Asked, Asked, (interface, step)) of two templates ironic would run
    at this boot that share a step (ironic refuses the deploy), or
    None."""
    steps = {t['name']: t.get('steps') or ()
             for t in templates_by_config.values()}
    steps.update((name, t.get('steps') or ())
                 for name, t in (sets or {}).items())
    by_step = {}
    for one in found:
        for step in steps.get(one.template, ()):
            key = (step.get('interface'), step.get('step'))
            other = by_step.setdefault(key, one)
            if other.template != one.template:
                return other, one, key
    return None


def describe_step_conflict(found, conflict, instead=None):
    """The line that refuses a boot whose templates share a step."""
    other, one, key = conflict
    return ('Deploy config conflict: %s (%s) and %s (%s) both run %s.%s; '
            'ironic would fail the deploy. Nothing was created; %s.' % (
                _what(found, other), other.source, _what(found, one),
                one.source, *key, instead or 'ask for them together in one '
                'flavor or image: their set serves them together'))


def _what(found, one):
    """The configs one template serves at this boot."""
    return ', '.join(str(a.config) for a in found
                     if a.template == one.template and a.source == one.source)


def instead(found, conflict, flavors, booted):
    """What to do instead of a boot whose templates share a step, in
    words.  One owner that asks for configs apart (a set and a member's
    own template: a write left half-made) asks for them again; a flavor
    and an image: a flavor of the booted one's class (``flavors``: as
    listed; ``booted``: the flavor, with its extra specs) that asks for
    all of them, booted from an image that asks for none, else the
    command that makes one."""
    other, one, _ = conflict
    wanted = sorted({a.config for a in found}, key=lambda c: c.type)
    if other.source == one.source:
        kind, name = one.source.split(' ', 1)
        return ('the %s asks for them apart: ask for them again, and their '
                'set serves them (openstack %s deploy-config set %s %s)' % (
                    kind, kind, name, ' '.join(
                        str(c) for c in wanted if any(
                            a.config == c and a.source == one.source
                            for a in found))))
    if set(wanted) <= set(config_specs.configs_of(booted.get(
            'extra_specs'))):
        return ('flavor %s asks for all of them: boot it from an image that '
                'asks for none' % booted['name'])
    resource_class = config_specs.resource_class_of(booted.get(
        'extra_specs'))
    fitting = sorted(f['name'] for f in flavors
                     if set(wanted) <= set(config_specs.configs_of(
                         f.get('extra_specs')))
                     and f['name'] != booted['name']
                     and config_specs.resource_class_of(
                         f.get('extra_specs')) == resource_class)
    return '%s, and boot it from an image that asks for none' % (
        'use flavor %s, which asks for all of them' % ', '.join(fitting)
        if fitting else 'ask for all of them in one flavor (openstack '
        'flavor deploy-config set FLAVOR %s)' % ' '.join(
            str(c) for c in wanted))


def judged(flavor):
    """Whether ``config_specs.placement_request`` is the scheduler's own
    query for this flavor (no extra spec nova translates into more)."""
    return not any(key.startswith(_UNMODELLED) and not key.startswith(
        ('resources:', 'trait:'))
        for key in flavor.get('extra_specs') or {})


def asks_templates(required):
    return any(t.startswith(deploy_config.TEMPLATE_PREFIX) for t in required)


def asks_text(found):
    """``hyperthreading=disabled (flavor bm.gold), ...``, each once."""
    return ', '.join(dict.fromkeys('%s (%s)' % (a.config, a.source)
                                   for a in found))


def refuse_unschedulable(found, candidates):
    """CommandError when placement offers no node for a boot that asks for
    deploy configs."""
    if found and not candidates:
        raise exceptions.CommandError(
            'No node can take %s now: placement offers none with the '
            "flavor's resources and the templates' traits (see openstack "
            'flavor deploy-config show, and openstack baremetal node '
            'deploy-config list). Nothing was created.' % asks_text(found))


def bios_settings(found, templates_by_config):
    """{name: value} of the BIOS settings the asked configs' templates
    set."""
    wanted = {}
    for asked in found:
        template = templates_by_config.get(asked.config)
        if template:
            wanted.update(tagging.bios_settings(template))
    return wanted


def refused_steps(wanted, registries, same_step_unlocks=True):
    """{node: why} of the nodes (``registries``: {node: its detailed BIOS
    settings, as ironic caches them}) whose ironic would refuse ``wanted``
    before writing it; a node without a registry is not judged."""
    found = {}
    for node, registry in registries.items():
        if not bios_registry.has_registry(registry):
            continue
        problems = bios_registry.problems(
            wanted, {node: registry}, same_step_unlocks=same_step_unlocks)
        if problems:
            found[node] = '; '.join('%s (%s)' % (p.setting, p.reason)
                                    for p in problems)
    return found


def describe_refused(found, refusing):
    """The line that refuses a boot every candidate node would fail."""
    return ('No node can take %s now: ironic would refuse the templates\' '
            'BIOS steps on every node the scheduler could choose (%s). '
            'Nothing was created; see openstack baremetal node deploy-config '
            'list, and prepare or sync the nodes.' % (
                asks_text(found),
                '; '.join('%s: %s' % item for item in sorted(
                    refusing.items()))))
