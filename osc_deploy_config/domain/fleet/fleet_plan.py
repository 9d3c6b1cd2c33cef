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

from osc_deploy_config.domain.configs import config_specs
from osc_deploy_config.domain.servers import server_configs

# What became of one server of a rollout: the Outcome column.
DONE, UNCHANGED, FAILED = 'done', 'unchanged', 'failed'
UNAVAILABLE, NOT_STARTED, SKIPPED = 'unavailable', 'not started', 'skipped'
INTERRUPTED = 'interrupted'
# toggled, but its server stays locked (the unlock failed); toggled, but
# the read-back was cut short
LEFT_LOCKED, NOT_READ_BACK = 'done, left locked', 'not read back'
# it ran the configs already, but a dead lock on it was left (not cleared)
UNCHANGED_LEFT_LOCKED = 'unchanged, left locked'
# The outcomes of a fleet that got there.
ARRIVED = (DONE, UNCHANGED, SKIPPED)
COLUMNS = ('ID', 'Server', 'Host', 'From', 'To', 'How', 'Outcome',
           'Seconds')


@dataclasses.dataclass
class Planned:
    """One server of a rollout, as planned: its plan (a toggle's Outcome,
    PLANNED or UNCHANGED, for those it can toggle), or what it is
    (``verdict``: UNAVAILABLE, FAILED or SKIPPED, with ``why``).  ``ours``:
    an interrupted toggle of ours left it down (the rollout finishes it
    first)."""

    server: dict
    outcome: object = None
    prepared: object = None
    verdict: str = None
    why: str = ''
    ours: bool = False

    @property
    def to_toggle(self):
        return self.verdict is None and self.outcome.result != UNCHANGED


def row(one, verdict, why='', seconds=0.0):
    """The result row of one server: its plan's columns, and what became
    of it (``verdict``: an outcome above; ``why``: the detail)."""
    server, planned = one.server, one.outcome
    columns = (planned.host, planned.before, planned.after, planned.how) \
        if planned else (server.get('OS-EXT-SRV-ATTR:host') or '', '', '',
                         '')
    return (server['id'], server['name'], *columns,
            verdict + (': %s' % why if why else ''), round(seconds, 1))


def arrived(rows):
    """Whether the fleet got there: every server done, unchanged, or
    skipped as incapable."""
    return all(r[COLUMNS.index('Outcome')].split(':')[0] in ARRIVED
               for r in rows)


# Why a server is down now, and whether it comes back by itself (a task
# or a provisioning under way) or only when someone acts.
Down = collections.namedtuple('Down', ['why', 'moving'])


def unavailable(server, node=None):
    """A Down when the server is unavailable now, from nova's view and
    (bare metal) ironic's, else None: not ACTIVE, a task under way, its
    node in maintenance, or not ``active``."""
    task = server.get('OS-EXT-STS:task_state')
    if task:
        return Down('%s (%s)' % (server['status'], task), True)
    if server['status'] != 'ACTIVE':
        return Down(server['status'], False)
    if node is None:
        return None
    label = node.get('name') or node['uuid']
    if node.get('maintenance'):
        return Down('node %s in maintenance' % label, False)
    state = node['provision_state']
    if state == 'active' and not node.get('target_provision_state'):
        return None
    # ironic's states under way end in -ing or wait; the others
    # (service failed, service hold, rescue...) wait for someone
    return Down('node %s %s' % (label, state), state == 'active' or (
        state.endswith(('ing', 'wait'))))


def provider_view(server, node, by_name, carriers):
    """The providers of a server's allocations as a toggle's scheduler
    check reads them (``toggle_plan.scheduler_problems``), from what a
    rollout read for all: ``by_name`` {provider name: UUID}, ``carriers``
    {trait: UUIDs of the providers that carry it}.  A bare-metal server's
    provider is its node (ironic tells its maintenance); a virtual one's,
    its hypervisor's, whose room is nova's scheduler's to judge at the
    resize (each host's inventory would cost a request of its own)."""
    if node is not None:
        uuid, name = node['uuid'], node['uuid']
    else:
        name = server.get('OS-EXT-SRV-ATTR:hypervisor_hostname') or ''
        uuid = by_name.get(name)
        if uuid is None:
            return []
    return [{'uuid': uuid, 'name': name,
             'traits': [t for t, found in carriers.items() if uuid in found],
             'resources': {}}]


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
    """The running count of a rollout, said on each change.  A toggle is
    in flight while it holds a place in the budget: one whose server is up
    again (read back, recorded) gave its place back, and is done but for
    its unlock, which runs beside the next start (``unlocking``)."""

    total: int
    done: int = 0
    in_flight: int = 0
    failed: int = 0
    down: int = 0
    unlocking: set = dataclasses.field(default_factory=set)

    def up(self, server_id):
        """The server's toggle gave its place back: done, but its
        unlock."""
        self.in_flight -= 1
        self.done += 1
        self.unlocking.add(server_id)

    def ended(self, server_id, outcome, placed=True):
        """The server's toggle ended with ``outcome`` (``placed``: it held
        a place, unless it gave it back already)."""
        if server_id in self.unlocking:
            self.unlocking.discard(server_id)
            self.done -= 1
        else:
            self.in_flight -= placed
        if outcome in ARRIVED:
            self.done += 1
        elif outcome != NOT_STARTED:
            self.failed += 1

    @property
    def left(self):
        return self.total - self.done - self.in_flight - self.failed

    def __str__(self):
        return '[%d done, %d in flight, %d left, %d failed, %d down]' % (
            self.done, self.in_flight, self.left, self.failed, self.down)
