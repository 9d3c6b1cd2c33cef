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

"""What a rollout reads, once for all its servers: the servers (in pages,
with their locks and flavors), the nodes behind them (one node listing),
the flavors, the images, the config templates, and from placement the
providers that carry the traits the targets require.  Each server's
``toggle.Reading`` and scheduler view are then built from these, with no
request of their own;
``look`` reads the servers and nodes again, as they are now, for the
budget."""

import collections

from osc_lib import exceptions

from osc_deploy_config.domain.configs import config_specs
from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.fleet import fleet_plan
from osc_deploy_config.domain.servers import rebuild_plan
from osc_deploy_config.services import ironic as ironic_api
from osc_deploy_config.services import rest
from osc_deploy_config.services import versions
from osc_deploy_config.use_cases.toggle import authority
from osc_deploy_config.use_cases.toggle import toggle

# The servers a rollout selected, the flavor it rolls out (or None), and
# how to list them again: (every project, one project's ID or None).
Selection = collections.namedtuple('Selection', ['servers', 'flavor',
                                                 'scope'])
NODE_FIELDS = ironic_api.PROVISION_FIELDS + ('instance_uuid',)


def select(clients, refs=(), flavor=None, project=None, all_projects=False):
    """The Selection: the servers named, and those of the flavor or
    project, from one listing of servers (every page) and, for a flavor,
    one of flavors; a server named but not listed is read by itself."""
    nova = clients.nova(versions.SERVER_LOCKS)
    project_id = clients.project_id(project) if project else None
    wide = all_projects or bool(project_id)
    listed = nova.servers(wide, project_id) if (
        refs or flavor or wide) else []
    found = None
    if flavor:
        found = nova.find_flavor(flavor)
    by_ref = [_named(nova, listed, ref, wide) for ref in refs]
    if flavor:
        listed = fleet_plan.of_flavor(listed, found['name'])
    elif not wide:
        listed = []
    servers = fleet_plan.merge_selected(by_ref, listed)
    if not servers:
        raise exceptions.CommandError(
            'No server selected: name servers, or give --flavor, '
            '--project or --all-projects')
    return Selection(servers, found, (wide, project_id))


def _named(nova, listed, ref, wide):
    """A server named by ID or name among those listed (by name: one of
    them only), else read by itself."""
    by_id = [s for s in listed if s['id'] == ref]
    named = by_id or [s for s in listed if s['name'] == ref]
    if len(named) == 1:
        return named[0]
    return nova.find_server(ref, wide)


class FleetReading:
    """What deciding about every server of a rollout takes, read once."""

    def __init__(self, clients, selection, templates_by_config, configs):
        self.clients = clients
        self.servers = selection.servers
        self.scope = selection.scope
        self.templates_by_config = templates_by_config
        self.nova = clients.nova(versions.SERVER_LOCKS)
        self.ironic = clients.ironic(versions.DEPLOY_TEMPLATES,
                                     versions.NODE_TRAITS,
                                     versions.NODE_LESSEE)
        self.nodes = self.read_nodes()
        self.granted = authority.Operator().granted_each(
            self.ironic, self.servers, self.nodes, templates_by_config)
        virtual = [s for s in self.servers if s['id'] not in self.nodes]
        self.flavors = self.nova.flavors() if virtual else []
        self.images = clients.glance().images() if any(
            s.get('image') for s in self.servers) else {}
        self.on_ironic = self.nova.ironic_hypervisors() if any(
            rebuild_plan.hypervisor_may_be_ironic(s) for s in virtual) \
            else set()
        self.read_placement(configs)

    def read_nodes(self):
        """{instance UUID: node} of every node with an instance."""
        return {n['instance_uuid']: n for n in self.ironic.nodes(NODE_FIELDS)
                if n.get('instance_uuid')}

    def read_placement(self, configs):
        """The providers that carry each trait a target may require, and
        the names of the virtual servers' hosts."""
        placement = self.clients.placement()
        required, asked = set(), set(configs)
        for server in self.servers:
            specs = server['flavor'].get('extra_specs')
            required |= config_specs.required_traits(specs)
            asked |= set(config_specs.configs_of(specs))
            if server['id'] not in self.nodes:
                required |= set(self.sets_asked(server, configs))
        # a node needs each target config's own template (node_traits)
        required |= {t['name'] for t in self.templates_by_config.every()
                     if deploy_config.config_of(t['extra']) in asked}
        self.carriers = {t: placement.providers(required=t)
                         for t in sorted(required)}
        self.by_name = placement.provider_names() if any(
            s['id'] not in self.nodes for s in self.servers) else {}

    def sets_asked(self, server, configs):
        """The sets a virtual server's derived flavor would ask for."""
        specs = server['flavor'].get('extra_specs')
        wanted = {c.type: c for c in config_specs.configs_of(specs)}
        wanted.update((c.type, c) for c in configs)
        try:
            return [s.name for s in config_specs.needed_sets(
                wanted.values(), self.templates_by_config.for_hardware(
                    None, specs))]
        except exceptions.CommandError:
            return []       # planning refuses it, with the reason

    def list_servers(self):
        """{server ID: server} of one listing of the servers in the
        selection's scope."""
        wide, project_id = self.scope
        return {s['id']: s for s in self.nova.servers(wide, project_id)}

    def look(self, nodes=None, listed=None):
        """{server ID: (server, node or None)} of the selected servers as
        they are now: one listing of the servers (in the selection's
        scope, ``listed``: as just read, ``list_servers``; and one of each
        other project a selected server belongs to) and, for bare-metal
        ones, of the nodes (``nodes``: as just read, ``read_nodes``); a
        selected server the listings miss (gone, or moved) is read by
        itself, and left out only where nova answers that read with 404:
        any other error is the read's."""
        if nodes is None:   # a read is as old as its nodes: the servers
            # are listed beside them, within the same bound
            servers = rest.Later(self.list_servers)
            nodes = self.read_nodes() if any(
                s['id'] in self.nodes for s in self.servers) else {}
            listed = servers.result()
        listed = dict(self.list_servers() if listed is None else listed)
        for other in sorted({s.get('tenant_id') for s in self.servers
                             if s['id'] not in listed} - {None}):
            listed.update((s['id'], s) for s in self.nova.servers(
                True, other))
        found = {}
        for server in self.servers:
            now = listed.get(server['id'])
            if now is None:
                now = self.nova.server_if_any(server['id'])
                if now is None:     # gone
                    continue
            found[server['id']] = (now, nodes.get(server['id']))
        return found

    def reading(self, server, node=None):
        """The one-server toggle's Reading of a server (``node``: as read
        again, else as planned): no request."""
        node = node or self.nodes.get(server['id'])
        image = self.images.get((server.get('image') or {}).get('id'), {})
        bare_metal = node is not None or (
            server.get('OS-EXT-SRV-ATTR:hypervisor_hostname')
            in self.on_ironic)
        return toggle.Reading(
            server, node, image, self.templates_by_config.for_hardware(
                node, server['flavor'].get('extra_specs')),
            [] if node else self.flavors, bare_metal,
            self.granted.get(server['id'], set()))

    def providers(self, reading):
        """The scheduler's view of a Reading's server (``placement_view``
        of the toggle)."""
        return fleet_plan.provider_view(reading.server, reading.node,
                                        self.by_name, self.carriers)
