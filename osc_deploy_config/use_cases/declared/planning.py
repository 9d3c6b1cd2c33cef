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

"""A declared file checked against the cloud, and its changes: what
``diff`` shows and ``apply`` makes.

Every check runs before the first write, each one-line error at the line
and column of the object in the file: the file's own rules
(``domain.declared.document``), then the flavors, images and projects it
names (each must exist, under one name), a flavor's configs served on its
hardware without a shared step, a running server's flavor and image
without conflict (the boot pre-flight), a granted template left as it was
granted, what ``--prune`` may delete, and each new or changed template's
BIOS settings against the capable nodes' registries (``deploy_templates``'
own check).
"""

import collections
import datetime
import json
import logging
import sys

from openstack import exceptions as sdk_exceptions
from osc_lib import exceptions

from osc_deploy_config.domain.configs import config_sets
from osc_deploy_config.domain.configs import config_specs
from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.configs import steps as dsteps
from osc_deploy_config.domain.configs import templates as dtemplates
from osc_deploy_config.domain.declared import changes as dchanges
from osc_deploy_config.domain.declared import document
from osc_deploy_config.domain.declared import schema
from osc_deploy_config.domain.grants import grant_flavors
from osc_deploy_config.domain.grants import grants
from osc_deploy_config.domain.hardware import bios_vocabulary
from osc_deploy_config.domain.hardware import tagging
from osc_deploy_config.domain.servers import preflight
from osc_deploy_config.domain.servers import set_holders
from osc_deploy_config.domain.toggle import toggle_record
from osc_deploy_config.services import versions
from osc_deploy_config.use_cases.configs import deploy_templates
from osc_deploy_config.use_cases.configs import set_templates
from osc_deploy_config.use_cases.declared import reading
from osc_deploy_config.use_cases.grants import project_grants
from osc_deploy_config.use_cases.hardware import hardware_kinds
from osc_deploy_config.use_cases.hardware import node_tags

LOG = logging.getLogger(__name__)
# A checked file and what makes the cloud equal to it.  ``servers``: the
# running servers (``_check_servers``), for the pre-flight, the prune and
# the rollout; ``runs``: {server ID: {type: value}} of those on nodes
# (``Instances``; None: not read, the file's images ask for nothing).
Plan = collections.namedtuple('Plan', [
    'declared', 'cloud', 'changes', 'filename', 'servers', 'runs'],
    defaults=(None,))


def load(path):
    """The file's text (``-``: standard input's); one line when it cannot
    be read."""
    try:
        if path == '-':
            return sys.stdin.read()
        with open(path, encoding='utf-8') as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise exceptions.CommandError('Cannot read %s: %s' % (path, exc)
                                      ) from None


def read_file(path):
    """(Declared, the name its errors give) of the file at ``path``
    (``-``: standard input), checked alone."""
    name = '<stdin>' if path == '-' else path
    return document.parse(load(path), name), name


def plan(clients, path, prune=False, prune_all=False, parsed=None):
    """The Plan of the file at ``path`` (``parsed``: as ``read_file`` read
    it already), checked; ``prune_all``: ``--prune`` may delete every
    template and withdraw every grant."""
    declared, name = parsed or read_file(path)
    with clients.registries_remembered():
        return _plan(clients, declared, name, prune, prune_all)


def _plan(clients, declared, name, prune, prune_all):
    cloud = reading.read(clients)
    # a file names projects by name (as export refuses it): of those it
    # names, or with --prune (which withdraws the others) of every one
    document.refuse_doubled_project_names(
        cloud.templates, cloud.project_names,
        None if prune else set(declared.projects))
    at = _Places(name, declared.marks)
    found = dchanges.diff(declared, cloud.current, prune)
    if prune:
        withdrawing = {(c.name, c.field) for c in found
                       if c.kind == dchanges.PROJECT}
        found += [c for c in dchanges.unrecorded_grants(
            cloud.templates, cloud.project_names, declared)
            if (c.name, c.field) not in withdrawing]
    if prune and not prune_all:
        dchanges.refuse_pruning_everything(found, declared, cloud.current)
    _refuse_taken_names(cloud, found, at)
    known = _known(declared, cloud, _vocabulary(clients, declared, found,
                                                at))
    _check_owners(declared, cloud, known, at)
    after = _after(declared, cloud, found)
    owners = owners_of(cloud)
    found += dchanges.trait_changes(owners, declared, cloud.current, after,
                                    found)
    found += dchanges.set_changes(
        owners, declared, cloud.current, after,
        _set_holds(clients, cloud, after) if prune and after.sets else None,
        datetime.datetime.now(datetime.timezone.utc))
    _refuse_sets_being_deleted(cloud, found)
    found += dchanges.sync_changes(reading.sync_pending(cloud))
    found += dchanges.interrupted_deletes(cloud.templates, declared)
    _check_changes(declared, cloud, found, at)
    servers, runs = _check_servers(clients, known, declared, cloud, found,
                                   at)
    _check_hardware(clients, declared, found, at)
    found += _grant_writes(clients, cloud, found, after, at)
    found += _node_tags(clients, declared, found)
    return Plan(declared, cloud, found, name, servers, runs)


