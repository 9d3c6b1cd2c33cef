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

import logging

from openstack import exceptions as sdk_exceptions
from osc_lib import exceptions
from osc_lib import utils

from osc_deploy_config.domain.configs import config_sets
from osc_deploy_config.domain.configs import config_specs
from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.configs import step_safety
from osc_deploy_config.domain.configs import templates
from osc_deploy_config.domain.grants import grants
from osc_deploy_config.domain.hardware import bios_prepare
from osc_deploy_config.domain.hardware import bios_profiles
from osc_deploy_config.domain.hardware import bios_registry
from osc_deploy_config.domain.hardware import bios_vocabulary
from osc_deploy_config.domain.hardware import effects
from osc_deploy_config.domain.hardware import tagging
from osc_deploy_config.domain.servers import set_holders
from osc_deploy_config.services import ironic as ironic_api
from osc_deploy_config.services import versions
from osc_deploy_config.use_cases.configs import set_templates
from osc_deploy_config.use_cases.hardware import hardware_kinds

LOG = logging.getLogger(__name__)
# In a template's extra: its delete is under way (a rerun finishes it).
DELETING = templates.DELETING


def create(clients, given, dry_run=False):
    """A new template from a ``templates.TemplateInput``: it, with our
    config fields (``dry_run``: as it would be).  A config of the
    vocabulary given without steps gets one template per resource class,
    from the hardware's registries (``hardware_kinds``)."""
    config = templates.given_config(given)
    if config is None and (given.requires_traits or given.no_requires_trait
                           or given.resource_class):
        raise exceptions.CommandError(
            '--requires-trait, --no-requires-trait and --resource-class need '
            '--config')
    if given.resource_class:
        deploy_config.validate_resource_class(given.resource_class)
    if (config and not given.name and given.steps is None
            and not given.bios_settings and not given.raid_config):
        names = hardware_kinds.vocabulary(clients)
        if bios_vocabulary.knows(config, names):
            return hardware_kinds.create_per_class(clients, given, config,
                                                   names, dry_run)
    name = templates.template_name(given.name, config, given.resource_class)
    body = templates.create_body(
        name, templates.build_steps(given),
        templates.parse_extra(given.extra), config,
        config and templates.capability_traits_for(
            config, given.requires_traits, given.no_requires_trait),
        given.uuid, given.resource_class)
    ironic = clients.ironic()
    if config:
        deploy_config.refuse_standard_name(name)
        templates.refuse_second_template(ironic.config_templates(), config,
                                         name, given.resource_class)
    if given.resource_class:
        deploy_config.refuse_alike_classes(given.resource_class, [
            n.get('resource_class') for n in ironic.nodes(
                ('uuid', 'resource_class'))])
    warnings = check_bios_registry(clients, body['steps'], body.get('extra'))
    if dry_run:
        _warn(warnings)
        return templates.with_config_fields(dict(body, uuid=given.uuid))
    created = hardware_kinds.post(ironic, body)
    _warn(warnings)
    _warn_deploy_only(name, body['steps'])
    return templates.with_config_fields(created)


def update(clients, ident, given):
    """Change a template's name, steps, extra or config annotation (a
    ``templates.TemplateInput``); False when nothing was given to set."""
    config, steps, extra, annotating = _checked(given)
    if not (given.name or steps or extra or annotating):
        return False
    ironic = clients.ironic()
    current = find(ironic, ident)
    _refuse_granted(current, name=given.name, steps=steps,
                    config=config or set(extra) & grants.CONTENT_KEYS,
                    resource_class=given.resource_class)
    if given.resource_class:
        deploy_config.refuse_alike_classes(given.resource_class, [
            n.get('resource_class') for n in ironic.nodes(
                ('uuid', 'resource_class'))])
    if annotating or deploy_config.config_of(current.get('extra')):
        deploy_config.refuse_standard_name(given.name or current['name'])
    if annotating:
        extra = _annotated(ironic, current, given, config, extra)
    warnings = check_bios_registry(
        clients, steps or current['steps'],
        dict(current.get('extra') or {}, **extra)) if (
            steps or annotating) else []
    stale = _sets_made_stale(ironic, current, dict(
        current, name=given.name or current['name'],
        steps=steps or current['steps'],
        extra=dict(current.get('extra') or {}, **extra)))
    ironic.patch_deploy_template(current['uuid'], templates.set_patch(
        given.name, steps, extra))
    _warn(warnings + _stale_warnings(stale))
    if steps:
        _warn_deploy_only(given.name or current['name'], steps)
    return True


