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

"""The deploy-config specs of a config's owners, flavors and images: what
they ask for, and the translation that the request filter of the design
does once.

An image asks for configs exactly as a flavor does (nova hands ironic the
image's ``trait:*=required`` properties with the flavor's), so these
functions serve both: ``specs`` are a flavor's extra specs or an image's
properties.

A flavor asks for a config with ``deploy-config:<type>=<value>``; nova's
scheduler only understands required traits, and ironic applies a template
when its name is an instance trait.  So ``set`` writes both the config and
``trait:<template trait>=required``, and never a capability trait such as
``trait:HW_CPU_HYPERTHREADING=required``, which nova rejects and which would
mean "hyperthreading is on" anyway.  Plain functions over extra-spec dicts.
"""

import collections

from osc_lib import exceptions

from osc_deploy_config.domain.configs import deploy_config

SPEC_PREFIX = 'deploy-config:'
REQUIRED = 'required'
FORBIDDEN = 'forbidden'

SpecChange = collections.namedtuple('SpecChange', ['set', 'unset'])


def trait_spec(trait):
    return 'trait:%s' % trait


def config_spec(config_type):
    return SPEC_PREFIX + config_type


def required_traits(specs):
    """The traits of ``trait:<trait>=required`` in extra specs (or image
    properties)."""
    return {key[len('trait:'):] for key, value in (specs or {}).items()
            if key.startswith('trait:') and value == REQUIRED}


def resource_class_of(specs):
    """The custom resource class a flavor asks for (placement's name: one
    unit of ``resources:CUSTOM_<CLASS>``), or None: none, or several."""
    found = [key[len('resources:'):] for key, value in (specs or {}).items()
             if key.startswith('resources:CUSTOM_') and str(value) != '0']
    return found[0] if len(found) == 1 else None


def refuse_unserved(configs, known, owner, resource_class=None):
    """A config served per hardware kind needs the owner's kind to have a
    template (``known``: templates.ConfigTemplates; ``owner``: 'flavor
    NAME'; ``resource_class``: the one it asks for, or None)."""
    served = known.for_class(resource_class)
    for config in configs:
        kinds = known.classes(config)
        if config in served or not kinds:
            continue
        if resource_class is None:
            raise exceptions.CommandError(
                '%s asks for no resource class, and %s is served per '
                'hardware kind (%s): ask for it in the flavors of those '
                'classes, or create a template of it for every kind'
                % (owner.capitalize(), config, ', '.join(kinds)))
        raise exceptions.CommandError(
            'No deploy template realises %s on resource class %s (%s has '
            'templates for %s): create one (openstack baremetal deploy '
            'template create --config %s --resource-class ...)' % (
                config, resource_class, config, ', '.join(kinds), config))


def configs_of(specs):
    """The configs a flavor's extra specs ask for."""
    return sorted(
        (deploy_config.Config(key[len(SPEC_PREFIX):], str(value))
         for key, value in (specs or {}).items()
         if key.startswith(SPEC_PREFIX)),
        key=lambda c: c.type)


def _template_trait_of(config, templates_by_config):
    """The trait a config's template gives; the naming convention's when
    the template is gone (its spec is still ours to remove)."""
    template = templates_by_config.get(config)
    if template:
        return template['name']
    return deploy_config.template_trait(config)


def _ours(specs, config, templates_by_config):
    """The specs ``set`` wrote for a config that are still there."""
    keys = [config_spec(config.type)]
    trait_key = trait_spec(_template_trait_of(config, templates_by_config))
    if specs.get(trait_key) == REQUIRED:
        keys.append(trait_key)
    return keys


def plan_set(specs, configs, templates_by_config):
    """The extra-spec change that makes a flavor ask for ``configs``.

    Refuses two values for one type, a config without template, and
    configs whose templates would run the same step (ironic fails such a
    deploy).
    """
    specs = specs or {}
    refuse_doubled_types(configs)
    refuse_missing_templates(configs, templates_by_config)
    wanted = {c.type: c for c in configs_of(specs)}
    wanted.update((c.type, c) for c in configs)
    refuse_step_conflicts(sorted(wanted.values(), key=lambda c: c.type),
                          templates_by_config)

    to_set, to_unset = {}, []
    for config in configs:
        key = config_spec(config.type)
        current = deploy_config.Config(config.type, str(specs[key])) \
            if key in specs else None
        if current and current != config:
            to_unset += [k for k in _ours(specs, current, templates_by_config)
                         if k != config_spec(config.type)]
        trait_key = trait_spec(templates_by_config[config]['name'])
        for key, value in ((config_spec(config.type), config.value),
                           (trait_key, REQUIRED)):
            if specs.get(key) != value:
                to_set[key] = value
    return SpecChange(to_set, [k for k in to_unset if k not in to_set])


