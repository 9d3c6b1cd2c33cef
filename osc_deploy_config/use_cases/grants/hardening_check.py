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

from osc_deploy_config.domain.grants import hardening
from osc_deploy_config.services import clients as clients_api
from osc_deploy_config.services import keystone
from osc_deploy_config.services import versions

LOG = logging.getLogger(__name__)
ROLES = ('manager', 'member')


def check(clients, project, domain=None):
    """(COLUMNS, a row per door and role)."""
    if clients.is_admin():
        return hardening.COLUMNS, _as_operator(clients, project, domain)
    return hardening.COLUMNS, _as_project(clients, project)


def _as_operator(clients, project, domain):
    identity = clients.connection.identity
    found = identity.get_project(clients.project_id(project, domain))
    servers = clients.nova().servers(project=found.id)
    leases = clients.ironic(versions.NODE_LESSEE).leases()
    rows = hardening.lessee_rows(found.id, servers, leases)
    node = _probe_node(found.id, servers, leases)
    users = [keystone.ProbeUser(identity, found, role) for role in ROLES]
    with _removed(users):
        for user in users:
            _create(user)
            rows += _probes(clients_api.ConnectionClients(
                user.connect(clients.connection)), user.role, node,
                'a short-lived %s user, removed' % user.role)
    return rows


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
    leases = clients.ironic(versions.NODE_LESSEE).leases()
    rows = hardening.lessee_rows(own, servers, leases, sees_all=False)
    rows += _probes(clients, role, _probe_node(own, servers, leases),
                    'your token')
    return rows + [
        hardening.row(door, hardening.NOT_PROBED,
                      'needs a %s\'s token: the operator\'s check makes '
                      'one' % door.role)
        for door in hardening.DOORS if door.role != role]


def _probe_node(project_id, servers, leases):
    """A node running one of the project's servers, leased to it (the
    instance_info probe's), or None."""
    own = {s['id'] for s in servers}
    return next((n['uuid'] for n in leases if n['instance_uuid'] in own
                 and n.get('lessee') == project_id), None)


def _probes(clients, role, node, who):
    rows = []
    image_id = None
    for door in hardening.DOORS:
        if door.role != role:
            continue
        if door.probe == 'instance_info':
            if node is None:
                rows.append(hardening.row(
                    door, hardening.NOT_PROBED, 'no server of the project '
                    'runs on a node leased to it'))
                continue
            status = clients.ironic(versions.NODE_LESSEE).probe_instance_info(
                node, hardening.instance_info_probe(
                    'deploy_config_check_' + uuid.uuid4().hex))
        else:
            image_id = image_id or clients.glance().any_image_id()
            if image_id is None:
                rows.append(hardening.row(
                    door, hardening.NOT_PROBED, 'no image visible to '
                    'borrow an ID from'))
                continue
            status = clients.glance().probe_create(
                hardening.image_probe(image_id, door))
        state, detail = hardening.verdict(door, status)
        rows.append(hardening.row(door, state, 'as %s: %s' % (who, detail)))
    return rows
