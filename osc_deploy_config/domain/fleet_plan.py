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

"""A rollout of deploy configs over many servers: which servers, to what,
and the running count.  Plain functions over the dicts of nova's API.

A server belongs to a flavor when it runs it, or a flavor a virtual toggle
derived from it (``<flavor>+<type>=<value>``, ``toggle_plan``).  Rolling a
flavor's change out toggles each of its servers to the configs the flavor
asks for now; a server whose configs differ from them is *outdated*.
"""

import collections
import dataclasses

from osc_lib import exceptions

from osc_deploy_config.domain import config_specs
from osc_deploy_config.domain import server_configs

# One server of a rollout, as planned: its outcome (toggle's Outcome), or
# why it is skipped.
Planned = collections.namedtuple('Planned', ['server', 'configs', 'outcome',
                                             'refusal'])


def base_flavor_name(server):
    """The flavor a server was booted with, before any virtual toggle."""
    return server['flavor']['original_name'].split('+', 1)[0]


def of_flavor(servers, flavor_name):
    """The servers that run the flavor, or a flavor derived from it."""
    return [s for s in servers if base_flavor_name(s) == flavor_name]


def flavor_target(flavor):
    """What a flavor asks for now: [Config]; refuses a flavor that asks
    for none (nothing to roll out)."""
    configs = config_specs.configs_of(flavor.get('extra_specs'))
    if not configs:
        raise exceptions.CommandError(
            'Flavor %s asks for no deploy config: give --deploy-config '
            'TYPE=VALUE' % flavor['name'])
    return configs


def lagging(server, flavor_specs, image_properties=None, applied=None):
    """The configs the server's flavor asks for now that the server does
    not want (its flavor when it was booted, its image, a toggle the
    node's record names): [(wanted now, Config or None)]."""
    wanted = server_configs.wanted(server, image_properties, applied)
    return [(config, wanted.get(config.type, (None, None))[0])
            for config in config_specs.configs_of(flavor_specs)
            if wanted.get(config.type, (None, None))[0] != config]


def merge_selected(by_ref, listed):
    """The servers named and those a filter listed, each once, in a
    stable order (by name, then ID)."""
    found = {s['id']: s for s in list(by_ref) + list(listed)}
    return sorted(found.values(), key=lambda s: (s['name'], s['id']))


@dataclasses.dataclass
class Count:
    """The running count of a rollout, said on each change."""

    total: int
    done: int = 0
    in_flight: int = 0
    failed: int = 0

    @property
    def left(self):
        return self.total - self.done - self.in_flight - self.failed

    def __str__(self):
        return '[%d done, %d in flight, %d left, %d failed]' % (
            self.done, self.in_flight, self.left, self.failed)
