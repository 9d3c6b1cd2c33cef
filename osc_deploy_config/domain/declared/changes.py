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

"""What makes the cloud equal to the declared state: a change per object
and field, with the value before and after, in the order ``apply`` writes
them; what ``--prune`` may delete and what it refuses; and the running
servers that a rollout brings in line afterwards.

A flavor or an image is the operator's object: the file takes over the
configs of those it lists (one listed with no config has its asks
removed), and leaves the others alone.  Templates and grants are this
plugin's own: with ``prune``, those the file no longer lists are deleted
and withdrawn.
"""

import collections
import difflib
import json

from osc_lib import exceptions

from osc_deploy_config.domain.configs import config_sets
from osc_deploy_config.domain.configs import config_specs
from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.configs import templates as dtemplates
from osc_deploy_config.domain.declared import document
from osc_deploy_config.domain.grants import grant_flavors
from osc_deploy_config.domain.grants import grants

CREATE, UPDATE, DELETE = 'create', 'update', 'delete'
TEMPLATE, FLAVOR, IMAGE, PROJECT = 'template', 'flavor', 'image', 'project'
# A set's template (``configs/config_sets``): derived, never in the file.
SET = 'set'
# A template an interrupted apply left marked pending its nodes' sync.
SYNC = 'node sync'
COLUMNS = ('Kind', 'Name', 'Action', 'Field', 'Before', 'After')
FROM_VOCABULARY = '(from the vocabulary, per resource class)'
GRANTED = 'granted'
# The field of a flavor's or an image's required template traits.
TRAITS = 'required traits'
# What a template's, a grant's or a withdrawal's own commands write beside
# the rows above (each shown, none written by itself): a runbook of a
# grant, a template's record of it, a derived flavor and its access.
RUNBOOK, RECORD, ACCESS = 'runbook', 'grant record', 'flavor access'
# The ``before`` of a template whose delete was interrupted.
INTERRUPTED = 'interrupted delete'
# ``key``: what identifies the object to write: (Config, class) of a
# template, the name of a flavor, an image or a project.
Change = collections.namedtuple('Change', [
    'kind', 'name', 'action', 'field', 'before', 'after', 'key'])
_TEMPLATE_FIELDS = ('name', 'steps', 'capability_traits')


def diff(declared, current, prune=False):
    """[Change] from the cloud's state (``current``, a Declared read from
    the cloud) to the declared one: templates created and updated first,
    then the flavors' and images' asks, then grants, then (``prune``) the
    templates and grants the file no longer lists."""
    found = _templates(declared, current)
    for kind, section in ((FLAVOR, 'flavors'), (IMAGE, 'images')):
        found += _asks(kind, getattr(declared, section),
                       getattr(current, section))
    found += _grants(declared.projects, current.projects, prune)
    if prune:
        found += _pruned_templates(declared, current)
    return found


def _templates(declared, current):
    found = []
    realised = {c for c, _ in current.templates}
    for key, want in sorted(declared.templates.items(), key=_order):
        config, rc = key
        if want.steps is None:
            if config not in realised:
                found.append(Change(TEMPLATE, str(config), CREATE, 'steps',
                                    None, FROM_VOCABULARY, key))
            continue
        have = current.templates.get(key)
        for field in _TEMPLATE_FIELDS:
            before = getattr(have, field) if have else None
            after = getattr(want, field)
            if have is None or before != after:
                found.append(Change(TEMPLATE, want.name,
                                    UPDATE if have else CREATE, field,
                                    before, after, key))
    return found


def _order(item):
    (config, rc), _ = item
    return str(config), rc or ''


def _asks(kind, declared, current):
    found = []
    for name, asks in sorted(declared.items()):
        have = current.get(name, {})
        for config_type in sorted(set(asks) | set(have)):
            before, after = have.get(config_type), asks.get(config_type)
            if before != after:
                found.append(Change(kind, name, UPDATE, config_type, before,
                                    after, name))
    return found


