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

from osc_deploy_config.domain.configs import config_specs
from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.hardware import bios_registry
from osc_deploy_config.domain.hardware import tagging

# A config a boot asks for, and where it comes from ("flavor bm.gold").
Asked = collections.namedtuple('Asked', ['config', 'source'])
# Extra specs whose request nova translates into more than the flavor's
# sizes and traits (numbered groups, dedicated CPUs, PCI, accelerators):
# a placement query of ours would not be the scheduler's.
_UNMODELLED = ('resources', 'trait', 'hw:cpu_policy', 'hw:cpu_thread_policy',
               'hw:pmem', 'pci_passthrough:', 'accel:', 'group_policy')


def asked(flavor, image, templates_by_config):
    """[Asked] of a boot: the configs of the flavor's extra specs and the
    image's properties, and the templates their ``trait:*=required`` name
    without a config (set by hand)."""
    by_trait = {t['name']: c for c, t in templates_by_config.items()}
    found = []
    for specs, source in ((flavor.get('extra_specs') or {},
                           'flavor %s' % flavor['name']),
                          (image or {}, 'image %s' % (image or {}).get(
                              'name', (image or {}).get('id')))):
        configs = config_specs.configs_of(specs)
        configs += [by_trait[t] for t in sorted(config_specs.required_traits(
            specs)) if t in by_trait and by_trait[t] not in configs]
        found += [Asked(c, source) for c in configs]
    return found


def refuse_conflicts(found, templates_by_config):
    """CommandError naming both configs and their sources when two ask for
    different values of one type, or their templates share a step."""
    by_type, by_step = {}, {}
    for one in found:
        other = by_type.setdefault(one.config.type, one)
        if other.config != one.config:
            raise exceptions.CommandError(
                'Deploy config conflict: %s asks for %s, %s for %s; ironic '
                'would run both templates and fail the deploy. Nothing was '
                'created.' % (other.source, other.config, one.source,
                              one.config))
        template = templates_by_config.get(one.config) or {}
        for step in template.get('steps') or ():
            key = (step.get('interface'), step.get('step'))
            other = by_step.setdefault(key, one)
            if other.config != one.config:
                raise exceptions.CommandError(
                    'Deploy config conflict: %s (%s) and %s (%s) both run '
                    '%s.%s; ironic would fail the deploy. Nothing was '
                    'created.' % (other.config, other.source, one.config,
                                  one.source, *key))


def judged(flavor):
    """Whether ``config_specs.placement_request`` is the scheduler's own
    query for this flavor (no extra spec nova translates into more)."""
    return not any(key.startswith(_UNMODELLED) and not key.startswith(
        ('resources:', 'trait:'))
        for key in flavor.get('extra_specs') or {})


def asks_templates(required):
    return any(t.startswith(deploy_config.TEMPLATE_PREFIX) for t in required)


def refuse_unschedulable(found, candidates):
    """CommandError when placement offers no node for a boot that asks for
    deploy configs."""
    if found and not candidates:
        raise exceptions.CommandError(
            'No node can take %s now: placement offers none with the '
            "flavor's resources and the templates' traits (see openstack "
            'flavor deploy-config show, and openstack baremetal node '
            'deploy-config list). Nothing was created.' % ', '.join(
                '%s (%s)' % (a.config, a.source) for a in found))


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
                ', '.join('%s (%s)' % (a.config, a.source) for a in found),
                '; '.join('%s: %s' % item for item in sorted(
                    refusing.items()))))
