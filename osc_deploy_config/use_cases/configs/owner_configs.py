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

"""The deploy configs of their two owners, flavors and images: set, unset,
show and list them.

A flavor asks for a config in its extra specs, an image in its properties,
with the same two keys (``config_specs``): one notion, two adapters that
read and write it (``Flavors``, ``Images``).  nova calls use the cloud
entry's project scope, ironic calls the system scope when the credentials
allow it (see ``services.clients``).
"""

import collections
import logging

from openstack import exceptions as sdk_exceptions
from osc_lib import exceptions

from osc_deploy_config.domain.configs import config_sets
from osc_deploy_config.domain.configs import config_specs
from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.hardware import tagging
from osc_deploy_config.services import ironic as ironic_api
from osc_deploy_config.services import versions
from osc_deploy_config.use_cases.configs import set_templates
from osc_deploy_config.use_cases.hardware import node_tags

LOG = logging.getLogger(__name__)

# One owner as read: its ID, its name, what asks for configs (extra specs
# or properties), and the object itself.
Owned = collections.namedtuple('Owned', ['id', 'name', 'specs', 'raw'])


class Flavors:
    """Flavors: configs in extra specs, written key by key."""

    kind, key_column = 'flavor', 'Extra Spec'

    def __init__(self, clients):
        self.nova = clients.nova()

    def find(self, ref):
        """One flavor: by ID in one read, else by its unique name."""
        flavor = self.nova.flavor_with_specs(ref)
        return Owned(flavor['id'], flavor['name'], flavor['extra_specs'],
                     flavor)

    def served(self, owned, known, configs):
        """The templates on the flavor's hardware (its resource class);
        refuses a config served per kind but not on the flavor's."""
        resource_class = config_specs.resource_class_of(owned.specs)
        config_specs.refuse_unserved(configs, known,
                                     'flavor %s' % owned.name,
                                     resource_class)
        return known.for_class(resource_class)

    def listing(self):
        return [Owned(f['id'], f['name'], f.get('extra_specs'), f)
                for f in sorted(self.nova.flavors(),
                                key=lambda f: f['name'])]

    def write(self, owned, change):
        """Unset first, then set in one request (nova has no call for
        both): at no point does the flavor require two templates of one
        config type (ironic would run both), and where it requires none
        meanwhile, a boot gets no template and the next read shows the
        drift."""
        for key in change.unset:
            self.nova.delete_extra_spec(owned.id, key)
        if change.set:
            self.nova.set_extra_specs(owned.id, change.set)

    def settle(self, owned, wanted, templates_by_config, provide):
        """Read the flavor back: repair what a concurrent change of it left
        mixed (the sets the repair asks for made first, by ``provide``),
        and tell when that change won.  ``wanted``: {type: value, or None
        for unset}."""
        specs = self.nova.extra_specs(owned.id)
        repair = config_specs.reconcile(specs, list(wanted),
                                        templates_by_config)
        if repair.set or repair.unset:
            LOG.info('Flavor %s was changed concurrently; repairing %s',
                     owned.name, ', '.join(sorted(repair.set) + repair.unset))
            provide(_after(specs, repair))
            self.write(owned, repair)
        lost = [t for t, value in wanted.items()
                if specs.get(config_specs.config_spec(t)) != value]
        if lost:
            raise exceptions.CommandError(
                'A concurrent change of flavor %s won for %s: it now asks '
                'for %s' % (owned.name, ', '.join(lost), ', '.join(
                    str(c) for c in config_specs.configs_of(specs)
                    if c.type in lost) or 'none of them'))


class Images:
    """Images: configs in properties, written in one request (glance
    applies a JSON patch whole or not at all)."""

    kind, key_column = 'image', 'Property'

    def __init__(self, clients):
        self.clients = clients
        self.glance = clients.glance()

    def find(self, ref):
        """One image, in one request."""
        image = self.glance.find_image(ref)
        return Owned(image['id'], image.get('name'), image, image)

    def served(self, owned, known, configs):
        """The templates for every kind: an image cannot know the hardware
        it lands on, and ironic applies the template its trait names; a
        config served per kind is refused, naming the flavors to ask in."""
        for config in configs:
            kinds = known.classes(config)
            if config in known or not kinds:
                continue
            flavors = sorted(f['name'] for f in self.clients.nova().flavors()
                             if config_specs.resource_class_of(
                                 f.get('extra_specs')) in kinds)
            raise exceptions.CommandError(
                '%s is served per hardware kind (%s), and an image cannot '
                'know the kind it lands on: ask for it in the flavors of '
                'those kinds instead (openstack flavor deploy-config set '
                'FLAVOR %s: %s)' % (config, ', '.join(kinds), config,
                                     ', '.join(flavors) or 'none yet'))
        return known.for_class(None)

    def listing(self):
        return [Owned(i['id'], i.get('name'), i, i) for i in sorted(
            self.glance.images().values(),
            key=lambda i: (i.get('name') or '', i['id']))]

    def write(self, owned, change):
        self.glance.change_properties(owned.raw, change.set, change.unset)

    def settle(self, owned, wanted, templates_by_config, provide):
        """Nothing to settle: the patch was applied whole."""