def _checked(given):
    """(config, steps, extra, whether the annotation changes) of a
    ``TemplateInput`` to set, checked before any request."""
    config = templates.given_config(given)
    if given.name:
        deploy_config.validate_template_name(given.name)
    steps = templates.build_steps(given)
    extra = templates.parse_extra(given.extra)
    for key in extra:
        templates.extra_path(key)
    if given.resource_class:
        deploy_config.validate_resource_class(given.resource_class)
    return config, steps, extra, bool(
        config or given.requires_traits or given.no_requires_trait
        or given.resource_class)


def _annotated(ironic, current, given, config, extra):
    """``extra`` with the config annotation ``set`` writes; one template
    per config and kind."""
    config, traits = templates.annotation_for_set(
        current, config, given.requires_traits, given.no_requires_trait)
    resource_class = given.resource_class or (
        current.get('extra') or {}).get(deploy_config.EXTRA_CLASS)
    extra = templates.annotate(extra, config, traits, resource_class)
    templates.refuse_second_template(ironic.config_templates(), config,
                                     current['name'], resource_class)
    return extra


def _stale_warnings(stale):
    return ['Set %s is stale until sync builds it again from its members '
            '(openstack baremetal node deploy-config sync)' % name
            for name in stale]


def _sets_made_stale(ironic, current, changed):
    """The names of the sets a member's change makes stale; one line,
    before any write, when a set could not be built from its members
    then (they would differ on a step), or when the member would serve
    another config or kind."""
    _refuse_set(current)
    known = ironic.config_templates(fields=ironic_api.TEMPLATE_STEP_FIELDS)
    stale = []
    sets = known.sets_of(current)
    if sets and _serving(changed) != _serving(current):
        raise exceptions.CommandError(
            'Not changing deploy template %s: it is a member of set %s, '
            'built for its config and kind; ask the owners of the set for '
            'other configs first' % (current['name'], sets[0]['name']))
    for one in sets:
        members = {c: changed if t['uuid'] == current['uuid'] else t
                   for c, t in known.set_members(one).items()}
        try:
            config_sets.merged_steps(members)
        except exceptions.CommandError as exc:
            raise exceptions.CommandError(
                'Not changing deploy template %s: its set %s could not be '
                'built again: %s' % (current['name'], one['name'], exc)
            ) from None
        if not config_sets.current(one, members):
            stale.append(one['name'])
    return stale


def _refuse_set(template):
    """A set's template is the plugin's, built from its members."""
    if config_sets.members_of(template) is not None:
        raise exceptions.CommandError(
            'Deploy template %s is a set of configs, built from its members '
            'by this plugin: change its members instead' % template['name'])


def _serving(template):
    """The config and the kind a template serves."""
    extra = template.get('extra') or {}
    return (deploy_config.config_of(extra),
            deploy_config.resource_class_of(extra))


def _refuse_granted(template, **changing):
    """One line when a change of what a grant is of (its name, steps,
    config or resource class, or the grant's record) would reach a
    granted template."""
    changed = [what.replace('_', ' ') for what, on in changing.items() if on]
    if changed:
        grants.refuse_granted_change(template, 'changing its %s' % (
            ', '.join(changed)))


def _warn(warnings):
    """Say what the BIOS registry check found, once the write is done."""
    for warning in warnings:
        LOG.warning('%s', warning)


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
    _refuse_granted(current, config=config or set(keys) & (
        grants.CONTENT_KEYS))
    _refuse_set(current)
    if config or set(keys) & set(templates.CONFIG_KEYS):
        extra = {k: v for k, v in (current.get('extra') or {}).items()
                 if not config and k not in keys}
        _sets_made_stale(ironic, current, dict(current, extra=extra))
    ironic.patch_deploy_template(current['uuid'], templates.unset_patch(
        current, keys, config))


