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

"""One server's deploy-config toggle: read, check, hold, carry out.

``ServerToggle`` reads the server and what decides about it (``read``),
plans with ``toggle_plan`` and refuses what cannot be done before any
change (``prepare``): a state the toggle does not start from
(``toggle_states``), a config the server's image asks for, a server only
the operator may change, a step not known to be safe, a host that placement
does not show capable (the scheduler check).  Then it holds the server
(``claim``) while one of two strategies carries it out: ``resize.Resize``
(a virtual server) or ``servicing.Servicing`` (a bare-metal server), both
through ``waits``.  A toggle reports an ``outcomes.Outcome`` and says its
progress through a callback, so that a fleet can run many.  A toggle
interrupted anywhere completes when run again.
"""

import dataclasses

from osc_lib import exceptions

from osc_deploy_config.domain.servers import rebuild_plan
from osc_deploy_config.domain.toggle import toggle_plan
from osc_deploy_config.domain.toggle import toggle_record
from osc_deploy_config.domain.toggle import toggle_states
from osc_deploy_config.services import ironic as ironic_api
from osc_deploy_config.services import versions
from osc_deploy_config.use_cases.toggle import authority as authorities
from osc_deploy_config.use_cases.toggle import claim as claims
from osc_deploy_config.use_cases.toggle import outcomes
from osc_deploy_config.use_cases.toggle import recovery
from osc_deploy_config.use_cases.toggle import resize
from osc_deploy_config.use_cases.toggle import servicing
from osc_deploy_config.use_cases.toggle import waits


@dataclasses.dataclass
class Reading:
    """What deciding about one server's toggle reads: the server (with its
    lock), its node (None: virtual), its image's properties, the config
    templates on its hardware, the flavors (virtual servers), whether nova
    runs it on ironic, and the configs a project's record on its node
    counts for (``granted``, ``toggle_record.applied``)."""

    server: dict
    node: dict
    image: dict
    templates_by_config: dict
    flavors: list
    bare_metal: bool
    granted: set = dataclasses.field(default_factory=set)


@dataclasses.dataclass
class Prepared:
    """A toggle read, planned and checked: what a strategy carries out."""

    reading: Reading
    plan: toggle_plan.ResizePlan
    changed: list       # the configs that change
    claim: object = None        # claims.Claim, when the toggle locks
    strategy: object = None     # resize.Resize or servicing.Servicing
    finishing: str = None       # what an interrupted toggle left to do
    bios: list = None           # the node's BIOS settings, once read
    # the profile steps a toggle sends before its own (``Servicing``)
    unlocking: list = dataclasses.field(default_factory=list)
    bios_checked: bool = False

    @property
    def unchanged(self):
        """Nothing to change: the server runs the configs already."""
        return not self.changed and not self.finishing

    @property
    def server(self):
        return self.reading.server

    @server.setter
    def server(self, server):
        self.reading.server = server

    def outcome(self, result, detail=''):
        return outcomes.Outcome(
            self.server['name'], self.server['id'],
            outcomes.host_of(self.server, self.reading.node),
            outcomes.configs_text(self.plan.current.values()),
            outcomes.configs_text(self.plan.target.values()),
            self.strategy.name, result, detail)


