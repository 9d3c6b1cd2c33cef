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

"""Who toggles: the cloud's operator, or a project within its grants.

Every check of a toggle is the same for both; what differs is where each
reads and writes.  The operator reads the deploy templates (ironic shows
them to a system role, or to a project admin under its legacy policy),
services a node with their steps, records in the node's ``properties``,
and checks the host in placement.  A project reads its grants, the
runbooks it owns (``domain.grants``), and only those configs may change; a
bare-metal server's node is serviced through a runbook, by the project's
managers (ironic's policy: a node's lessee manager may change its
provision state, a project's manager may use the project's runbooks), the
record goes to the node's ``extra``, and the host check reads the node's
traits in ironic (which checks them again, against the runbook's); a
virtual server switches to a flavor the grant opened to the project, never
one made on the fly.
"""

from osc_lib import exceptions

from osc_deploy_config.domain.configs import templates as dtemplates
from osc_deploy_config.domain.grants import grants
from osc_deploy_config.domain.servers import server_configs
from osc_deploy_config.domain.toggle import toggle_record
from osc_deploy_config.services import ironic as ironic_api
from osc_deploy_config.services import versions


def decide(clients, ironic):
    """The Operator when ironic gives these credentials the deploy
    templates, else the Project of their token."""
    if ironic.scope == 'system':
        return Operator()
    admin = clients.is_admin()
    if admin:
        try:
            return Operator(ironic.config_templates(
                fields=ironic_api.TEMPLATE_STEP_FIELDS))
        except ironic_api.Refused:
            pass
    roles = clients.roles()
    return Project(clients.own_project(), bool({'manager', 'admin'} & roles),
                   admin)


def catalog(authority, ironic):
    """The templates a report reads back with: the operator's, or a
    project's grants (none where its ironic has no project runbooks)."""
    try:
        return authority.templates(ironic)
    except exceptions.CommandError:
        if not authority.project_id:
            raise
        return dtemplates.ConfigTemplates()


def _proven(ironic, servers):
    """{server ID: the configs its project's record counts for} of
    ``servers`` ({ID: (server, node, its templates by config)}): each the
    last of its type its node's history shows run since the server was
    created."""
    claims = {i: (server, node, by_config, _claimed(server, node,
                                                    by_config))
              for i, (server, node, by_config) in servers.items()}
    histories = ironic.histories_since({
        node['uuid']: server.get('created')
        for server, node, _, claimed in claims.values() if claimed})
    return {i: {c for c in claimed if toggle_record.last_serviced(
        histories[node['uuid']], server.get('created'), {
            other: grants.runbook_steps(t)
            for other, t in by_config.items() if other.type == c.type}) == c}
        for i, (server, node, by_config, claimed) in claims.items()}


def _claimed(server, node, templates_by_config):
    """The granted configs a project's record on the node names that the
    operator's record does not say already: what the history must
    prove."""
    project = toggle_record.project_recorded(node, server['id'])
    if project is None or project != server.get('tenant_id'):
        return set()
    operators = toggle_record.applied(node, server['id'])
    return {c for c in toggle_record.project_configs(node, server['id'])
            & grants.granted(project, templates_by_config)
            if operators.get(c.type) != c}


class Operator:
    """The cloud's operator (``templates``: the config templates, when
    read already)."""

    project_id = None
    no_template = server_configs.NO_TEMPLATE

    def __init__(self, templates=None):
        self.known = templates

    def templates(self, ironic):
        if self.known is None:
            self.known = ironic.config_templates(
                fields=ironic_api.TEMPLATE_STEP_FIELDS)
        return self.known

    def granted(self, ironic, server, node, templates_by_config):
        """The configs a project's record on the node counts for: those
        the templates say were granted to the server's project on its
        hardware, each the last of its type the node's history shows run
        since the server was created (a member may write the record by
        hand; only a manager may run the runbook).  The history is read
        only where the record would change what the operator's says."""
        return _proven(ironic, {server['id']: (
            server, node, templates_by_config)})[server['id']]

    def granted_each(self, ironic, servers, nodes, known):
        """{server ID: what its project's record counts for} of many
        servers (``nodes``: by instance; ``known``: ConfigTemplates),
        their nodes' histories read READERS at a time."""
        return _proven(ironic, {
            s['id']: (s, nodes[s['id']], known.for_hardware(nodes[s['id']]))
            for s in servers if s['id'] in nodes})

    def refuse_unserviceable(self, server, node, configs, ironic):
        """A node ironic does not show: one line, why."""
        if node is not None:
            return
        if ironic.scope == 'project':
            raise exceptions.CommandError(
                'Server %s is a bare-metal server, but ironic does not '
                'show its node to these credentials: its default policy '
                'shows nodes to a system-scoped token only, and %s. '
                'Nothing was changed.' % (server['name'],
                                          ironic_api.SYSTEM_ROLE_HINT))
        raise exceptions.CommandError(
            'Server %s is a bare-metal server, but ironic shows no node '
            'with its instance: nothing was changed.' % server['name'])

    def refuse_ungranted(self, server, configs, templates_by_config,
                         allowed_steps=()):
        """The operator may toggle to any config a template realises."""

    def refuse_new_flavor(self, server, configs, plan):
        """The operator derives the flavor a virtual server needs."""