def _check_changes(declared, cloud, found, at):
    """No template renamed in place, nor a granted one changed (unless
    this apply withdraws its every grant)."""
    with at(_template_path(found, 'name')):
        dchanges.refuse_renames(found)
    withdrawn = dchanges.withdrawn_grants(found, {
        name: [o['id'] for o in owners] for (section, name), owners in
        cloud.named.items() if section == 'projects'})
    for kind, key, fields in dchanges.objects(found):
        if kind == dchanges.TEMPLATE:
            with at(_path_of(key)):
                dchanges.refuse_granted_changes(
                    fields, {t['name']: t for t in cloud.templates},
                    withdrawn)


def _check_servers(clients, known, declared, cloud, found, at):
    """The running servers and what each runs (``Instances``), read when
    the file asks for configs (the rollout brings them in line, also
    those an interrupted one left), or a flavor's or image's asks
    change, or a template goes: the boot pre-flight of those whose
    flavor or image changes, and no template deleted that one was
    deployed with."""
    deleting = any(c.kind == dchanges.TEMPLATE and c.action ==
                   dchanges.DELETE for c in found)
    if not (deleting or declared.flavors or declared.images or any(
            c.kind in (dchanges.FLAVOR, dchanges.IMAGE) for c in found)):
        return [], None
    servers = clients.nova(versions.SERVER_FLAVOR_DETAILS).servers(
        all_projects=True)
    _preflight(known, declared, cloud, servers, found, at)
    instances = _instances(clients, cloud)
    if deleting:
        if clients.baremetal_scope == 'project':
            raise exceptions.CommandError(
                'Not pruning: ironic shows a project-scoped token only the '
                'project\'s nodes, and a template is deleted only where no '
                'instance on any node was deployed with it; use a '
                'system-scoped token (see the credentials guide)')
        _refuse_held_deletes(found, declared, cloud, servers,
                             instances.holders)
    return servers, instances.runs


def owners_of(cloud):
    """[(kind, name, specs, placement class)] of the listed flavors and
    images that a name of a declared state means (``Cloud.named``; a name
    that means several is left alone; an image lands on any kind)."""
    found = []
    for (section, name), owners in cloud.named.items():
        if section == 'projects' or len(owners) != 1 or not name:
            continue
        if section == 'flavors':
            specs = owners[0].get('extra_specs') or {}
            found.append((dchanges.FLAVOR, name, specs,
                          config_specs.resource_class_of(specs)))
        else:
            found.append((dchanges.IMAGE, name, owners[0], None))
    return sorted(found, key=lambda o: (o[0], o[1]))


def owner_id(cloud, kind, name):
    """The ID of the flavor, image or project a file's name means (a
    project keystone no longer knows: its ID, the name of its row)."""
    section = {dchanges.FLAVOR: 'flavors', dchanges.IMAGE: 'images',
               dchanges.PROJECT: 'projects'}[kind]
    return cloud.named.get((section, name), [{'id': name}])[0]['id']


def _after(declared, cloud, found):
    """The ConfigTemplates the cloud holds after this apply: the file's
    templates, the vocabulary's as they are, the others as they are
    unless pruned."""
    pruned = {c.name for c in found if c.kind == dchanges.TEMPLATE
              and c.action == dchanges.DELETE}
    kept = {}
    for template in cloud.templates:
        extra = template.get('extra') or {}
        config = deploy_config.config_of(extra)
        if config is not None and template['name'] not in pruned and \
                not extra.get(deploy_templates.DELETING):
            kept[config, extra.get(deploy_config.EXTRA_CLASS) or None] = \
                template
    kept.update((key, document.as_dict(t)) for key, t in
                declared.templates.items() if t.steps is not None)
    sets = [t for t in cloud.templates if t['name'] not in pruned
            and config_sets.members_of(t) is not None
            and not (t.get('extra') or {}).get(deploy_templates.DELETING)]
    return dtemplates.by_config([*kept.values(), *sets])


