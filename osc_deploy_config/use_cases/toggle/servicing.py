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

"""A bare-metal server's toggle: nova cannot resize it, so ironic services
its node in place with the target templates' steps (API 1.87), and the node
must show their effect before it is recorded (``toggle_record``, on the
node).

Only steps known to be safe on a running server run (``step_safety``),
and those the operator allowed by name.  A failed servicing is aborted,
which returns the node to ``active`` where ironic allows it (32.0 and
later).  The record is written as pending before the servicing: a rerun
after an interruption anywhere waits for a servicing under way, and records
without servicing again a node that was serviced since, or already shows
every effect."""

import json

from openstack import exceptions as sdk_exceptions
from osc_lib import exceptions

from osc_deploy_config.domain.configs import config_specs
from osc_deploy_config.domain.configs import step_safety
from osc_deploy_config.domain.hardware import bmc_faults
from osc_deploy_config.domain.hardware import effects
from osc_deploy_config.domain.toggle import toggle_plan
from osc_deploy_config.domain.toggle import toggle_record
from osc_deploy_config.domain.toggle import toggle_states
from osc_deploy_config.services import versions
from osc_deploy_config.use_cases.toggle import bios_check
from osc_deploy_config.use_cases.toggle import outcomes
from osc_deploy_config.use_cases.toggle import recovery

# What the finishing of an interrupted toggle does.
SERVICING = 'servicing'


def unlocked_templates(prepared):
    """The template traits a node may lack for the scheduler check: those
    of the changed configs, where the toggle sets the vendor profile that
    keeps them off it first (sync tags it once it can take them)."""
    if not prepared.unlocking:
        return ()
    return {prepared.reading.templates_by_config[c]['name']
            for c in prepared.changed}


