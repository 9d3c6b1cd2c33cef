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

from osc_deploy_config.domain import deploy_config
from osc_deploy_config.domain import grant_flavors
from osc_deploy_config.domain import grants
from osc_deploy_config.services import ironic as ironic_api
from osc_deploy_config.services import versions

COLUMNS = ('Config', 'Resource Class', 'Runbook', 'Action', 'Why')
SHOW_COLUMNS = ('Config', 'Resource Class', 'Runbook', 'Template', 'State')
LIST_COLUMNS = ('Project', 'Config', 'Runbooks', 'State')


def _ironic(clients):
    """Ironic at the version a grant needs: its one line on an older
    ironic (runbooks came in 1.92; a runbook gated by its traits, so one
    per project, in 1.112)."""
    api = clients.ironic(versions.DEPLOY_TEMPLATES,
                         versions.PROJECT_RUNBOOKS)
    api.require()
    return api


def _configs(texts):
    configs = list(dict.fromkeys(deploy_config.parse_config(t)
                                 for t in texts))
    if not configs:
        raise exceptions.CommandError('Give the configs: TYPE=VALUE ...')
    return configs


def grant(clients, project, config_texts, dry_run=False):
    """Grant the configs to the project: (COLUMNS, a row per runbook and
    derived flavor)."""
    configs = _configs(config_texts)
    project_id = clients.project_id(project)
    ironic = _ironic(clients)
    known = ironic.config_templates(fields=ironic_api.TEMPLATE_STEP_FIELDS)
    changes = grants.plan(project_id, configs, known,
                          ironic.runbooks(project=project_id))
    flavors = _flavor_plan(clients, project_id, configs, known)
    if not dry_run:
        for change in changes:
            _apply(ironic, change)
        _open_flavors(clients, project_id, flavors)
    return COLUMNS, [_row(c) for c in changes] + [
        (str(f.config), None, f.name, f.action or grant_flavors.OPEN, f.why)
        for f in flavors]


def _apply(ironic, change):
    """Make one runbook what the change wants."""
    if change.action == grants.CREATE:
        body = {k: v for k, v in change.wanted.items() if k != 'traits'}
        created = ironic.create_runbook(body)
        ironic.set_runbook_traits(created['uuid'], change.wanted['traits'])
    elif change.action == grants.REPAIR:
        ironic.patch_runbook(change.found['uuid'], [
            {'op': 'add', 'path': '/%s' % key, 'value': change.wanted[key]}
            for key in ('steps', 'extra', 'public', 'owner')])
        ironic.set_runbook_traits(change.found['uuid'],
                                  change.wanted['traits'])
    elif change.action == grants.DELETE:
        ironic.delete_runbook(change.found['uuid'])


def _row(change):
    return (str(change.config), change.resource_class, change.name,
            change.action, change.why)


def withdraw(clients, project, config_texts=(), every=False):
    """Withdraw the configs (``every``: all) from the project: its grant
    runbooks deleted, the derived flavors closed to it; (COLUMNS, rows)."""
    if bool(config_texts) == bool(every):
        raise exceptions.CommandError('Give the configs to withdraw, or --all')
    configs = None if every else _configs(config_texts)
    project_id = clients.project_id(project)
    ironic = _ironic(clients)
    changes = grants.withdraw(project_id, configs,
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


def show(clients, project):
    """(SHOW_COLUMNS, rows): what the project may switch to, each runbook
    and how it matches its template."""
    project_id = clients.project_id(project)
    ironic = _ironic(clients)
    known = ironic.config_templates(fields=ironic_api.TEMPLATE_STEP_FIELDS)
    runbooks = ironic.runbooks(project=project_id)
    rows = []
    for config, changes in _state(project_id, known, runbooks):
        rows += [(str(config), c.resource_class, c.name, (
            c.wanted or {}).get('traits', [None])[0] or (
            c.found['extra'][grants.EXTRA_GRANT]), _said(c)) for c in changes]
    return SHOW_COLUMNS, rows


def _state(project_id, known, runbooks):
    """[(Config, [grants.Change])] of each config the project's runbooks
    grant, as ``set`` would plan it now (a template gone: its one line)."""
    found = []
    configs = sorted({grants.granted_config(r) for r in runbooks
                      if grants.granted_config(r)}, key=str)
    for config in configs:
        try:
            changes = grants.plan(project_id, [config], known, runbooks)
        except exceptions.CommandError as exc:
            changes = [grants.Change(
                grants.REPAIR, config, None, r['name'], None, r, str(exc))
                for r in runbooks if grants.granted_config(r) == config]
        found.append((config, changes))
    return found


def _said(change):
    """The State of one runbook of a grant, in words."""
    if change.action == grants.KEEP:
        return 'ok'
    return 'drift: %s (openstack project deploy-config set repairs it)' % (
        change.why)


def list_grants(clients):
    """(LIST_COLUMNS, rows): every project's grants, one row a config."""
    ironic = _ironic(clients)
    known = ironic.config_templates(fields=ironic_api.TEMPLATE_STEP_FIELDS)
    names = clients.project_names()
    rows = []
    for project_id, runbooks in sorted(grants.by_project(
            ironic.runbooks()).items()):
        for config, changes in _state(project_id, known, runbooks):
            drift = [c for c in changes if c.action != grants.KEEP]
            rows.append((names.get(project_id, project_id), str(config),
                         len([c for c in changes if c.found]),
                         '; '.join(_said(c) for c in drift) or 'ok'))
    return LIST_COLUMNS, rows


def _flavor_plan(clients, project_id, configs, known):
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
    return grant_flavors.needed(
        virtual, configs, known.for_class(None), listed, {
            f['id']: nova.flavor_access(f['id'])
            for f in grant_flavors.derived_private(listed)}, project_id)


def _open_flavors(clients, project_id, needs):
    """Create or finish the flavors needed (private, as a toggle derives
    them), and open them to the project."""
    nova = clients.nova()
    for need in needs:
        flavor = need.flavor
        if need.action == grant_flavors.CREATE:
            flavor = nova.create_flavor(need.name, need.sizes,
                                        need.description, public=False)
        if need.action in (grant_flavors.CREATE, grant_flavors.FINISH):
            flavor = nova.finish_flavor(flavor, need.specs)
        if need.open:
            nova.add_flavor_access(flavor['id'], project_id)