OWNERS = {'flavor': Flavors, 'image': Images}


def templates_by_config(clients):
    """One template listing: ConfigTemplates, with the steps, and when
    each was written."""
    return clients.ironic().config_templates(
        fields=ironic_api.TEMPLATE_WRITE_FIELDS)


# How a write that asks for a set tags the set's nodes: whether it waits
# for placement, how long, and where its progress lines go.
Tagging = collections.namedtuple('Tagging', ['wait', 'wait_timeout', 'say'],
                                 defaults=(True, 300, LOG.info))
# A write's, unless its caller says.
TAGGING = Tagging()


def set_configs(clients, kind, ref, configs, dry_run=False,
                tags=None):
    """Ask a flavor or an image for ``configs``: (columns, rows saying
    what was, or with ``dry_run`` would be, set and unset).  The sets
    they need are made and tagged first (``provide_sets``)."""
    tags = _checked(tags)
    owners = OWNERS[kind](clients)
    owned = owners.find(ref)
    known = templates_by_config(clients)
    by_config = owners.served(owned, known, configs)
    change = config_specs.plan_set(owned.specs, configs, by_config)
    provide_sets(clients, known, _after(owned.specs, change), by_config,
                 dry_run, tags)
    return _change(owners, owned, change, {c.type: c.value for c in configs},
                   by_config, dry_run, _provider(clients, known, by_config,
                                                 tags))


def set_exact(clients, kind, ref, configs, dry_run=False,
              tags=None, provide=True):
    """Leave a flavor or an image asking for exactly ``configs``, with the
    traits of the templates that serve them now (a declared state's
    write): one change, its unsets and sets together, so that switching
    between two configs that share a step is never refused half-way.
    ``provide``: make and tag the sets it asks for first (an apply has
    made them all, once)."""
    tags = _checked(tags)
    owners = OWNERS[kind](clients)
    owned = owners.find(ref)
    known = templates_by_config(clients)
    by_config = owners.served(owned, known, configs)
    change = config_specs.plan_exact(
        owned.specs, configs, by_config,
        {config_specs.trait_spec(t['name']) for t in known.every()})
    if provide:
        provide_sets(clients, known, _after(owned.specs, change), by_config,
                     dry_run, tags)
    wanted = {c.type: c.value for c in configs}
    wanted.update((c.type, None) for c in config_specs.configs_of(
        owned.specs) if c.type not in wanted)
    return _change(owners, owned, change, wanted, by_config, dry_run,
                   _provider(clients, known, by_config, tags))


def unset_configs(clients, kind, ref, config_types, dry_run=False,
                  tags=None):
    """Remove from a flavor or an image exactly what ``set`` added for
    these types: (columns, rows).  Where the configs left shared a set
    with those removed, what serves them now is asked for instead."""
    tags = _checked(tags)
    owners = OWNERS[kind](clients)
    owned = owners.find(ref)
    known = templates_by_config(clients)
    by_config = owners.served(owned, known, [])
    change = config_specs.plan_unset(owned.specs, config_types, by_config,
                                     owner=kind)
    provide_sets(clients, known, _after(owned.specs, change), by_config,
                 dry_run, tags)
    return _change(owners, owned, change, dict.fromkeys(config_types),
                   by_config, dry_run, _provider(clients, known, by_config,
                                                 tags))


def _checked(tags):
    """The Tagging (the default's when None), refused in one line before
    anything is written when its wait cannot be."""
    tags = tags or TAGGING
    if tags.wait_timeout < 0:
        raise exceptions.CommandError(
            'Expected non-negative --wait-timeout, got %d' % tags.wait_timeout)
    return tags


def _after(specs, change):
    """The specs once ``change`` is made."""
    after = dict(specs or {}, **change.set)
    return {k: v for k, v in after.items() if k not in change.unset}


def provide_sets(clients, known, specs, by_config, dry_run, tags):
    """Before an owner asks for ``specs``: the sets' templates they ask
    for made (or built again), and the nodes that can take them tagged,
    until placement shows it (``tags``).  Run every time, so that a
    rerun after an interruption tags what the first run made."""
    servings = config_specs.needed_sets(config_specs.configs_of(specs),
                                        by_config)
    if not servings:
        return
    for line in set_templates.make(clients.ironic(), known, servings,
                                   dry_run):
        tags.say(line)
    if dry_run:
        tags.say('Would tag the nodes that can take %s' % ', '.join(
            s.name for s in servings))
        return
    rows = node_tags.sync(clients, [s.name for s in servings], False, False,
                          tags.wait, tags.wait_timeout, tags.say)
    for node, template, action, _ in rows:
        if action in ('added', 'removed'):
            tags.say('  %s %s %s' % (action, template, node))
    ironic = clients.ironic()
    for serving in servings:
        # a prune meanwhile keeps a set just made: this says if one did not
        try:
            ironic.deploy_template(serving.name, ('uuid',))
        except sdk_exceptions.NotFoundException:
            raise exceptions.CommandError(
                'Set %s was deleted meanwhile (a concurrent prune?); '
                'nothing asks for it yet: rerun' % serving.name) from None