def delete(clients, idents, refuse_deployed=False):
    """Delete each template, with what lets ironic run its steps: the
    runbooks that carry its trait, then its trait on the nodes, the
    template last (a rerun after a failure finds it and finishes); a
    granted template is refused, and with ``refuse_deployed`` one that an
    instance was deployed with (read right before its delete).  The
    flavors still asking for its config are named.  (The deleted ones, a
    line per failure.)"""
    ironic = clients.ironic(versions.DEPLOY_TEMPLATES, versions.NODE_TRAITS)
    sets = _Sets(clients, ironic)
    deleted, failures = [], []
    for ident in idents:
        failure = sets.refuse_held(ident) or (
            refuse_deployed and _refuse_deployed(ironic, ident)) or \
            _delete_sets(ironic, sets.of(ident)) or _delete_one(ironic, ident)
        if failure:
            failures.append('Failed to delete deploy template %s: %s'
                            % (ident, failure))
        else:
            deleted.append(ident)
    if deleted:
        _name_askers(clients, sets.read(), deleted)
    return deleted, failures


def _refuse_deployed(ironic, ident):
    """Why a template may not go: an instance was deployed with it (its
    node's ``instance_info/traits``: ironic applies it again at a
    rebuild); None."""
    try:
        name = ironic.deploy_template(ident)['name']
    except sdk_exceptions.NotFoundException:
        return None     # _delete_one says it
    nodes = sorted(
        '%s (instance %s)' % (n.get('name') or n['uuid'], n['instance_uuid'])
        for n in ironic.nodes(('uuid', 'name', 'instance_uuid',
                               'instance_info'))
        if n.get('instance_uuid') and name in (
            (n.get('instance_info') or {}).get('traits') or ()))
    if nodes:
        return ('the instance on node %s was deployed with it, and ironic '
                'applies it again at a rebuild: roll the server out to '
                'another config first' % ', '.join(nodes))
    return None


def _name_askers(clients, known, deleted):
    """Warn of the flavors that still ask for a deleted template's config
    (derived ones included) where no other template serves it."""
    gone = {deploy_config.config_of(t.get('extra')) for t in known.every()
            if t['name'] in deleted or t['uuid'] in deleted} - {None}
    served = {deploy_config.config_of(t.get('extra')) for t in
              known.every() if t['name'] not in deleted
              and t['uuid'] not in deleted}
    if not gone - served:
        return
    try:
        flavors = clients.nova().flavors()
    except (exceptions.CommandError, sdk_exceptions.HttpException) as exc:
        LOG.debug('The flavors asking for %s are not named: %s', ', '.join(
            str(c) for c in gone - served), exc)
        return
    for flavor in flavors:
        asked = [str(c) for c in config_specs.configs_of(
            flavor.get('extra_specs')) if c in gone - served]
        if asked:
            LOG.warning('Flavor %s still asks for %s, which no template '
                        'serves now (openstack flavor deploy-config unset '
                        '%s %s)', flavor['name'], ', '.join(asked),
                        flavor['name'], ' '.join(sorted(
                            a.split('=')[0] for a in asked)))


class _Sets:
    """The sets' templates a delete of their members reads: the templates
    and what holds each set, once, and only where a member is deleted."""

    def __init__(self, clients, ironic):
        self.clients, self.ironic = clients, ironic
        self.known = self.held = None

    def of(self, ident):
        """The sets that have the template among their members."""
        found = [t for t in self.read().every()
                 if ident in (t['name'], t['uuid'])]
        return self.known.sets_of(found[0]) if found else []

    def read(self):
        if self.known is None:
            self.known = self.ironic.config_templates(
                fields=ironic_api.TEMPLATE_STEP_FIELDS)
        return self.known

    def refuse_held(self, ident):
        """Why a set, or a member of sets, may not go: something needs
        the set; None."""
        own = [t for t in self.read().every_set()
               if ident in (t['name'], t['uuid'])]
        sets = own or self.of(ident)
        if sets and self.held is None:
            try:
                self.held = set_templates.unneeded(self.clients,
                                                   self.known)[1]
            except (exceptions.CommandError,
                    sdk_exceptions.HttpException) as exc:
                return ('what needs its set%s cannot be read: %s' % (
                    '' if own else 's', getattr(exc, 'details', None)
                    or exc))
        for one in sets:
            if one['name'] in self.held:
                return ('%s set %s, needed by %s%s. Ask for other configs '
                        'there first (openstack flavor|image deploy-config '
                        'set)' % ('it is the' if own else 'it is a member '
                                  'of', one['name'], set_holders.describe(
                                      self.held[one['name']]),
                                  '' if own else ' (it is built from its '
                                  'members)'))
        return None


