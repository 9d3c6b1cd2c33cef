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
import time

from openstack import exceptions as sdk_exceptions
from osc_lib import exceptions

from osc_deploy_config import effects
from osc_deploy_config import toggle_plan
from osc_deploy_config.services import ironic as ironic_api
from osc_deploy_config.services import versions

POLL_SECONDS = 1
WAIT_SECONDS = 1800
# how long a concurrent toggle's confirmation may take to show
CONFIRM_RACE_SECONDS = 60
# Outcome.result
TOGGLED, UNCHANGED, PLANNED = 'toggled', 'unchanged', 'planned'
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

    def outcome(self, result):
        return Outcome(
            self.server['name'], self.server['id'],
            host_of(self.server, self.node),
            configs_text(self.plan.current.values()),
            configs_text(self.plan.target.values()),
            self.strategy.name, result)


def configs_text(configs):
    return ', '.join(str(c) for c in configs) or 'none'


def host_of(server, node):
    if node:
        return node.get('name') or node['uuid']
    return server.get('OS-EXT-SRV-ATTR:host') or ''


class Waiter:
    """Polls until a wait ends, within WAIT_SECONDS; says each new state
    once (``say``: a line at a time)."""

    def __init__(self, say, sleep=time.sleep):
        self.say = say
        self.sleep = sleep
        self._last = None

    def progress(self, text):
        if text != self._last:
            self._last = text
            self.say('  ' + text)

    def deadline(self):
        return time.monotonic() + WAIT_SECONDS

    def tick(self, deadline, still):
        """One poll interval, or the line of a wait that took too long
        (``still``: what it still was)."""
        if time.monotonic() > deadline:
            raise exceptions.CommandError('%s after %ds'
                                          % (still, WAIT_SECONDS))
        self.sleep(POLL_SECONDS)


class ServerToggle:
    """Toggle ``configs`` on one server.

    ``clients``: ``services.clients.Clients``; ``say``: where the lines for
    the user go, one per call; ``wait``/``auto_confirm``: how far to follow
    a resize.
    """

    def __init__(self, clients, configs, say, wait=False, auto_confirm=False,
                 sleep=time.sleep):
        self.clients = clients
        self.configs = list(configs)
        self.say = say
        self.wait = wait or auto_confirm
        self.auto_confirm = auto_confirm
        self.waiter = Waiter(say, sleep)
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
            return prepared.outcome(PLANNED)
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
        by_config = self.ironic.config_templates(
            fields=ironic_api.TEMPLATE_STEP_FIELDS)
        # a bare-metal server keeps its flavor: no flavor to find
        listed = [] if node else self.nova.flavors()
        plan = toggle_plan.plan(server, self.configs, by_config, listed)
        prepared = Prepared(server, node, by_config, listed, plan, [
            c for c in self.configs if plan.current.get(c.type) != c])
        prepared.strategy = (Servicing if node else Resize)(self)
        settled = prepared.strategy.settle_earlier(prepared)
        if settled:
            return settled
        if not plan.changed:
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
        if task:
            raise exceptions.CommandError(
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
    effect before the config is recorded (on the server and the node)."""

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
            node['name'] or node['uuid'], ', '.join(
                '%s.%s' % (s['interface'], s['step'])
                for s in self.steps(prepared)))

    def refuse(self, prepared):
        """Nothing of its own to refuse (see the scheduler check)."""

    def settle_earlier(self, prepared):
        """A servicing still under way is waited for in ``carry_out``."""
        return None

    def carry_out(self, prepared):
        node, changed = prepared.node, prepared.changed
        steps = self.steps(prepared)
        state = self.ironic.node(node['uuid'], ironic_api.PROVISION_FIELDS)
        if state['provision_state'] not in ('active', 'service failed'):
            self.wait_node(node)
        self.ironic.service(node['uuid'], steps)
        self.wait_node(node)
        self.verify(node, changed, steps)
        self.ironic.set_node_extra(node['uuid'], {
            'deploy_config_%s' % c.type.replace('.', '_'): c.value
            for c in changed})
        self.nova.set_metadata(prepared.server['id'],
                               toggle_plan.record(changed))
        self.say('Server %s: node %s serviced, now %s.' % (
            prepared.server['name'], node['name'] or node['uuid'],
            configs_text(changed)))
        return prepared.outcome(TOGGLED)

    def verify(self, node, changed, steps):
        """The node must show what the steps set: ironic reports success
        for a step the hardware ignored."""
        raid_config = None
        if effects.raid_levels(steps) is not None:
            raid_config = self.ironic.node(node['uuid'],
                                           ['raid_config'])['raid_config']
        missing = effects.missing(steps, self.ironic.bios_settings(
            node['uuid']), raid_config)
        if missing:
            raise exceptions.CommandError(
                'Servicing node %s finished, but the hardware does not show '
                '%s: %s. Nothing was recorded; rerun to retry once the node '
                'takes the settings.' % (
                    node['name'] or node['uuid'], configs_text(changed),
                    '; '.join(missing)))

    def wait_node(self, node):
        """Until servicing ends: active, or an error with ironic's reason."""
        deadline = self.waiter.deadline()
        while True:
            state = self.ironic.node(node['uuid'],
                                     ironic_api.PROVISION_FIELDS)
            if state['provision_state'] == 'active' and not state[
                    'target_provision_state']:
                return
            if state['provision_state'] == 'service failed':
                raise exceptions.CommandError(
                    'Servicing node %s failed: %s. Rerun to retry.'
                    % (node['name'] or node['uuid'], state['last_error']))
            self.waiter.progress('node %s %s' % (
                node['name'] or node['uuid'], state['provision_state']))
            self.waiter.tick(deadline, 'Node %s still %s' % (
                node['uuid'], state['provision_state']))