def _set_holds(clients, cloud, after):
    """{set name: what needs it} of the sets' templates, from what the
    file does not decide: the running servers (their flavors as they
    booted), the nodes (their instances' traits, their servers' configs
    now), the images glance hides from its listings (the asks of the
    flavors and images listed count as they are after this apply:
    ``changes.set_changes``)."""
    decided = {o['id'] for o in [*cloud.flavors, *cloud.images]}
    try:
        holders = set_templates.read_holders(clients)
    except (exceptions.CommandError, sdk_exceptions.HttpException) as exc:
        LOG.warning('Sets not pruned: what needs them cannot be read (%s)',
                    getattr(exc, 'details', None) or exc)
        return None
    return set_holders.needs(after.sets, holders, after, decided)


def _refuse_sets_being_deleted(cloud, found):
    """A set the file needs whose delete was interrupted is refused at
    planning, not half-way through an apply."""
    deleting = {t['name'] for t in cloud.templates
                if (t.get('extra') or {}).get(deploy_templates.DELETING)}
    for change in found:
        if change.kind == dchanges.SET and change.name in deleting:
            raise exceptions.CommandError(
                'Set %s is being deleted: finish the delete first (openstack '
                'baremetal deploy template delete %s), then rerun' % (
                    change.name, change.name))


# What the nodes say of their instances: ``holders``, the changes'
# Holders; ``runs``: {server ID: {type: value}} of the instances on nodes,
# the configs ironic deployed each with, and over them a toggle's record.
Instances = collections.namedtuple('Instances', ['holders', 'runs'])


def _instances(clients, cloud):
    """The Instances, from one node listing."""
    toggled, deployed, runs = [], {}, {}
    members = _members_by_name(cloud.templates)
    for node in clients.ironic().nodes(
            ('uuid', 'name', 'resource_class', 'instance_uuid',
             'instance_info', 'properties', 'extra')):
        instance = node.get('instance_uuid')
        traits = set((node.get('instance_info') or {}).get('traits') or ())
        if not instance:
            if traits:      # ironic's alone (standalone): by the node
                deployed[node['uuid']] = traits
            continue
        deployed[instance] = traits
        runs[instance] = {c.type: c.value for name in sorted(traits)
                          for c in members.get(name, ())}
        applied = toggle_record.applied(node, instance)
        runs[instance].update((t, c.value) for t, c in applied.items())
        chosen = toggle_record.project_configs(node, instance)
        runs[instance].update((c.type, dchanges.PROJECTS_CHOICE)
                              for c in chosen)
        configs = set(applied.values()) | chosen
        if configs:
            rc = node.get('resource_class')
            toggled.append((node.get('name') or node['uuid'],
                            rc and deploy_config.placement_class(rc),
                            configs))
    return Instances(dchanges.Holders(
        {f['name']: config_specs.resource_class_of(f.get('extra_specs'))
         for f in cloud.flavors if f.get('name')}, deployed, toggled), runs)


def _members_by_name(templates):
    """{template name: the configs it applies}: a config's, or a set's
    members."""
    found = {}
    for template in templates:
        config = deploy_config.config_of(template.get('extra'))
        found[template['name']] = [config] if config is not None else (
            config_sets.members_of(template) or [])
    return found


def _refuse_held_deletes(found, declared, cloud, servers, holders):
    """The prune's refusals (``changes.refuse_pruning_asked``); an
    interrupted delete that something holds is left as it is, with a
    warning, rather than refusing the whole apply."""
    for change in [c for c in found if c.before == dchanges.INTERRUPTED]:
        try:
            dchanges.refuse_pruning_asked([change], declared, cloud.current,
                                          servers, holders)
        except exceptions.CommandError as exc:
            LOG.warning('Left as it is: template %s, whose delete was '
                        'interrupted: %s', change.name, exc)
            found.remove(change)
    dchanges.refuse_pruning_asked(
        [c for c in found if c.before != dchanges.INTERRUPTED], declared,
        cloud.current, servers, holders)


class _Places:
    """``at(path)``: a context that puts a CommandError at the place of
    ``path`` in the file."""

    def __init__(self, filename, marks):
        self.filename, self.marks = filename, marks

    def __call__(self, path):
        return _At(self, path)

    def fail(self, path, message):
        raise schema.error(self.filename, self.marks.get(path, (1, 1)),
                           message)