def trait_changes(owners, declared, current, after, found):
    """[Change] of the flavors and images (``owners``: [(kind, name, specs
    or properties, placement class or None)] as listed) whose asks do not
    change but whose required template traits are not those of the
    templates that serve their configs after this apply (``after``:
    ConfigTemplates): a template per class added or dropped changes
    which template serves a flavor's class, and its trait goes stale."""
    changing = {(c.kind, c.name) for c in found}
    known = {config_specs.trait_spec(t['name']) for t in after.every()}
    known |= {config_specs.trait_spec(t.name)
              for t in current.templates.values()}
    result = []
    for kind, name, specs, placement_class in owners:
        section = 'flavors' if kind == FLAVOR else 'images'
        asks = getattr(declared, section).get(
            name, getattr(current, section).get(name, {}))
        served = after.for_class(placement_class)
        configs = [deploy_config.Config(t, v) for t, v in asks.items()]
        if (kind, name) in changing or not all(
                c in served for c in configs) or not (
                    configs or name in getattr(declared, section)):
            continue    # one that asks for none is the file's if listed
        have = config_specs.template_traits(specs, known)
        try:
            want = sorted(config_specs.trait_spec(n) for n in
                          config_sets.required_traits(configs, served))
        except exceptions.CommandError:
            continue    # _check_owners refuses it, at its place
        if have != want:
            result.append(Change(kind, name, UPDATE, TRAITS, have, want,
                                 name))
    return result


def asked_after(owners, declared, current, after):
    """[(kind, name, [Config], {Config: template})] of the flavors and
    images (``owners``: as in ``trait_changes``) after this apply: what
    each asks for, and the templates that serve its kind then."""
    found = []
    for kind, name, _specs, placement_class in owners:
        section = 'flavors' if kind == FLAVOR else 'images'
        asks = getattr(declared, section).get(
            name, getattr(current, section).get(name, {}))
        found.append((kind, name, [deploy_config.Config(t, v)
                                   for t, v in sorted(asks.items())],
                      after.for_class(placement_class)))
    return found


def set_changes(owners, declared, current, after, held=None, now=None):
    """[Change] of the sets' templates: those the flavors and images ask
    for together after this apply (``after``: ConfigTemplates, with the
    cloud's sets) to make, or to build again where a member changed; and,
    with ``held`` ({set name: what else needs it}: the running servers,
    the nodes), those nothing needs then, to delete (``--prune``), but
    those written or asked for within a prune's grace of ``now``
    (``config_sets.just_written``).  A set's key: (its members' configs,
    its placement class)."""
    wanted = {}
    for _kind, _name, configs, served in asked_after(owners, declared,
                                                     current, after):
        if all(c in served for c in configs):
            try:
                wanted.update((s.name, s) for s in config_sets.serving(
                    configs, served) if config_sets.is_set(s))
            except exceptions.CommandError:
                pass    # _check_owners refuses it, at its place
    found = []
    for name, serving in sorted(wanted.items()):
        have = after.sets.get(name)
        if have is None or not config_sets.current(have, serving.members):
            found.append(Change(
                SET, name, CREATE if have is None else UPDATE, 'members',
                None if have is None else 'stale',
                config_sets.members_text(serving.members), _set_key(
                    serving.members)))
    for name in sorted(after.sets):
        if held is not None and name not in wanted and name not in held \
                and not (now and config_sets.just_written(after.sets[name],
                                                          now)):
            have = after.sets[name]
            found.append(Change(SET, name, DELETE, 'members',
                                ','.join(str(c) for c in config_sets.
                                         members_of(have) or ()), None,
                                name))
    return found


def _set_key(members):
    """(the configs, the placement class) of a set to make."""
    resource_class = config_sets.set_class(members)
    return (tuple(sorted(members, key=lambda c: c.type)),
            resource_class and deploy_config.placement_class(resource_class))