class Project:
    """A project, within what the operator granted it: ``project_id``,
    and whether the token is one of its managers (``manager``)."""

    no_template = server_configs.NOT_GRANTED

    def __init__(self, project_id, manager, admin=False):
        self.project_id = project_id
        self.manager = manager
        # an admin that ironic refused the templates: maybe an operator
        # without a role on the system
        self.admin = admin
        self.known = None

    def templates(self, ironic):
        """Its grants, as the templates its runbooks publish."""
        if self.known is None:
            ironic.require_feature(versions.PROJECT_RUNBOOKS)
            self.known = grants.as_templates(ironic.runbooks(),
                                             self.project_id)
        return self.known

    def granted(self, ironic, server, node, templates_by_config):
        """Its own record counts for what it was granted."""
        return set(templates_by_config)

    def granted_each(self, ironic, servers, nodes, known):
        return {s['id']: set(known.for_hardware(nodes[s['id']]))
                for s in servers if s['id'] in nodes}

    def refuse_unserviceable(self, server, node, configs, ironic):
        """A bare-metal server's node is serviced by the project's
        managers: a member is told so."""
        if not self.manager:
            raise exceptions.CommandError(
                'Server %s runs on bare metal: its project\'s managers may '
                'switch it, within the configs the operator granted '
                '(ironic lets the manager of a node\'s lessee service it): '
                'ask one of them to run openstack server resize %s %s. '
                'Nothing was changed.' % (server['name'], ' '.join(
                    '--deploy-config %s' % c for c in configs),
                    server['id']))
        if node is None:
            raise exceptions.CommandError(
                'Server %s is a bare-metal server, but ironic does not show '
                'its node to its project: is the project its lessee '
                '([conductor]automatic_lessee_source)? Nothing was '
                'changed.' % server['name'])
        project = server.get('tenant_id', self.project_id)
        if node.get('owner') == project:
            raise exceptions.CommandError(
                'Server %s runs on node %s, which project %s owns: '
                'self-service does not switch a node a project owns (its '
                'managers may clean it with raw steps, set its RAID target '
                'and write its properties and traits, around any grant). '
                'Nothing was changed; the operator may switch it.' % (
                    server['name'], node.get('name') or node['uuid'],
                    node['owner']))
        if node.get('lessee') != project:
            raise exceptions.CommandError(
                'Server %s runs on node %s, whose lessee is %s, not the '
                'server\'s project %s: a project services only the nodes '
                'it leases for its own servers. Nothing was changed; the '
                'operator may set it right (openstack baremetal node set %s '
                '--lessee %s).' % (
                    server['name'], node.get('name') or node['uuid'],
                    node.get('lessee') or 'no project',
                    server.get('tenant_id', self.project_id), node['uuid'],
                    server.get('tenant_id', self.project_id)))

    def refuse_ungranted(self, server, configs, templates_by_config,
                         allowed_steps=()):
        """Only its own servers (a project admin finds another project's
        by ID), only the configs granted to it, on the server's hardware,
        and only their steps."""
        if allowed_steps:
            raise exceptions.CommandError(
                '--allow-step is the operator\'s: a project runs the steps '
                'its grant publishes, no other. Nothing was changed.')
        if server.get('tenant_id') not in (None, self.project_id):
            raise exceptions.CommandError(
                'Server %s belongs to another project: a project switches '
                'only its own servers, within its own grant. Nothing was '
                'changed.' % server['name'])
        missing = [c for c in configs if c not in templates_by_config]
        if missing:
            raise exceptions.CommandError(
                'Server %s cannot switch to %s: the operator has not granted '
                'it to its project (openstack project deploy-config set %s '
                '%s). Nothing was changed.%s' % (
                    server['name'], ', '.join(str(c) for c in missing),
                    self.project_id, ' '.join(str(c) for c in missing),
                    self.operator_hint()))

    def operator_hint(self):
        """For an admin: what an operator of the cloud lacks here."""
        if not self.admin:
            return ''
        return (' As the cloud\'s operator: ironic shows the deploy '
                'templates to a system-scoped token only, and %s.'
                % ironic_api.SYSTEM_ROLE_HINT)

    def refuse_new_flavor(self, server, configs, plan):
        """A project cannot make flavors: its grant opened those its
        virtual servers need."""
        raise exceptions.CommandError(
            'Server %s cannot switch to %s: no flavor %s is open to its '
            'project; the operator\'s grant opens the flavors its virtual '
            'servers need (openstack project deploy-config set %s %s). '
            'Nothing was changed.' % (
                server['name'], ', '.join(str(c) for c in configs),
                plan.new_flavor_name, self.project_id,
                ' '.join(str(c) for c in configs)))