class Servicing:
    name = 'service'

    def __init__(self, toggle):
        self.toggle = toggle
        self.say = toggle.say
        self.waits = toggle.waits
        self.ironic = toggle.clients.ironic(versions.NODE_SERVICING)
        # a project's toggle: services through its runbooks, records in
        # the node's extra (``authority``)
        self.project = toggle.authority.project_id
        self.poll_fields = bios_check.poll_fields(self.project)

    def steps(self, prepared):
        """The profile steps that unlock the settings, if any, then the
        changed configs' templates' steps."""
        return list(prepared.unlocking) + [
            s for c in prepared.changed for s in toggle_plan.service_steps(
                prepared.reading.templates_by_config[c])]

    def describe(self, prepared):
        return 'service node %s with %s' % (outcomes.label(
            prepared.reading.node), step_safety.describe(self.steps(
                prepared)) or 'no step')

    def refuse_state(self, prepared):
        """An ACTIVE server on an active node out of maintenance, or one
        whose node runs (or failed) our own interrupted servicing."""
        server, node = prepared.server, prepared.reading.node
        toggle_states.refuse_server(server)
        ours = toggle_record.pending(node, server['id'],
                                     bool(self.project)) is not None
        toggle_states.refuse_node(server, node, ours_under_way=ours)
        if node['provision_state'] != 'active':
            prepared.finishing = SERVICING

    def recheck(self, prepared):
        """A config the node's record says the server runs, but whose
        effect the node does not show (a change at the BMC, a redeploy by
        another tool), is to be applied again: the hardware decides."""
        for config in self.toggle.configs:
            steps = step_safety.enabled(prepared.reading.templates_by_config[
                config]['steps'])
            if config in prepared.changed or not effects.readable(steps):
                continue
            if effects.missing(steps, *self.hardware(prepared)):
                prepared.changed.append(config)
                flavor = {c.type: c for c in config_specs.configs_of(
                    prepared.server['flavor'].get('extra_specs'))}
                prepared.plan.current.pop(config.type, None)
                if config.type in flavor:
                    prepared.plan.current[config.type] = flavor[config.type]

    def refuse(self, prepared):
        """An ironic without servicing is refused; a step that destroys
        data never runs on a running server, nor one not known to be safe
        there unless the operator allowed it."""
        self.ironic.require()
        steps = self.steps(prepared)
        wanted = outcomes.configs_text(prepared.changed)
        found = step_safety.destroying(steps)
        if found:
            raise exceptions.CommandError(
                'Server %s cannot take %s while it runs: %s would destroy '
                '%s. Nothing was changed; it applies at deploy only: boot a '
                'new server from a flavor that asks for it (openstack flavor '
                'deploy-config set FLAVOR %s) and move the workload there.'
                % (prepared.server['name'], wanted,
                   ', '.join(r.step for r in found),
                   '; '.join(dict.fromkeys(r.at_risk for r in found)),
                   ' '.join(str(c) for c in prepared.changed)))
        found = step_safety.unknown(steps, self.toggle.allowed_steps)
        if found:
            raise exceptions.CommandError(
                'Server %s cannot take %s while it runs: %s. Nothing was '
                'changed; if you know it is safe there, allow it: %s' % (
                    prepared.server['name'], wanted,
                    step_safety.why_not_known_safe(found), ' '.join(
                        '--allow-step %s' % r for r in dict.fromkeys(
                            r.step for r in found))))
        if self.toggle.fresh_reading:   # a rollout's: at ``carry_out``
            bios_check.refuse(self, prepared)

    def carry_out(self, prepared):
        node, server, changed = (prepared.reading.node, prepared.server,
                                 prepared.changed)
        under_way = toggle_record.pending(node, server['id'],
                                          bool(self.project))
        ours = under_way is not None and (
            set(under_way.configs.values()) == set(changed))
        steps = self.steps(prepared) if ours else bios_check.checked_steps(
            self, prepared)
        history = refuse_failed_before(self, prepared, under_way, ours,
                                       steps)
        serviced = False
        if prepared.finishing == SERVICING:
            self.say('  finishing the servicing of an interrupted toggle')
            state = self.waits.servicing(
                node, requested=False, fields=self.poll_fields)
            self.check_serviced(prepared, steps, state)
            serviced = ours and ran(self.ironic, dict(node, **state),
                                    under_way, steps)
        elif ours:
            serviced = ran(self.ironic, node, under_way, steps, history)
        if serviced or (self.toggle.fresh_reading
                        and self.shows(prepared, steps)):
            self.say('  node %s already shows %s: recording it' % (
                outcomes.label(node), outcomes.configs_text(changed)))
        else:
            self.request_service(prepared, steps)
            self.check_serviced(prepared, steps, self.waits.servicing(
                node, fields=self.poll_fields, pace=json.dumps(
                    [node.get('resource_class'), steps], sort_keys=True)))
        verify(self, prepared, steps)
        self.ironic.patch_node(node['uuid'], toggle_record.complete_patch(
            node, server['id'], changed, self.project))
        # up again, showing the change, recorded: a rollout's next starts
        self.waits.up()
        self.say('Server %s: node %s serviced, now %s.' % (
            server['name'], outcomes.label(node),
            outcomes.configs_text(changed)))
        return prepared.outcome(outcomes.TOGGLED)

    def request_service(self, prepared, steps):
        """Record the servicing pending, and ask ironic to service the
        node: with the steps, or (a project) through the runbook of each
        config, one after the other, but those the node shows already
        (``unserviced``, read before any write).  A request ironic refuses
        (400 or 409: the node taken by someone else meanwhile) drops the
        pending record.  Any other error (a proxy's 502, no answer) leaves
        it: the servicing may have begun, and a rerun reads ironic's own
        record of it."""
        node, server = prepared.reading.node, prepared.server
        configs = unserviced(self, prepared) if self.project else ()
        written = self.ironic.patch_node(node['uuid'], (
            toggle_record.pending_patch(node, server['id'],
                                        prepared.changed, self.project)))
        node.update(properties=written['properties'], extra=written['extra'])
        try:
            if not self.project:
                self.ironic.service(node['uuid'], steps)
                return
            for number, config in enumerate(configs):
                if number:
                    self.check_serviced(prepared, steps,
                                        self.waits.servicing(
                                            node, fields=self.poll_fields))
                self.ironic.service_with_runbook(node['uuid'], (
                    prepared.reading.templates_by_config[config]['runbook']))
        except sdk_exceptions.HttpException as exc:
            if exc.status_code in (400, 409):
                self.ironic.patch_node(node['uuid'], (
                    toggle_record.drop_pending(node, bool(self.project))))
            raise

    def check_serviced(self, prepared, steps, state):
        """A servicing that did not end in active: recovered, and the one
        line."""
        why = toggle_states.servicing_failure(state)
        if why is None:
            return
        cause = bmc_faults.explain(state.get('last_error'))
        if cause:
            why = '%s; %s' % (cause, bmc_faults.running_node_remedy(
                bool(self.project)))
        if state['provision_state'] != 'service failed':
            raise exceptions.CommandError('Servicing node %s did not end: %s'
                                          % (outcomes.label(state), why))
        raise exceptions.CommandError(recovery.Recovery(self).recover(
            prepared, steps, why))

    def hardware(self, prepared, detail=False):
        """({name: value} of the node's BIOS settings, its raid_config), as
        ironic has them: read once a toggle, with the registry (ironic
        1.74: then also the detailed settings, third) where it keeps
        one."""
        if prepared.bios is None:
            prepared.bios = bios_check.read(
                self.ironic, prepared.reading.node['uuid'])
        found = (effects.values(prepared.bios),
                 prepared.reading.node.get('raid_config'))
        return found + (prepared.bios,) if detail else found

    def shows(self, prepared, steps):
        """Whether the node shows every effect of the steps, all of which
        ironic reports (an interrupted toggle's servicing finished)."""
        return effects.readable(steps) and not effects.missing(
            steps, *self.hardware(prepared))

    def read_again(self, prepared):
        """The node's BIOS settings and raid_config after a servicing."""
        node = prepared.reading.node
        prepared.bios = bios_check.read(self.ironic, node['uuid'])
        if effects.raid_levels(self.steps(prepared)) is not None:
            node['raid_config'] = self.ironic.node(
                node['uuid'], ['raid_config'])['raid_config']
        return effects.values(prepared.bios), node.get('raid_config')

