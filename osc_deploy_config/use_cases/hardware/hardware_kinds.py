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

"""One config, every hardware kind: the templates of a config of the
vocabulary, one per resource class of the capable nodes, each with the
setting its nodes' BIOS registry has for the config.

Every class is planned and reported, whatever another class finds: a class
with a template of its own for the config keeps it, one the template for
every kind serves gets none, one the vocabulary finds nothing in is named
with the command that covers it.  Nodes without a resource class, and
nodes of a matched class that report no registry, are named in a warning.
"""

import logging

from openstack import exceptions as sdk_exceptions
from osc_lib import exceptions

from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.configs import steps
from osc_deploy_config.domain.configs import templates
from osc_deploy_config.domain.hardware import bios_profiles
from osc_deploy_config.domain.hardware import bios_registry
from osc_deploy_config.domain.hardware import bios_vocabulary
from osc_deploy_config.domain.hardware import effects
from osc_deploy_config.domain.hardware import tagging
from osc_deploy_config.services import versions

LOG = logging.getLogger(__name__)
# What each node's BIOS interface says of the hardware without a registry.
NODE_FIELDS = ('uuid', 'name', 'traits', 'retired', 'resource_class',
               'bios_interface')


def vocabulary(clients):
    """The vocabulary's names, with those of the cloud's vocabulary file
    (``--os-deploy-config-vocabulary``, ``OS_DEPLOY_CONFIG_VOCABULARY`` or
    ``deploy_config_vocabulary`` in clouds.yaml), if it names one."""
    import yaml

    path = clients.setting('deploy_config_vocabulary')
    if not path:
        return bios_vocabulary.NAMES
    try:
        with open(path, encoding='utf-8') as f:
            data = yaml.safe_load(f)
    except (OSError, UnicodeDecodeError) as exc:
        raise exceptions.CommandError('Cannot read vocabulary file %s: %s'
                                      % (path, exc)) from None
    except yaml.YAMLError as exc:
        raise exceptions.CommandError('Malformed vocabulary file %s: %s' % (
            path, str(exc).splitlines()[0])) from None
    return bios_vocabulary.extend(data, path)


def create_per_class(clients, given, config, names, dry_run=False):
    """The templates of ``config`` (of the vocabulary ``names``), one per
    resource class of the capable nodes; what was planned and made, by
    class.  A rerun makes what an interrupted one did not."""
    traits = templates.capability_traits_for(
        config, given.requires_traits, given.no_requires_trait)
    read = capable_registries(clients, deploy_config.template_extra(
        config, traits))
    registries, classless = _by_class(read, given.resource_class)
    if classless:
        LOG.warning('%s', _classless(classless))
    if not registries:
        raise exceptions.CommandError(
            'No node can take %s: none has %s%s. Nothing was created; give '
            'the steps (--bios-setting NAME=VALUE).' % (
                config, ', '.join(traits) or 'a BIOS registry', (
                    ' in resource class %s' % given.resource_class)
                if given.resource_class else (
                    ' and a resource class' if classless else '')))
    ironic = clients.ironic()
    known = ironic.config_templates(fields=('uuid', 'name', 'steps'))
    same_step = not ironic.release().validates
    served = _served(known, config, registries, same_step)
    plan = bios_vocabulary.per_class(config, {
        rc: nodes for rc, nodes in registries.items() if rc not in served},
        names, same_step_unlocks=same_step)
    interfaces = {label: node.get('bios_interface')
                  for label, (node, _) in read.items()}
    if not plan.matched and not served:
        raise exceptions.CommandError(
            'No BIOS setting of %s found: %s. Nothing was created.' % (
                config, '; '.join(_covering(config, u, interfaces, names)
                                  for u in plan.unmatched)))
    for resource_class, nodes in sorted(plan.unchecked.items()):
        LOG.warning('%s', _unchecked(config, resource_class, nodes,
                                     plan.matched[resource_class]))
    made = {} if dry_run else _make(
        ironic, config, traits, templates.parse_extra(given.extra),
        plan.matched)
    return _report(config, served, plan, made, interfaces, names)


def _make(ironic, config, traits, extra, matched):
    """Create each class's template: {resource class: its name}."""
    made = {}
    for resource_class, match in sorted(matched.items()):
        body = templates.create_body(
            deploy_config.template_trait(config, resource_class),
            [steps.bios_step(bios_vocabulary.settings(match))], extra,
            config, traits, resource_class=resource_class)
        made[resource_class] = post(ironic, body)['name']
    return made


