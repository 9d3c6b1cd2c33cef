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

"""Deploy templates: create, show, list, change and delete them.

Everything the user gives is validated before the first request; a config
gets one template only, and a template's BIOS settings are checked against
the BIOS registry of the nodes that can take it.
"""

import concurrent.futures
import logging

from openstack import exceptions as sdk_exceptions
from osc_lib import exceptions
from osc_lib import utils

from osc_deploy_config.domain import bios_registry
from osc_deploy_config.domain import deploy_config
from osc_deploy_config.domain import effects
from osc_deploy_config.domain import step_safety
from osc_deploy_config.domain import tagging
from osc_deploy_config.domain import templates
from osc_deploy_config.services import versions

LOG = logging.getLogger(__name__)
# How many nodes' BIOS registries are read at once.
READERS = 8


def create(clients, given):
    """A new template from a ``templates.TemplateInput``; it, with our
    config fields."""
    config = templates.given_config(given)
    if config is None and (given.requires_traits
                           or given.no_requires_trait):
        raise exceptions.CommandError(
            '--requires-trait and --no-requires-trait need --config')
    name = templates.template_name(given.name, config)
    body = templates.create_body(
        name, templates.build_steps(given),
        templates.parse_extra(given.extra), config,
        config and templates.capability_traits_for(
            config, given.requires_traits, given.no_requires_trait),
        given.uuid)
    ironic = clients.ironic()
    if config:
        templates.refuse_second_template(ironic.config_templates(), config,
                                         name)
    check_bios_registry(clients, body['steps'], body.get('extra'))
    try:
        created = ironic.create_deploy_template(body)
    except sdk_exceptions.ConflictException as exc:
        raise exceptions.CommandError('Cannot create deploy template %s: %s'
                                      % (name, exc.details or exc)) from None
    _warn_deploy_only(name, body['steps'])
    return templates.with_config_fields(created)


def update(clients, ident, given):
    """Change a template's name, steps, extra or config annotation (a
    ``templates.TemplateInput``); False when nothing was given to set."""
    config = templates.given_config(given)
    if given.name:
        deploy_config.validate_template_name(given.name)
    steps = templates.build_steps(given)
    extra = templates.parse_extra(given.extra)
    for key in extra:
        templates.extra_path(key)
    annotating = bool(config or given.requires_traits
                      or given.no_requires_trait)
    if not (given.name or steps or extra or annotating):
        return False
    ironic = clients.ironic()
    current = find(ironic, ident)
    if annotating:
        config, traits = templates.annotation_for_set(
            current, config, given.requires_traits, given.no_requires_trait)
        extra = templates.annotate(extra, config, traits)
        templates.refuse_second_template(ironic.config_templates(), config,
                                         current['name'])
    if steps or annotating:
        check_bios_registry(clients, steps or current['steps'],
                            dict(current.get('extra') or {}, **extra))
    ironic.patch_deploy_template(current['uuid'], templates.set_patch(
        given.name, steps, extra))
    if steps:
        _warn_deploy_only(given.name or current['name'], steps)
    return True


def _warn_deploy_only(name, steps):
    """Say when a template's steps would destroy a running server's data:
    it applies at deploy, never in a toggle."""
    warning = step_safety.deploy_only_warning(name, steps)
    if warning:
        LOG.warning('%s', warning)


def unset(clients, ident, keys, config=False):
    """Remove extra keys (and with ``config`` the config annotation)."""
    for key in keys:
        templates.extra_path(key)
    ironic = clients.ironic()
    current = find(ironic, ident)
    ironic.patch_deploy_template(current['uuid'], templates.unset_patch(
        current, keys, config))


def delete(clients, idents):
    """Delete each template; (the deleted ones, a line per failure)."""
    ironic = clients.ironic()
    deleted, failures = [], []
    for ident in idents:
        try:
            ironic.delete_deploy_template(ident)
        except sdk_exceptions.NotFoundException:
            failures.append('Failed to delete deploy template %s: not found'
                            % ident)
        except sdk_exceptions.HttpException as exc:
            failures.append('Failed to delete deploy template %s: %s'
                            % (ident, exc.details or exc))
        else:
            deleted.append(ident)
    return deleted, failures