class _At:
    def __init__(self, places, path):
        self.places, self.path = places, path

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, traceback):
        if isinstance(exc, exceptions.CommandError) and not isinstance(
                exc, schema.FileError):
            self.places.fail(self.path, str(exc))
        return False


def _path_of(key):
    config, rc = key
    path = ('configs', config.type, config.value)
    return path + ('resource_classes', rc) if rc else path


def _template_path(found, field):
    for change in found:
        if change.kind == dchanges.TEMPLATE and change.field == field and \
                change.action == dchanges.UPDATE:
            return _path_of(change.key) + ('template',)
    return ()


def _check_owners(declared, cloud, known, at):
    """Each flavor, image and project the file names exists, and the name
    means one (``named``); a flavor's configs are served on its hardware
    (``known``: the templates after this apply), without a shared step."""
    means = cloud.named
    for section in ('flavors', 'images', 'projects'):
        for name, asks in getattr(declared, section).items():
            found = means.get((section, name), [])
            if len(found) > 1 and not asks and not any(
                    reading.speaks_of(section, o, ()) for o in found):
                continue    # several, none asking, and none to ask: equal
            if len(found) != 1:
                at.fail((section, name), '%s %s %s' % (
                    section[:-1], name, 'does not exist' if not found else
                    'is the name of %d of them (%s): a declared state names '
                    'each once (rename one)' % (len(found), ', '.join(
                        sorted(o['id'] for o in found)))))
    for name, asks in declared.flavors.items():
        if not asks:
            continue
        placement_class = config_specs.resource_class_of(
            means['flavors', name][0].get('extra_specs'))
        configs = [deploy_config.Config(t, v) for t, v in asks.items()]
        with at(('flavors', name)):
            config_specs.refuse_unserved(configs, known, 'flavor %s' % name,
                                         placement_class)
            config_specs.refuse_clashes(
                configs, known.for_class(placement_class))


def _refuse_taken_names(cloud, found, at):
    """A template to create may not serve a config and kind the cloud
    already has a template for (a resource class spelled otherwise), nor
    bear the name of one the cloud holds as something else (not this
    plugin's, or another config's): its create would fail half-way
    through the apply."""
    listed = {t['name']: t for t in cloud.templates}
    known = dtemplates.by_config(t for t in cloud.templates if not (
        t.get('extra') or {}).get(deploy_templates.DELETING))
    for change in found:
        if change.kind != dchanges.TEMPLATE or change.field != 'name' or \
                change.action != dchanges.CREATE:
            continue
        with at(_path_of(change.key)):
            # one template per config and kind: another spelling of the
            # class that placement names alike is the same kind
            dtemplates.refuse_second_template(known, change.key[0],
                                              change.after, change.key[1])
        taken = listed.get(change.after)
        if taken is not None and (taken.get('extra') or {}).get(
                deploy_templates.DELETING):
            with at(_path_of(change.key)):
                raise exceptions.CommandError(
                    'template %s is being deleted (an interrupted delete): '
                    'finish it (openstack baremetal deploy template delete '
                    '%s), then apply again' % (change.after, change.after))
        if taken is not None and deploy_config.config_of(
                taken.get('extra')) == change.key[0]:
            with at(_path_of(change.key)):
                raise exceptions.CommandError(
                    'template %s exists in the cloud for %s on resource '
                    'class %s, one kind in placement with %s (%s): one '
                    'template per config and kind; spell the class as the '
                    'cloud does' % (change.after, change.key[0], (
                        taken.get('extra') or {}).get(
                            deploy_config.EXTRA_CLASS), change.key[1],
                        deploy_config.placement_class(change.key[1])))
        if taken is not None:
            with at(_path_of(change.key)):
                raise exceptions.CommandError(
                    'template %s exists in the cloud as %s: give this one '
                    'another name (template: ...)' % (
                        change.after, 'another config\'s' if
                        deploy_config.config_of(taken.get('extra'))
                        else 'a template of no deploy config'))


def _vocabulary(clients, declared, found, at):
    """{Config: {resource class: template name}} of the configs of the
    vocabulary to create, as their dry run plans them (refused, at the
    place, when the vocabulary or the nodes cannot make them)."""
    planned, names = {}, None
    for change in found:
        if change.kind != dchanges.TEMPLATE or change.action != \
                dchanges.CREATE or declared.templates[
                    change.key].steps is not None:
            continue
        want = declared.templates[change.key]
        with at(_path_of(change.key)):
            names = names or hardware_kinds.vocabulary(clients)
            if not bios_vocabulary.knows(want.config, names):
                raise exceptions.CommandError(
                    'unknown config value %s: the vocabulary has no '
                    'settings for it; give its bios or steps' % want.config)
            planned[want.config] = deploy_templates.create(
                clients, template_input(want), dry_run=True)['templates']
    return planned


