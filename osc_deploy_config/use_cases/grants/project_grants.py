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

"""The operator's grants: ``openstack project deploy-config
set|unset|show|list`` (``domain.grants`` decides, this reads and writes).

``set`` publishes, for each template serving each config, a runbook the
project owns (created, or repaired where it drifted from its template), and
gives the project the derived flavors its virtual servers need to switch
(private, open to it); ``unset`` deletes the runbooks and closes those
flavors to it.  Everything is read and checked before the first write, and
a rerun after a failure finishes the work: each write makes one runbook or
flavor match what is wanted.
"""

from osc_lib import exceptions

from osc_deploy_config.domain.configs import config_sets
from osc_deploy_config.domain.configs import config_specs
from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.grants import grant_flavors
from osc_deploy_config.domain.grants import grants
from osc_deploy_config.domain.toggle import toggle_plan
from osc_deploy_config.services import ironic as ironic_api
from osc_deploy_config.services import versions
from osc_deploy_config.use_cases.configs import set_templates

COLUMNS = ('Config', 'Resource Class', 'Runbook', 'Action', 'Why')
SHOW_COLUMNS = ('Config', 'Resource Class', 'Runbook', 'Template', 'State')
LIST_COLUMNS = ('Project', 'Config', 'Runbooks', 'State')


def _ironic(clients):
    """Ironic at the version a grant needs, with the system scope the
    templates and the runbooks of every project need: its one line
    otherwise (runbooks came in 1.92; a runbook gated by its traits, so
    one per project, in 1.112)."""
    api = clients.ironic(versions.DEPLOY_TEMPLATES,
                         versions.PROJECT_RUNBOOKS)
    api.require()
    if api.scope != 'system':
        raise exceptions.CommandError(
            'A grant is the operator\'s: it records itself in the deploy '
            'templates and publishes runbooks for another project, which '
            'ironic allows a system-scoped token only, and %s.'
            % ironic_api.SYSTEM_ROLE_HINT)
    return api


def _configs(texts):
    configs = list(dict.fromkeys(deploy_config.parse_config(t)
                                 for t in texts))
    if not configs:
        raise exceptions.CommandError('Give the configs: TYPE=VALUE ...')
    return configs


def _known(ironic):
    return ironic.config_templates(fields=ironic_api.TEMPLATE_WRITE_FIELDS)


def grant(clients, project, config_texts, dry_run=False, domain=None):
    """Grant the configs to the project: (COLUMNS, a row per template
    record, runbook and derived flavor)."""
    configs = _configs(config_texts)
    project_id = clients.project_id(project, domain)
    ironic = _ironic(clients)
    known = _known(ironic)
    changes = grants.plan(project_id, configs, known, ironic.runbooks())
    flavors = flavor_plan(clients, project_id, configs, known)
    sets = _sets_asked(flavors, known)
    if not dry_run:
        for change in changes:
            _apply(ironic, change)
    made = set_templates.make(ironic, known, sets, dry_run)
    if not dry_run:
        _open_flavors(clients, project_id, flavors)
    return COLUMNS, [_row(c) for c in changes] + [
        (config_sets.members_text(s.members), None, s.name, 'make set',
         'the derived flavors ask for them together') for s in sets
        if any(s.name in line for line in made)] + [
        (str(f.config), None, f.name, f.action or grant_flavors.OPEN, f.why)
        for f in flavors]


def _sets_asked(needs, known):
    """[config_sets.Serving] of the sets the derived flavors to make ask
    for (their templates are made first)."""
    found = {}
    for need in needs:
        if need.action in (grant_flavors.CREATE, grant_flavors.FINISH):
            found.update((s.name, s) for s in config_specs.needed_sets(
                config_specs.configs_of(need.specs), known.for_class(None)))
    return [found[name] for name in sorted(found)]


