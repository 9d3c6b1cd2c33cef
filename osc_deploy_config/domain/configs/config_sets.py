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

"""Configs asked together, served by one *set* template where their
templates share a step.

Ironic applies every template whose name is one of the instance's traits
(nova's are the flavor's and the image's required traits), and refuses a
deploy whose templates share an interface and step, whatever their
priorities: "deploy steps from all deploy templates matching this node's
instance traits cannot have the same interface and step"
(``ironic/conductor/steps.py`` ``_validate_deploy_steps_unique``).  So the
configs asked together whose templates share a step, directly or through
another, are served by one template the plugin makes for the set: one step
per interface and step, the members' BIOS settings merged into one
``bios.apply_configuration``, every other step as its member has it (a
step two members share only where both have it alike).  A config that
shares no step keeps its own template.

A set's name is a trait made of its members' configs, and of the resource
class it serves where a member serves one, so that two runs make the same
one and a reader can tell what it is.  Its ``extra`` names the members and
a digest of their content: a member changed since makes the set *stale*,
until it is built again from its members.  Plain functions over the
template dicts of ironic's API.
"""

import collections
import datetime
import hashlib
import json

from osc_lib import exceptions

from osc_deploy_config.domain.configs import deploy_config

EXTRA_MEMBERS = 'deploy_config_set'
EXTRA_DIGEST = 'deploy_config_set_digest'
# When an owner's write last asked for the set (``just_written``).
EXTRA_ASKED = 'deploy_config_set_asked_at'
PREFIX = deploy_config.TEMPLATE_PREFIX + 'SET_'
BIOS_STEP = ('bios', 'apply_configuration')
_AND = '_AND_'
_DIGEST_LENGTH = 16
# How long a set just made (or built again) is kept from a prune: past
# the longest wait of the command that made it for an owner (placement's,
# before the owner asks for it), with a margin.
PRUNE_GRACE = datetime.timedelta(minutes=15)

# What serves some of the configs asked together: the template's name
# (the trait to require), and its members {Config: template}: one, its own
# template; more, the set's.
Serving = collections.namedtuple('Serving', ['name', 'members'])


def is_set(serving):
    return len(serving.members) > 1


def step_keys(template):
    """The (interface, step) pairs of a template: every step counts, a
    disabled one (priority 0) too, as ironic counts them."""
    return {(s.get('interface'), s.get('step'))
            for s in template.get('steps') or ()}


def groups(configs, templates_by_config):
    """The configs that have a template, grouped where their templates
    share a step, directly or through another: [[Config]], each sorted
    by type, in the order of their first type."""
    found = []      # [(configs, step keys)]
    for config in sorted(configs, key=lambda c: c.type):
        template = templates_by_config.get(config)
        if template is None:
            continue
        members, keys = [config], step_keys(template)
        for group in [g for g in found if g[1] & keys]:
            found.remove(group)
            members += group[0]
            keys |= group[1]
        found.append((members, keys))
    return sorted((sorted(members, key=lambda c: c.type)
                   for members, _ in found), key=lambda g: g[0].type)


def serving(configs, templates_by_config):
    """[Serving] of the configs asked together (those without a template
    are left out): a set where their templates share a step, its merge
    checked, so that one line refuses what no set can serve."""
    found = []
    for group in groups(configs, templates_by_config):
        members = {c: templates_by_config[c] for c in group}
        if len(group) == 1:
            found.append(Serving(members[group[0]]['name'], members))
        else:
            merged_steps(members)
            found.append(Serving(set_name(members), members))
    return found


def required_traits(configs, templates_by_config):
    """The template traits that ask for the configs together."""
    return [s.name for s in serving(configs, templates_by_config)]


def merged_steps(members):
    """A set's steps, in its members' order: one per interface and step,
    BIOS settings merged; another step two members share, where its
    arguments are alike, at the higher priority.  CommandError, naming
    both members and the setting or step, where they differ."""
    shared, order = {}, []
    for config in sorted(members, key=lambda c: c.type):
        for step in members[config].get('steps') or ():
            key = (step['interface'], step['step'])
            if key not in shared:
                order.append(key)
            shared.setdefault(key, []).append((config, step))
    return [_merged(key, shared[key]) for key in order]


def _merged(key, owners):
    if len(owners) == 1:
        return owners[0][1]
    if key == BIOS_STEP:
        return _merged_bios(owners)
    (first_config, first), *others = owners
    for config, step in others:
        if step.get('args') != first.get('args'):
            raise exceptions.CommandError(
                'Deploy configs %s and %s both run %s.%s, differently: '
                'ironic runs one %s.%s a deploy, so no server can have both'
                % (first_config, config, *key, *key))
    return dict(first, priority=max(int(s['priority']) for _, s in owners))


