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

"""Deploy templates as plain dicts: what to create, what to show, which
template realises which config."""

import json

from osc_lib import exceptions

from osc_deploy_config import deploy_config
from osc_deploy_config import steps as dsteps


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


def build_steps(steps_source=None, bios_settings=(), raid_config_file=None,
                stdin=None):
    """Steps from ``--steps`` plus the BIOS and RAID profile options,
    validated as ironic will; None when none was given."""
    found = []
    if steps_source is not None:
        loaded = dsteps.load_steps(steps_source, stdin)
        found.extend(dsteps.validate_steps(loaded))
    if bios_settings:
        found.append(dsteps.bios_step(
            [dsteps.parse_bios_setting(s) for s in bios_settings]))
    if raid_config_file:
        found.append(dsteps.raid_step(
            dsteps.load_raid_config(raid_config_file)))
    return dsteps.validate_steps(found) if found else None


def annotate(extra, config, capability_traits):
    """``extra`` with the config annotation; refuses an ``--extra`` that
    contradicts it."""
    annotation = deploy_config.template_extra(config, capability_traits)
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


def by_config(templates):
    """{config: template} for the annotated templates of a listing."""
    return {deploy_config.config_of(t.get('extra')): t for t in templates
            if deploy_config.config_of(t.get('extra'))}


def refuse_second_template(templates, config, name):
    """One template per config: refuse when another one has it."""
    other = by_config(templates).get(config)
    if other and other['name'] != name:
        raise exceptions.CommandError(
            'Deploy config %s already has a template, %s (%s): one template '
            'per config' % (config, other['name'], other['uuid'])
        )


def with_config_fields(template):
    """The template with our derived fields, for display."""
    extra = template.get('extra') or {}
    config = deploy_config.config_of(extra)
    return dict(template,
                config=str(config) if config else None,
                capability_traits=deploy_config.capability_traits_of(extra))


def row(template, columns):
    return tuple(template.get(column) for column in columns)
