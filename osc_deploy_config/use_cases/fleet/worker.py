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

"""One server's toggle in a rollout, in a thread of its own, and the
``Result`` it always reports, whatever happens: the rollout's drive waits
for nothing else."""

import dataclasses
import queue
import time

from osc_deploy_config.domain.fleet import fleet_plan
from osc_deploy_config.domain.toggle import toggle_states
from osc_deploy_config.use_cases.fleet import ahead
from osc_deploy_config.use_cases.toggle import outcomes
from osc_deploy_config.use_cases.toggle import waits


@dataclasses.dataclass
class Result:
    """How one server's toggle ended: ``outcome`` (fleet_plan's DONE,
    UNCHANGED, FAILED, UNAVAILABLE or SKIPPED) and why, in one line."""

    server_id: str
    outcome: str
    why: str = ''
    seconds: float = 0.0

    @property
    def failed(self):
        return self.outcome == fleet_plan.FAILED


@dataclasses.dataclass
class Up:
    """A toggle's server is up again, read back and recorded (its unlock
    follows)."""

    server_id: str


class Reports(queue.Queue):
    """The Results the workers put, for the drive to take in order; each
    also kept by server ID (``reported``): one that a Ctrl-C took from
    the queue before the drive saw it still gives its row."""

    def __init__(self):
        super().__init__()
        self.reported = {}

    def put(self, item, *args, **kwargs):
        if isinstance(item, Result):
            self.reported[item.server_id] = item
        super().put(item, *args, **kwargs)


def work(toggle_one, one, fresh, done):
    """Run ``toggle_one(one, fresh)`` (a Result), and put one Result on
    ``done`` however it ends."""
    start = time.monotonic()
    result = Result(one.server['id'], fleet_plan.FAILED,
                    'its worker ended without a result')
    try:
        result = toggle_one(one, fresh)
    except toggle_states.Unavailable as exc:
        result = Result(one.server['id'], fleet_plan.UNAVAILABLE, exc.state)
    except (waits.PastDeadline, ahead.NotPlaced) as exc:
        result = Result(one.server['id'], fleet_plan.NOT_STARTED, str(exc))
    except toggle_states.Incapable as exc:
        result = Result(one.server['id'], fleet_plan.SKIPPED,
                        outcomes.one_line(exc))
    except BaseException as exc:    # noqa: BLE001 - any error: a failure
        result = Result(one.server['id'], fleet_plan.FAILED,
                        outcomes.one_line(exc))
    finally:
        result.seconds = time.monotonic() - start
        done.put(result)


def toggled(server_id, outcome):
    """The Result of a toggle that returned ``outcome``."""
    if outcome.result == outcomes.TOGGLED:
        return Result(server_id, fleet_plan.DONE)
    if outcome.result == outcomes.UNCHANGED:
        return Result(server_id, fleet_plan.UNCHANGED)
    return Result(server_id, fleet_plan.FAILED, outcome.result)