def _grants(declared, current, prune):
    found = []
    names = set(declared) | (set(current) if prune else set())
    for name in sorted(names):
        want = set(declared.get(name, ()))
        have = set(current.get(name, ()))
        action = UPDATE if name in declared else DELETE
        for config in sorted(want ^ have):
            found.append(Change(PROJECT, name, action, config,
                                GRANTED if config in have else None,
                                GRANTED if config in want else None, name))
    return found


def unrecorded_grants(templates, project_names, declared):
    """[Change] (``--prune``) withdrawing the grant records that grant
    nothing a file can name (``templates``: as listed; ``project_names``:
    {ID: name}): of other content than the template's now (stale), or of
    a project keystone no longer knows (keyed by its ID), but a config the
    file grants that project (the grant records it again)."""
    found = {}
    for template in templates:
        config = deploy_config.config_of(template.get('extra'))
        if config is None:
            continue
        stale = set(grants.stale_projects(template))
        for project_id in grants.recorded(template):
            name = project_names.get(project_id)
            if name is not None and (project_id not in stale or str(
                    config) in declared.projects.get(name, ())):
                continue
            found[name or project_id, str(config)] = (
                'granted (a stale record)' if name else
                'granted (a project keystone no longer knows)')
    return [Change(PROJECT, project, DELETE, config, why, None, project)
            for (project, config), why in sorted(found.items())]


def _pruned_templates(declared, current):
    vocabulary = {c for (c, rc), t in declared.templates.items()
                  if t.steps is None}
    return [Change(TEMPLATE, have.name, DELETE, field,
                   getattr(have, field), None, key)
            for key, have in sorted(current.templates.items(), key=_order)
            if key not in declared.templates and key[0] not in vocabulary
            for field in _TEMPLATE_FIELDS]


def interrupted_deletes(templates, declared):
    """[Change] of the templates (``templates``: as listed) whose delete
    was interrupted (marked, their runbooks and node traits perhaps gone
    already: they serve nothing) and that the file does not declare: a
    rerun finishes the delete, with or without ``--prune``."""
    names = {t.name for t in declared.templates.values()}
    found = []
    for template in sorted(templates, key=lambda t: t['name']):
        extra = template.get('extra') or {}
        config = deploy_config.config_of(extra)
        if extra.get(dtemplates.DELETING) and config is not None and \
                template['name'] not in names:
            found.append(Change(
                TEMPLATE, template['name'], DELETE, 'steps', INTERRUPTED,
                None,
                (config, extra.get(deploy_config.EXTRA_CLASS) or None)))
    return found


def refuse_pruning_everything(changes, declared, current):
    """One line when ``--prune`` would delete every template of this
    plugin, the file declaring none, or withdraw every grant, the file
    granting none (a file emptied by mistake), naming them:
    ``--prune-all`` allows it."""
    deleted = sorted(c.name for c in changes if c.kind == TEMPLATE
                     and c.action == DELETE and c.field == 'steps'
                     and c.before != INTERRUPTED)
    withdrawn = sorted('%s %s' % (c.name, c.field) for c in changes
                       if c.kind == PROJECT and c.action == DELETE)
    for what, gone, declares in (
            ('delete every template of this plugin', deleted,
             declared.templates),
            ('withdraw every grant', withdrawn, any(
                declared.projects.values()))):
        if gone and not declares:
            raise exceptions.CommandError(
                '--prune would %s (%s): refused without --prune-all (a '
                'file emptied by mistake?)' % (what, ', '.join(gone)))


def sync_changes(pending):
    """[Change] of the templates still marked pending a node sync (an
    apply killed before its sync): apply syncs, then removes the mark."""
    return [Change(SYNC, name, UPDATE, 'node tags', 'pending', 'synced',
                   name) for name in sorted(pending)]