def show(clients, ident=None, config=None, fields=()):
    """One template by name or UUID, or the template of ``config`` (with
    our config fields), as a dict in the order to show."""
    if bool(ident) == bool(config):
        raise exceptions.CommandError(
            'Give either a template or --config TYPE=VALUE')
    config = config and deploy_config.parse_config(config)
    ironic = clients.ironic()
    if config:
        found = ironic.config_templates(fields=None).get(config)
        if found is None:
            raise exceptions.CommandError(
                'No deploy template realises the deploy config %s' % config)
        found = templates.with_config_fields(found)
        found.pop('links', None)
        return {k: found[k] for k in fields} if fields else found
    template = find(ironic, ident, fields or None)
    template.pop('links', None)
    return dict(sorted(template.items()))


def list_templates(clients, detail=False, fields=(), limit=None,
                   marker=None, sort=None, config=None, config_type=None):
    """(columns, rows) of the templates, filtered by config or type."""
    if limit is not None and limit < 0:
        raise exceptions.CommandError(
            'Expected non-negative --limit, got %s' % limit)
    config = deploy_config.parse_config(config) if config else None
    if config_type:
        config_type = deploy_config.parse_config_type(config_type)
    columns, wanted = templates.list_columns(
        detail, list(fields), filtering=bool(config or config_type))
    found = [templates.with_config_fields(t) for t in
             clients.ironic().deploy_templates(
                 detail=detail, fields=wanted, limit=limit, marker=marker)]
    if config_type:
        found = [t for t in found
                 if (t['config'] or '').split('=')[0] == config_type]
    if config:
        found = [t for t in found if t['config'] == str(config)]
    found = utils.sort_items(found, sort)
    return columns, [templates.row(t, columns) for t in found]


def find(ironic, ident, fields=None):
    """A template by name or UUID; one line when there is none."""
    try:
        return ironic.deploy_template(ident, fields)
    except sdk_exceptions.NotFoundException:
        raise exceptions.CommandError(
            'Deploy template %s not found' % ident) from None


def check_bios_registry(clients, steps, extra):
    """Refuse, in one line, BIOS settings of ``steps`` that the BIOS
    registry of a node capable of the template (by ``extra``) refuses; warn
    about the capable nodes whose BIOS reports no registry, and when the
    nodes cannot be read."""
    wanted = effects.bios_settings(steps)
    if not wanted:
        return
    try:
        registries = _capable_registries(clients, extra)
    except (exceptions.CommandError, sdk_exceptions.HttpException) as exc:
        LOG.warning('BIOS settings not checked against the nodes\' BIOS '
                    'registry: %s', getattr(exc, 'details', None) or exc)
        return
    without = sorted(n for n, entries in registries.items()
                     if not bios_registry.has_registry(entries))
    if without:
        LOG.warning('BIOS settings not checked on %s: no BIOS registry '
                    'reported', ', '.join(without))
    found = bios_registry.problems(wanted, {
        n: entries for n, entries in registries.items()
        if n not in without})
    if found:
        raise exceptions.CommandError(bios_registry.describe(found))


def _capable_registries(clients, extra):
    """{node label: its detailed BIOS settings} of the nodes capable of a
    template with this ``extra``, read concurrently."""
    api = clients.ironic(versions.DEPLOY_TEMPLATES, versions.NODE_TRAITS,
                         versions.NODE_RETIREMENT)
    capable = [n for n in api.nodes(('uuid', 'name', 'traits', 'retired'))
               if tagging.capable(n, {'extra': extra})]
    with concurrent.futures.ThreadPoolExecutor(READERS) as pool:
        return dict(zip(
            [tagging.node_label(n) for n in capable],
            pool.map(api.bios_registry, [n['uuid'] for n in capable]),
            strict=True))
