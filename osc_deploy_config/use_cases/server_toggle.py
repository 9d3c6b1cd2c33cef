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

"""One server's deploy-config toggle: read, plan, check, carry out.

``ServerToggle`` reads the server and what decides about it, plans with
``toggle_plan``, and refuses what cannot be done before any change: a
config the server's image asks for, a host that placement does not show
capable (the scheduler check).  Then one of two strategies carries it out:
``Resize`` (a virtual server: nova resizes it to a flavor with the configs
changed) or ``Servicing`` (a bare-metal server, which nova cannot resize:
ironic services its node in place, and the effect is read back before it
is recorded).  Both share the waits (``Waiter``).  A toggle reports an
``Outcome`` and says its progress through a callback, so that a fleet can
run many.  Every step can be rerun: a toggle interrupted anywhere
completes when run again.
"""

import dataclasses
import json
import time

from openstack import exceptions as sdk_exceptions
from osc_lib import exceptions

from osc_deploy_config.domain import config_specs
from osc_deploy_config.domain import effects
from osc_deploy_config.domain import step_safety
from osc_deploy_config.domain import toggle_plan
from osc_deploy_config.services import ironic as ironic_api
from osc_deploy_config.services import versions

POLL_SECONDS = 1
# the first polls of a wait come sooner: a fast step is seen ending early
FIRST_POLL_SECONDS = 0.25
WAIT_SECONDS = 1800
# how long a concurrent toggle's confirmation may take to show
CONFIRM_RACE_SECONDS = 60
# how long ironic may take to return an aborted node to active
ABORT_SECONDS = 120
# ironic's fault on a node whose service step failed (API 1.42), and what
# to read of that
SERVICE_FAILURE = 'service failure'
FAULT_FIELDS = ('maintenance', 'maintenance_reason', 'fault')
# Outcome.result
TOGGLED, UNCHANGED, PLANNED = 'toggled', 'unchanged', 'planned'
# What settle_earlier returns when the server is to be read again.
RETRY = object()


class Busy(exceptions.CommandError):
    """The server is busy with a change under way."""
REQUESTED, AWAITING_CONFIRMATION = 'requested', 'awaiting confirmation'


@dataclasses.dataclass
class Outcome:
    """What one toggle did: the server, its host (compute host or node),
    its configs before and after, how (resize or service), and the result
    (one of TOGGLED, UNCHANGED, PLANNED, REQUESTED,
    AWAITING_CONFIRMATION)."""

    server: str
    server_id: str
    host: str
    before: str
    after: str
    how: str
    result: str
    detail: str = ''


@dataclasses.dataclass
class Prepared:
    """A toggle read, planned and checked: what a strategy carries out."""

    server: dict
    node: dict          # None for a virtual server
    templates_by_config: dict
    listed_flavors: list
    plan: toggle_plan.ResizePlan
    changed: list       # the configs that change
    strategy: object = None     # Resize or Servicing

    def outcome(self, result, detail=''):
        return Outcome(
            self.server['name'], self.server['id'],
            host_of(self.server, self.node),
            configs_text(self.plan.current.values()),
            configs_text(self.plan.target.values()),
            self.strategy.name, result, detail)


def configs_text(configs):
    return ', '.join(str(c) for c in configs) or 'none'


def host_of(server, node):
    if node:
        return node.get('name') or node['uuid']
    return server.get('OS-EXT-SRV-ATTR:host') or ''


class Waiter:
    """Polls until a wait ends, within ``seconds``, every POLL_SECONDS (the
    first polls of each wait sooner); says each new state once (``say``: a
    line at a time)."""

    def __init__(self, say, sleep=None, seconds=WAIT_SECONDS):
        self.say = say
        self.sleep = sleep or time.sleep
        self.seconds = seconds
        self._last = None
        self._interval = FIRST_POLL_SECONDS

    def progress(self, text):
        if text != self._last:
            self._last = text
            self.say('  ' + text)

    def deadline(self, seconds=None):
        """A wait begins: when it must have ended."""
        self._interval = FIRST_POLL_SECONDS
        return time.monotonic() + (self.seconds if seconds is None
                                   else seconds)

    def expired(self, deadline):
        return time.monotonic() > deadline

    def tick(self, deadline, still):
        """One poll interval, or the line of a wait that took too long
        (``still``: what it still was)."""
        if self.expired(deadline):
            raise exceptions.CommandError('%s after %ds'
                                          % (still, self.seconds))
        self.sleep(self._interval)
        self._interval = min(2 * self._interval, POLL_SECONDS)