class ServerToggle:
    """Toggle ``configs`` on one server.

    ``clients``: ``services.clients.Clients``; ``say``: where the lines for
    the user go, one per call; ``wait``/``auto_confirm``: how far to follow
    a resize; ``wait_seconds``: the bound of the whole wait;
    ``allowed_steps``: steps (``interface.step``) the operator allows on a
    running server though they are not known safe there;
    ``templates_by_config``: the templates (templates.ConfigTemplates),
    when read already;
    ``placement_view``: the providers of a Reading's server, when read
    already (a rollout reads them for all).  ``fresh_reading``: the reading
    was made by ``read`` (one server's toggle: the hardware is read before
    and after); a rollout's comes from its own listings, and the node's
    record decides what to service.  ``wait_until``: a deadline (on
    ``time.monotonic``) no wait goes past, a rollout's.  Who toggles
    (``authority``) is the operator when the templates are given, and is
    otherwise decided from the credentials once the server is read.
    """

    def __init__(self, clients, configs, say, wait=False, auto_confirm=False,
                 sleep=None, wait_seconds=waits.WAIT_SECONDS,
                 templates_by_config=None, allowed_steps=(),
                 placement_view=None, fresh_reading=True, wait_until=None,
                 retry_failed=False, leaving=None):
        self.clients = clients
        self.retry_failed = retry_failed
        self.placement_view = placement_view
        self.fresh_reading = fresh_reading
        self.authority = None if templates_by_config is None else \
            authorities.Operator(templates_by_config)
        self.configs = list(configs)
        self.say = say
        self.wait = wait or auto_confirm
        self.auto_confirm = auto_confirm
        self.allowed_steps = set(allowed_steps)
        self.nova = clients.nova(versions.SERVER_LOCKS)
        self.ironic = clients.ironic(versions.DEPLOY_TEMPLATES,
                                     versions.NODE_TRAITS,
                                     versions.NODE_LESSEE)
        self.waits = waits.Waits(
            waits.Waiter(say, sleep, wait_seconds, until=wait_until,
                         leaving=leaving),
            self.nova, self.ironic)

    def run(self, server_ref, dry_run=False):
        """Plan, check, and (unless ``dry_run``) carry out: an Outcome."""
        prepared = self.prepare(self.read(server_ref))
        if prepared.unchanged:
            return self.leave_unchanged(prepared, dry_run)
        self.say('%sServer %s: deploy configs %s -> %s: %s.' % (
            'Dry run, nothing changed. ' if dry_run else '',
            prepared.server['name'], outcomes.configs_text(
                prepared.plan.current.values()),
            outcomes.configs_text(prepared.plan.target.values()),
            ('would ' if dry_run else '') + prepared.strategy.describe(
                prepared)))
        if dry_run:
            return prepared.outcome(outcomes.PLANNED,
                                    prepared.strategy.describe(prepared))
        try:
            outcome = self.carry_out(prepared)
        finally:
            if self.waits.waiter.leaving is None:  # a rollout's says them
                for line in recovery.UNHELD.lines():
                    self.say(line)
        if prepared.claim and prepared.claim.left_locked:
            # done, but the server is not the owner's again: not a success
            raise exceptions.CommandError(prepared.claim.left_locked_line())
        return outcome

    def leave_unchanged(self, prepared, dry_run=False):
        """A server that runs the configs already: its Outcome; a lock an
        interrupted toggle left on it is cleared, but in a dry run."""
        if prepared.claim and not dry_run:
            if self.waits.waiter.past_until() and (
                    prepared.claim.interrupted()):
                # no takeover starts past a rollout's deadline: the
                # rerun's to clear
                prepared.claim.left_locked = True
                self.say('  server %s stays locked by an interrupted toggle '
                         '(%s): a rerun unlocks it' % (
                             prepared.server['name'], waits.PAST_DEADLINE))
            else:
                prepared.claim.clear_interrupted()
        self.say('Server %s already runs with %s: nothing to do.'
                 % (prepared.server['name'],
                    outcomes.configs_text(self.configs)))
        return prepared.outcome(outcomes.UNCHANGED)

    def read(self, server_ref):
        """One server's Reading, looked up as OSC does (by name, among the
        project's servers); a bare-metal server the credentials may not
        service is refused before anything else is read."""
        server = self.nova.find_server(server_ref)
        node = self.ironic.node_of_instance(server['id'],
                                            ironic_api.PROVISION_FIELDS)
        bare_metal = node is not None or self.on_ironic(server)
        if self.authority is None:
            self.authority = authorities.decide(self.clients, self.ironic)
        if bare_metal:
            self.authority.refuse_unserviceable(server, node, self.configs,
                                                self.ironic)
        image_id = (server.get('image') or {}).get('id')
        known = self.authority.templates(self.ironic).for_hardware(
            node, server['flavor'].get('extra_specs'))
        return Reading(
            server, node, self.clients.glance().image_properties(image_id)
            if image_id else {}, known, [] if node else self.nova.flavors(),
            bare_metal, self.authority.granted(self.ironic, server, node,
                                               known) if node else set())

    def on_ironic(self, server):
        """Whether nova runs the server on ironic, from nova's own data:
        its hypervisor (an admin's view), else its flavor (a member's)."""
        if server.get('OS-EXT-SRV-ATTR:hypervisor_hostname'):
            return bool(self.nova.runs_on_ironic(server))
        return rebuild_plan.on_ironic_by_flavor(server['flavor'])

    def prepare(self, reading, claim=None):
        """Plan, and refuse (CommandError) what cannot be done: a Prepared
        (``unchanged`` when there is nothing to do).  No change and no wait
        (a dry run and a rollout's planning call it); no request but the
        hardware's reading, with ``fresh_reading``.  ``claim``: the lock
        the toggle holds already (prepared ahead of its place)."""
        server = reading.server
        if reading.bare_metal:
            self.authority.refuse_unserviceable(server, reading.node,
                                                self.configs, self.ironic)
        self.authority.refuse_ungranted(server, self.configs,
                                        reading.templates_by_config,
                                        self.allowed_steps)
        toggle_plan.refuse_image_configs(server, reading.image, self.configs)
        if claim is None and (self.clients.is_admin() or (
                self.authority.project_id and reading.bare_metal)):
            claim = claims.Claim(self.nova, server, self.configs, self.say)
        if claim:
            claim.refuse_held()
        plan = toggle_plan.plan(
            server, self.configs, reading.templates_by_config,
            reading.flavors, toggle_record.applied(
                reading.node, server['id'], reading.granted))
        prepared = Prepared(reading, plan, [
            c for c in self.configs if plan.current.get(c.type) != c], claim)
        prepared.strategy = (servicing.Servicing if reading.node
                             else resize.Resize)(self)
        prepared.strategy.refuse_state(prepared)
        if self.fresh_reading or toggle_record.project_recorded(
                reading.node, server['id']):
            # a project's record vouches for nothing alone: the hardware
            prepared.strategy.recheck(prepared)
        if prepared.unchanged:
            return prepared
        if prepared.finishing != resize.CONFIRM:
            prepared.strategy.refuse(prepared)
        if not prepared.finishing:
            # a change of ours under way passed it when it began
            refuse_unschedulable(self, prepared)
        return prepared

    def carry_out(self, prepared):
        """Hold the server and carry the toggle out: its Outcome.  The
        server is unlocked however it ends (Ctrl-C too)."""
        interrupted = False
        try:
            self.refuse_past_deadline(prepared)
            prepared = hold(self, prepared)
            if prepared.unchanged:      # so at its place in a rollout
                return self.leave_unchanged(prepared)
            return prepared.strategy.carry_out(prepared)
        except KeyboardInterrupt:
            interrupted = True
            raise
        finally:
            unlocked = let_go(prepared.claim, self.say)
            if interrupted:
                self.say('Interrupted%s; rerun the same command to finish '
                         'the toggle.' % (': the server is unlocked'
                                          if unlocked else ''))

    def refuse_past_deadline(self, prepared):
        """No write starts past a rollout's deadline (its checks, its lock
        may have taken the time left), a takeover's lock and the finishing
        of an interrupted toggle included: a rerun finishes those."""
        if self.waits.waiter.past_until():
            raise waits.PastDeadline(waits.PAST_DEADLINE)


