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

"""Deploy templates as plain dicts: what to create, change and show, which
template realises which config."""

import collections
import json
import re

from osc_lib import exceptions

from osc_deploy_config.domain.configs import config_sets
from osc_deploy_config.domain.configs import config_specs
from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.configs import steps as dsteps

# python-ironicclient's columns, in its order: listed, and in detail.
LIST_FIELDS = ('uuid', 'name')
FIELDS = ('uuid', 'name', 'steps', 'extra', 'created_at', 'updated_at')
# Ours, derived from extra (with_config_fields).
CONFIG_FIELDS = ('config', 'capability_traits', 'resource_class')
# A set's, shown in detail (with_set_fields).
SET_FIELDS = ('members', 'current')
CONFIG_KEYS = (deploy_config.EXTRA_TYPE, deploy_config.EXTRA_VALUE,
               deploy_config.EXTRA_REQUIRES, deploy_config.EXTRA_CLASS)
# ironic's JSON patch path pattern, matched against the whole key
# What a user gives to create or change a template, as given (validated by
# ``create_body``'s callers, in this order: traits, config, name, steps,
# extra).  ``steps``: the ``--steps`` source; ``extra``: KEY=VALUE pairs.
TemplateInput = collections.namedtuple('TemplateInput', [
    'name', 'uuid', 'steps', 'bios_settings', 'raid_config', 'extra',
    'config', 'requires_traits', 'no_requires_trait', 'stdin',
    'resource_class'], defaults=[None])
_PATCHABLE_KEY = re.compile(r'[\w-]+')
# In a template's extra: its delete is under way (a rerun finishes it).
DELETING = 'deploy_config_deleting'


def parse_extra(pairs, option='--extra'):
    """``['k=v', ...]`` -> dict; values that are JSON are decoded, as
    python-ironicclient does."""
    extra = {}
    for pair in pairs or ():
        key, sep, value = pair.partition('=')
        if not sep or not key:
            raise exceptions.CommandError(
                'Invalid %s %r: expected KEY=VALUE' % (option, pair)
            )
        try:
            extra[key] = json.loads(value)
        except ValueError:
            extra[key] = value
    return extra


def build_steps(given):
    """Steps from ``--steps`` plus the BIOS and RAID profile options of a
    ``TemplateInput``, validated as ironic will; None when none was
    given."""
    found = []
    if given.steps is not None:
        loaded = dsteps.load_steps(given.steps, given.stdin)
        found.extend(dsteps.validate_steps(loaded))
    if given.bios_settings:
        found.append(dsteps.bios_step(
            [dsteps.parse_bios_setting(s) for s in given.bios_settings]))
    if given.raid_config:
        found.append(dsteps.raid_step(
            dsteps.load_raid_config(given.raid_config)))
    return dsteps.validate_steps(found) if found else None


def given_config(given):
    """The config of a ``TemplateInput`` (None without ``--config``),
    after its capability traits are checked."""
    if given.requires_traits:
        deploy_config.validate_traits(given.requires_traits)
    return deploy_config.parse_config(given.config) if given.config else None


def annotate(extra, config, capability_traits, resource_class=None):
    """``extra`` with the config annotation; refuses an ``--extra`` that
    contradicts it."""
    annotation = deploy_config.template_extra(config, capability_traits,
                                              resource_class)
    for key, value in annotation.items():
        if key in extra and extra[key] != value:
            raise exceptions.CommandError(
                '--extra %s=%s contradicts the deploy config %s'
                % (key, extra[key], config)
            )
    return dict(extra, **annotation)


def capability_traits_for(config, requires_traits, no_requires_trait):
    """The capability traits of a new template for ``config``."""
    if no_requires_trait:
        return []
    if requires_traits:
        return deploy_config.validate_traits(requires_traits)
    return deploy_config.default_capability_traits(config.type)