class ServerToggle:
    """Toggle ``configs`` on one server.

    ``clients``: ``services.clients.Clients``; ``say``: where the lines for
    the user go, one per call; ``wait``/``auto_confirm``: how far to follow
    a resize; ``wait_busy``: wait for a change under way on the server
    rather than refuse; ``templates_by_config``: the templates, when read
    already.
    """

    def __init__(self, clients, configs, say, wait=False, auto_confirm=False,
                 sleep=None, wait_busy=False, wait_seconds=WAIT_SECONDS,
                 templates_by_config=None):
        self.clients = clients
        # a rollout reads the templates once for all its toggles
        self.templates_by_config = templates_by_config
        self.configs = list(configs)
        self.say = say
        self.wait = wait or auto_confirm
        self.auto_confirm = auto_confirm
        # a server busy with a change waits for it (a rollout's rerun
        # finishes what it left in flight) instead of being refused
        self.wait_busy = wait_busy
        self.waiter = Waiter(say, sleep, wait_seconds)
        self.nova = clients.nova(versions.SERVER_FLAVOR_DETAILS)
        self.ironic = clients.ironic(versions.DEPLOY_TEMPLATES,
                                     versions.NODE_TRAITS)

    def run(self, server_ref, dry_run=False):
        """Plan, check, and (unless ``dry_run``) carry out: an Outcome."""
        prepared = self.prepare(server_ref)
        if isinstance(prepared, Outcome):
            return prepared
        strategy = prepared.strategy
        self.say('%sServer %s: deploy configs %s -> %s: %s.' % (
            'Dry run, nothing changed. ' if dry_run else '',
            prepared.server['name'], configs_text(
                prepared.plan.current.values()),
            configs_text(prepared.plan.target.values()),
            ('would ' if dry_run else '') + strategy.describe(prepared)))
        if dry_run:
            return prepared.outcome(PLANNED, strategy.describe(prepared))
        return strategy.carry_out(prepared)

    def prepare(self, server_ref):
        """Read and plan, and refuse (CommandError) what cannot be done;
        an Outcome when there is nothing to do."""
        server = self.nova.find_server(server_ref)
        image_id = (server.get('image') or {}).get('id')
        toggle_plan.refuse_image_configs(
            server, self.clients.glance().image_properties(image_id)
            if image_id else {}, self.configs)
        node = self.ironic.node_of_instance(server['id'],
                                            ironic_api.PROVISION_FIELDS)
        if node is None and self.nova.runs_on_ironic(server):
            raise exceptions.CommandError(self.hidden_node(server))
        by_config = self.templates_by_config
        if by_config is None:
            by_config = self.ironic.config_templates(
                fields=ironic_api.TEMPLATE_STEP_FIELDS)
        # a bare-metal server keeps its flavor: no flavor to find
        listed = [] if node else self.nova.flavors()
        plan = toggle_plan.plan(server, self.configs, by_config, listed)
        prepared = Prepared(server, node, by_config, listed, plan, [
            c for c in self.configs if plan.current.get(c.type) != c])
        prepared.strategy = (Servicing if node else Resize)(self)
        settled = prepared.strategy.settle_earlier(prepared)
        if settled is RETRY:
            return self.prepare(server['id'])
        if settled:
            return settled
        prepared.strategy.recheck(prepared)
        if not prepared.changed:
            self.say('Server %s already runs with %s: nothing to do.'
                     % (server['name'], configs_text(self.configs)))
            return prepared.outcome(UNCHANGED)
        prepared.strategy.refuse(prepared)
        self.refuse_unschedulable(prepared)
        return prepared

    def refuse_unschedulable(self, prepared):
        """The scheduler check: placement must show the server's host with
        every required trait of the target, and not reserved."""
        problems = toggle_plan.scheduler_problems(
            self.clients.placement().providers_of(prepared.server['id']),
            prepared.plan.target_specs, prepared.node)
        if problems:
            fix = ('openstack baremetal node deploy-config sync'
                   if prepared.node else
                   'openstack resource provider trait set on the host')
            raise exceptions.CommandError(
                'Server %s cannot take %s on its host: %s. Nothing was '
                'changed; make the host capable and tag it (%s), or migrate '
                'the server first.' % (prepared.server['name'],
                                       configs_text(self.configs),
                                       '; '.join(problems), fix))

    def hidden_node(self, server):
        """Why a bare-metal server's node is not found, in one line."""
        if self.ironic.scope == 'project':
            return ('Server %s is a bare-metal server, but ironic does not '
                    'show its node to these credentials: its default policy '
                    'shows nodes to a system-scoped token only, and %s. '
                    'Nothing was changed.' % (server['name'],
                                              ironic_api.SYSTEM_ROLE_HINT))
        return ('Server %s is a bare-metal server, but ironic shows no node '
                'with its instance: nothing was changed.' % server['name'])