def refuse_doubled_types(configs):
    """One value per config type in one call."""
    types = collections.Counter(c.type for c in configs)
    doubled = sorted(t for t, n in types.items() if n > 1)
    if doubled:
        raise exceptions.CommandError(
            'Two values for the deploy config type %s in one call'
            % ', '.join(doubled))


def refuse_missing_templates(configs, templates_by_config):
    """A config needs its template."""
    missing = [str(c) for c in configs if c not in templates_by_config]
    if missing:
        raise exceptions.CommandError(
            'No deploy template realises %s: create one first (openstack '
            'baremetal deploy template create --config ...)'
            % ', '.join(missing))


def plan_unset(specs, config_types, templates_by_config, owner='flavor'):
    """The extra specs ``set`` added for these types, to remove."""
    specs = specs or {}
    by_type = {c.type: c for c in configs_of(specs)}
    absent = [t for t in config_types if t not in by_type]
    if absent:
        raise exceptions.CommandError(
            'The %s has no deploy config of type %s: nothing to unset'
            % (owner, ', '.join(absent)))
    keys = []
    for config_type in dict.fromkeys(config_types):
        keys += _ours(specs, by_type[config_type], templates_by_config)
    return SpecChange({}, keys)


def reconcile(specs, config_types, templates_by_config):
    """The change that makes each type's template traits agree with the
    type's value now in ``specs``: its template's trait required, no other
    template's of that type.  After a write, this repairs what a
    concurrent change of the same flavor left mixed."""
    specs = specs or {}
    to_set, to_unset = {}, []
    for config_type in dict.fromkeys(config_types):
        key = config_spec(config_type)
        current = deploy_config.Config(config_type, str(specs[key])) \
            if key in specs else None
        for config, template in sorted(templates_by_config.items(),
                                       key=lambda item: item[1]['name']):
            if config.type != config_type:
                continue
            trait_key = trait_spec(template['name'])
            if config == current and specs.get(trait_key) != REQUIRED:
                to_set[trait_key] = REQUIRED
            elif config != current and specs.get(trait_key) == REQUIRED:
                to_unset.append(trait_key)
    return SpecChange(to_set, to_unset)


def refuse_step_conflicts(configs, templates_by_config):
    """Ironic refuses a deploy whose templates share an (interface, step)."""
    seen = {}
    for config in configs:
        template = templates_by_config.get(config)
        for step in (template or {}).get('steps') or ():
            key = (step.get('interface'), step.get('step'))
            if key in seen and seen[key] != config:
                raise exceptions.CommandError(
                    'Deploy configs %s and %s both run %s.%s: ironic would '
                    'fail the deploy' % (seen[key], config, *key))
            seen[key] = config


def drift(specs, templates_by_config, owner='flavor'):
    """What disagrees between a flavor (or image) and the templates, in
    words."""
    specs = specs or {}
    found = []
    explained = set()
    for config in configs_of(specs):
        template = templates_by_config.get(config)
        if template is None:
            found.append('%s: no deploy template realises it' % config)
            explained.add(trait_spec(deploy_config.template_trait(config)))
            continue
        key = trait_spec(template['name'])
        explained.add(key)
        if specs.get(key) != REQUIRED:
            found.append('%s: %s=required is missing (template renamed?)'
                         % (config, key))
    template_traits = {trait_spec(t['name'])
                       for t in templates_by_config.values()}
    for key, value in sorted(specs.items()):
        if (key.startswith('trait:' + deploy_config.TEMPLATE_PREFIX)
                and value == REQUIRED and key not in explained):
            found.append('%s=required: %s' % (key, (
                'its template has no deploy config on this %s' % owner
                if key in template_traits else 'no such deploy template')))
    return found


def placement_request(flavor, image=None):
    """What nova's scheduler asks placement for a server of this flavor
    booted from this image (its unnumbered request group): ``(resources,
    required, forbidden)``.  The flavor's sizes, overridden by
    ``resources:<class>=<amount>`` (0 drops one), its
    ``trait:<trait>=required|forbidden``, and the image's
    ``trait:<trait>=required`` properties."""
    specs = flavor.get('extra_specs') or {}
    swap_gb = -(-int(flavor.get('swap') or 0) // 1024)
    resources = {
        'VCPU': flavor.get('vcpus') or 0,
        'MEMORY_MB': flavor.get('ram') or 0,
        'DISK_GB': (flavor.get('disk') or 0) + (
            flavor.get('OS-FLV-EXT-DATA:ephemeral') or 0) + swap_gb,
    }
    resources.update((key[len('resources:'):], int(value))
                     for key, value in specs.items()
                     if key.startswith('resources:'))
    forbidden = {key[len('trait:'):] for key, value in specs.items()
                 if key.startswith('trait:') and value == FORBIDDEN}
    return ({rc: n for rc, n in resources.items() if n > 0},
            required_traits(specs) | required_traits(image), forbidden)

