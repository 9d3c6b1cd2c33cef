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

"""The doors around a grant, and how ``project deploy-config check`` judges
each from a probe that changes nothing, open or closed.

The overrides that close them ship with the plugin
(``osc_deploy_config/hardening/``); each door names the line there that
closes it.  A probe is a request the service refuses before any write
where the door is closed, and fails after its policy check, still before
any write, where it is open:

* ``instance_info``: a JSON patch removing a key the node's
  ``instance_info`` does not have.  Ironic checks
  ``baremetal:node:update_instance_info`` (403) before it applies the
  patch, which then fails (400): nothing is written either way.
* an image property: an image create carrying the property, with the ID
  of an image that exists.  Glance checks the property protection (403)
  before it stores the image, which then fails as a duplicate (409).

Plain functions over plain data.
"""

import collections

CLOSED = 'closed'
OPEN = 'open'
NOT_PROBED = 'not probed'

# A door: what it lets, the role whose token probes it, how, and the line
# of the shipped overrides that closes it.
Door = collections.namedtuple('Door', 'name role probe closed_by')

IRONIC_FILE = 'ironic-policy.yaml'
GLANCE_FILE = 'glance-property-protections.conf'
INSTANCE_INFO_RULE = 'baremetal:node:update_instance_info'
TRAIT_SECTION = '^trait:'
OURS_SECTION = '^deploy-config:'
# A trait and a config no template is named for: a probe of an open door
# asks for nothing that exists.
PROBE_TRAIT = 'trait:CUSTOM_DEPLOY_CONFIG_CHECK_PROBE'
PROBE_CONFIG = 'deploy-config:check-probe'

_INSTANCE_INFO_LINE = '%s "%s"' % (IRONIC_FILE, INSTANCE_INFO_RULE)
DOORS = tuple(
    Door(name, role, probe, closed_by) for role in ('manager', 'member')
    for name, probe, closed_by in (
        ("node's instance_info (templates, boot mode)", 'instance_info',
         _INSTANCE_INFO_LINE),
        ('image property trait:', PROBE_TRAIT,
         '%s [%s]' % (GLANCE_FILE, TRAIT_SECTION)),
        ('image property deploy-config:', PROBE_CONFIG,
         '%s [%s]' % (GLANCE_FILE, OURS_SECTION))))
LESSEE_DOOR = Door("node's lessee is not the server's project", 'operator',
                   'lessee', "the node's lessee (ironic sets the "
                   "instance's project at deploy)")

# What each service answers a probe with, where the door is open: the
# failure after its policy check.
_OPEN_STATUS = {'instance_info': 400}
_GLANCE_OPEN_STATUS = 409


def verdict(door, status):
    """(state, detail) of a door from the HTTP status its probe got."""
    if status == 403:
        return CLOSED, 'refused (HTTP 403)'
    if status == _OPEN_STATUS.get(door.probe, _GLANCE_OPEN_STATUS):
        return OPEN, 'allowed: the probe reached the write (HTTP %d, ' \
                     'nothing written)' % status
    return NOT_PROBED, 'unexpected answer HTTP %d' % status


def instance_info_probe(key):
    """The JSON patch that probes ``instance_info`` and writes nothing:
    the removal of a key the node's ``instance_info`` does not have."""
    return [{'op': 'remove', 'path': '/instance_info/%s' % key}]


def image_probe(image_id, door):
    """The body of the image create that probes ``door``'s property and
    stores nothing: the ID of an image that exists."""
    return {'id': image_id, door.probe: 'required'}


def lessee_findings(project_id, servers, nodes):
    """Nodes whose lessee is not the project of the server they run, seen
    from ``project_id``: its servers on a node leased to another project,
    and nodes leased to it that run a server not its own.  ``servers``:
    the project's servers (nova's dicts); ``nodes``: ironic's, with
    ``instance_uuid`` and ``lessee``.  A list of (node name, why)."""
    own = {s['id']: s for s in servers}
    found = []
    for node in nodes:
        instance = node.get('instance_uuid')
        if not instance:
            continue
        name = node.get('name') or node['uuid']
        lessee = node.get('lessee')
        if instance in own and lessee != project_id:
            found.append((name, 'runs server %s of the project, leased to '
                          '%s' % (own[instance].get('name') or instance,
                                  lessee or 'no project')))
        elif instance not in own and lessee == project_id:
            found.append((name, 'leased to the project, runs server %s of '
                          'another' % instance))
    return sorted(found)


def lessee_rows(project_id, servers, nodes, sees_all=True):
    """The report's rows of the lessee door: one per node found, or one
    saying the door is closed.  ``sees_all``: whether ``nodes`` are every
    node (the operator's); a project's token does not see the nodes leased
    to others, so their absence proves nothing."""
    findings = lessee_findings(project_id, servers, nodes)
    door = LESSEE_DOOR
    if not findings and not sees_all:
        return [row(door, NOT_PROBED, "a project's token does not see the "
                    "nodes leased to others: the operator's check reads "
                    "them")]
    if not findings:
        own = {s['id'] for s in servers}
        on_nodes = sum(1 for n in nodes if n.get('instance_uuid') in own)
        return [row(door, CLOSED, '%d node(s) run the project\'s servers, '
                    'each leased to it' % on_nodes)]
    return [row(door, OPEN, '%s: %s' % found) for found in findings]


def row(door, state, detail):
    """One row of the report (``COLUMNS``)."""
    return (door.name, door.role, state, door.closed_by, detail)


COLUMNS = ('Door', 'Who', 'State', 'Closed By', 'Detail')