def grant_writes(project, changes, needs=(), closed=()):
    """[Change] of what granting or withdrawing writes for ``project``:
    ``changes`` (``grants.Change``, those to keep left out), ``needs``
    (``grant_flavors.Need``, those to skip left out) and ``closed`` (the
    derived flavors a withdrawal closes, as listed)."""
    found = []
    for change in changes:
        if change.action in (grants.RECORD, grants.UNRECORD):
            found.append(Change(RECORD, change.name, change.action,
                                str(change.config), None, project, project))
        elif change.action != grants.KEEP:
            found.append(Change(RUNBOOK, change.name, change.action,
                                str(change.config), None, change.why,
                                project))
    found += [Change(ACCESS, need.name, need.action or grant_flavors.OPEN,
                     str(need.config), None, project, project)
              for need in needs if need.action != grant_flavors.SKIP]
    found += [Change(ACCESS, flavor['name'], 'close', ', '.join(
        str(c) for c in config_specs.configs_of(flavor.get('extra_specs'))),
        project, None, project) for flavor in closed]
    return found


def tag_changes(tags):
    """[Change] of a sync's trait changes (``tags``: [(template name, node
    label, True to tag it or False to untag it)]): per template, the nodes
    it tags and untags."""
    by_template = {}
    for template, node, adds in tags:
        by_template.setdefault(template, {True: [], False: []})[adds].append(
            node)
    return [Change(SYNC, name, UPDATE, 'node tags', ', '.join(
        'untag %s' % n for n in sorted(nodes[False])) or None, ', '.join(
        'tag %s' % n for n in sorted(nodes[True])) or None, name)
        for name, nodes in sorted(by_template.items())]


def objects(changes):
    """[(kind, key, [Change])] of each object changed, in order."""
    grouped = collections.OrderedDict()
    for change in changes:
        grouped.setdefault((change.kind, change.action, _hashable(
            change.key)), []).append(change)
    return [(kind, fields[0].key, fields)
            for (kind, _, _), fields in grouped.items()]


def _hashable(key):
    return (str(key[0]), key[1]) if isinstance(key, tuple) else key


def unified(declared, current, prune, filename):
    """A unified diff of the cloud's export against the file (``diff -o
    unified``), over what the file speaks of: its configs, flavors, images
    and projects (with ``prune``, every template and grant); a config of
    the vocabulary as the file writes it (``{}``).  What apply derives
    (sets, node tags, runbooks, required traits) is not in the file, so
    not in this diff: the rows show it."""
    vocabulary = {c for (c, rc), t in declared.templates.items()
                  if t.steps is None}
    templates = {key: t for key, t in current.templates.items()
                 if key[0] not in vocabulary and (prune or key in
                                                  declared.templates)}
    templates.update(((c, None), document.Template(c, None, None, None,
                                                   None))
                     for c in vocabulary if any(
                         key[0] == c for key in current.templates))
    view = current._replace(
        templates=templates,
        flavors={n: current.flavors.get(n, {}) for n in declared.flavors},
        images={n: current.images.get(n, {}) for n in declared.images},
        projects={n: g for n, g in current.projects.items()
                  if prune or n in declared.projects})
    return ''.join(difflib.unified_diff(
        document.render(view).splitlines(True),
        document.render(declared).splitlines(True), 'cloud', filename))


def rows(changes):
    """The rows of ``diff``: values shown as JSON where structured."""
    return [(c.kind, c.name, c.action, c.field, shown(c.before),
             shown(c.after)) for c in changes]


def shown(value):
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True)


# ------------------------------------------------------------ checks


def refuse_renames(changes):
    """A template's name is the trait flavors, images, nodes and runbooks
    carry: the file may not rename one in place."""
    for change in changes:
        if change.kind == TEMPLATE and change.action == UPDATE and \
                change.field == 'name':
            raise exceptions.CommandError(
                'The template of %s is named %s in the cloud and %s in the '
                'file: its name is the trait that flavors, images, nodes '
                'and runbooks carry, so it is not renamed in place. Keep '
                'its name in the file (template: %s), or drop it, apply '
                'with --prune, then add it back.' % (
                    change.key[0], change.before, change.after,
                    change.before))


