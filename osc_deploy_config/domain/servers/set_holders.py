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

"""What still needs a set's template (``configs/config_sets``): a flavor
or an image that asks for it, a running server whose flavor asked for it
when it booted (nova keeps that copy: a rebuild deploys with it), an
instance ironic deployed with it, and a server whose configs now (its
flavor's, its image's and its node's toggle record over them) it serves on
its node's kind.  A set nothing needs may go; one that something needs
stays, and so does a member of it.  Plain functions over the APIs'
dicts.
"""

import collections

from osc_lib import exceptions

from osc_deploy_config.domain.configs import config_sets
from osc_deploy_config.domain.configs import config_specs
from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.toggle import toggle_record

# What can hold a set: every flavor, every image (hidden ones too), every
# server (with its flavor's extra specs as it booted) and every node.
Holders = collections.namedtuple('Holders', [
    'flavors', 'images', 'servers', 'nodes'])


def needs(set_names, holders, known, decided=()):
    """{set name: what needs it, in words} of the sets among
    ``set_names`` that something holds (``known``: ConfigTemplates;
    ``decided``: the IDs of the flavors and images whose own asks count
    elsewhere, as a declared state leaves them)."""
    names = set(set_names)
    found = collections.defaultdict(list)
    holders = holders._replace(
        servers={s['id']: s for s in holders.servers},
        images={i['id']: i for i in holders.images})
    for flavor in holders.flavors:
        if flavor['id'] in decided:
            continue
        for name in config_specs.required_traits(
                flavor.get('extra_specs')) & names:
            found[name].append('flavor %s' % flavor.get('name'))
    for image in holders.images.values():
        if image['id'] in decided:
            continue
        for name in config_specs.required_traits(image) & names:
            found[name].append('image %s' % (image.get('name')
                                               or image['id']))
    for server in holders.servers.values():
        for name in config_specs.required_traits((server.get(
                'flavor') or {}).get('extra_specs')) & names:
            found[name].append('server %s (its flavor as it booted)'
                               % server.get('name', server['id']))
    for node in holders.nodes:
        label = node.get('name') or node['uuid']
        deployed = (node.get('instance_info') or {}).get('traits') or ()
        for name in set(deployed) & names:
            found[name].append('node %s (its instance was deployed with '
                               'it)' % label)
        for name in set(_serving_now(node, holders, known)) & names:
            found[name].append('node %s (what its server runs now)' % label)
    return {name: sorted(set(why)) for name, why in found.items()}


def _serving_now(node, holders, known):
    """The template traits that serve, on the node's kind, the configs of
    the server on it now: its flavor's and its image's, and its toggle
    record's over them."""
    instance = node.get('instance_uuid')
    server = holders.servers.get(instance)
    if server is None:
        return []
    configs = {c.type: c for c in config_specs.configs_of(
        (server.get('flavor') or {}).get('extra_specs'))}
    image = holders.images.get((server.get('image') or {}).get('id')) or {}
    for config in config_specs.configs_of(image):
        configs.setdefault(config.type, config)
    configs.update(toggle_record.applied(node, instance))
    configs.update((c.type, c) for c in toggle_record.project_configs(
        node, instance))
    rc = node.get('resource_class')
    on_kind = known.for_class(rc and deploy_config.placement_class(rc))
    try:
        return config_sets.required_traits(configs.values(), on_kind)
    except exceptions.CommandError:     # configs that clash hold no set
        return []


def describe(why, most=3):
    """What needs a set, in words: the first ``most``, and how many
    more."""
    shown = ', '.join(why[:most])
    return shown + (' and %d more' % (len(why) - most)
                    if len(why) > most else '')