def _provider(clients, known, by_config, tags):
    """``provide_sets`` of specs, for a repair to call."""
    return lambda specs: provide_sets(clients, known, specs, by_config,
                                      False, tags)


def _change(owners, owned, change, wanted, by_config, dry_run, provide):
    prefix = 'would ' if dry_run else ''
    rows = [(prefix + 'set', k, v) for k, v in sorted(change.set.items())]
    rows += [(prefix + 'unset', k, owned.specs.get(k))
             for k in change.unset]
    if not dry_run and (change.set or change.unset):
        owners.write(owned, change)
        owners.settle(owned, wanted, by_config, provide)
    return ('Action', owners.key_column, 'Value'), rows


def list_configs(clients, kind, include_all=False):
    """(ID, name, [config], [set]) of every flavor or image that asks for
    a config (with ``include_all``, of every one): the sets are those of
    its required traits."""
    rows = []
    for owned in OWNERS[kind](clients).listing():
        configs = [str(c) for c in config_specs.configs_of(owned.specs)]
        if configs or include_all:
            rows.append((owned.id, owned.name, configs, sorted(
                t for t in config_specs.required_traits(owned.specs)
                if t.startswith(config_sets.PREFIX))))
    return rows


def show_image(clients, ref):
    """An image's configs, their templates (and the sets that serve them
    together) and required traits, and the drift (each also logged as a
    warning)."""
    owned = Images(clients).find(ref)
    known = templates_by_config(clients)
    by_config = known.for_class(None)
    configs = config_specs.configs_of(owned.specs)
    drift = config_specs.drift(owned.specs, by_config, owner='image',
                               sets=known.sets)
    for warning in drift:
        LOG.warning('%s', warning)
    _, templates, sets, traits = config_specs.shown_serving(configs,
                                                            by_config)
    return {
        'id': owned.id,
        'name': owned.name,
        'deploy_configs': [str(c) for c in configs],
        'templates': templates,
        'sets': sets,
        'required_traits': traits,
        'drift': drift,
    }


def show_flavor(clients, ref):
    """A flavor's configs, their templates and required traits, the nodes
    tagged for each in ironic, how many nodes the scheduler can land on
    now (placement), and the drift (each also logged as a warning)."""
    flavor = Flavors(clients).find(ref).raw
    ironic = clients.ironic(versions.DEPLOY_TEMPLATES, versions.NODE_TRAITS,
                            versions.NODE_RETIREMENT)
    known = ironic.config_templates(fields=ironic_api.TEMPLATE_STEP_FIELDS)
    by_config = known.for_class(config_specs.resource_class_of(
        flavor['extra_specs']))
    nodes = []
    if config_specs.configs_of(flavor['extra_specs']):
        nodes = ironic.nodes(ironic_api.TAGGING_FIELDS)
        ironic.warn_if_nodes_hidden(nodes, LOG)
    candidates, free = scheduler_view(clients, flavor)
    report = tagging.report(flavor, by_config, nodes, candidates, free,
                            known.sets)
    for warning in report.drift:
        LOG.warning('%s', warning)
    return {
        'id': flavor['id'],
        'name': flavor['name'],
        'deploy_configs': report.configs,
        'templates': report.templates,
        'sets': report.sets,
        'required_traits': report.required_traits,
        'tagged_nodes': report.tagged_nodes,
        'schedulable_nodes': report.schedulable_nodes,
        'drift': report.drift,
    }


def scheduler_view(clients, flavor):
    """What the scheduler can do for the flavor now, from placement: its
    allocation candidates, and the free providers of its custom resource
    classes; (None, None), with a warning, when placement cannot be read.
    """
    resources, required, forbidden = config_specs.placement_request(flavor)
    try:
        api = clients.placement()
        candidates = api.schedulable(resources, required, forbidden)
        free = api.free_providers(
            rc for rc in resources if rc.startswith('CUSTOM_'))
    except (exceptions.CommandError, sdk_exceptions.HttpException) as exc:
        LOG.warning('Schedulable nodes are unknown: placement could not be '
                    'read (%s)', getattr(exc, 'details', None) or exc)
        return None, None
    return candidates, free


def parse_items(texts, unsetting):
    """The configs of set, or the config types of unset."""
    if unsetting:
        return [deploy_config.parse_config_type(t) for t in texts]
    return [deploy_config.parse_config(t) for t in texts]
