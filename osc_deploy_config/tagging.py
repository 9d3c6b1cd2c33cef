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

"""Which nodes can take which config, and the trait changes that say so.

A node is *capable* of a template when it has every capability trait of the
template and is neither in maintenance nor retired.  A capable node carries
the template's trait (it is *tagged*); nova's ironic driver copies node
traits to placement, where the scheduler matches flavors against them.
Plain functions over the node and template dicts of ironic's API.
"""

import collections

from osc_deploy_config import deploy_config

# What one node listing must return for all of this.
NODE_FIELDS = ('uuid', 'name', 'traits', 'maintenance', 'retired',
               'provision_state', 'instance_uuid', 'instance_info')

Status = collections.namedtuple('Status', [
    'node', 'template', 'config', 'capable', 'tagged', 'in_use',
    'maintenance', 'provision_state'])
Change = collections.namedtuple('Change', [
    'node', 'node_uuid', 'template', 'action', 'reason'])

ADD, REMOVE, KEEP = 'add', 'remove', 'keep'


def node_label(node):
    return node.get('name') or node['uuid']


def capable(node, template):
    required = set(deploy_config.capability_traits_of(template.get('extra')))
    return (required <= set(node.get('traits') or ())
            and not node.get('maintenance') and not node.get('retired'))


def in_use(node, template):
    """Whether the instance on the node was deployed with the template."""
    instance_traits = (node.get('instance_info') or {}).get('traits') or ()
    return bool(node.get('instance_uuid')) and (
        template['name'] in instance_traits)


def statuses(nodes, templates):
    """One ``Status`` per node and config template."""
    return [
        Status(node_label(node), template['name'],
               str(deploy_config.config_of(template['extra'])),
               capable(node, template),
               template['name'] in (node.get('traits') or ()),
               in_use(node, template), bool(node.get('maintenance')),
               node.get('provision_state'))
        for node in sorted(nodes, key=node_label)
        for template in templates
    ]


def plan_sync(nodes, templates):
    """The trait changes that make tags match capabilities.

    Tags capable nodes; untags the others, except where the node's instance
    was deployed with the template (untagging would not change the
    instance, and nova would then see a node that no longer matches its
    flavor): those are kept and reported.
    """
    changes = []
    for node in sorted(nodes, key=node_label):
        traits = set(node.get('traits') or ())
        for template in templates:
            name = template['name']
            if capable(node, template):
                if name not in traits:
                    changes.append(Change(node_label(node), node['uuid'],
                                          name, ADD, 'capable'))
            elif name in traits:
                reason = _why_incapable(node, template)
                if in_use(node, template):
                    changes.append(Change(
                        node_label(node), node['uuid'], name, KEEP,
                        '%s, but instance %s uses it'
                        % (reason, node['instance_uuid'])))
                else:
                    changes.append(Change(node_label(node), node['uuid'],
                                          name, REMOVE, reason))
    return changes


def _why_incapable(node, template):
    if node.get('retired'):
        return 'retired'
    if node.get('maintenance'):
        return 'in maintenance'
    needed = deploy_config.capability_traits_of(template.get('extra'))
    missing = sorted(set(needed) - set(node.get('traits') or ()))
    return 'lacks %s' % ', '.join(missing)
