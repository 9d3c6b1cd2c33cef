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

"""Until the scheduler sees what ``sync`` wrote.

``sync`` tags nodes in ironic; nova's ironic compute copies node traits to
the nodes' resource providers in placement on its periodic task (every 60 s
by default), and only then does the scheduler land on them.  We wait for
that copy rather than write placement ourselves: nova owns those providers
and sets their traits from ironic on every run of the task, so a write of
ours would race its generation-checked updates, and would be undone
wherever it disagreed with ironic.  Nodes that are not resource providers
(nova does not manage them) are not waited for.
"""

import time

from osc_lib import exceptions

from osc_deploy_config import tagging

POLL_SECONDS = 1


def pending(changes, carriers):
    """The changes placement does not show yet.  ``carriers``: {template
    trait: UUIDs of the providers that carry it}."""
    return [c for c in changes
            if (c.node_uuid in carriers[c.template])
            != (c.action == tagging.ADD)]


def describe(change):
    return '%s %s%s' % (change.node, '+' if change.action == tagging.ADD
                        else '-', change.template)


def wait_for_placement(api, changes, timeout, report, sleep=None):
    """Wait until placement shows every one of these trait changes (one
    request per template a poll); ``report`` gets lines of progress.
    CommandError, naming what is missing, after ``timeout`` seconds."""
    providers = api.providers()
    outside = sorted({c.node for c in changes
                      if c.node_uuid not in providers})
    if outside:
        report('Not waiting for %s: not resource providers in placement '
               '(not managed by nova)' % ', '.join(outside))
    changes = [c for c in changes if c.node_uuid in providers]
    if not changes:
        return
    report('Waiting for placement to show %d trait change(s) (nova copies '
           'node traits on its periodic task)...' % len(changes))
    start = time.monotonic()
    left = changes
    while True:
        left = pending(left, {t: api.providers(required=t) for t in
                              sorted({c.template for c in left})})
        waited = time.monotonic() - start
        if not left:
            report('Placement shows all %d trait change(s) after %.0f s'
                   % (len(changes), waited))
            return
        if waited > timeout:
            raise exceptions.CommandError(
                'Placement does not show %d of %d trait change(s) after '
                '%d s: %s. Ironic has them; nova\'s ironic compute copies '
                'them on its periodic task (is it running?). See openstack '
                'baremetal node deploy-config list, column Schedulable.'
                % (len(left), len(changes), timeout,
                   ', '.join(describe(c) for c in left)))
        (sleep or time.sleep)(POLL_SECONDS)
