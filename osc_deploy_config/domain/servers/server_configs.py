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

"""What a server asks for, and what its hardware runs.

A server *wants* the configs of its flavor and of its image (nova hands
both to ironic as instance traits at deploy), and over them the ones a
bare-metal toggle last applied (recorded on its node, ``toggle_record``;
never the server's metadata, which its owner writes).  What
is *in effect* is what the node reports of the template's steps: its BIOS
settings and RAID configuration (``effects``).  A virtual server has no
hardware to read, and some steps report no effect: those say ``unknown``
and why, never ``yes``.  Plain functions over the APIs' dicts.
"""

import collections

from osc_deploy_config.domain.configs import config_specs
from osc_deploy_config.domain.configs import step_safety
from osc_deploy_config.domain.hardware import effects
from osc_deploy_config.domain.toggle import toggle_record

FLAVOR, IMAGE, TOGGLE = 'flavor', 'image', 'toggle'
# Why no node can be read, by the kind of server.
VIRTUAL = 'a virtual server: no hardware to read'
HIDDEN_NODE = ('ironic does not show its node to these credentials: a role '
               'on the system is needed')
COLUMNS = ('Type', 'Wanted', 'Source', 'Template', 'Actual', 'In Effect',
           'Read At')
# What a row says of the hardware: the last three columns.
HARDWARE_COLUMNS = 3
Row = collections.namedtuple('Row', ['type', 'wanted', 'source', 'template',
                                     'actual', 'in_effect', 'read_at'])


def wanted(server, image_properties=None, applied=None):
    """{type: (Config, source)}: the flavor's and the image's configs, and
    over them those a toggle applied (``applied``: {type: Config}, the
    node's record)."""
    found = {}
    for config in config_specs.configs_of(
            server['flavor'].get('extra_specs') or {}):
        found[config.type] = (config, FLAVOR)
    for config in config_specs.configs_of(image_properties or {}):
        found.setdefault(config.type, (config, IMAGE))
    for config in (applied or {}).values():
        found[config.type] = (config, TOGGLE)
    return found


def reverted_by_rebuild(server, applied):
    """[(toggled Config, the flavor's Config or None)] for each config a
    toggle applied (``applied``: the node's record) that a rebuild (a
    deploy with the flavor's traits) would revert."""
    deployed = {c.type: c for c in config_specs.configs_of(
        server['flavor'].get('extra_specs') or {})}
    return [(config, deployed.get(config.type))
            for config in sorted(applied.values(), key=lambda c: c.type)
            if deployed.get(config.type) != config]


# Why a config has no template to read back, by who reads.
NO_TEMPLATE = 'no template realises %s'
NOT_GRANTED = ('%s is not granted to the project: its template is the '
               'operator\'s to read')


def rows(server, templates_by_config, image_properties=None, node=None,
         bios=None, no_node_reason=VIRTUAL, granted=None,
         no_template=NO_TEMPLATE):
    """One ``Row`` per config type the server wants.  ``node``: its ironic
    node (its ``raid_config``, and its toggle records), with ``bios`` (its
    settings as ironic lists them); without one, ``no_node_reason`` says
    why nothing can be read.  ``granted``: the configs a project's record
    counts for (``toggle_record.applied``); ``no_template``: why a config
    without template is not read back."""
    found = []
    applied = toggle_record.applied(node, server['id'], granted)
    for config_type, (config, source) in sorted(
            wanted(server, image_properties, applied).items()):
        template = templates_by_config.get(config)
        if template is None:
            found.append(Row(config_type, config.value, source, None, None,
                             'unknown (%s)' % (no_template % config), None))
        elif node is None:
            found.append(Row(config_type, config.value, source,
                             template['name'], None,
                             'unknown (%s)' % no_node_reason, None))
        else:
            found.append(Row(config_type, config.value, source,
                             template['name'], *read_back(
                                 step_safety.enabled(template['steps']),
                                 bios, node.get('raid_config'))))
    return found


def read_back(steps, bios, raid_config):
    """(what the node shows of the steps' effect, whether it is all of
    it: yes, no, or unknown and why, when ironic recorded it)."""
    values = effects.values(bios)
    shown = effects.shown(steps, values, raid_config)
    if not shown:
        return None, 'unknown (ironic reports no effect of %s)' % ', '.join(
            '%s.%s' % (s['interface'], s['step']) for s in steps), None
    missing = effects.missing(steps, values, raid_config)
    return (', '.join(shown), 'no' if missing else 'yes',
            effects.read_at(steps, bios, raid_config))
