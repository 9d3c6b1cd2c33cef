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

from osc_deploy_config.domain.configs import config_sets
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


def _ours(specs, before, configs, templates_by_config):
    """The ``trait:`` specs ``set`` wrote that are still there: of the
    configs ``before`` asked and those asked now, each template's trait
    (of a config dropped, the convention's when its template is gone),
    and every set's."""
    dropped = [c for c in before if c not in configs]
    keys = {trait_spec(_template_trait_of(c, templates_by_config))
            for c in dropped}
    keys |= {trait_spec(templates_by_config[c]['name'])
             for c in [*before, *configs] if c in templates_by_config}
    keys |= {k for k in specs if k.startswith('trait:' + config_sets.PREFIX)}
    return {k for k in keys if specs.get(k) == REQUIRED}


def wanted_specs(configs, templates_by_config):
    """The specs that ask for ``configs`` together: a ``deploy-config:``
    spec each, and the traits of what serves them, a set's where their
    templates share a step (``config_sets``)."""
    wanted = {config_spec(c.type): c.value for c in configs}
    wanted.update((trait_spec(name), REQUIRED) for name in
                  config_sets.required_traits(configs, templates_by_config))
    return wanted


def _asking(specs, configs, templates_by_config, before):
    """The change that leaves ``specs`` (which asked for ``before``)
    asking for ``configs`` (``wanted_specs``), the traits of ours no
    longer wanted removed."""
    wanted = wanted_specs(configs, templates_by_config)
    to_set = {k: v for k, v in sorted(wanted.items()) if specs.get(k) != v}
    ours = _ours(specs, before, configs, templates_by_config)
    ours |= {config_spec(c.type) for c in before}
    return SpecChange(to_set, sorted(k for k in ours
                                     if k not in wanted and k in specs))


def plan_set(specs, configs, templates_by_config):
    """The extra-spec change that makes a flavor ask for ``configs``
    beside its other configs.

    Refuses two values for one type, a config without template, and
    configs whose templates differ on a step they share (no set can serve
    them: ``config_sets``).
    """
    specs = specs or {}
    refuse_doubled_types(configs)
    refuse_missing_templates(configs, templates_by_config)
    before = configs_of(specs)
    wanted = {c.type: c for c in before}
    wanted.update((c.type, c) for c in configs)
    return _asking(specs, sorted(wanted.values(), key=lambda c: c.type),
                   templates_by_config, before)


def needed_sets(configs, templates_by_config):
    """[config_sets.Serving] of the sets that serve ``configs`` asked
    together: the templates to make before an owner asks for them."""
    return [s for s in config_sets.serving(configs, templates_by_config)
            if config_sets.is_set(s)]


def template_traits(specs, known_traits=()):
    """The ``trait:...=required`` keys of ``specs`` that name a deploy
    config template (by the plugin's prefix, or in ``known_traits``)."""
    return sorted(k for k, v in (specs or {}).items() if v == REQUIRED and (
        k.startswith('trait:' + deploy_config.TEMPLATE_PREFIX)
        or k in known_traits))


def plan_exact(specs, configs, templates_by_config, known_traits=()):
    """The one change that leaves a flavor (or image) asking for exactly
    ``configs``, with the traits of what serves them now (each template's,
    or a set's), and no other config or template trait (another type's,
    or the trait of a template that no longer serves its kind): what a
    declared state writes, unset and set together, checking only the
    configs wanted."""
    specs = specs or {}
    refuse_doubled_types(configs)
    refuse_missing_templates(configs, templates_by_config)
    configs = sorted(configs, key=lambda c: c.type)
    change = _asking(specs, configs, templates_by_config,
                     configs_of(specs))
    wanted = wanted_specs(configs, templates_by_config)
    ours = template_traits(specs, known_traits)
    stray = [k for k in sorted(specs) if k not in wanted and (
        k.startswith(SPEC_PREFIX) or k in ours)]
    return SpecChange(change.set, sorted(set(change.unset) | set(stray)))


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
    """The extra specs ``set`` added for these types, to remove; where the
    configs left shared a set with them, the traits of what serves those
    now, to set."""
    specs = specs or {}
    before = configs_of(specs)
    by_type = {c.type: c for c in before}
    absent = [t for t in config_types if t not in by_type]
    if absent:
        raise exceptions.CommandError(
            'The %s has no deploy config of type %s: nothing to unset'
            % (owner, ', '.join(absent)))
    return _asking(specs, [c for c in before if c.type not in config_types],
                   templates_by_config, before)


