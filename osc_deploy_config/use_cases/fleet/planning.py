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

"""A rollout's planning: every selected server through the one-server
toggle's own checks, over what ``reading`` read for all, changing nothing
and waiting for nothing (``toggle.ServerToggle.prepare``)."""

from osc_deploy_config.domain.configs import config_specs
from osc_deploy_config.domain.fleet import fleet_plan
from osc_deploy_config.domain.toggle import toggle_states
from osc_deploy_config.services import ironic as ironic_api
from osc_deploy_config.use_cases.toggle import outcomes
from osc_deploy_config.use_cases.toggle import toggle


class Voice:
    """A toggle's progress lines: silent while it is planned, said (with
    the server's name) once it runs."""

    def __init__(self, say, name):
        self.said, self.name, self.on = say, name, False

    def __call__(self, text):
        if self.on:
            self.said('%s: %s' % (self.name, text.strip()))


def templates(clients):
    """The config templates (ConfigTemplates), read once for the whole
    rollout (``refuse_missing`` refuses a config none realises)."""
    return clients.ironic().config_templates(
        fields=ironic_api.TEMPLATE_STEP_FIELDS)


def refuse_missing(found, configs):
    """Refuse a config no template (of ``found``) realises."""
    config_specs.refuse_missing_templates(
        [c for c in configs if not found.realises(c)], found)


def plan(rollout, fleet, configs):
    """[fleet_plan.Planned], one per server of ``fleet`` (a
    FleetReading)."""
    return [plan_one(rollout, fleet, s, configs) for s in fleet.servers]


def plan_one(rollout, fleet, server, configs):
    """One server's dry run of the toggle, and what it is: a server whose
    host cannot take the configs is skipped, one already there unchanged,
    one that is down unavailable, and any other error a failure."""
    one = toggle.ServerToggle(
        rollout.clients, configs, Voice(rollout.say, server['name']),
        auto_confirm=True, wait_seconds=rollout.wait_seconds,
        templates_by_config=fleet.templates_by_config,
        allowed_steps=rollout.allowed_steps,
        placement_view=fleet.providers, fresh_reading=False,
        wait_until=rollout.deadline, retry_failed=rollout.retry_failed,
        leaving=rollout.leaving)
    try:
        prepared = one.prepare(fleet.reading(server))
    except toggle_states.Unavailable as exc:
        return fleet_plan.Planned(server, verdict=fleet_plan.UNAVAILABLE,
                                  why=exc.state)
    except toggle_states.Incapable as exc:
        return fleet_plan.Planned(server, verdict=fleet_plan.SKIPPED,
                                  why=str(exc))
    except Exception as exc:    # noqa: BLE001 - any error: a failure
        why = outcomes.one_line(exc)
        rollout.failures.append('%s: %s' % (server['name'], why))
        return fleet_plan.Planned(server, verdict=fleet_plan.FAILED, why=why)
    if prepared.unchanged:
        return fleet_plan.Planned(
            server, prepared.outcome(outcomes.UNCHANGED), prepared)
    ours = bool(prepared.finishing) or bool(
        prepared.claim and prepared.claim.interrupted())
    return fleet_plan.Planned(
        server, prepared.outcome(outcomes.PLANNED,
                                 prepared.strategy.describe(prepared)),
        prepared, ours=ours)