def refuse_unschedulable(toggle, prepared):
    """The scheduler check: the server's host must carry every required
    trait of the target, and not be reserved (placement's view; a
    project's, the node's traits in ironic)."""
    node = prepared.reading.node
    if toggle.placement_view:
        providers = toggle.placement_view(prepared.reading)
    elif toggle.authority.project_id:
        providers = [{'uuid': node['uuid'], 'name': node['uuid'],
                      'traits': node.get('traits') or [],
                      'resources': {}}] if node else []
    else:
        providers = toggle.clients.placement().providers_of(
            prepared.server['id'])
    problems = toggle_plan.scheduler_problems(
        providers, prepared.plan.target_specs, node,
        excused=servicing.unlocked_templates(prepared),
        needed=host_traits(prepared))
    if problems:
        fix = ('openstack baremetal node deploy-config sync' if node
               else 'openstack resource provider trait set on the host')
        raise toggle_states.Incapable(
            'Server %s cannot take %s on its host: %s. Nothing was '
            'changed; make the host capable and tag it (%s), or migrate '
            'the server first.' % (prepared.server['name'],
                                   outcomes.configs_text(toggle.configs),
                                   '; '.join(problems), fix))


def host_traits(prepared):
    """The traits the server's host must carry for the toggle: a node,
    each target config's own template's (``toggle_plan.node_traits``); a
    virtual server's host, the target flavor's."""
    if prepared.reading.node is None:
        return None
    return toggle_plan.node_traits(prepared.plan,
                                   prepared.reading.templates_by_config)


def let_go(claim, say):
    """Unlock the server (whether it is unlocked), but a takeover kept
    for the rerun past the deadline: its lock names this process, and a
    rerun takes it over."""
    if claim is None:
        return True
    if not (claim.kept and claim.took_over):
        return claim.let_go()
    claim.left_locked = True
    say('  server %s stays locked for the rerun that finishes the '
        'interrupted toggle' % claim.server['name'])
    return False


def hold(toggle, prepared):
    """Lock the server (a toggle that holds it), and refuse a deadline
    passed meanwhile: the Prepared to carry out.  A rollout's toggle
    prepared ahead waits for its place first (unlocked at once if none
    comes, its line then naming a lock left), and is prepared again on the
    reading that gave it, the lock checked still ours."""
    claim = prepared.claim
    if claim:
        claim.take()
    try:
        reading = toggle.waits.placed()
    except Exception as exc:    # noqa: BLE001 - said, raised again
        if claim and not let_go(claim, toggle.say):
            exc.args = ('%s; %s' % (exc, claim.left_locked_line()),)
        raise
    if reading is not None:
        if claim:
            reading.server = claims.still_held(claim, reading.server)
        prepared = toggle.prepare(reading, claim)
    if claim or reading is not None:
        if claim:
            claim.kept = toggle.waits.waiter.past_until()
        toggle.refuse_past_deadline(prepared)
    return prepared