class ConfigTemplates(dict):
    """The templates that realise deploy configs: {Config: the template
    for every hardware kind}, and ``per_class`` {Config: {resource class
    (placement's name): the template for that kind alone}}.  A kind with
    no template of its own takes the one for every kind.  ``sets``: {name:
    template} of the sets the plugin made (``config_sets``)."""

    def __init__(self, listed=()):
        super().__init__()
        self.per_class = {}
        self.sets = {}
        for template in listed:
            extra = template.get('extra')
            if config_sets.members_of(template) is not None:
                self.sets[template['name']] = template
                continue
            config = deploy_config.config_of(extra)
            if config is None:
                continue
            resource_class = deploy_config.resource_class_of(extra)
            if resource_class:
                self.per_class.setdefault(config, {})[resource_class] = \
                    template
            else:
                self[config] = template

    def for_class(self, resource_class):
        """{Config: template} on the hardware of a resource class
        (placement's name; None: the templates for every kind only)."""
        found = dict(self)
        for config, by_class in self.per_class.items():
            if resource_class in by_class:
                found[config] = by_class[resource_class]
        return found

    def for_hardware(self, node=None, flavor_specs=None):
        """{Config: template} on a server's hardware: its node's resource
        class, or (no node read) the one its flavor asks for."""
        if node is not None and node.get('resource_class'):
            return self.for_class(deploy_config.placement_class(
                node['resource_class']))
        return self.for_class(config_specs.resource_class_of(flavor_specs))

    def realises(self, config):
        """Whether a template realises the config on some kind."""
        return config in self or config in self.per_class

    def classes(self, config):
        """The resource classes with a template of their own for the
        config, sorted."""
        return sorted(self.per_class.get(config, {}))

    def every(self):
        """Every template of a config, in name order."""
        return sorted(list(self.values()) + [
            t for by_class in self.per_class.values()
            for t in by_class.values()], key=lambda t: t['name'])

    def every_set(self):
        """Every set's template, in name order."""
        return [self.sets[name] for name in sorted(self.sets)]

    def set_members(self, template):
        """{Config: template} of a set's members on the kind it serves, as
        they are now; None where one has no template there."""
        configs = config_sets.members_of(template)
        on_kind = self.for_class(deploy_config.resource_class_of(
            template.get('extra')))
        if not configs or any(c not in on_kind for c in configs):
            return None
        return {c: on_kind[c] for c in configs}

    def sets_of(self, template):
        """The sets' templates that have this template among their
        members, in name order."""
        return [s for s in self.every_set() if any(
            t['name'] == template['name']
            for t in (self.set_members(s) or {}).values())]


def by_config(templates):
    """The ConfigTemplates of the annotated templates of a listing."""
    return ConfigTemplates(templates)


def refuse_second_template(known, config, name, resource_class=None):
    """One template per config and kind (``known``: ConfigTemplates;
    ``resource_class``: ironic's or placement's name, None: every
    kind)."""
    if resource_class:
        other = known.per_class.get(config, {}).get(
            deploy_config.placement_class(resource_class))
    else:
        other = known.get(config)
    if other and other['name'] != name:
        raise exceptions.CommandError(
            'Deploy config %s already has a template%s, %s (%s): one template '
            'per config and kind' % (
                config, ' for resource class %s' % resource_class
                if resource_class else '', other['name'], other['uuid']))


def with_config_fields(template):
    """The template with our derived fields, for display."""
    extra = template.get('extra') or {}
    config = deploy_config.config_of(extra)
    return dict(template,
                config=str(config) if config else None,
                capability_traits=deploy_config.capability_traits_of(extra),
                resource_class=extra.get(deploy_config.EXTRA_CLASS)
                if config else None)


def with_set_fields(template, known):
    """A set's template with its members and whether it is built from
    them as they are now (``known``: ConfigTemplates, with the steps);
    any other template with both None."""
    configs = config_sets.members_of(template)
    if configs is None:
        return dict(template, members=None, current=None)
    return dict(template, members=[str(c) for c in configs],
                current=config_sets.current(template,
                                            known.set_members(template)))