def _apply(ironic, change):
    """Make one runbook, or one template's record, what the change
    wants."""
    if change.action in (grants.RECORD, grants.UNRECORD):
        ironic.patch_deploy_template(change.found['uuid'], change.wanted)
    elif change.action == grants.CREATE:
        body = {k: v for k, v in change.wanted.items() if k != 'traits'}
        created = ironic.create_runbook(body)
        ironic.set_runbook_traits(created['uuid'], change.wanted['traits'])
    elif change.action == grants.REPAIR:
        drift = grants.differences(change.wanted, change.found)
        patch = [{'op': 'add', 'path': '/%s' % key, 'value': change.wanted[
            key] if key != 'disable_ramdisk' else False}
            for key in ('steps', 'extra', 'public', 'disable_ramdisk')
            if key in drift]
        if patch:
            ironic.patch_runbook(change.found['uuid'], patch)
        if 'traits' in drift:
            ironic.set_runbook_traits(change.found['uuid'],
                                      change.wanted['traits'])
    elif change.action == grants.DELETE:
        ironic.delete_runbook(change.found['uuid'])


def _row(change):
    return (str(change.config), change.resource_class, change.name,
            change.action, change.why)


def withdraw(clients, project, config_texts=(), every=False, domain=None):
    """Withdraw the configs (``every``: all) from the project: its grant
    runbooks deleted, the templates' records of it dropped, the derived
    flavors closed to it; (COLUMNS, rows)."""
    if bool(config_texts) == bool(every):
        raise exceptions.CommandError('Give the configs to withdraw, or --all')
    configs = None if every else _configs(config_texts)
    ironic = _ironic(clients)
    known = _known(ironic)
    project_id = _withdrawn_project(clients, project, domain, known)
    changes = grants.withdraw(project_id, configs, known,
                              ironic.runbooks(project=project_id))
    nova = clients.nova()
    listed = nova.flavors()
    closed = grant_flavors.to_close(listed, configs, {
        f['id']: nova.flavor_access(f['id'])
        for f in grant_flavors.derived_private(listed)}, project_id)
    for change in changes:
        _apply(ironic, change)
    for flavor in closed:
        nova.remove_flavor_access(flavor['id'], project_id)
    return COLUMNS, [_row(c) for c in changes] + [
        (', '.join(str(c) for c in grant_flavors.configs_of(f)), None,
         f['name'], 'close', 'no longer open to the project')
        for f in closed]


def _withdrawn_project(clients, project, domain, known):
    """The project to withdraw from: as keystone finds it, or, for a
    project keystone no longer knows, its ID as the templates record a
    grant to it (a grant must be withdrawable after its project)."""
    try:
        return clients.project_id(project, domain)
    except exceptions.CommandError:
        if project in grants.by_project(known) and not domain:
            return project
        raise


def show(clients, project, domain=None):
    """(SHOW_COLUMNS, rows): what the project may switch to (the
    templates' record of its grants), each runbook and how it matches its
    template; then every other runbook ironic would let the project run,
    whatever its annotation says."""
    project_id = clients.project_id(project, domain)
    ironic = _ironic(clients)
    known = _known(ironic)
    runbooks = ironic.runbooks()
    rows, shown = [], set()
    for config, changes in _state(project_id, known, runbooks):
        shown.update(c.name for c in changes if c.found is not None)
        rows += [(str(config), c.resource_class, c.name, _template_of(c),
                  _said(c)) for c in changes if c.action != grants.RECORD]
    return SHOW_COLUMNS, rows + _not_granted(project_id, runbooks,
                                             ironic.owners(), shown)


def _template_of(change):
    if change.wanted is not None:
        return change.wanted['traits'][0]
    if change.found is not None:
        return (change.found.get('extra') or {}).get(grants.EXTRA_GRANT)
    return None


def _state(project_id, known, runbooks):
    """[(Config, [grants.Change])] of each config the templates record as
    granted to the project, as ``set`` would plan it now (a config that
    can no longer be granted, or whose template changed since: its one
    line)."""
    found = []
    for config in grants.by_project(known).get(project_id, []):
        try:
            changes = grants.plan(project_id, [config], known, runbooks)
            stale = [t['name'] for _, t in grants.serving(config, known)
                     if project_id in grants.stale_projects(t)]
            if stale:
                raise exceptions.CommandError(
                    'stale: template %s changed since the grant, which '
                    'counts for nothing until granted again (openstack '
                    'project deploy-config set %s %s)' % (
                        ', '.join(stale), project_id, config))
        except exceptions.CommandError as exc:
            changes = [grants.Change(
                grants.REPAIR, config, None, r['name'], None, r, str(exc))
                for r in runbooks if r.get('owner') == project_id
                and grants.granted_config(r) == config] or [grants.Change(
                    grants.REPAIR, config, None, None, None, None, str(exc))]
            changes = [c._replace(why='%s (or withdraw it: openstack '
                                      'project deploy-config unset)' % c.why)
                       for c in changes]
        found.append((config, changes))
    return found