def _delete_sets(ironic, sets):
    """Delete the sets nothing needs before their member; why not, or
    None."""
    for one in sets:
        LOG.warning('Deleting set %s with its member: nothing needs it',
                    one['name'])
        failure = _delete_one(ironic, one['uuid'])
        if failure and failure != 'not found':
            return 'its set %s: %s' % (one['name'], failure)
    return None


def _delete_one(ironic, ident):
    """Delete one template and what runs its steps; why not, or None.
    The first write marks the template, which takes the rights its
    delete takes: who may not delete it changes nothing."""
    try:
        template = ironic.deploy_template(ident)
        grants.refuse_granted_change(template, 'deleting it')
        if not (template.get('extra') or {}).get(DELETING):
            ironic.patch_deploy_template(template['uuid'], [{
                'op': 'add', 'path': '/extra/%s' % DELETING, 'value': True}])
        _cascade(ironic, template['name'])
        ironic.delete_deploy_template(template['uuid'])
    except grants.GrantedTemplate as exc:
        return str(exc)
    except sdk_exceptions.NotFoundException:
        return 'not found'
    except sdk_exceptions.HttpException as exc:
        return '%s (a rerun finishes the delete)' % (exc.details or exc)
    return None


def _cascade(ironic, trait):
    """Take the template's trait off every runbook that carries it
    (deleting those that carry no other: ironic would run them on the
    nodes tagged), then off every node but those whose instance was
    deployed with it (ironic refuses their rebuild otherwise; sync
    removes it once the instance goes)."""
    for runbook in _runbooks(ironic):
        traits = runbook.get('traits') or ()
        if trait not in traits:
            continue
        LOG.warning('%s runbook %s (project %s), which runs on the nodes '
                    'tagged %s', 'Deleting' if len(traits) == 1 else
                    'Taking %s off' % trait, runbook['name'],
                    runbook.get('owner') or '-', trait)
        if len(traits) == 1:
            ironic.delete_runbook(runbook['uuid'])
        else:
            ironic.set_runbook_traits(runbook['uuid'], [
                t for t in traits if t != trait])
    for node in ironic.nodes(('uuid', 'name', 'traits', 'instance_info')):
        if trait not in (node.get('traits') or ()):
            continue
        if trait in ((node.get('instance_info') or {}).get('traits') or ()):
            LOG.warning('Node %s keeps trait %s: its instance was deployed '
                        'with it (sync --prune removes it once the instance '
                        'goes)', node.get('name') or node['uuid'], trait)
            continue
        ironic.remove_node_trait(node['uuid'], trait)


def _runbooks(ironic):
    """Every runbook, or none where this ironic has no project runbooks
    (before API 1.112)."""
    if ironic.reaches(versions.PROJECT_RUNBOOKS) is False:
        return []
    try:
        return ironic.runbooks()
    except sdk_exceptions.NotFoundException:
        return []


def show(clients, ident=None, config=None, fields=(), resource_class=None):
    """One template by name or UUID, or the template of ``config`` (for
    ``resource_class``: its own, else the one for every kind), with our
    config fields, as a dict in the order to show."""
    if bool(ident) == bool(config):
        raise exceptions.CommandError(
            'Give either a template or --config TYPE=VALUE')
    if resource_class and not config:
        raise exceptions.CommandError('--resource-class goes with --config')
    config = config and deploy_config.parse_config(config)
    ironic = clients.ironic()
    if config:
        known = ironic.config_templates(fields=None)
        found = _of_config(known, config, resource_class)
        found = templates.with_config_fields(found)
        found.pop('links', None)
        return {k: found[k] for k in fields} if fields else found
    template = find(ironic, ident, fields or None)
    template.pop('links', None)
    if not fields and config_sets.members_of(template) is not None:
        template = templates.with_set_fields(template, ironic.config_templates(
            fields=ironic_api.TEMPLATE_STEP_FIELDS))
    return dict(sorted(template.items()))