def _report(config, served, plan, made, interfaces, names):
    """What ``create_per_class`` planned and made, by resource class."""
    templates_of = dict(served, **{
        rc: deploy_config.template_trait(config, rc) for rc in plan.matched})
    settings = dict({rc: 'served by %s' % name
                     for rc, name in served.items()},
                    **{rc: bios_vocabulary.describe(m)
                       for rc, m in plan.matched.items()})
    notes = {rc: bios_profiles.governs(m.unlock, m.name)
             for rc, m in plan.matched.items() if m.unlock}
    for rc, nodes in plan.unchecked.items():
        notes[rc] = '; '.join(filter(None, [
            notes.get(rc), 'not checked: no BIOS registry reported (nodes '
            '%s)' % ', '.join(nodes)]))
    return {'config': str(config),
            'templates': dict(sorted(templates_of.items())),
            'settings': dict(sorted(settings.items())),
            'notes': dict(sorted(notes.items())),
            'unmatched': {u.resource_class: _covering(
                config, u, interfaces, names) for u in plan.unmatched},
            'created': sorted(made.values())}


def _served(known, config, registries, same_step=True):
    """{resource class: the template that already serves it}: its own for
    the config (whatever its name: a rerun, or the operator's), else the
    one for every kind, when its nodes' registries accept its BIOS
    settings."""
    own = known.per_class.get(config, {})
    found = {rc: own[deploy_config.placement_class(rc)]['name']
             for rc in registries
             if deploy_config.placement_class(rc) in own}
    generic = known.get(config)
    wanted = effects.bios_settings(generic.get('steps') or ()) \
        if generic else {}
    found.update({rc: generic['name'] for rc, nodes in registries.items()
                  if rc not in found and wanted
                  and not bios_registry.problems(
                      wanted, nodes, same_step_unlocks=same_step)})
    return found


def _covering(config, unmatched, interfaces, names):
    """What to do about a class the vocabulary found no setting in."""
    kinds = sorted({interfaces.get(n) or '?' for n in unmatched.nodes})
    why = unmatched.why
    if why == 'no BIOS registry reported':
        if kinds == ['no-bios']:
            return '%s: bios interface no-bios (nodes %s): ironic cannot ' \
                'change their BIOS, and a BIOS step does nothing there' % (
                    unmatched.resource_class, ', '.join(unmatched.nodes))
        why += ' (bios interface %s)' % ', '.join(kinds)
    vendor = bios_vocabulary.INTERFACE_VENDORS.get(kinds[0]) \
        if len(kinds) == 1 else None
    options = vendor and bios_vocabulary.suggestion(config, vendor, names)
    return '%s: %s (nodes %s); give its setting: openstack baremetal ' \
        'deploy template create --config %s --resource-class %s %s' % (
            unmatched.resource_class, why, ', '.join(unmatched.nodes),
            config, unmatched.resource_class,
            options or '--bios-setting NAME=VALUE')


def _unchecked(config, resource_class, nodes, match):
    """The warning for nodes of a matched class without a registry."""
    return '%s: no BIOS registry reported (nodes %s): the class\'s ' \
        'template sets %s on them unchecked; if their BIOS names it ' \
        'otherwise, give them a class of their own and its setting: ' \
        'openstack baremetal node set --resource-class CLASS %s; openstack ' \
        'baremetal deploy template create --config %s --resource-class ' \
        'CLASS --bios-setting NAME=VALUE' % (
            resource_class, ', '.join(nodes), ', '.join(
                '%s=%s' % s for s in bios_vocabulary.settings(match)),
            ' '.join(nodes), config)


def _classless(labels):
    """The warning for capable nodes without a resource class."""
    return '%s %s no resource class: nova cannot schedule %s, and no ' \
        'template of a class serves %s; give %s one: openstack baremetal ' \
        'node set --resource-class CLASS %s' % (
            ', '.join(labels), 'has' if len(labels) == 1 else 'have',
            'it' if len(labels) == 1 else 'them',
            'it' if len(labels) == 1 else 'them',
            'it' if len(labels) == 1 else 'each', ' '.join(labels))


def _by_class(read, resource_class=None):
    """({resource class: {node label: its detailed BIOS settings}}, the
    labels of the nodes without a class), of ``read`` (of one class, if
    given)."""
    found, classless = {}, []
    for label, (node, registry) in sorted(read.items()):
        if not node.get('resource_class'):
            classless.append(label)
        elif resource_class in (None, node['resource_class']):
            found.setdefault(node['resource_class'], {})[label] = registry
    return found, [] if resource_class else classless


def post(ironic, body):
    """Create a template; one line when ironic refuses it (a conflict)."""
    try:
        return ironic.create_deploy_template(body)
    except sdk_exceptions.ConflictException as exc:
        raise exceptions.CommandError('Cannot create deploy template %s: %s'
                                      % (body['name'], exc.details or exc)
                                      ) from None


def capable_registries(clients, extra):
    """{node label: (node, its detailed BIOS settings)} of the nodes
    capable of a template with this ``extra`` (its traits and class), read
    concurrently."""
    api = clients.ironic(versions.DEPLOY_TEMPLATES, versions.NODE_TRAITS,
                         versions.NODE_RETIREMENT)
    capable = [n for n in api.nodes(NODE_FIELDS)
               if tagging.capable(n, {'extra': extra})]
    read = api.bios_registries(n['uuid'] for n in capable)
    return {tagging.node_label(n): (n, read[n['uuid']]) for n in capable}