def row(template, columns):
    return tuple(template.get(column) for column in columns)


def template_name(name, config, resource_class=None):
    """The name of a new template: the one given, else its config's
    template trait (for its resource class); a trait ironic accepts."""
    if config is None and not name:
        raise exceptions.CommandError(
            'Give the template a name, or a --config to derive it from')
    return deploy_config.validate_template_name(
        name or deploy_config.template_trait(config, resource_class))


def create_body(name, steps, extra, config=None, capability_traits=(),
                uuid=None, resource_class=None):
    """The POST body of a new template, annotated with its config."""
    if steps is None:
        raise exceptions.CommandError(
            'Give the steps: --steps, --bios-setting or --raid-config')
    if config:
        extra = annotate(extra, config, capability_traits, resource_class)
    body = {'name': name, 'steps': steps}
    if extra:
        body['extra'] = extra
    if uuid:
        body['uuid'] = uuid
    return body


def annotation_for_set(current, config, requires_traits, no_requires_trait):
    """The config and capability traits ``set`` annotates a template with:
    its stored traits stay unless new ones are given."""
    current_extra = current.get('extra') or {}
    config = config or deploy_config.config_of(current_extra)
    if config is None:
        raise exceptions.CommandError(
            'Deploy template %s has no deploy config: give --config '
            'TYPE=VALUE' % current['name'])
    stored = deploy_config.stored_capability_traits(current_extra)
    if stored is not None and not (requires_traits or no_requires_trait):
        traits = stored
    else:
        traits = capability_traits_for(config, requires_traits,
                                       no_requires_trait)
    return config, traits


def set_patch(name=None, steps=None, extra=None):
    """The JSON patch that sets these on a template."""
    patch = []
    if name:
        patch.append({'op': 'add', 'path': '/name', 'value': name})
    if steps:
        patch.append({'op': 'add', 'path': '/steps', 'value': steps})
    patch.extend({'op': 'add', 'path': extra_path(key), 'value': value}
                 for key, value in (extra or {}).items())
    return patch


def unset_patch(current, keys, config=False):
    """The JSON patch that removes these extra keys (and with ``config``
    the config annotation); refuses what the template does not have."""
    extra = current.get('extra') or {}
    keys = list(dict.fromkeys(keys))
    missing = [k for k in keys if k not in extra]
    if missing:
        raise exceptions.CommandError(
            'Deploy template %s has no extra %s: nothing to unset'
            % (current['name'], ', '.join(missing)))
    if config:
        if deploy_config.config_of(extra) is None:
            raise exceptions.CommandError(
                'Deploy template %s has no deploy config: nothing to unset'
                % current['name'])
        keys += [k for k in CONFIG_KEYS if k in extra and k not in keys]
    return [{'op': 'remove', 'path': extra_path(k)} for k in keys]


def extra_path(key):
    """The JSON patch path of an extra key; ironic accepts [A-Za-z0-9_-]."""
    if not _PATCHABLE_KEY.fullmatch(key):
        raise exceptions.CommandError(
            'Extra key %r cannot be changed after creation: ironic patches '
            'only keys of letters, digits, "_" and "-"' % key)
    return '/extra/%s' % key


def list_columns(detail, fields, filtering):
    """The columns ``list`` shows, and the fields to ask ironic for (None
    for every field): only those shown, plus ``extra`` for ours; ironic
    answers a thousand templates in 40 % less time than its default
    listing (tools/bench/)."""
    if detail:
        columns = FIELDS
    elif fields:
        columns = tuple(dict.fromkeys(fields))
    else:
        columns = LIST_FIELDS
    if filtering:
        columns += tuple(c for c in CONFIG_FIELDS if c not in columns)
    wanted = [c for c in columns if c not in CONFIG_FIELDS + SET_FIELDS]
    if filtering or len(wanted) < len(columns):
        wanted.append('extra')
    return columns, None if detail else list(dict.fromkeys(wanted))