def reconcile(specs, config_types, templates_by_config):
    """The change that makes the template traits agree with the configs
    ``specs`` ask for now: the traits of what serves them required, no
    other template's of these types, nor a set's or a member's they do not
    need.  After
    a write, this repairs what a concurrent change of the same flavor left
    mixed (nothing where the configs asked now cannot go together)."""
    specs = specs or {}
    configs = configs_of(specs)
    try:
        wanted = wanted_specs(configs, templates_by_config)
    except exceptions.CommandError:
        return SpecChange({}, [])
    ours = {trait_spec(t['name']) for c, t in templates_by_config.items()
            if c.type in config_types or c in configs}
    ours |= {k for k in specs if k.startswith('trait:' + config_sets.PREFIX)}
    to_set = {k: v for k, v in sorted(wanted.items())
              if k.startswith('trait:') and specs.get(k) != v}
    return SpecChange(to_set, sorted(k for k in ours if k not in wanted
                                     and specs.get(k) == REQUIRED))


def shown_serving(configs, templates_by_config):
    """What ``flavor|image deploy-config show`` says serves ``configs``
    asked together: ([config_sets.Serving], {config: its template},
    {config: its set, where one serves it}, {config: the trait spec
    required for it}); nothing where they clash (the drift says why)."""
    try:
        servings = config_sets.serving(configs, templates_by_config)
    except exceptions.CommandError:
        servings = []
    templates, sets, traits = {}, {}, {}
    for one in servings:
        for config, template in one.members.items():
            templates[str(config)] = template['name']
            traits[str(config)] = '%s=%s' % (trait_spec(one.name), REQUIRED)
            if config_sets.is_set(one):
                sets[str(config)] = one.name
    return servings, templates, sets, traits


def refuse_clashes(configs, templates_by_config):
    """Configs whose templates differ on a step they share cannot go
    together: no set serves them (``config_sets``), and ironic refuses a
    deploy with both templates."""
    config_sets.serving(configs, templates_by_config)


def drift(specs, templates_by_config, owner='flavor', sets=None):
    """What disagrees between a flavor (or image) and the templates, in
    words.  ``sets``: the names of the sets' templates that exist (None:
    not known)."""
    specs = specs or {}
    configs = configs_of(specs)
    found = ['%s: no deploy template realises it' % c for c in configs
             if c not in templates_by_config]
    explained = {trait_spec(deploy_config.template_trait(c))
                 for c in configs if c not in templates_by_config}
    try:
        serving = config_sets.serving(configs, templates_by_config)
    except exceptions.CommandError as exc:
        found.append(str(exc))
        serving = []
    for one in serving:
        key = trait_spec(one.name)
        explained.add(key)
        what = config_sets.members_text(one.members)
        if specs.get(key) != REQUIRED:
            found.append('%s: %s=required is missing (%s)' % (
                what, key, 'ask for them again: openstack %s deploy-config '
                'set' % owner if config_sets.is_set(one)
                else 'template renamed?'))
        elif config_sets.is_set(one) and sets is not None and (
                one.name not in sets):
            found.append('%s: their set %s is not made (openstack %s '
                         'deploy-config set)' % (what, one.name, owner))
    in_sets = {trait_spec(t['name']): one.name for one in serving
               if config_sets.is_set(one) for t in one.members.values()}
    found += _unexplained(specs, templates_by_config, explained, in_sets,
                          owner)
    return found


def _unexplained(specs, templates_by_config, explained, in_sets, owner):
    """The template traits of ours that ``specs`` require for no config
    they ask for, in words (``in_sets``: {trait spec of a member: the set
    that serves it here})."""
    templates = {trait_spec(t['name']) for t in templates_by_config.values()}
    found = []
    for key, value in sorted(specs.items()):
        if (not key.startswith('trait:' + deploy_config.TEMPLATE_PREFIX)
                or value != REQUIRED or key in explained):
            continue
        if key in in_sets:
            why = ('its set %s serves it here: ironic would run both and '
                   'fail the deploy' % in_sets[key])
        elif key.startswith('trait:' + config_sets.PREFIX):
            why = 'a set of configs this %s does not ask for together' % owner
        elif key in templates:
            why = 'its template has no deploy config on this %s' % owner
        else:
            why = 'no such deploy template'
        found.append('%s=required: %s' % (key, why))
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