class _Strategy:
    """What both strategies use of their toggle."""

    def __init__(self, toggle):
        self.toggle = toggle
        self.nova = toggle.nova
        self.say = toggle.say
        self.waiter = toggle.waiter


class Resize(_Strategy):
    """A virtual server: nova resizes it to a flavor equal to its own but
    for the configs (an identical one, or one made with a derived name)."""

    name = 'resize'

    def describe(self, prepared):
        plan = prepared.plan
        return 'resize to flavor %s%s' % (
            (plan.target_flavor or {}).get('name') or plan.new_flavor_name,
            '' if plan.target_flavor else ' (to be created)')

    def recheck(self, prepared):
        """A flavor is what it says: nothing to read back."""

    def refuse(self, prepared):
        """A flavor named like the one to create but different is an
        operator's: never reused or changed."""
        plan = prepared.plan
        if plan.target_flavor is None and not toggle_plan.unfinished_flavor(
                plan, prepared.listed_flavors,
                toggle_plan.sizes_of(prepared.server['flavor'])):
            toggle_plan.refuse_taken_name(plan, prepared.listed_flavors)

    def settle_earlier(self, prepared):
        """An earlier resize of the server still under way or awaiting
        confirmation (an interrupted toggle, a concurrent one): finish
        ours, refuse another's.  Its Outcome when that settles it."""
        server, plan = prepared.server, prepared.plan
        task = server.get('OS-EXT-STS:task_state')
        if task and self.toggle.wait_busy:
            self.wait_server(server['id'])
            return RETRY
        if task:
            raise Busy(
                'Server %s is busy (%s): another change is under way; rerun '
                'when it ends. Nothing was changed.' % (server['name'], task))
        if server['status'] != 'VERIFY_RESIZE':
            return None
        if plan.changed:
            raise exceptions.CommandError(
                'Server %s has a resize awaiting confirmation: confirm or '
                'revert it first (openstack server resize confirm|revert '
                '%s). Nothing was changed.' % (server['name'], server['id']))
        flavor = server['flavor']['original_name']
        if not self.toggle.auto_confirm:
            self.say('Server %s runs with %s; its resize awaits '
                     'confirmation: openstack server resize confirm %s'
                     % (server['name'], configs_text(self.toggle.configs),
                        server['id']))
            return prepared.outcome(AWAITING_CONFIRMATION)
        status = self.confirm(server)
        self.say('Server %s is %s on flavor %s.' % (server['name'], status,
                                                     flavor))
        return prepared.outcome(TOGGLED)

    def carry_out(self, prepared):
        server = prepared.server
        flavor = self.target_flavor(prepared)
        request_id = self.request(server, flavor)
        if not self.toggle.wait:
            self.say('Resize to %s requested (%s); confirm it with '
                     'openstack server resize confirm %s'
                     % (flavor['name'], request_id, server['id']))
            return prepared.outcome(REQUESTED)
        status = self.wait_server(server['id'])
        if status != 'VERIFY_RESIZE':
            raise exceptions.CommandError('Resize of server %s failed: %s' % (
                server['name'], self.resize_error(server['id'], request_id)))
        if self.toggle.auto_confirm:
            status = self.confirm(server)
        self.say('Server %s is %s on flavor %s.'
                 % (server['name'], status, flavor['name']))
        return prepared.outcome(TOGGLED if self.toggle.auto_confirm
                                else AWAITING_CONFIRMATION)

    def target_flavor(self, prepared):
        """The flavor to resize to: an identical one, ours left half-made
        by an interrupted or concurrent toggle (finished), or a new one."""
        plan, server = prepared.plan, prepared.server
        if plan.target_flavor:
            return plan.target_flavor
        sizes = toggle_plan.sizes_of(server['flavor'])
        flavor = toggle_plan.unfinished_flavor(plan, prepared.listed_flavors,
                                               sizes)
        if flavor is None:
            try:
                flavor = self.nova.create_flavor(
                    plan.new_flavor_name, sizes,
                    toggle_plan.derived_description(
                        server['flavor']['original_name']))
            except sdk_exceptions.ConflictException:
                # a concurrent toggle made it first
                flavor = toggle_plan.unfinished_flavor(
                    plan, self.nova.flavors(), sizes)
                if flavor is None:
                    raise exceptions.CommandError(
                        'Flavor %s was created concurrently and differs from '
                        'the target: rerun' % plan.new_flavor_name) from None
        return self.nova.finish_flavor(flavor, plan.target_specs)

    def request(self, server, flavor):
        """Ask nova for the resize; its request ID."""
        try:
            return self.nova.resize(server['id'], flavor['id'])
        except sdk_exceptions.HttpException as exc:
            # a concurrent change: 409, or 500 for nova's own race
            # (UnexpectedTaskStateError)
            if exc.status_code != 409 and (exc.status_code or 0) < 500:
                raise
            raise exceptions.CommandError(
                'Nova refused to resize server %s: %s (another change under '
                'way?); rerun when it ends' % (server['name'], ' '.join(
                    str(exc.details or exc).split()))) from None

    def confirm(self, server):
        """Confirm the resize; one a concurrent toggle confirms first is
        as good (nova then answers 400 "has not been resized" or 409,
        while the server may still show VERIFY_RESIZE)."""
        try:
            self.nova.confirm_resize(server['id'])
        except (sdk_exceptions.BadRequestException,
                sdk_exceptions.ConflictException):
            # the other confirm may still be under way: give it a moment
            deadline = time.monotonic() + CONFIRM_RACE_SECONDS
            while self.nova.find_server(server['id'])[
                    'status'] == 'VERIFY_RESIZE':
                if time.monotonic() > deadline:
                    raise
                self.waiter.sleep(POLL_SECONDS)
        return self.wait_server(server['id'], leaving='VERIFY_RESIZE')

    def wait_server(self, server_id, leaving=None):
        """Until no task runs on the server (and it has left the status
        ``leaving``, for the actions nova answers before they start)."""
        deadline = self.waiter.deadline()
        while True:
            server = self.nova.find_server(server_id)
            task = server.get('OS-EXT-STS:task_state')
            if not task and server['status'] != leaving:
                return server['status']
            self.waiter.progress('%s (%s)' % (server['status'],
                                              task or 'confirming'))
            self.waiter.tick(deadline, 'Server %s still %s' % (server_id,
                                                               task))

    def resize_error(self, server_id, request_id):
        """Why nova gave up: the failed event of our resize action (nova
        answers 202, then puts the server back with no fault)."""
        action = self.nova.instance_action(server_id, request_id)
        for event in action.get('events') or ():
            if event.get('result') == 'Error':
                return '%s: %s' % (event['event'], event.get('details')
                                   or 'error (nova 2.84 tells more)')
        return action.get('message') or 'the server is back on its flavor'


