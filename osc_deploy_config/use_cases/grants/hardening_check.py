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

"""``openstack project deploy-config check``: whether a project can reach
a config around its grant (``domain.hardening`` names the doors and judges
the probes, which change nothing).

Run by the operator (an admin), it probes with a short-lived user of each
role in the project, made for the check and always removed, and reads
every node's lessee.  Run by a project's manager or member, it probes with
that token, and says which probes it could not make.
"""

import contextlib
import logging
import uuid

from osc_lib import exceptions

from osc_deploy_config.domain.grants import grants
from osc_deploy_config.domain.grants import hardening
from osc_deploy_config.services import clients as clients_api
from osc_deploy_config.services import keystone
from osc_deploy_config.services import versions

LOG = logging.getLogger(__name__)
ROLES = ('manager', 'member')

# The raw steps' probes, by door.
_STEPS_PROBES = {'service_steps': hardening.service_steps_probe,
                 'clean_steps': hardening.clean_steps_probe}

def check(clients, project, domain=None):
    """(COLUMNS, a row per door and role)."""
    if clients.is_admin():
        return hardening.COLUMNS, _as_operator(clients, project, domain)
    return hardening.COLUMNS, _as_project(clients, project)


def _as_operator(clients, project, domain):
    identity = clients.connection.identity
    found = identity.get_project(clients.project_id(project, domain))
    servers = clients.nova().servers(project=found.id)
    ironic = clients.ironic(versions.NODE_LESSEE)
    nodes = ironic.owners()
    hidden = None if clients.baremetal_scope == 'system' else (
        "these credentials are not system-scoped, and a project-scoped "
        "token sees only its own project's nodes: give the operator a "
        "system role to read every node's lessee and owner")
    runbooks = _runbooks(clients)
    templates = _templates(clients)
    rows = _readings(found.id, servers, nodes, runbooks, templates, hidden)
    rows += _histories(clients, found.id, servers, nodes, templates, hidden)
    targets = _targets(found.id, servers, nodes, runbooks, None if (
        templates is None) else hardening.used_steps(templates))
    users = [keystone.ProbeUser(identity, found, role) for role in ROLES]
    with _removed(users):
        for user in users:
            _create(user)
            rows += _probes(clients_api.ConnectionClients(
                user.connect(clients.connection)), user.role, targets,
                'a short-lived %s user, removed' % user.role)
    return rows


def _runbooks(clients):
    """Every runbook the credentials see, or None where this ironic has no
    runbooks of a project (API 1.112)."""
    ironic = clients.ironic(versions.PROJECT_RUNBOOKS)
    if not ironic.reaches(versions.PROJECT_RUNBOOKS):
        return None
    return ironic.runbooks()


def _templates(clients):
    """Every deploy template of the cloud, in detail, or None where these
    credentials cannot read them all."""
    ironic = clients.ironic(versions.DEPLOY_TEMPLATES)
    if clients.baremetal_scope != 'system':
        return None
    return ironic.deploy_templates(detail=True, limit=0)


def _histories(clients, project_id, servers, nodes, templates, hidden):
    """The history door: what ran on the project's nodes since its
    servers there were created, beyond the templates its instances and
    its grants name."""
    if hidden or templates is None:
        return hardening.history_rows({}, [], hidden or (
            'the templates, which explain the steps, are shown to a '
            'system-scoped token only'))
    ironic = clients.ironic(versions.NODE_HISTORY)
    if not ironic.reaches(versions.NODE_HISTORY):
        return hardening.history_rows({}, [], 'this ironic keeps no node '
                                      'history (API 1.78)')
    created = {s['id']: s.get('created') for s in servers}
    ours = {n['uuid']: n for n in nodes if n.get('instance_uuid') in created}
    histories = ironic.histories_since({
        ident: created[n['instance_uuid']] for ident, n in ours.items()})
    found, unread = {}, []
    for ident, node in sorted(ours.items()):
        name = node.get('name') or ident
        since = created[node['instance_uuid']]
        if not hardening.shows_deploy(histories[ident], since):
            unread.append(name)
            continue
        entitled = hardening.entitled(templates, project_id, (ironic.node(
            ident, ['instance_info'])['instance_info'] or {}).get('traits'))
        found[name] = hardening.unexplained_steps(histories[ident], since,
                                                  entitled)
    return hardening.history_rows(found, unread)