# What else holds a template that ``--prune`` would delete: {flavor name:
# placement class}, {server ID: the traits ironic deployed its instance
# with (its node's ``instance_info/traits``, which nova wrote from the
# flavor and the image as they were at the boot)}, and [(node name,
# placement class, {Config} its toggle record names)].
Holders = collections.namedtuple('Holders', [
    'flavor_classes', 'deployed', 'toggled'])


def refuse_pruning_asked(changes, declared, current, servers, holders=None):
    """One line when ``--prune`` would delete a template that a flavor or
    image still asks for after this apply (the file does not list it, or
    lists it with the ask; a template per class: a flavor of that class),
    that a running server was deployed with (``servers``: as nova lists
    them, with their flavor's extra specs as booted; or its node's
    instance recorded the template's trait, whatever its image asks for
    now, or whether glance still lists it), or that a toggle recorded on
    a node."""
    holders = holders or Holders({}, {}, [])
    for kind, key, fields in objects(changes):
        if kind != TEMPLATE or fields[0].action != DELETE:
            continue
        name = fields[0].name
        classes = _classes_served(key, declared, current)
        _refuse_asked(name, key[0], classes, declared, current, holders)
        by_flavor, by_instance = deployed_with(name, servers,
                                               holders.deployed)
        if by_flavor:
            raise exceptions.CommandError(
                'Not pruning template %s: server %s was deployed with it '
                '(%s, its flavor as booted) and ironic applies it again at '
                'a rebuild; roll the server out to another config first '
                '(openstack server deploy-config set %s --deploy-config '
                '%s=...)' % (name, ', '.join(by_flavor), key[0],
                             by_flavor[0], key[0].type))
        if by_instance:
            raise exceptions.CommandError(
                'Not pruning template %s: server %s was deployed with it '
                '(%s: its node\'s instance records it, from the image as it '
                'was at the boot); rebuild the server from an image that '
                'asks for another config (openstack server rebuild --image '
                '... %s), or delete it, first' % (
                    name, ', '.join(by_instance), key[0], by_instance[0]))
        toggled = sorted(n for n, c, configs in holders.toggled
                         if key[0] in configs and classes(c))
        if toggled:
            raise exceptions.CommandError(
                'Not pruning template %s: a toggle recorded %s on node %s, '
                'and a rebuild or rollout applies it again; toggle the '
                'server to another config first' % (name, key[0],
                                                     ', '.join(toggled)))


def deployed_with(name, servers, deployed):
    """([server name], [server name]) of the servers (``servers``: as nova
    lists them) deployed with the template ``name``: those whose flavor as
    booted requires it, and the others whose node's instance records it
    (``deployed``: as in Holders; an instance no server listing shows is
    named by its ID), each sorted."""
    names = {s['id']: s['name'] for s in servers}
    by_flavor = {s['id'] for s in servers if name in
                 config_specs.required_traits(
                     (s.get('flavor') or {}).get('extra_specs'))}
    by_instance = {i for i, traits in deployed.items()
                   if name in traits} - by_flavor
    return (sorted(names[i] for i in by_flavor),
            sorted(names.get(i, i) for i in by_instance))


def _classes_served(key, declared, current):
    """Whether the template of ``key`` serves a placement class: its own
    class, or (for every kind) a class with no template of its own for
    the config, in the cloud or the file."""
    config, rc = key
    if rc:
        return lambda c: c == deploy_config.placement_class(rc)
    own = {deploy_config.placement_class(r) for c, r in
           list(current.templates) + list(declared.templates)
           if c == config and r}
    return lambda c: c not in own


def _refuse_asked(name, config, classes, declared, current, holders):
    for section, owner in (('flavors', 'flavor'), ('images', 'image')):
        after = dict(getattr(current, section), **getattr(declared, section))
        askers = sorted(
            n for n, asks in after.items()
            if asks.get(config.type) == config.value and (
                classes(holders.flavor_classes.get(n)) if owner == 'flavor'
                else classes(None)))
        if askers:
            raise exceptions.CommandError(
                'Not pruning template %s: %s %s still asks for %s; '
                'list it in the file without that ask (or openstack %s '
                'deploy-config unset %s %s), then apply again' % (
                    name, owner, askers[0], config, owner, askers[0],
                    config.type))