def _known(declared, cloud, vocabulary):
    """The ConfigTemplates after this apply, for the flavors' checks: the
    file's templates; a config of the vocabulary ({}) by its templates
    per class, those the cloud holds and those its dry run would make
    (a BIOS step each)."""
    listed = [document.as_dict(t) for t in declared.templates.values()
              if t.steps is not None]
    names = {t['name'] for t in cloud.templates}
    for (config, _rc), template in declared.templates.items():
        if template.steps is not None:
            continue
        listed += [t for t in cloud.templates if deploy_config.config_of(
            t.get('extra')) == config]
        listed += [{'name': name, 'steps': [dsteps.bios_step([])],
                    'extra': deploy_config.template_extra(
                        config, deploy_config.default_capability_traits(
                            config.type), resource_class)}
                   for resource_class, name in vocabulary.get(
                       config, {}).items() if name not in names]
    return dtemplates.by_config(listed)


def _preflight(known, declared, cloud, servers, found, at):
    """A running server's flavor and image, as the file leaves them, must
    not ask for two values of one type or share a step (ironic would fail
    its rebuild): the boot pre-flight's rule."""
    changed = {(c.kind, c.name) for c in found}
    images = {i['id']: i.get('name') for i in cloud.images}
    for server in servers:
        flavor = (server.get('flavor') or {}).get('original_name')
        image = images.get((server.get('image') or {}).get('id'))
        if (dchanges.FLAVOR, flavor) not in changed and \
                (dchanges.IMAGE, image) not in changed:
            continue
        flavor_asks = declared.flavors.get(flavor, cloud.current.flavors.get(
            flavor, {}))
        image_asks = declared.images.get(image, cloud.current.images.get(
            image, {}))
        by_config = known.for_class(config_specs.resource_class_of(
            (server.get('flavor') or {}).get('extra_specs')))
        asked, sets = _served_asks((
            ('flavor %s' % flavor, flavor_asks),
            ('image %s' % image, image_asks)), by_config)
        place = ('flavors', flavor) if (dchanges.FLAVOR, flavor) in \
            changed else ('images', image)
        with at(place):
            try:
                preflight.refuse_conflicts(asked, by_config, sets)
            except exceptions.CommandError as exc:
                raise exceptions.CommandError('%s (server %s runs both)' % (
                    exc, server['name'])) from None


def _served_asks(owners, by_config):
    """([preflight.Asked], {set name: its template as it will be}) of
    what each owner (``owners``: (source, {type: value})) will ask for,
    each config with the template that will serve it (its set's, where
    its configs share a step)."""
    asked, sets = [], {}
    for source, asks in owners:
        configs = [deploy_config.Config(t, v) for t, v in sorted(
            asks.items())]
        try:
            servings = config_sets.serving(configs, by_config)
        except exceptions.CommandError:
            servings = []       # refused at its own place (_check_owners)
        for one in servings:
            if config_sets.is_set(one):
                sets[one.name] = {'name': one.name, 'steps':
                                  config_sets.merged_steps(one.members)}
            asked += [preflight.Asked(c, source, one.name)
                      for c in one.members]
        asked += [preflight.Asked(c, source) for c in configs
                  if c not in by_config]
    return asked, sets


def _check_hardware(clients, declared, found, at):
    """Each template with steps to create or change, as its single
    command checks it: BIOS settings against the capable nodes'
    registries, and a resource class the nodes spell otherwise (those of
    the vocabulary: by their dry run, ``_vocabulary``)."""
    node_classes = None
    for kind, key, fields in dchanges.objects(found):
        if kind != dchanges.TEMPLATE or fields[0].action == dchanges.DELETE \
                or declared.templates[key].steps is None:
            continue
        want = declared.templates[key]
        with at(_path_of(key)):
            if want.resource_class:
                if node_classes is None:
                    node_classes = [n.get('resource_class') for n in
                                    clients.ironic().nodes(
                                        ('uuid', 'resource_class'))]
                deploy_config.refuse_alike_classes(want.resource_class,
                                                   node_classes)
            deploy_templates.check_bios_registry(
                clients, want.steps, deploy_config.template_extra(
                    want.config, want.capability_traits,
                    want.resource_class))


