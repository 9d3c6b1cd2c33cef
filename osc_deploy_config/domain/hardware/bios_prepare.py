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

"""Preparing a node for the configs of its kind: its vendor profiles set
once, so that every config's setting is writable when a deploy or a toggle
sends it.

From ironic 36.0 a BIOS step that sets a setting the node's profile locks
fails before any write, even when the same step sets the profile to its
custom value; and ironic refuses two ``bios.apply_configuration`` steps in
one deploy template or runbook.  So the profile is set once, ahead of the
configs: by manual cleaning on an ``available`` (or ``manageable``) node,
the ramdisk disabled, one step a profile (ironic runs raw clean steps in
order, and a nested profile is writable only once its parent is at its
custom value).  An ``active`` node runs a server: the toggle's own path
sets the profile there.  Plain functions over ironic's dicts.
"""

import collections

from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.hardware import bios_profiles
from osc_deploy_config.domain.hardware import bios_registry
from osc_deploy_config.domain.hardware import tagging

# What prepare does with a node, by its provision state: manual cleaning
# from manageable, after a "manage" (and followed by a "provide") from
# available.
CLEAN_AND_PROVIDE, CLEAN = 'manage, clean, provide', 'clean'
BY_STATE = {'available': CLEAN_AND_PROVIDE, 'manageable': CLEAN}

# One node's preparation: the profile settings ([(name, value)],
# outermost first) its configs need, the configs that need them, why a
# config of its kind cannot be prepared for (no value unlocks it, or
# ironic's cache will not let it), and the configs' settings ({name:
# value}) the profiles unlock.
Plan = collections.namedtuple('Plan', ['node', 'needs', 'configs',
                                       'unpreparable', 'settings'])


def plan(node, templates, registry, own, configs=None):
    """The ``Plan`` for ``node`` over the config templates for its kind
    (``own``: ``ConfigTemplates.per_class`` of every template; ``configs``:
    only these, when given), from ``registry``, its detailed BIOS settings
    as ironic caches them."""
    needs, wanted, unpreparable, settings_of = {}, set(), [], {}
    for template in templates:
        config = deploy_config.config_of(template.get('extra'))
        if (configs and config not in configs
                or not tagging.serves(node, template)
                or tagging.why_incapable(node, template) is not None
                or tagging.superseded(node, template, own)):
            continue
        settings = tagging.bios_settings(template)
        if not settings or not registry:
            continue
        found = bios_profiles.prerequisites(settings, registry)
        stale = bios_profiles.stale_read_only(settings, registry)
        if stale:
            unpreparable.append('%s: %s' % (
                config, bios_profiles.describe_stale(stale)))
            continue
        if found is None:
            unpreparable.append('%s: no value of its profile unlocks %s'
                                % (config, ', '.join(sorted(settings))))
            continue
        for name, value in found:
            if needs.setdefault(name, value) != value:
                unpreparable.append('%s needs %s=%s, another config %s=%s'
                                    % (config, name, value, name,
                                       needs[name]))
        if found:
            wanted.add(str(config))
            settings_of.update(settings)
    return Plan(tagging.node_label(node), list(needs.items()),
                sorted(wanted), unpreparable, settings_of)


def settings_text(needs):
    """``A=1, B=2`` of settings ([(name, value)])."""
    return ', '.join('%s=%s' % pair for pair in needs)


def pending(needs, registry):
    """The settings of ``needs`` the node's BIOS does not have yet."""
    have = {e['name']: str(e.get('value')) for e in registry or ()}
    return [(name, value) for name, value in needs
            if have.get(name) != str(value)]


def once_prepared(wanted, registry):
    """The profile settings ([(name, value)]) after which the node takes
    ``wanted`` ({name: value}), when a vendor profile is all that refuses
    it now; None otherwise."""
    needs = pending(bios_profiles.prerequisites(wanted, registry) or [],
                    registry)
    if not needs or bios_registry.problems(
            dict(needs, **wanted), {'node': registry},
            same_step_unlocks=True):
        return None
    return needs


def problems_once_prepared(wanted, registries):
    """[bios_registry.Problem] of ``wanted`` on the nodes (``registries``:
    {node: its detailed BIOS settings}) were each prepared: what no
    profile explains (a value not allowed, a setting it lacks)."""
    found = []
    for node, registry in sorted(registries.items()):
        needs = pending(bios_profiles.prerequisites(wanted, registry) or [],
                        registry)
        found += bios_registry.problems(dict(needs, **wanted), {
            node: registry}, same_step_unlocks=True)
    grouped = {}
    for problem in found:
        grouped.setdefault((problem.setting, problem.reason), []).extend(
            problem.nodes)
    return [bios_registry.Problem(setting, reason, nodes)
            for (setting, reason), nodes in sorted(grouped.items())]


def clean_steps(needs):
    """Manual clean steps that set ``needs``, one BIOS step a profile, in
    order (raw clean steps may repeat a step; templates may not)."""
    return [{'interface': 'bios', 'step': 'apply_configuration',
             'args': {'settings': [{'name': name, 'value': value}]}}
            for name, value in needs]


def governs(needs):
    """What else the profile values of ``needs`` govern, in words: the
    settings they stop setting (each keeps its value), for the operator's
    record of what a prepare changed."""
    return '; '.join('%s=%s: %s' % (name, value, ', '.join(found))
                     for name, value in needs
                     for found in [bios_profiles.governed(name, value)]
                     if found)


def state_refusal(node):
    """Why prepare does not touch the node in its state, in one line; None
    when it can (``BY_STATE``)."""
    label, state = tagging.node_label(node), node.get('provision_state')
    if node.get('maintenance'):
        return '%s is in maintenance: nothing was changed' % label
    if state == 'active':
        return ('%s runs instance %s: a running server gets its profile '
                'through the toggle, which sets it first (openstack server '
                'resize --deploy-config TYPE=VALUE %s)'
                % (label, node.get('instance_uuid'),
                   node.get('instance_uuid')))
    if state not in BY_STATE:
        return ('%s is %s: prepare takes an available or manageable node'
                % (label, state))
    return None
