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

"""How a rollout ends (``carry_out``): its workers told to stop and
waited for a while when it leaves (``leave``), and what it did read back
from the cloud (``read_back``), each a server's row whatever happens;
Ctrl-C is ``signals``'."""

from osc_deploy_config.domain.fleet import fleet_plan
from osc_deploy_config.domain.servers import server_configs
from osc_deploy_config.domain.toggle import toggle_record
from osc_deploy_config.services import rest
from osc_deploy_config.use_cases.fleet import drive as drives
from osc_deploy_config.use_cases.fleet import signals
from osc_deploy_config.use_cases.toggle import outcomes
from osc_deploy_config.use_cases.toggle import recovery


def grace_ran_out():
    """Why a rollout's read past its bounds is not sent."""
    return ('--wait-timeout and the %d s of grace after it ran out'
            % drives.GRACE_SECONDS)


def carry_out(rollout, drive, planned):
    """The drive, then its leaving (``leave``, whatever happens) and its
    read-back (``read_back``); a Ctrl-C that leaves anywhere in them
    leaves at once, nothing more read back."""
    try:
        try:
            rollout.clear_left_locks(planned)
            drive.go()
        except KeyboardInterrupt:
            rollout.left_at_once = True
            drive.why_not = drive.why_not or drives.stopped_by(drive)
        except Exception as exc:    # noqa: BLE001 - the rows first
            rollout.failures.append('the rollout: %s'
                                    % outcomes.one_line(exc))
            drive.why_not = 'the rollout stopped: %s' % (
                outcomes.one_line(exc))
        finally:
            leave(rollout, drive)
        if rollout.left_at_once:
            not_read_back(rollout, 'interrupted')
        else:
            read_back(rollout, drive)
    except KeyboardInterrupt:
        rollout.left_at_once = True
        with signals.shielded(rollout, final=True):
            not_read_back(rollout, 'interrupted')


def leave(rollout, drive):
    """Tell the toggles still in flight to stop, wait for them a while
    (``drive.JOIN_SECONDS``), take in what they reported, and say how to
    hold a node one of them left in the middle of a recovery; a Ctrl-C
    meanwhile stops the wait."""
    try:
        drive.gates.close(drive.why_not)
        if drive.running:
            rollout.leaving.set()
            rollout.say('Leaving: %d toggle(s) in flight are told to stop, '
                        'and waited for up to %d s%s.' % (
                            len(drive.running), drives.JOIN_SECONDS,
                            ' (Ctrl-C again to leave now)'
                            if rollout.interrupted else ''))
        # those prepared ahead, told not to start, unlock too
        drives.join(drive, drives.JOIN_SECONDS)
    except KeyboardInterrupt:
        rollout.left_at_once = True
    finally:
        with signals.shielded(rollout, final=True):
            rollout.leaving.set()
            drives.drain(drive)
            for line in recovery.UNHELD.lines():
                rollout.failures.append(line)
                rollout.say(line)
        rollout.left_at_once = rollout.left_at_once or rollout.deferred


def read_back(rollout, drive):
    """A toggle is done once the cloud, read now (within the grace
    after the deadline), shows its server up and on its target: nova's
    ACTIVE with no task, ironic's node active, the configs in its
    flavor or its node's record.  A read that fails or is cut short
    leaves its servers "not read back"."""
    done = done_results(rollout)
    if not done:
        return
    try:
        with rest.bounded(rollout.end, grace_ran_out()):
            seen = drive.budget.read()
    except Exception as exc:    # noqa: BLE001 - then not read back
        not_read_back(rollout, outcomes.one_line(exc))
        return
    for result in done:
        server, node = seen.get(result.server_id, (None, None))
        down = fleet_plan.unavailable(server, node) if server else None
        if server is None:
            why = 'toggled, but the server is gone'
        elif down:
            why = 'toggled, but the server is %s now' % down.why
        else:
            why = off_target(rollout, server, node)
        if why:
            result.outcome, result.why = fleet_plan.FAILED, why


def done_results(rollout):
    return [r for r in rollout.results.values()
            if r.outcome == fleet_plan.DONE]


def not_read_back(rollout, why):
    """The toggles done, but not read back (``why``)."""
    for result in done_results(rollout):
        result.outcome, result.why = fleet_plan.NOT_READ_BACK, why


def off_target(rollout, server, node):
    """Why a server read back does not run the rollout's configs (its
    flavor's, or its node's record's), or ''."""
    applied = toggle_record.applied(
        node, server['id'], rollout.fleet.granted.get(server['id'])) \
        if node else None
    wanted = server_configs.wanted(server, None, applied)
    off = [(c, wanted.get(c.type, (None, None))[0]) for c in rollout.configs
           if wanted.get(c.type, (None, None))[0] != c]
    if not off:
        return ''
    return 'toggled, but the server does not run %s now (%s shows %s)' % (
        outcomes.configs_text(c for c, _ in off),
        'its node\'s record' if node else 'its flavor',
        outcomes.configs_text(n for _, n in off if n) or 'none')
