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
template, is not retired, is of the resource class the template serves (a
template for one kind of hardware), and its BIOS registry (ironic API 1.74)
accepts every BIOS setting of the template: the name exists, the value is
allowed, it is not read-only (or the template unlocks it with its vendor
profile), no profile locks it; and the node's ironic release ends a BIOS
step there (``ironic_releases.stall``).  A node whose BIOS interface is
``no-bios``, or of which ironic caches no BIOS setting, takes no template
with a BIOS step; where the settings carry no registry, or were not read,
its traits alone decide.  A node carries one template per config: where its
class has a template of its own for the config, the template for every kind
is not for it.  A capable node carries the template's trait (it is
*tagged*); nova's ironic driver copies node traits to placement, where the
scheduler matches flavors against them.  Maintenance does not untag: nova
reports a node in maintenance as reserved inventory, so the scheduler skips
it, and its tags are ready when it comes back.  Whether the scheduler can
land on a node *now* is placement's answer (``schedulable``).  A flavor's
``report`` (``flavor deploy-config show``) counts, for each of its configs,
the nodes tagged and those placement offers, and says why the others are
not.  Plain functions over the node and template dicts of ironic's API.
"""

import collections

from osc_deploy_config.domain.configs import config_sets
from osc_deploy_config.domain.configs import config_specs
from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.configs import step_safety
from osc_deploy_config.domain.configs import templates as dtemplates
from osc_deploy_config.domain.hardware import bios_profiles
from osc_deploy_config.domain.hardware import bios_registry
from osc_deploy_config.domain.hardware import effects
from osc_deploy_config.domain.hardware import ironic_releases

NEWEST = ironic_releases.NEWEST

Status = collections.namedtuple('Status', [
    'node', 'template', 'config', 'capable', 'tagged', 'in_use',
    'maintenance', 'provision_state', 'schedulable', 'reason'])
Change = collections.namedtuple('Change', [
    'node', 'node_uuid', 'template', 'action', 'reason'])
# What ``flavor deploy-config show`` tells of a flavor.
FlavorReport = collections.namedtuple('FlavorReport', [
    'configs', 'templates', 'sets', 'required_traits', 'tagged_nodes',
    'schedulable_nodes', 'drift'])

ADD, REMOVE, KEEP, STALE = 'add', 'remove', 'keep', 'stale'
NO_NODE = ('no node is schedulable for this flavor: its servers will fail '
           'with NoValidHost (openstack baremetal node deploy-config sync)')
# a node that has a template's traits, but not the BIOS to take it now
LEFT_OUT = 'not offered'


def node_label(node):
    return node.get('name') or node['uuid']


def capable(node, template, registry=None, release=NEWEST):
    """Whether the node can take the template (``registry``: its detailed
    BIOS settings, None when not read; ``release``: the node's ironic, an
    ``ironic_releases.Release``)."""
    return why_incapable(node, template, registry, release) is None


def why_incapable(node, template, registry=None, release=NEWEST):
    """Why the node cannot take the template, in words; None when it
    can."""
    if node.get('retired'):
        return 'retired'
    needed = deploy_config.capability_traits_of(template.get('extra'))
    missing = sorted(set(needed) - set(node.get('traits') or ()))
    if missing:
        return 'lacks %s' % ', '.join(missing)
    serves = deploy_config.resource_class_of(template.get('extra'))
    if serves and serves != resource_class(node):
        return 'the template serves %s, the node is %s' % (
            template['extra'][deploy_config.EXTRA_CLASS],
            node.get('resource_class'))
    return bios_unfit(node, template, registry, release) or bios_refusal(
        node, template, registry, release)


def bios_unfit(node, template, registry, release=NEWEST):
    """Why a template with a BIOS step is not for the node whatever its
    settings (``bios_step_unfit``); None otherwise."""
    if not bios_settings(template):
        return None
    return bios_step_unfit(node, registry, release)


def bios_step_unfit(node, registry, release=NEWEST):
    """Why no BIOS step is for the node: no BIOS interface, no BIOS
    setting in ironic's cache (read, and empty), or a release that never
    ends the step there; None otherwise."""
    if node.get('bios_interface') == 'no-bios':
        return 'its BIOS interface is no-bios'
    if registry is not None and not registry:
        return 'ironic caches no BIOS setting of it'
    return ironic_releases.stall(release, node, registry)


def bios_settings(template):
    """{name: value} of the BIOS settings the template's enabled steps
    set."""
    if 'steps' not in template:
        return {}
    return effects.bios_settings(step_safety.enabled(template['steps']))


def bios_refusal(node, template, registry, release=NEWEST):
    """Why the node's BIOS, as ironic caches it (``registry``), refuses
    the template's settings now, as ``release`` judges them; None when it
    takes them, or when the node reports no registry (its traits alone
    decide then)."""
    found = bios_problems(node, template, registry, release)
    if not found:
        return None
    return 'its BIOS refuses %s' % '; '.join(
        '%s (%s)' % (p.setting, p.reason) for p in found)


def bios_problems(node, template, registry, release=NEWEST):
    """[bios_registry.Problem] of the template's settings on the node,
    as ``release`` judges them."""
    wanted = bios_settings(template)
    if not (wanted and registry and bios_registry.has_registry(registry)):
        return []
    return bios_registry.problems(
        wanted, {node_label(node): registry}, not release.validates,
        skips_unchanged=release.agentless)


def held_note(template, registry, release=NEWEST):
    """What the node takes only at the value it has (``held``), and what
    switching away from it needs; '' where nothing is so held, or where
    ``release`` writes even what the node has."""
    wanted = bios_settings(template)
    if not (wanted and registry and release.agentless):
        return ''
    held = bios_profiles.held(wanted, {e['name']: e for e in registry})
    return ''.join(
        "; %s=%s is the node's value, which %s=%s locks: switching away "
        'from it needs %s changed first (prepare does it on a free node, '
        'the toggle on a running server)' % (
            name, wanted[name], *held[name], held[name][0])
        for name in sorted(held))


def preparable(template, registry):
    """The vendor profile settings ([(name, value)], outermost first) that,
    once in effect on the node, let it take the template's settings; None
    when no profile locks them, or none unlocks them."""
    wanted = bios_settings(template)
    if not (wanted and registry):
        return None
    return bios_profiles.prerequisites(wanted, registry) or None


def wants_registry(node, template):
    """Whether the node's BIOS registry decides it: it passes the other
    checks, and the template sets BIOS settings."""
    return bool(bios_settings(template)) and why_incapable(
        node, template) is None


def resource_class(node):
    """The placement resource class nova gives a node, or None: nova's
    ironic driver normalises it with os-resource-classes (each run of other
    characters one ``_``, upper case, always ``CUSTOM_`` first, so ironic's
    ``CUSTOM_GOLD`` is placement's ``CUSTOM_CUSTOM_GOLD``)."""
    name = node.get('resource_class')
    return deploy_config.placement_class(name) if name else None


def schedulable(node, template, placement_view):
    """Whether the scheduler can land a flavor requiring the template on
    the node now: placement has it free (``placement_view``: {provider
    UUID: traits} of the free providers of its resource class) with the
    template's trait.  None when placement was not read."""
    if placement_view is None:
        return None
    return template['name'] in placement_view.get(node['uuid'], ())


def in_use(node, template):
    """Whether the instance on the node was deployed with the template."""
    instance_traits = (node.get('instance_info') or {}).get('traits') or ()
    return bool(node.get('instance_uuid')) and (
        template['name'] in instance_traits)


def why_not_offered(node, template, free=None):
    """Why placement does not offer a node tagged for the template, from
    ironic's view of it and ``free`` ({provider UUID: traits} of the free
    providers of its resource class; None when unknown)."""
    if node.get('maintenance'):
        return 'reserved (maintenance)'
    if node.get('instance_uuid'):
        return 'used (instance %s)' % node['instance_uuid']
    if node.get('provision_state') != 'available':
        return 'reserved (%s)' % node.get('provision_state')
    if free is not None and node['uuid'] not in free:
        return 'not free in placement'
    if free is not None and template['name'] not in free[node['uuid']]:
        return 'tag not yet copied to placement'
    return "excluded by the flavor's other requirements"


def serves(node, template):
    """Whether the template is for the node's kind of hardware (every kind,
    or its resource class)."""
    found = deploy_config.resource_class_of(template.get('extra'))
    return found is None or found == resource_class(node)


def superseded(node, template, own):
    """Why a node does not take a template for every kind when its class
    has one of its own for the config, or for a member of the set
    (``own``: ``ConfigTemplates.per_class`` of every template); None
    otherwise."""
    extra = template.get('extra')
    if deploy_config.resource_class_of(extra):
        return None
    configs = config_sets.members_of(template) or [
        deploy_config.config_of(extra)]
    for config in configs:
        mine = own.get(config, {}).get(resource_class(node))
        if mine is not None:
            return 'its class has a template of its own for %s: %s' % (
                config, mine['name'])
    return None


def serves_what(template):
    """What a template serves, in words: its config, or its set's
    members."""
    members = config_sets.members_of(template)
    if members is not None:
        return ','.join(str(c) for c in members)
    return str(deploy_config.config_of(template['extra']))


def _why(node, template, registries, own, release=NEWEST):
    """Why the node cannot carry the template; None when it can."""
    return why_incapable(node, template, registries.get(node['uuid']),
                         release) or superseded(node, template, own)


def statuses(nodes, templates, placement_view=None, registries=None,
             every=None, release=NEWEST):
    """One ``Status`` per node and config template for its kind
    (``registries``: {node UUID: its detailed BIOS settings}; ``every``:
    every config template, the ``templates`` when not given;
    ``release``: as in ``capable``)."""
    registries = registries or {}
    own = dtemplates.by_config(every or templates).per_class
    found = []
    for node in sorted(nodes, key=node_label):
        for template in templates:
            if not serves(node, template):
                continue
            why = _why(node, template, registries, own, release)
            found.append(Status(
                node_label(node), template['name'], serves_what(template),
                why is None, template['name'] in (node.get('traits') or ()),
                in_use(node, template), bool(node.get('maintenance')),
                node.get('provision_state'),
                schedulable(node, template, placement_view), why or ''))
    return found


def plan_sync(nodes, templates, registries=None, every=None,
              release=NEWEST):
    """The trait changes that make tags match capabilities
    (``registries``: {node UUID: its detailed BIOS settings}; ``every``:
    every config template, the ``templates`` when not given;
    ``release``: as in ``capable``).

    Tags capable nodes; untags the others, and the template for every kind
    from a node whose class has its own for the config, except where the
    node's instance was deployed with the template (untagging would not
    change the instance, and nova would then see a node that no longer
    matches its flavor): those are kept and reported.
    """
    registries = registries or {}
    own = dtemplates.by_config(every or templates).per_class
    changes = []
    for node in sorted(nodes, key=node_label):
        traits = set(node.get('traits') or ())
        for template in templates:
            name = template['name']
            why = _why(node, template, registries, own, release)
            if why is None:
                if name not in traits:
                    changes.append(Change(
                        node_label(node), node['uuid'], name, ADD,
                        'capable' + held_note(template, registries.get(
                            node['uuid']), release)))
            elif name in traits:
                if in_use(node, template):
                    changes.append(Change(
                        node_label(node), node['uuid'], name, KEEP,
                        '%s, but instance %s uses it'
                        % (why, node['instance_uuid'])))
                else:
                    changes.append(Change(
                        node_label(node), node['uuid'], name, REMOVE,
                        why + remedy(node, template, registries.get(
                            node['uuid']), release)))
    return changes


def left_out(nodes, templates, registries=None, every=None,
             release=NEWEST):
    """[Change] (action ``LEFT_OUT``) of the untagged nodes a template is
    for (its traits, its class, the settings' names in the node's BIOS)
    but whose BIOS refuses its settings now, or whose ironic would never
    end the step there: each says why, and how to prepare the node where a
    vendor profile is what refuses."""
    registries = registries or {}
    own = dtemplates.by_config(every or templates).per_class
    found = []
    for node in sorted(nodes, key=node_label):
        for template in templates:
            registry = registries.get(node['uuid'])
            if (template['name'] in (node.get('traits') or ())
                    or why_incapable(node, template) is not None
                    or superseded(node, template, own)):
                continue
            if bios_unfit(node, template, registry, release):
                stalls = ironic_releases.stall(release, node, registry)
                if stalls:
                    found.append(Change(node_label(node), node['uuid'],
                                        template['name'], LEFT_OUT, stalls))
                continue
            problems = bios_problems(node, template, registry, release)
            if not problems or any(p.reason == bios_registry.NO_SUCH_SETTING
                                   for p in problems):
                continue
            why = bios_refusal(node, template, registry, release)
            found.append(Change(node_label(node), node['uuid'],
                                template['name'], LEFT_OUT, why + remedy(
                                    node, template, registry, release)))
    return found


def remedy(node, template, registry, release=NEWEST):
    """What makes the node take a template its BIOS refuses now, as the
    end of its reason ('' when nothing of ours does): ``prepare`` for a
    node a vendor profile locks, the toggle where a server runs on it
    (it sets the profile first, where ironic has not cached the setting
    read-only), or why ironic's cache keeps it refused.  Nothing where
    no BIOS step is for the node (``bios_unfit``)."""
    if bios_unfit(node, template, registry, release):
        return ''
    wanted = bios_settings(template)
    stale = bios_profiles.stale_read_only(wanted, registry or ())
    if stale:
        return '; %s' % bios_profiles.describe_stale(stale)
    needs = preparable(template, registry)
    if not needs:
        return ''
    futile = futile_prepare(wanted, registry, release)
    if futile:
        return '; %s' % futile
    if not node.get('instance_uuid'):
        return '; prepare it: %s' % prepare_command(node_label(node), needs)
    cached = [e['name'] for e in registry
              if e['name'] in wanted and e.get('read_only')]
    if cached:
        return ('; ironic caches %s read-only: prepare the node once its '
                'server is gone' % ', '.join(sorted(cached)))
    return ('; its server\'s toggle sets %s first (openstack server resize '
            '%s %s)' % (
                ', '.join('%s=%s' % n for n in needs), ' '.join(
                    '--deploy-config %s' % c
                    for c in serves_what(template).split(',')),
                node['instance_uuid']))


def futile_prepare(wanted, registry, release=NEWEST):
    """Why setting the node's profile would not make it take ``wanted``:
    ironic (36 and later) keeps them read-only in its cache
    (``bios_profiles.kept_read_only``); None otherwise."""
    kept = release.validates and bios_profiles.kept_read_only(
        wanted, registry)
    return bios_profiles.describe_kept(kept) if kept else None


def prepare_command(node, needs):
    """The command that sets the profile settings ``needs`` on the node."""
    return 'openstack baremetal node deploy-config prepare %s (%s)' % (
        node, ', '.join('%s=%s' % pair for pair in needs))


def plan_prune(nodes, template_names, prune=False):
    """Template traits (our ``CUSTOM_DEPLOY_CONFIG_`` prefix only) of
    templates that no longer exist: reported as ``STALE``, removed with
    ``prune``, kept where the node's instance was deployed with them."""
    changes = []
    for node in sorted(nodes, key=node_label):
        instance_traits = (node.get('instance_info') or {}).get(
            'traits') or ()
        for trait in sorted(node.get('traits') or ()):
            if (not trait.startswith(deploy_config.TEMPLATE_PREFIX)
                    or trait in template_names):
                continue
            if node.get('instance_uuid') and trait in instance_traits:
                changes.append(Change(
                    node_label(node), node['uuid'], trait, KEEP,
                    'template deleted, but instance %s uses it'
                    % node['instance_uuid']))
            else:
                changes.append(Change(
                    node_label(node), node['uuid'], trait,
                    REMOVE if prune else STALE, 'template deleted'
                    + ('' if prune else ' (--prune removes it)')))
    return changes


def unseen(changes, carriers):
    """The trait changes placement does not show yet.  ``carriers``:
    {template trait: UUIDs of the providers that carry it}."""
    return [c for c in changes
            if (c.node_uuid in carriers[c.template]) != (c.action == ADD)]


def describe(change):
    """``bm-0 +CUSTOM_...`` or ``bm-0 -CUSTOM_...``."""
    return '%s %s%s' % (change.node, '+' if change.action == ADD else '-',
                        change.template)


def report(flavor, templates_by_config, nodes, candidates=None, free=None,
           sets=None):
    """A flavor's configs, their templates (and the sets that serve them
    together) and required traits, the nodes tagged in ironic for each,
    the nodes the scheduler can land on now, and the drift: extra specs
    that disagree with the templates, and tagged nodes placement does not
    offer, each with the reason.

    ``candidates``: {provider UUID: traits} of placement's allocation
    candidates for the flavor (None: placement was not read); ``free``: the
    same for the free providers of the flavor's resource classes;
    ``sets``: the names of the sets' templates that exist.
    """
    specs = flavor['extra_specs']
    configs = config_specs.configs_of(specs)
    resources = config_specs.placement_request(flavor)[0]
    usable = [n for n in nodes if resource_class(n) in resources]
    warnings = config_specs.drift(specs, templates_by_config, sets=sets)
    servings, templates, by_set, traits = config_specs.shown_serving(
        configs, templates_by_config)
    tagged = {}
    for one in servings:
        what = config_sets.members_text(one.members)
        carrying = [n for n in usable if one.name in (n.get('traits') or ())]
        tagged[what] = len(carrying)
        offered = [n for n in carrying
                   if candidates is None or n['uuid'] in candidates]
        if len(offered) < len(carrying):
            warnings.append('%s: %d node(s) tagged in ironic, %d '
                            'schedulable: %s' % (
                                what, len(carrying), len(offered),
                                '; '.join('%s %s' % (
                                    node_label(n), why_not_offered(
                                        n, {'name': one.name}, free))
                                    for n in carrying if n not in offered)))
    schedulable = None if candidates is None else len(candidates)
    if configs and schedulable == 0:
        warnings.append(NO_NODE)
    return FlavorReport([str(c) for c in configs], templates, by_set, traits,
                        tagged, schedulable, warnings)