def withdrawn_grants(changes, project_ids):
    """{(project ID, TYPE=VALUE)} of the grants the changes withdraw
    (``project_ids``: {name: [the IDs it means]})."""
    return {(project_id, c.field) for c in changes
            if c.kind == PROJECT and c.after is None
            for project_id in project_ids.get(c.name, [c.name])}


def refuse_granted_changes(fields, current_templates, withdrawn):
    """A granted template's steps or traits change only once the grant is
    withdrawn (the grant was made for its content): refused in one line,
    unless the same apply also withdraws every grant of it (``fields``:
    the template's changes; ``withdrawn``: ``withdrawn_grants``)."""
    template = current_templates.get(fields[0].name)
    if fields[0].action == CREATE or template is None:
        return
    config = str(fields[0].key[0])
    kept = [p for p in grants.recorded(template)
            if (p, config) not in withdrawn]
    if kept:
        doing = 'deleting it' if fields[0].action == DELETE else \
            'changing its %s' % ', '.join(f.field for f in fields)
        grants.refuse_granted_change(template, doing)


# ------------------------------------------------------------ rollout


def outdated_servers(servers, declared, image_names, runs=None,
                     flavor_names=None):
    """[(server name, owner kind, owner name, what it asks for now, server
    ID)] of the running servers not in line with the file, whichever apply
    changed their flavor or image (a rollout an earlier run left is
    resumed): a server of a flavor the file lists (``flavor_names``:
    {server ID: the name of the file's flavor it runs, or a toggle derived
    its flavor from}) that does not run the configs the file gives it (on
    a node: ``runs``, {server ID: {type: value}}, what ironic deployed it
    with and over it what a toggle applied; a virtual server: its
    flavor's), or a server on a node of an image the file lists
    (``image_names``: {ID: name} of those the names mean) that does not
    run what the file gives the image (where its flavor asks for none of
    that type)."""
    found = []
    for server in sorted(servers, key=lambda s: s['name']):
        flavor = server.get('flavor') or {}
        name = (flavor_names or {}).get(server['id'])
        booted = {c.type: c.value for c in config_specs.configs_of(
            flavor.get('extra_specs'))}
        now = (runs or {}).get(server['id'])
        if _behind(declared.flavors.get(name), booted if now is None
                   else now):
            found.append((server['name'], FLAVOR, name,
                          _configs(declared.flavors[name]), server['id']))
        image = image_names.get((server.get('image') or {}).get('id'))
        if now is not None and _behind({
                t: v for t, v in declared.images.get(image, {}).items()
                if t not in booted}, now):
            found.append((server['name'], IMAGE, image,
                          _configs(declared.images[image]), server['id']))
    return found


def _behind(wanted, runs):
    return bool(wanted) and any(runs.get(t) not in (v, PROJECTS_CHOICE)
                                for t, v in wanted.items())


# In ``runs``: a type whose value the server's project chose (its
# self-service toggle record), which a rollout of the file leaves alone.
PROJECTS_CHOICE = "the project's choice"


def _configs(asks):
    return [str(deploy_config.Config(t, v)) for t, v in sorted(asks.items())]


def rollout_commands(outdated, max_unavailable=1):
    """The commands that bring the outdated servers in line: one per
    flavor (its servers in every project), a rebuild per server of an
    image (an image's configs are applied by a deploy, never toggled:
    ``toggle_plan.refuse_image_configs``)."""
    commands = []
    for name in sorted({o[2] for o in outdated if o[1] == FLAVOR}):
        commands.append('openstack server deploy-config set --flavor %s '
                        '--all-projects --max-unavailable %d' % (
                            name, max_unavailable))
    commands += ['openstack server rebuild --image %s %s' % (o[2], o[0])
                 for o in outdated if o[1] == IMAGE]
    return commands