def _readings(project_id, servers, nodes, runbooks, templates, hidden,
              own_token=False):
    """The rows read, not probed: lessees, owners, runnable runbooks
    (``hidden``: why the nodes read may not be every node; the project's
    ``own_token`` sees every node and runbook it may run one on)."""
    rows = hardening.lessee_rows(project_id, servers, nodes, hidden)
    rows += hardening.owner_rows(project_id, servers, nodes, hidden)
    hidden = None if own_token else hidden
    if runbooks is None:
        return rows + [hardening.row(
            hardening.RUNBOOK_DOOR, hardening.NOT_PROBED,
            'this ironic has no runbooks of a project (API 1.112)')]
    return rows + hardening.runbook_rows(project_id, runbooks, nodes,
                                         templates, hidden)


def _create(user):
    from openstack import exceptions as sdk_exceptions

    try:
        user.create()
    except sdk_exceptions.SDKException as exc:
        raise exceptions.CommandError(
            'Could not make the check\'s short-lived %s user in project %s '
            '(keystone said: %s); the operator\'s check needs keystone\'s '
            'admin' % (user.role, user.project.name,
                       str(exc).splitlines()[0] if str(exc) else
                       type(exc).__name__)) from None


@contextlib.contextmanager
def _removed(users):
    """Remove every user made, whatever happens.  A failure to remove one
    is said in one line after trying them all, or, when an error is on its
    way already, logged beside it."""
    try:
        yield
    except BaseException:
        for failure in _remove(users):
            LOG.error('Could not remove %s', failure)
        raise
    failed = _remove(users)
    if failed:
        raise exceptions.CommandError(
            'Could not remove the check\'s short-lived users: %s; delete '
            'them with openstack user delete' % ', '.join(failed))


def _remove(users):
    failed = []
    for user in users:
        name = user.user.name if user.user is not None else user.role
        try:
            user.remove()
        except Exception as exc:    # noqa: BLE001 - said by the caller
            failed.append('%s (%s)' % (name, exc))
    return failed


def _as_project(clients, project):
    own = clients.own_project()
    if project not in (own, clients.own_project_name()):
        raise exceptions.CommandError(
            'A project checks itself only: these credentials are scoped to '
            'project %s, not %s (the operator, an admin, checks any)'
            % (own, project))
    roles = clients.roles()
    role = next((r for r in ROLES if r in roles), None)
    if role is None:
        raise exceptions.CommandError(
            'The check probes with a manager\'s or a member\'s token, and '
            'these credentials have neither role in project %s' % own)
    servers = clients.nova().servers()
    nodes = clients.ironic(versions.NODE_LESSEE).owners()
    runbooks = _runbooks(clients)
    # a project sees the nodes it owns or leases, and its own runbooks:
    # what it may run; not the nodes leased to others
    rows = _readings(own, servers, nodes, runbooks, None, (
        "a project's token does not see the nodes leased to others: the "
        "operator's check reads them"), own_token=True)
    rows += hardening.history_rows({}, [], "a project's token reads "
                                   "neither its nodes' history nor the "
                                   "templates: the operator's check reads "
                                   "them")
    rows += _probes(clients, role, _targets(own, servers, nodes, runbooks),
                    'your token')
    return rows + [
        hardening.row(door, hardening.NOT_PROBED,
                      'needs a %s\'s token: the operator\'s check makes '
                      'one' % door.role)
        for door in hardening.DOORS if door.role != role]


def _targets(project_id, servers, nodes, runbooks, used_steps=None):
    """What the probes aim at: a node running one of the project's
    servers, leased to it, a runbook the project may run there (each None
    where there is none), and the steps the cloud's templates use (None:
    not read)."""
    own = {s['id'] for s in servers}
    node = next((n for n in nodes if n.get('instance_uuid') in own
                 and n.get('lessee') == project_id), None)
    runbook = next((r['name'] for r, _ in grants.runnable(
        runbooks or (), [node] if node else [], project_id)), None)
    return node and node['uuid'], runbook, used_steps


def _probes(clients, role, targets, who):
    node, runbook, used_steps = targets
    ironic = clients.ironic(versions.NODE_LESSEE, versions.PROJECT_RUNBOOKS)
    newest = ironic.reaches(versions.PROJECT_RUNBOOKS)
    rows = []
    for door in hardening.DOORS:
        if door.role != role:
            continue
        why = _unprobed(door, node, runbook, newest)
        if why:
            rows.append(hardening.row(door, hardening.NOT_PROBED, why))
            continue
        if door.probe == 'deploy_steps':
            state, detail = hardening.steps_row(door, {
                step: ironic.probe_provision(
                    node, hardening.deploy_steps_probe(step))
                for step in hardening.GUARDED_STEPS}, used_steps)
        else:
            state, detail = _probe(clients, ironic, door, node, runbook)
        if state is None:
            rows.append(hardening.row(door, hardening.NOT_PROBED, detail))
            continue
        rows.append(hardening.row(door, state, 'as %s: %s' % (who, detail)))
    return rows