class Servicing(_Strategy):
    """A bare-metal server: ironic services its node in place with the
    target templates' steps (API 1.87), then the node must show their
    effect before the config is recorded (on the server and the node).

    A step that destroys data is refused before anything changes; a failed
    servicing is aborted, which returns the node to ``active`` where ironic
    allows it (32.0 and later).  A rerun after an interruption waits for a
    servicing under way, and records without servicing again a node that
    already shows every effect."""

    name = 'service'

    def __init__(self, toggle):
        super().__init__(toggle)
        self.ironic = toggle.clients.ironic(versions.NODE_SERVICING)

    def steps(self, prepared):
        return [s for c in prepared.changed for s in toggle_plan.service_steps(
            prepared.templates_by_config[c])]

    def describe(self, prepared):
        node = prepared.node
        return 'service node %s with %s' % (
            node['name'] or node['uuid'],
            step_safety.describe(self.steps(prepared)))

    def recheck(self, prepared):
        """A config the server's record says it runs, but whose effect its
        node does not show (a rebuild redeployed the flavor's; a change at
        the BMC), is to be applied again: the hardware decides."""
        for config in self.toggle.configs:
            steps = prepared.templates_by_config.get(
                config, {}).get('steps') or ()
            if config in prepared.changed or not effects.readable(steps):
                continue
            bios, raid_config = self.reading(prepared.node, steps)
            if effects.missing(steps, effects.values(bios), raid_config):
                prepared.changed.append(config)
                current = {c.type: c for c in config_specs.configs_of(
                    prepared.server['flavor'].get('extra_specs'))}
                if current.get(config.type) is None:
                    prepared.plan.current.pop(config.type, None)
                else:
                    prepared.plan.current[config.type] = current[
                        config.type]

    def refuse(self, prepared):
        """A step that destroys data never runs on a running server."""
        found = step_safety.destroying(self.steps(prepared))
        if found:
            wanted = configs_text(prepared.changed)
            raise exceptions.CommandError(
                'Server %s cannot take %s while it runs: %s would destroy '
                '%s. Nothing was changed; it applies at deploy only: boot a '
                'new server from a flavor that asks for it (openstack flavor '
                'deploy-config set FLAVOR %s) and move the workload there.'
                % (prepared.server['name'], wanted,
                   ', '.join(r.step for r in found),
                   '; '.join(dict.fromkeys(r.at_risk for r in found)),
                   ' '.join(str(c) for c in prepared.changed)))

    def settle_earlier(self, prepared):
        """A servicing still under way is waited for in ``carry_out``."""
        return None

    def carry_out(self, prepared):
        node, changed = prepared.node, prepared.changed
        steps = self.steps(prepared)
        state = self.ironic.node(node['uuid'], ironic_api.PROVISION_FIELDS)
        if state['provision_state'] not in ('active', 'service failed'):
            state = self.wait_node(node)    # an interrupted toggle's
        if state['provision_state'] == 'active' and self.shows(node, steps):
            self.say('  node %s already shows %s: recording it'
                     % (label(node), configs_text(changed)))
        else:
            self.ironic.service(node['uuid'], steps)
            state = self.wait_node(node)
            if state['provision_state'] == 'service failed':
                raise exceptions.CommandError(self.recover(
                    prepared, steps, state['last_error']))
            self.verify(node, changed, steps)
        self.ironic.set_node_extra(node['uuid'],
                                   toggle_plan.node_record(changed))
        self.nova.set_metadata(prepared.server['id'],
                               toggle_plan.record(changed))
        self.say('Server %s: node %s serviced, now %s.' % (
            prepared.server['name'], label(node), configs_text(changed)))
        return prepared.outcome(TOGGLED)

    def reading(self, node, steps):
        """(the node's BIOS settings, its raid_config), as ironic has
        them."""
        raid_config = None
        if effects.raid_levels(steps) is not None:
            raid_config = self.ironic.node(node['uuid'],
                                           ['raid_config'])['raid_config']
        return self.ironic.bios(node['uuid']), raid_config

    def shows(self, node, steps):
        """Whether the node shows every effect of the steps, all of which
        ironic reports (an interrupted toggle's servicing finished)."""
        if not effects.readable(steps):
            return False
        bios, raid_config = self.reading(node, steps)
        return not effects.missing(steps, effects.values(bios), raid_config)

    def verify(self, node, changed, steps):
        """The node must show what the steps set: ironic reports success
        for a step the hardware ignored."""
        bios, raid_config = self.reading(node, steps)
        missing = effects.missing(steps, effects.values(bios), raid_config)
        if missing:
            raise exceptions.CommandError(
                'Servicing node %s finished, but the hardware does not show '
                '%s: %s. Nothing was recorded; rerun to retry once the node '
                'takes the settings.' % (
                    label(node), configs_text(changed), '; '.join(missing)))

    def recover(self, prepared, steps, why):
        """After a failed servicing: abort it, which returns the node to
        active (ironic 32.0 and later), and say what the hardware shows; or,
        on an older ironic, how to recover it.  The one line.

        Ironic puts a node whose service step failed in maintenance (fault
        "service failure") and refuses to abort while it is: the node leaves
        maintenance for the abort and goes back to it after, so that its
        hardware is checked before anything else runs on it."""
        node, server = prepared.node, prepared.server
        failed = 'Servicing node %s failed: %s.' % (label(node), why)
        held = self.ironic.node(node['uuid'], FAULT_FIELDS)
        held = held if held['fault'] == SERVICE_FAILURE else None
        if held:
            self.ironic.set_maintenance(node['uuid'], False)
        try:
            self.ironic.abort(node['uuid'])
        except sdk_exceptions.BadRequestException:
            self.hold(node, held)
            unset = ('openstack baremetal node maintenance unset %s && '
                     % node['uuid']) if held else ''
            return (
                '%s This ironic cannot take a node out of "service failed" '
                '(abort needs ironic 32.0 or later): nova still shows server '
                '%s ACTIVE, but ironic manages its node again only after a '
                'servicing succeeds. Nothing was recorded; once the cause is '
                'fixed, rerun this toggle or run: %sopenstack baremetal node '
                "service %s --service-steps '%s'" % (
                    failed, server['name'], unset, node['uuid'],
                    json.dumps(steps)))
        state = self.wait_node(node, until=('active',),
                               seconds=ABORT_SECONDS)
        self.hold(node, held)
        if state['provision_state'] != 'active':
            return ('%s Aborting it did not return the node to active (%s): '
                    'it is in "%s". Nothing was recorded.' % (
                        failed, state['last_error'],
                        state['provision_state']))
        kept = ('; the node stays in maintenance, where ironic put it for the '
                'failed step (openstack baremetal node maintenance unset %s '
                'once the hardware is checked)' % label(node)) if held else ''
        return ('%s Ironic returned the node to active and server %s runs '
                'on%s%s. Nothing was recorded; fix the cause, then rerun.'
                % (failed, server['name'], self.now_shows(node, steps), kept))

    def hold(self, node, held):
        """Put the node back in the maintenance ironic had set."""
        if held:
            self.ironic.set_maintenance(node['uuid'], True,
                                        held['maintenance_reason'])

    def now_shows(self, node, steps):
        """What the node shows of the steps' effect, read back, in words."""
        bios, raid_config = self.reading(node, steps)
        shown = effects.shown(steps, effects.values(bios), raid_config)
        if not shown:
            return ''
        return ': its hardware shows %s (as ironic read it at %s)' % (
            ', '.join(shown),
            effects.read_at(steps, bios, raid_config) or 'an unknown time')

    def wait_node(self, node, until=('active', 'service failed'),
                  seconds=None):
        """Until the node's provisioning settles in one of ``until``
        (ironic keeps target "active" on a node in "service failed"); its
        state."""
        deadline = self.waiter.deadline(seconds)
        while True:
            state = self.ironic.node(node['uuid'],
                                     ironic_api.PROVISION_FIELDS)
            current = state['provision_state']
            if current in until and (current == 'service failed'
                                     or not state['target_provision_state']):
                return state
            self.waiter.progress('node %s %s' % (label(node), current))
            if seconds is not None and self.waiter.expired(deadline):
                return state    # the caller says what it is
            self.waiter.tick(deadline, 'Node %s still %s' % (node['uuid'],
                                                             current))


def label(node):
    return node.get('name') or node['uuid']