def _merged_bios(owners):
    """One ``bios.apply_configuration`` of every member's settings, at the
    highest priority; a member's disabled step (priority 0) stays
    unapplied where another member's runs."""
    running = [(c, s) for c, s in owners if int(s['priority'])] or owners
    settings, setter = {}, {}
    for config, step in running:
        for setting in step['args'].get('settings') or ():
            name, value = setting['name'], setting['value']
            if name in settings and settings[name] != value:
                raise exceptions.CommandError(
                    'Deploy configs %s and %s set BIOS setting %s to %s and '
                    '%s: no server can have both' % (
                        setter[name], config, name, settings[name], value))
            settings[name] = value
            setter.setdefault(name, config)
    return {'interface': 'bios', 'step': 'apply_configuration',
            'args': {'settings': [{'name': n, 'value': v}
                                  for n, v in settings.items()]},
            'priority': max(int(s['priority']) for _, s in running)}


def set_class(members):
    """Ironic's name of the resource class a set serves: that of a member
    which serves one; None when every member serves every kind."""
    found = sorted({t['extra'][deploy_config.EXTRA_CLASS]
                    for t in members.values()
                    if deploy_config.resource_class_of(t.get('extra'))})
    return found[0] if found else None


def set_name(members):
    """``CUSTOM_DEPLOY_CONFIG_SET_HYPERTHREADING_DISABLED_AND_TURBO_...``
    (``_FOR_<CLASS>`` where it serves one class); past the 255 characters
    of a trait, cut and ended with a hash of the whole."""
    name = PREFIX + _AND.join('%s_%s' % (
        deploy_config.normalize(c.type), deploy_config.normalize(c.value))
        for c in sorted(members, key=lambda c: c.type))
    resource_class = set_class(members)
    if resource_class:
        name += '_FOR_' + deploy_config.normalize(resource_class)
    if len(name) <= deploy_config.MAX_TRAIT_LENGTH:
        return name
    tail = '_' + hashlib.sha256(name.encode()).hexdigest()[:_DIGEST_LENGTH]
    return name[:deploy_config.MAX_TRAIT_LENGTH - len(tail)] + tail


def capability_traits(members):
    """The union of the members' capability traits."""
    return sorted({t for template in members.values()
                   for t in deploy_config.capability_traits_of(
                       template.get('extra'))})


def digest(members):
    """A digest of the members' content: their names, steps (in a stable
    order: ironic's listing keeps no order of its own), capability traits
    and class."""
    content = [[str(c), t['name'], sorted(
        t.get('steps') or [], key=lambda s: (s['interface'], s['step'])),
                deploy_config.capability_traits_of(t.get('extra')),
                deploy_config.resource_class_of(t.get('extra'))]
               for c, t in sorted(members.items(), key=lambda i: i[0].type)]
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode(
        )).hexdigest()[:_DIGEST_LENGTH]


def set_extra(members):
    """The ``extra`` of a set's template: its members, their digest, the
    capability traits a node needs (every member's), its class."""
    extra = {
        EXTRA_MEMBERS: members_text(members),
        EXTRA_DIGEST: digest(members),
        deploy_config.EXTRA_REQUIRES: ','.join(capability_traits(members)),
    }
    resource_class = set_class(members)
    if resource_class:
        extra[deploy_config.EXTRA_CLASS] = resource_class
    return extra


def set_body(members):
    """The POST body of a set's template."""
    return {'name': set_name(members), 'steps': merged_steps(members),
            'extra': set_extra(members)}


def rebuild_patch(template, members):
    """The JSON patch that builds a stale set again from its members."""
    patch = [{'op': 'add', 'path': '/steps',
              'value': merged_steps(members)}]
    patch += [{'op': 'add', 'path': '/extra/%s' % key, 'value': value}
              for key, value in set_extra(members).items()
              if (template.get('extra') or {}).get(key) != value]
    return patch


def members_text(members):
    return ','.join(str(c) for c in sorted(members, key=lambda c: c.type))


def members_of(template):
    """The configs a set's template names as its members, or None: not a
    set."""
    text = (template.get('extra') or {}).get(EXTRA_MEMBERS)
    if not text:
        return None
    try:
        return [deploy_config.parse_config(part.strip())
                for part in str(text).split(',')]
    except exceptions.CommandError:
        return []       # written by hand, and wrong: never current


def current(template, members):
    """Whether a set's template is built from these members as they are
    now (``members``: {Config: template}, None where one is gone)."""
    return bool(members) and template['name'] == set_name(members) and (
        template.get('extra') or {}).get(EXTRA_DIGEST) == digest(members)


def just_written(template, now):
    """Whether a set's template was made, built again or asked for by an
    owner's write (``EXTRA_ASKED``, written when it was older) within
    PRUNE_GRACE of ``now`` (an aware datetime): that owner may not ask for
    it yet.  A template whose times are not shown counts as just
    written."""
    stamps = [template.get('updated_at'), template.get('created_at'),
              (template.get('extra') or {}).get(EXTRA_ASKED)]
    stamps = [_aware(s) for s in stamps if s]
    return not stamps or now - max(stamps) < PRUNE_GRACE


def asked_patch(now):
    """The JSON patch that says an owner's write asks for the set now."""
    return [{'op': 'add', 'path': '/extra/%s' % EXTRA_ASKED,
             'value': now.isoformat()}]


def _aware(stamp):
    when = datetime.datetime.fromisoformat(str(stamp).replace('Z', '+00:00'))
    return when if when.tzinfo else when.replace(
        tzinfo=datetime.timezone.utc)