def _unprobed(door, node, runbook, newest):
    """Why a door is not probed, or None."""
    if door.probe == 'nova_proxy':
        return ("no safe probe: nova writes the image it read with the "
                "property added, and a direct probe carries no service "
                "token; tests/functional/test_hardening proves the rule")
    needs_node = ('instance_info', 'deploy_steps', 'service_steps',
                  'clean_steps', 'runbook_rebuild')
    if door.probe in needs_node and node is None:
        return 'no server of the project runs on a node leased to it'
    ironic_only = needs_node[1:] + ('runbook_create',)
    if door.probe in ironic_only and not newest:
        return ('this ironic has no runbooks of a project (API 1.112), '
                'which the check probes at')
    if door.probe == 'runbook_rebuild' and runbook is None:
        return ('no runbook the project may run on its node: the door '
                'opens with the first (a grant publishes one)')
    return None


def _probe(clients, ironic, door, node, runbook):
    """(state, detail) of one probe; (None, why) where none was made."""
    if door.probe == 'instance_info':
        return hardening.verdict(door, ironic.probe_instance_info(
            node, hardening.instance_info_probe(
                'deploy_config_check_' + uuid.uuid4().hex)))
    if door.probe in _STEPS_PROBES:
        return hardening.verdict(door, *ironic.probe_provision(
            node, _STEPS_PROBES[door.probe]()))
    if door.probe == 'runbook_create':
        return hardening.verdict(door, *ironic.probe_runbook_create())
    if door.probe == 'runbook_rebuild':
        return hardening.verdict(door, *ironic.probe_provision(
            node, hardening.runbook_rebuild_probe(runbook)))
    image_id = clients.glance().any_image_id()
    if image_id is None:
        return None, 'no image visible to borrow an ID from'
    return hardening.verdict(door, *clients.glance().probe_create(
        hardening.image_probe(image_id, door)))


def settings(clients):
    """(SETTINGS_COLUMNS, rows): the lines of ironic's and nova's
    configuration the hardening needs on this cloud, derived from its
    deploy templates and images."""
    clients.ironic(versions.DEPLOY_TEMPLATES).require()
    templates = _templates(clients)
    if templates is None:
        raise exceptions.CommandError(
            'The settings follow every deploy template of the cloud, which '
            'ironic shows a system-scoped token only: give the operator a '
            'system role (openstack role add --system all --user <user> '
            'admin)')
    steps, kept = hardening.disallowed_steps(templates)
    why = ('the guarded steps no deploy template uses, and ironic\'s '
           'default; left out for the templates and the profiles: %s' % (
               ', '.join(kept) or 'none'))
    images = clients.glance().images(every=True).values()
    return hardening.SETTINGS_COLUMNS, [_service_role(clients),
        ('ironic.conf', 'api', 'disallow_deploy_steps', ','.join(steps),
         why),
        ('ironic.conf', 'api', 'disallow_service_steps', ','.join(steps),
         why + ' (a grant\'s runbooks take the templates\' steps)'),
        ('nova.conf', 'DEFAULT', 'non_inheritable_image_properties',
         ','.join(hardening.non_inheritable(images)),
         "nova's default and every trait: and deploy-config: property of "
         "an image: a member's snapshot inherits them, which glance "
         "refuses (nova's service token is not the operator's)")]


def _service_role(clients, name='service'):
    """The row of ironic's service_role rule: the Default domain's service
    project by its ID, beside ironic's own term for the project's name
    (which follows ``rbac_service_role_elevated_access``)."""
    found = list(clients.connection.identity.projects(name=name))
    ours = [p for p in found if p.domain_id == 'default']
    others = ', '.join('%s (domain %s)' % (p.id, p.domain_id)
                       for p in found if p.domain_id != 'default')
    if not ours:
        return ('ironic-policy.yaml', None, 'service_role', None,
                'no project named %s in the Default domain%s: name the '
                "project the service users (nova's, ironic's) have the "
                'service role in, by its ID' % (
                    name, ' (others of that name: %s)' % others
                    if others else ''))
    return ('ironic-policy.yaml', None, 'service_role',
            '"service_role": "role:service and project_id:%s and '
            'project_name:%%(config.service_project_name)s"' % ours[0].id,
            'the project %s of the Default domain%s' % (
                name, '; others of that name, whose service role '
                "ironic's default counts too: %s" % others
                if others else ''))