def _not_granted(project_id, runbooks, nodes, shown):
    """Rows of the runbooks ironic lets the project run on a node it
    leases or owns (its own, with a trait in common), other than its
    grant's (``shown``): made by the project itself, left, or under
    another name, whatever their traits or annotation."""
    return [(str(grants.granted_config(r) or ''), None, r['name'],
             (r.get('extra') or {}).get(grants.EXTRA_GRANT),
             'runnable on %s (traits %s), but not a grant: the operator '
             'has not granted it to the project (openstack baremetal '
             'runbook delete %s)' % (', '.join(on), ', '.join(sorted(
                 r.get('traits') or ())), r['name']))
            for r, on in grants.runnable(runbooks, nodes, project_id)
            if r['name'] not in shown]


def _said(change):
    """The State of one runbook of a grant, in words."""
    if change.action == grants.KEEP:
        return 'ok'
    if change.action == grants.REPAIR and change.wanted is None:
        return change.why
    return 'drift: %s (openstack project deploy-config set repairs it)' % (
        change.why)


def list_grants(clients):
    """(LIST_COLUMNS, rows): every project's grants (the templates'
    record), one row a config."""
    ironic = _ironic(clients)
    known = _known(ironic)
    runbooks = ironic.runbooks()
    nodes = ironic.owners()
    names = clients.project_names()
    rows = []
    owners = {r['owner'] for r in runbooks if r.get('owner')}
    for project_id in sorted(set(grants.by_project(known)) | owners):
        shown = set()
        for config, changes in _state(project_id, known, runbooks):
            shown.update(c.name for c in changes if c.found is not None)
            drift = [c for c in changes if c.action != grants.KEEP]
            rows.append((names.get(project_id, project_id), str(config),
                         len([c for c in changes if c.action in (
                             grants.KEEP, grants.REPAIR) and c.found]),
                         '; '.join(_said(c) for c in drift) or 'ok'))
        others = [r['name'] for r, _ in grants.runnable(runbooks, nodes,
                                                        project_id)
                  if r['name'] not in shown]
        if others:
            rows.append((names.get(project_id, project_id), None,
                         len(others), 'runnable on its nodes, but not a '
                         'grant: %s' % ', '.join(others)))
    return LIST_COLUMNS, rows


def flavor_plan(clients, project_id, configs, known):
    """The derived flavors the project's virtual servers need to switch to
    the configs (grant_flavors.Need), from one listing each of its
    servers, nova's ironic hypervisors and the flavors."""
    nova = clients.nova(versions.SERVER_FLAVOR_DETAILS)
    servers = nova.servers(project=project_id)
    if not servers:
        return []
    on_ironic = nova.ironic_hypervisors()
    virtual = [s for s in servers if s.get(
        'OS-EXT-SRV-ATTR:hypervisor_hostname') not in on_ironic]
    if not virtual:
        return []
    listed = nova.flavors()
    private = grant_flavors.derived_private(listed) + [
        root for root in (toggle_plan.root_flavor(s, listed) for s in virtual)
        if root is not None and not toggle_plan.is_public(root)]
    return grant_flavors.needed(
        virtual, configs, known.for_class(None), listed, {
            f['id']: nova.flavor_access(f['id']) for f in private},
        project_id)


def _open_flavors(clients, project_id, needs):
    """Create or finish the flavors needed (private, as a toggle derives
    them), and open them to the project."""
    nova = clients.nova()
    for need in needs:
        if need.action == grant_flavors.SKIP:
            continue
        flavor = need.flavor
        if need.action == grant_flavors.CREATE:
            flavor = nova.create_flavor(need.name, need.sizes,
                                        need.description, public=False)
        if need.action in (grant_flavors.CREATE, grant_flavors.FINISH):
            flavor = nova.finish_flavor(flavor, need.specs)
        if need.open:
            nova.add_flavor_access(flavor['id'], project_id)
