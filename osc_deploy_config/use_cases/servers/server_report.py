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

"""What servers ask for, and what their hardware runs: ``server
deploy-config show|list`` (``server_configs`` decides, this reads)."""

from osc_deploy_config.domain.fleet import fleet_plan
from osc_deploy_config.domain.servers import server_configs
from osc_deploy_config.domain.toggle import toggle_record
from osc_deploy_config.services import ironic as ironic_api
from osc_deploy_config.services import rest
from osc_deploy_config.services import versions

# How many nodes' BIOS settings are read at once.
READERS = 8


def _ironic(clients):
    return clients.ironic(versions.DEPLOY_TEMPLATES, versions.NODE_TRAITS,
                          versions.NODE_BIOS)


def _authority(clients, ironic):
    """Who reads, and the templates it reads back with: the operator's,
    or a project's grants (``toggle.authority``)."""
    from osc_deploy_config.use_cases.toggle import authority as authorities

    found = authorities.decide(clients, ironic)
    return found, authorities.catalog(found, ironic)


def show(clients, server_ref):
    """(columns, rows) of one server's configs: wanted, their source and
    template, and what its node reports of each."""
    nova = clients.nova(versions.SERVER_FLAVOR_DETAILS)
    server = nova.find_server(server_ref)
    image_id = (server.get('image') or {}).get('id')
    image = clients.glance().image_properties(image_id) if image_id else {}
    ironic = _ironic(clients)
    authority, by_config = _authority(clients, ironic)
    node = ironic.node_of_instance(server['id'], ironic_api.HARDWARE_FIELDS)
    bios = ironic.bios(node['uuid']) if node else None
    reason = server_configs.VIRTUAL
    if node is None and not authority.project_id and nova.runs_on_ironic(
            server):
        reason = server_configs.HIDDEN_NODE
    known = by_config.for_hardware(node, server['flavor'].get('extra_specs'))
    rows = server_configs.rows(
        server, known, image, node, bios, reason, authority.granted(
            ironic, server, node, known) if node else set(),
        authority.no_template)
    return server_configs.COLUMNS, [tuple(r) for r in rows]


def list_servers(clients, all_projects=False, long=False, outdated=False):
    """(columns, rows) of every server's configs, from one listing each of
    servers, images, templates (a project: its grants) and nodes (whose
    toggle records say what a toggle applied); with ``long``, what their
    nodes report (one BIOS read per bare-metal server); with ``outdated``,
    only the servers whose configs lag what their flavor asks for now (one
    more listing, of the flavors)."""
    nova = clients.nova(versions.SERVER_FLAVOR_DETAILS)
    found = nova.servers(all_projects)
    images = clients.glance().images() if any(
        s.get('image') for s in found) else {}
    ironic = _ironic(clients)
    nodes = {n['instance_uuid']: n for n in ironic.nodes(
        ironic_api.HARDWARE_FIELDS + ('instance_uuid',))
        if n.get('instance_uuid')}
    authority, by_config = _authority(clients, ironic)
    granted = authority.granted_each(ironic, found, nodes, by_config)
    if outdated:
        found = lagging(found, nova.flavors(), images, nodes, granted)
    read = hardware(ironic, nova, found, nodes, not authority.project_id) \
        if long else {}
    columns = ('Server',) + server_configs.COLUMNS
    if not long:
        columns = columns[:-server_configs.HARDWARE_COLUMNS]
    rows = []
    for server in sorted(found, key=lambda s: (s['name'], s['id'])):
        image = images.get((server.get('image') or {}).get('id'), {})
        bios, reason = read.get(server['id'], (None, None))
        node = nodes.get(server['id'])
        for row in server_configs.rows(
                server, by_config.for_hardware(
                    node, server['flavor'].get('extra_specs')), image, node,
                bios, reason, granted.get(server['id']),
                authority.no_template):
            rows.append(((server['name'],) + tuple(row))[:len(columns)])
    return columns, rows


def hardware(ironic, nova, servers, nodes, hidden_nodes=True):
    """{server ID: (BIOS settings, why none are read)} from the nodes'
    BIOS (``nodes``: by instance) read concurrently, and (``hidden_nodes``:
    an operator's view) one hypervisor listing, to tell a bare-metal server
    whose node is hidden from a virtual one."""
    on_ironic = nova.ironic_hypervisors() if hidden_nodes else set()
    bios = dict(zip(nodes, rest.concurrently(ironic.bios, [
        n['uuid'] for n in nodes.values()], READERS), strict=True))
    found = {}
    for server in servers:
        if server['id'] in nodes:
            found[server['id']] = (bios[server['id']], None)
        elif server.get('OS-EXT-SRV-ATTR:hypervisor_hostname') in on_ironic:
            found[server['id']] = (None, server_configs.HIDDEN_NODE)
        else:
            found[server['id']] = (None, server_configs.VIRTUAL)
    return found


def lagging(servers, flavors, images, nodes, granted):
    """The servers whose configs lag what their flavor asks for now
    (``nodes``: by instance, with their toggle records)."""
    specs = {f['name']: f.get('extra_specs') for f in flavors}
    return [s for s in servers
            if fleet_plan.base_flavor_name(s) in specs
            and fleet_plan.lagging(
                s, specs[fleet_plan.base_flavor_name(s)],
                images.get((s.get('image') or {}).get('id'), {}),
                toggle_record.applied(nodes.get(s['id']), s['id'],
                                      granted.get(s['id'])))]