def _grant_writes(clients, cloud, found, after, at):
    """When grants change, what ``project deploy-config set|unset`` check
    first (a system-scoped token and ironic's version: runbooks; each
    grant's plan against the templates after this apply: a runbook name
    another project took, a config no template realises), and the rows of
    what they write: runbooks, the templates' records, derived flavors
    and their access."""
    projects = sorted({c.name for c in found if c.kind == dchanges.PROJECT})
    if not projects:
        return []
    ironic = project_grants._ironic(clients)
    runbooks = ironic.runbooks()
    rows, known, access = [], dtemplates.by_config(cloud.templates), None
    for name in projects:
        project_id = owner_id(cloud, dchanges.PROJECT, name)
        configs = {after_: [deploy_config.parse_config(c.field) for c in
                            found if c.kind == dchanges.PROJECT and
                            c.name == name and (c.after is None) != after_]
                   for after_ in (True, False)}
        if configs[True]:   # a granted name is the file's (_check_owners)
            with at(('projects', name)):
                made = grants.plan(project_id, configs[True], after,
                                   runbooks)
            rows += dchanges.grant_writes(name, made, project_grants
                                          .flavor_plan(clients, project_id,
                                                       configs[True], after))
        if configs[False]:
            if access is None:
                access = _derived_access(clients, cloud)
            rows += dchanges.grant_writes(name, grants.withdraw(
                project_id, configs[False], known, runbooks),
                closed=grant_flavors.to_close(cloud.flavors, configs[False],
                                              access, project_id))
    return rows


def _derived_access(clients, cloud):
    """{flavor ID: the projects it is open to} of the derived private
    flavors (what a withdrawal closes), read once."""
    nova = clients.nova()
    return {f['id']: nova.flavor_access(f['id'])
            for f in grant_flavors.derived_private(cloud.flavors)}


def _node_tags(clients, declared, found):
    """The rows of the node tags the syncs of this apply change: of each
    template written (of the file's steps, as it will be) and of every
    other template of a config written or deleted (a template per class
    added or gone moves which template a class's nodes carry), the
    capable nodes tagged, the others untagged (``node_tags.sync``)."""
    objects = [(key, fields[0]) for kind, key, fields in
               dchanges.objects(found) if kind == dchanges.TEMPLATE]
    written = [declared.templates[key] for key, first in objects
               if first.action != dchanges.DELETE and
               declared.templates[key].steps is not None]
    gone = {first.name for _, first in objects
            if first.action == dchanges.DELETE}
    if not (written or gone):
        return []
    inventory = node_tags.read_inventory(clients)
    planned = [dict(document.as_dict(t), uuid=t.name) for t in written]
    every = [t for t in node_tags.tagged_templates(inventory)
             if t['name'] not in gone | {p['name'] for p in planned}]
    configs = {key[0] for key, _ in objects}
    chosen = planned + [t for t in every if deploy_config.config_of(
        t.get('extra')) in configs]
    every += planned
    return dchanges.tag_changes(
        (tag.template, tag.node, tag.action == tagging.ADD) for tag in
        tagging.plan_sync(inventory.nodes, chosen, node_tags.read_registries(
            inventory, chosen), every, inventory.ironic.release())
        if tag.action in (tagging.ADD, tagging.REMOVE))


def siblings(templates, names):
    """The names of the templates (``templates``: as listed) of the
    configs of the templates ``names``, those included: what a sync after
    writing or deleting them tags (``_node_tags``)."""
    configs = {deploy_config.config_of(t.get('extra')) for t in templates
               if t['name'] in names} - {None}
    return sorted({t['name'] for t in templates if deploy_config.config_of(
        t.get('extra')) in configs} | set(names))


def template_input(want, steps_changed=True, creating=True):
    """The ``templates.TemplateInput`` of a declared template, as the
    single command's options would give it, marked pending a sync."""
    steps = want.steps is not None and steps_changed
    return dtemplates.TemplateInput(
        name=want.name if creating else None, uuid=None,
        steps=json.dumps(want.steps) if steps else None,
        bios_settings=None, raid_config=None,
        extra=['%s=true' % reading.SYNC_PENDING],
        config=str(want.config),
        requires_traits=list(want.capability_traits or ()),
        no_requires_trait=want.capability_traits == [],
        stdin=None, resource_class=want.resource_class)
