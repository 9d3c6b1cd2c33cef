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

"""Planning a deploy-config toggle of a running server (a limited resize);
``use_cases.server_toggle`` carries the plan out.

From the server's current flavor (embedded in the server since compute API
2.47) to the target extra specs with the configs changed, then to a flavor
that has exactly those: an existing identical one, or a new one whose name
is derived from the original's and the configs, so a rerun finds it again.
A scheduler check against placement comes before any change.  Plain
functions over the dicts of the APIs.
"""

import collections

from osc_lib import exceptions

from osc_deploy_config.domain import config_specs

# The description of the flavors a toggle makes: how a rerun tells one
# that an interrupted toggle left half-made (without all its extra specs)
# from an operator's flavor of the same name.
DERIVED_MARK = 'Made by osc-deploy-config'
# The sizes two flavors must share to be interchangeable.
SIZES = ('vcpus', 'ram', 'disk', 'ephemeral', 'swap')
# A server's embedded flavor and a flavor listing name ephemeral apart.
_LISTED_NAMES = {'ephemeral': 'OS-FLV-EXT-DATA:ephemeral'}

ResizePlan = collections.namedtuple('ResizePlan', [
    'current', 'target', 'target_specs', 'target_flavor', 'new_flavor_name',
    'changed'])


def sizes_of(flavor):
    """The sizes of a listed flavor or of a server's embedded flavor."""
    return {size: flavor.get(_LISTED_NAMES.get(size, size), flavor.get(size))
            or 0 for size in SIZES}


def applied_configs(server, flavor_specs):
    """The configs the server runs with: its flavor's, overridden by those
    a bare-metal toggle recorded in the server's metadata (under the same
    ``deploy-config:<type>`` keys, see ``record``)."""
    configs = {c.type: c for c in config_specs.configs_of(flavor_specs)}
    configs.update((c.type, c) for c in config_specs.configs_of(
        server.get('metadata') or {}))
    return configs


def record(configs):
    """The server metadata that records configs a bare-metal toggle
    applied."""
    return {config_specs.config_spec(c.type): c.value for c in configs}


def node_record(configs):
    """The node's extra that records the configs a toggle applied (ironic
    patches only keys of letters, digits, ``_`` and ``-``)."""
    return {'deploy_config_%s' % c.type.replace('.', '_'): c.value
            for c in configs}


def derived_flavor_name(original_name, target_specs):
    """``m1.tiny+hyperthreading=disabled``: the original name (without an
    earlier derivation) and every config the target flavor asks for."""
    base = original_name.split('+', 1)[0]
    return base + ''.join('+%s' % c
                          for c in config_specs.configs_of(target_specs))


def plan(server, configs, templates_by_config, listed_flavors):
    """What toggling ``configs`` on ``server`` takes.

    ``changed`` is False when the server already runs with those configs.
    """
    embedded = server['flavor']
    specs = dict(embedded.get('extra_specs') or {})
    current = applied_configs(server, specs)
    change = config_specs.plan_set(specs, configs, templates_by_config)
    target_specs = {k: v for k, v in dict(specs, **change.set).items()
                    if k not in change.unset}
    target = {c.type: c for c in config_specs.configs_of(target_specs)}
    changed = any(current.get(c.type) != c for c in configs)
    wanted_sizes = sizes_of(embedded)
    # nova refuses a resize to the server's own flavor, even one whose
    # extra specs have changed since (a flavor change rolled out)
    identical = [f for f in listed_flavors
                 if sizes_of(f) == wanted_sizes
                 and f['name'] != embedded['original_name']
                 and (f.get('extra_specs') or {}) == target_specs]
    name = derived_flavor_name(embedded['original_name'], target_specs)
    preferred = sorted(identical, key=lambda f: (f['name'] != name,
                                                 f['name']))
    return ResizePlan(current, target, target_specs,
                      preferred[0] if preferred else None,
                      None if preferred else name, changed)


def derived_description(original_name):
    return '%s: %s with deploy configs changed' % (DERIVED_MARK,
                                                   original_name)


def unfinished_flavor(plan_, listed_flavors, sizes):
    """Our flavor under the new name, with the server's sizes, that an
    interrupted or concurrent toggle made: to finish and use."""
    return next((f for f in listed_flavors
                 if f['name'] == plan_.new_flavor_name
                 and (f.get('description') or '').startswith(DERIVED_MARK)
                 and sizes_of(f) == sizes), None)


def refuse_taken_name(plan_, listed_flavors):
    """A flavor already named like the one to create, but different, is an
    operator's: never reuse or change it."""
    taken = [f for f in listed_flavors if f['name'] == plan_.new_flavor_name]
    if taken:
        raise exceptions.CommandError(
            'Flavor %s exists but differs from the target (sizes or extra '
            'specs): rename or delete it, then rerun'
            % plan_.new_flavor_name)


def scheduler_problems(providers, target_specs, node=None):
    """Why the server's host cannot take the target flavor, in words.

    ``providers``: the resource providers of the server's allocations, each
    ``{'uuid', 'name', 'traits', 'inventories', 'resources'}`` (resources:
    what the server holds there).  A provider must carry every required
    trait and must not be reserved (nova reserves a host it may not use).
    For a bare-metal server pass its ironic ``node``: nova reserves every
    deployed node in placement, so maintenance is read from ironic there.
    """
    problems = []
    needed = sorted(config_specs.required_traits(target_specs))
    for provider in providers:
        name = provider['name']
        if node and provider['uuid'] == node['uuid']:
            name = 'node %s' % (node.get('name') or node['uuid'])
        missing = [t for t in needed if t not in provider['traits']]
        if missing:
            problems.append('%s lacks %s' % (name, ', '.join(missing)))
        if node:
            continue
        for rc in provider['resources']:
            inventory = provider['inventories'].get(rc) or {}
            if inventory and inventory.get('reserved', 0) >= inventory.get(
                    'total', 0):
                problems.append('%s is reserved (%s reserved=%s of %s: '
                                'in maintenance?)' % (
                                    name, rc,
                                    inventory.get('reserved'),
                                    inventory.get('total')))
    if node and node.get('maintenance'):
        problems.append('node %s is in maintenance'
                        % (node.get('name') or node['uuid']))
    return problems


def service_steps(template):
    """A deploy template's steps as ironic service steps, in their order."""
    ordered = sorted(template['steps'], key=lambda s: -int(s['priority']))
    return [{'interface': s['interface'], 'step': s['step'],
             'args': s['args']} for s in ordered]


def refuse_image_configs(server, image, configs):
    """A toggle of a type the server's image asks for is refused: every
    deploy of the server (a rebuild) applies the image's template again,
    and ironic would run it with the toggle's."""
    asked = {c.type: c for c in config_specs.configs_of(image)}
    clashing = [c for c in configs if c.type in asked]
    if clashing:
        raise exceptions.CommandError(
            'Server %s cannot toggle %s: its image %s asks for %s, which '
            'every deploy of the server applies again. Nothing was changed; '
            'rebuild it from an image without it (openstack image '
            'deploy-config unset).' % (
                server['name'], ', '.join(c.type for c in clashing),
                image.get('name') or image.get('id'), ', '.join(
                    str(asked[c.type]) for c in clashing)))
