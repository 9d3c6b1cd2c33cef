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
``use_cases.toggle`` carries the plan out.

From the server's current flavor (embedded in the server since compute API
2.47) to the target extra specs with the configs changed, then to a flavor
that has exactly those: an existing identical one, or a new one whose name
is derived from the original's and the configs, so a rerun finds it again.
A scheduler check against placement comes before any change.  Plain
functions over the dicts of the APIs.
"""

import collections

from osc_lib import exceptions

from osc_deploy_config.domain.configs import config_sets
from osc_deploy_config.domain.configs import config_specs
from osc_deploy_config.domain.configs import step_safety

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


def applied_configs(server, applied=None):
    """The configs the server runs with: its flavor's, overridden by those
    a bare-metal toggle applied (``applied``: {type: Config}, the node's
    record, ``toggle_record.applied``)."""
    configs = {c.type: c for c in config_specs.configs_of(
        server['flavor'].get('extra_specs'))}
    configs.update(applied or {})
    return configs


def derived_flavor_name(original_name, target_specs):
    """``m1.tiny+hyperthreading=disabled``: the original name (without an
    earlier derivation) and every config the target flavor asks for."""
    base = original_name.split('+', 1)[0]
    return base + ''.join('+%s' % c
                          for c in config_specs.configs_of(target_specs))


def plan(server, configs, templates_by_config, listed_flavors,
         applied=None):
    """What toggling ``configs`` on ``server`` takes.  ``applied``: what
    the node's record says a bare-metal toggle applied.

    ``changed`` is False when the server already runs with those configs.
    An identical flavor is reused when it is public, or the one a toggle
    derives (which keeps the original's access): never another project's
    private flavor.
    """
    embedded = server['flavor']
    specs = dict(embedded.get('extra_specs') or {})
    current = applied_configs(server, applied)
    config_specs.refuse_doubled_types(configs)
    config_specs.refuse_missing_templates(configs, templates_by_config)
    # the server's whole set: what it runs now, with the toggled configs
    wanted = {t: c for t, c in current.items() if c in templates_by_config}
    wanted.update((c.type, c) for c in configs)
    change = config_specs.plan_set(specs, list(wanted.values()),
                                   templates_by_config)
    target_specs = {k: v for k, v in dict(specs, **change.set).items()
                    if k not in change.unset}
    target = {c.type: c for c in config_specs.configs_of(target_specs)}
    changed = any(current.get(c.type) != c for c in configs)
    wanted_sizes = sizes_of(embedded)
    name = derived_flavor_name(embedded['original_name'], target_specs)
    # nova refuses a resize to the server's own flavor, even one whose
    # extra specs have changed since (a flavor change rolled out)
    identical = [f for f in listed_flavors
                 if sizes_of(f) == wanted_sizes
                 and f['name'] != embedded['original_name']
                 and (f.get('extra_specs') or {}) == target_specs
                 and (is_public(f) or f['name'] == name)]
    preferred = sorted(identical, key=lambda f: (f['name'] != name,
                                                 f['name']))
    return ResizePlan(current, target, target_specs,
                      preferred[0] if preferred else None,
                      None if preferred else name, changed)


def original_flavor(server, listed_flavors):
    """The flavor the server runs, by its name and sizes, or None (deleted,
    or its name taken twice)."""
    embedded = server['flavor']
    found = [f for f in listed_flavors
             if f['name'] == embedded['original_name']
             and sizes_of(f) == sizes_of(embedded)]
    return found[0] if len(found) == 1 else None


def root_flavor(server, listed_flavors):
    """The flavor a server's derived flavors start from, with its sizes:
    its own, or, for a derived one, the flavor each derived one says it
    was derived from (``derived_description``), in turn; None where one
    of them is gone or its name taken twice.  An operator's flavor whose
    name holds a '+' is its own root."""
    embedded = server['flavor']
    same = [f for f in listed_flavors if sizes_of(f) == sizes_of(embedded)]
    name, seen = embedded['original_name'], set()
    while name not in seen:
        seen.add(name)
        found = [f for f in same if f['name'] == name]
        if len(found) != 1:
            return None
        name = derived_from(found[0])
        if name is None:
            return found[0]
    return None


def derived_from(flavor):
    """The name of the flavor a derived one was made from, or None (not
    derived)."""
    said = flavor.get('description') or ''
    head, tail = '%s: ' % DERIVED_MARK, ' with deploy configs changed'
    if not (said.startswith(head) and said.endswith(tail)):
        return None
    return said[len(head):-len(tail)]


def lost_root(server, listed_flavors, access, project_id):
    """The private flavor the server's derived flavors start from, where
    the project may no longer use it (``access``: {flavor ID: projects}),
    or None."""
    root = root_flavor(server, listed_flavors)
    if root is None or is_public(root) or project_id in access.get(
            root['id'], ()):
        return None
    return root


def is_public(flavor):
    """Whether a listed flavor is public; a flavor not found is taken as
    private: a toggle never publishes one."""
    return bool(flavor and flavor.get('os-flavor-access:is_public', True))


def derived_access(server, granted, original, original_access):
    """The projects a derived flavor is open to: the server's own, and
    those granted every config it switches to (``granted``: the projects
    granted each, one list a config) that may use the original, the
    flavor its derivations start from (all, for a public one; none, when
    it is gone).  The server's own project loses it with the original."""
    found = [set(projects) for projects in granted]
    projects = set.intersection(*found) if found else set()
    if original is None:
        projects = set()
    elif not is_public(original):
        projects &= set(original_access or ())
    owner = server.get('tenant_id')
    if owner and (original is None or is_public(original)
                  or owner in (original_access or ())):
        projects.add(owner)
    return sorted(projects)


def is_derived_private(flavor):
    """Whether a listed flavor is a private one a toggle derived."""
    return not is_public(flavor) and (
        flavor.get('description') or '').startswith(DERIVED_MARK)


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


def node_traits(plan_, templates_by_config):
    """The traits a bare-metal server's node needs for the toggle: each
    target config's own template's, and the flavor's other required
    traits.  A set that serves them together is the next deploy's (a
    rebuild redeploys with the flavor's), not the servicing's: the
    servicing runs the changed configs' own steps."""
    own = {templates_by_config[c]['name'] for c in plan_.target.values()
           if c in templates_by_config}
    others = {t for t in config_specs.required_traits(plan_.target_specs)
              if not t.startswith(config_sets.PREFIX)}
    return own | others


def scheduler_problems(providers, target_specs, node=None, excused=(),
                       needed=None):
    """Why the server's host cannot take the target flavor, in words.

    ``providers``: the resource providers of the server's allocations, each
    ``{'uuid', 'name', 'traits', 'resources'}`` (resources: what the server
    holds there), with its ``inventories`` where they were read.  A
    provider must carry every required trait and must not be reserved
    (nova reserves a host it may not use).  For a bare-metal server pass
    its ironic ``node``: nova reserves every deployed node in placement,
    so maintenance is read from ironic there.  ``excused``: traits the
    node may lack (templates a vendor profile keeps off it, which the
    toggle unlocks first); ``needed``: the traits the host must carry
    (default: those the target specs require).
    """
    problems = []
    if needed is None:
        needed = config_specs.required_traits(target_specs)
    needed = sorted(set(needed) - set(excused))
    for provider in providers:
        name = provider['name']
        if node and provider['uuid'] == node['uuid']:
            name = 'node %s' % (node.get('name') or node['uuid'])
        missing = [t for t in needed if t not in provider['traits']]
        if missing:
            problems.append('%s lacks %s' % (name, ', '.join(missing)))
        if node:
            continue
        problems.extend('%s %s' % (name, why) for why in filter(None, (
            _exhausted(provider, rc) for rc in provider['resources'])))
    if node and node.get('maintenance'):
        problems.append('node %s is in maintenance'
                        % (node.get('name') or node['uuid']))
    return problems


def _exhausted(provider, resource_class):
    """Why the provider has no room for the class, in words, or None (not
    known without its inventories)."""
    inventory = (provider.get('inventories') or {}).get(resource_class) or {}
    if inventory and inventory.get('reserved', 0) >= inventory.get(
            'total', 0):
        return 'is reserved (%s reserved=%s of %s: in maintenance?)' % (
            resource_class, inventory.get('reserved'), inventory.get('total'))
    return None


def service_steps(template):
    """A deploy template's enabled steps as ironic service steps, in their
    order (priority 0 disables a step, as at deploy)."""
    ordered = sorted(step_safety.enabled(template['steps']),
                     key=lambda s: -int(s['priority']))
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