def verify(servicing, prepared, steps):
    """The node must show what the steps set (``servicing``: the
    Servicing that ran them): ironic reports success for a step the
    hardware ignored.  A servicing that did not take
    is over: its pending record goes, and a rerun services anew."""
    missing = effects.missing(steps, *servicing.read_again(prepared))
    if missing:
        node = prepared.reading.node
        servicing.ironic.patch_node(node['uuid'], toggle_record.drop_pending(
            node, bool(servicing.project)))
        raise exceptions.CommandError(
            'Servicing node %s finished, but the hardware does not show '
            '%s: %s. Nothing was recorded; rerun to retry once the node '
            'takes the settings.' % (
                outcomes.label(prepared.reading.node),
                outcomes.configs_text(prepared.changed),
                '; '.join(missing)))


def refuse_failed_before(servicing, prepared, under_way, ours, steps):
    """Hold and refuse (``recovery.refuse_failed``) a node whose servicing
    by a toggle of ours failed before, unless the operator said
    --retry-failed; what ironic's history says of our servicing (read
    once: ``ran`` reads it too), where it was read."""
    node = prepared.reading.node
    history = _UNREAD
    if ours and prepared.finishing != SERVICING:
        history = history_outcome(servicing.ironic, node, under_way, steps)
    if under_way is not None and not servicing.toggle.retry_failed:
        recovery.refuse_failed(servicing, prepared, under_way, (
            history == toggle_record.SERVICE_FAILED))
    return history


def history_outcome(ironic, node, under_way, steps):
    """How the servicing a pending record announced ended, from the
    node's history (``toggle_record.servicing_outcome``), or None where it
    cannot be read or does not tell."""
    try:
        return toggle_record.servicing_outcome(
            ironic.node_history(node['uuid']), under_way.since, steps)
    except (exceptions.CommandError, sdk_exceptions.HttpException):
        return None


_UNREAD = object()


def unserviced(servicing, prepared):
    """The changed configs whose runbooks a project's toggle runs: all
    but those whose effects the node shows already, read anew (a toggle
    that ironic refused a later runbook of ran them: not serviced
    twice)."""
    if len(prepared.changed) < 2:
        return list(prepared.changed)
    shown = servicing.read_again(prepared)
    found = []
    for config in prepared.changed:
        steps = toggle_plan.service_steps(
            prepared.reading.templates_by_config[config])
        if effects.readable(steps) and not effects.missing(steps, *shown):
            servicing.say('  node %s already shows %s: its runbook is not '
                          'run again' % (outcomes.label(
                              prepared.reading.node), config))
        else:
            found.append(config)
    return found


def ran(ironic, node, under_way, steps, outcome=_UNREAD):
    """Whether the servicing a pending record announced ran to its end,
    from ironic's own record of it (``outcome``, when read already): the
    node's history, or where it cannot be read (an ironic before 1.78, a
    project's token, history turned off), the node active with no error
    since, and only for steps whose effect is then read back
    (``verify``)."""
    if outcome is _UNREAD:
        outcome = history_outcome(ironic, node, under_way, steps)
    if outcome is not None:
        return outcome == toggle_record.SERVICED
    return (toggle_record.serviced_since(node, under_way)
            and node['provision_state'] == 'active'
            and not node.get('last_error') and effects.readable(steps))
