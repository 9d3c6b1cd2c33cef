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

"""``openstack server deploy-config show|list``: what servers ask for, and
what their hardware runs (``server_configs``).  The hooks on OSC's own
``server`` commands are in ``v1.server``."""

from osc_lib.command import command

from osc_deploy_config.v1 import cli

# What show and list read of templates and nodes.
TEMPLATE_FIELDS = ('uuid', 'name', 'steps')
NODE_FIELDS = ('uuid', 'name', 'raid_config')


class ShowServerDeployConfig(cli.OneLineErrors, command.Lister):
    _description = ('Show the deploy configs a server asks for (from its '
                    'flavor, its image, or a toggle), their templates, what '
                    'its node reports, and whether each is in effect')

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('server', metavar='<server>',
                            help='Server (name or ID).')
        return parser

    def take_action(self, parsed_args):
        from osc_deploy_config import glance
        from osc_deploy_config import server_configs

        clients, servers, baremetal = _apis(self.app)
        server = servers.find_server(parsed_args.server)
        image_id = (server.get('image') or {}).get('id')
        image = glance.Glance(clients.image).image_properties(
            image_id) if image_id else {}
        with clients.ironic_errors('list deploy templates and nodes'):
            by_config = baremetal.config_templates(fields=TEMPLATE_FIELDS)
            node = baremetal.node_of_instance(server['id'], NODE_FIELDS)
            bios = baremetal.bios_settings(node['uuid']) if node else None
        reason = server_configs.VIRTUAL
        if node is None and servers.runs_on_ironic(server):
            reason = server_configs.HIDDEN_NODE
        rows = server_configs.rows(
            server, by_config, image, node, bios,
            node and node.get('raid_config'), reason)
        return server_configs.COLUMNS, [tuple(r) for r in rows]


class ListServerDeployConfig(cli.OneLineErrors, command.Lister):
    _description = ('List the deploy configs servers ask for (from their '
                    'flavor, image, or a toggle); with --long, what their '
                    'nodes report and whether each is in effect')

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--all-projects', action='store_true',
                            help='The servers of every project (admin).')
        parser.add_argument(
            '--long', action='store_true',
            help='Also Actual and In Effect: one BIOS read per bare-metal '
                 'server, made concurrently.')
        return parser

    def take_action(self, parsed_args):
        from osc_deploy_config import glance
        from osc_deploy_config import server_configs

        clients, servers, baremetal = _apis(self.app)
        found = servers.servers(parsed_args.all_projects)
        images = glance.Glance(clients.image).images() if any(
            s.get('image') for s in found) else {}
        with clients.ironic_errors('list deploy templates and nodes'):
            by_config = baremetal.config_templates(fields=TEMPLATE_FIELDS)
            nodes = _hardware(baremetal, servers, found) \
                if parsed_args.long else {}
        columns = ('Server',) + server_configs.COLUMNS
        if not parsed_args.long:
            columns = columns[:-2]
        rows = []
        for server in sorted(found, key=lambda s: (s['name'], s['id'])):
            image = images.get((server.get('image') or {}).get('id'), {})
            node, bios, reason = nodes.get(server['id'], (None, None, None))
            for row in server_configs.rows(
                    server, by_config, image, node, bios,
                    node and node.get('raid_config'), reason):
                rows.append(((server['name'],) + tuple(row))[
                    :len(columns)])
        return columns, rows


def _apis(app):
    """The plugin's clients, nova's servers, and ironic for reading what
    nodes report."""
    from osc_deploy_config import ironic
    from osc_deploy_config import nova
    from osc_deploy_config import versions

    clients = app.client_manager.deploy_config
    return clients, nova.NovaServers(clients.compute), ironic.Ironic(
        clients.baremetal, versions.DEPLOY_TEMPLATES, versions.NODE_TRAITS,
        versions.NODE_BIOS)


def _hardware(baremetal, servers, found):
    """{server ID: (node, BIOS settings, why none)} from one node listing,
    one hypervisor listing, and the nodes' BIOS read concurrently."""
    import concurrent.futures

    from osc_deploy_config import server_configs

    nodes = {n['instance_uuid']: n for n in baremetal.nodes(
        NODE_FIELDS + ('instance_uuid',)) if n.get('instance_uuid')}
    on_ironic = servers.ironic_hypervisors()
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        bios = dict(zip(nodes, pool.map(baremetal.bios_settings, [
            n['uuid'] for n in nodes.values()]), strict=True))
    hardware = {}
    for server in found:
        node = nodes.get(server['id'])
        if node is not None:
            hardware[server['id']] = (node, bios[server['id']], None)
        elif server.get('OS-EXT-SRV-ATTR:hypervisor_hostname') in on_ironic:
            hardware[server['id']] = (None, None, server_configs.HIDDEN_NODE)
        else:
            hardware[server['id']] = (None, None, server_configs.VIRTUAL)
    return hardware