def _of_config(known, config, resource_class):
    """The template of a config on a resource class's hardware; one line
    when there is none, or several and no class was given."""
    if resource_class:
        found = known.for_class(deploy_config.placement_class(
            resource_class)).get(config)
    elif config in known or not known.classes(config):
        found = known.get(config)
    else:
        raise exceptions.CommandError(
            'Deploy config %s has a template per resource class (%s): give '
            '--resource-class' % (config, ', '.join(known.classes(config))))
    if found is None:
        raise exceptions.CommandError(
            'No deploy template realises the deploy config %s%s' % (
                config, ' for resource class %s' % resource_class
                if resource_class else ''))
    return found


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
    ironic = clients.ironic()
    found = [templates.with_config_fields(t) for t in ironic.deploy_templates(
        detail=detail, fields=wanted, limit=limit, marker=marker)]
    if (detail or set(columns) & set(templates.SET_FIELDS)) and any(
            config_sets.members_of(t) is not None for t in found):
        columns += tuple(c for c in templates.SET_FIELDS if c not in columns)
        known = ironic.config_templates(
            fields=ironic_api.TEMPLATE_STEP_FIELDS)
        found = [templates.with_set_fields(t, known) for t in found]
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
    """Refuse, in one line, a BIOS setting of ``steps`` that the BIOS
    registry of every capable node refuses (by ``extra``: its capability
    traits and resource class), even once its vendor profile is prepared,
    or that a vendor profile locks while the steps leave the profile as it
    is (an ironic before 36.0, where the same step may unlock it).  The
    warnings to give once the template is written: the capable nodes that
    refuse one (sync does not tag them), those to prepare first, those
    whose BIOS reports no registry, or that the nodes could not be read."""
    wanted = effects.bios_settings(steps)
    if not wanted:
        return []
    release = clients.ironic().release()
    same_step = not release.validates
    try:
        read = hardware_kinds.capable_registries(clients, extra)
    except (exceptions.CommandError, sdk_exceptions.HttpException) as exc:
        _refuse_locked(wanted, {}, same_step)
        return ['BIOS settings not checked against the nodes\' BIOS '
                'registry: %s' % (getattr(exc, 'details', None) or exc)]
    registries = {n: r for n, (_, r) in read.items()}
    _refuse_locked(wanted, registries, same_step)
    without = sorted(n for n, entries in registries.items()
                     if not bios_registry.has_registry(entries))
    judged = {n: e for n, e in registries.items() if n not in without}
    found = bios_registry.problems(wanted, judged,
                                   same_step_unlocks=same_step)
    refusing = {n for p in found for n in p.nodes}
    to_prepare = {n: bios_prepare.once_prepared(wanted, judged[n])
                  for n in sorted(refusing)}
    to_prepare = {n: needs for n, needs in to_prepare.items() if needs}
    # where a profile is all that refuses, but ironic keeps the setting
    # read-only in its cache once it is unlocked (36 and later)
    kept = {n: tagging.futile_prepare(wanted, judged[n], release)
            for n in to_prepare}
    kept = {n: why for n, why in kept.items() if why}
    to_prepare = {n: v for n, v in to_prepare.items() if n not in kept}
    if found and refusing == set(judged) and not (to_prepare or kept):
        raise exceptions.CommandError(bios_registry.describe(
            bios_prepare.problems_once_prepared(wanted, judged) or found))
    return _warnings(read, without, found, refusing - set(kept),
                     to_prepare) + [
        '%s: %s; sync does not offer it there' % (n, why)
        for n, why in sorted(kept.items())]


def _warnings(read, without, found, refusing, to_prepare):
    """What a template's check says once it is written: the nodes without
    a registry, those to prepare, and those that refuse it."""
    warnings = ['BIOS settings not checked on %s: no BIOS registry '
                'reported' % ', '.join(without)] if without else []
    warnings += ['%s takes it once prepared; sync does not offer it there '
                 'until then: %s' % (n, tagging.prepare_command(n, needs))
                 for n, needs in sorted(to_prepare.items())]
    refusing = refusing - set(to_prepare)
    found = [p._replace(nodes=[n for n in p.nodes if n in refusing])
             for p in found if set(p.nodes) & refusing]
    if found:
        classes = sorted({read[n][0].get('resource_class') or '?'
                          for n in refusing})
        warnings.append(
            '%s: sync will not tag %s; give their kind a template of its own '
            '(--resource-class %s)' % (bios_registry.describe(found),
                                       ', '.join(sorted(refusing)),
                                       ', '.join(classes)))
    return warnings


def _refuse_locked(wanted, registries, same_step=True):
    """One line when ``wanted`` sets a setting a vendor profile locks
    without the profile's custom value (``registries``: of the capable
    nodes, to tell whether their hardware has that profile), where the
    same step may unlock it (``same_step``: an ironic before 36.0)."""
    found = bios_profiles.missing(wanted, registries,
                                  same_step_unlocks=same_step)
    if found:
        raise exceptions.CommandError(bios_profiles.describe_missing(found))
