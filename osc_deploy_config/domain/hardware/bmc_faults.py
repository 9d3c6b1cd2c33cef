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

"""What a BMC's refusal that ironic records in a node's ``last_error``
means, and what ends it: plain functions over ironic's text.

An iDRAC makes a BIOS change asked ``OnReset`` a configuration job, run
at the next reset, and refuses another change while one is scheduled
(message ``SYS011``): one interrupted step, or a change at the iDRAC,
blocks every later BIOS step on the node until its jobs are deleted.
Ironic's ``idrac-redfish`` management interface deletes them with its
``clear_job_queue`` step, a clean step only (not a service step, in
ironic 39): a free node's ``prepare --clear-job-queue`` runs it first.
On a node that runs a server they go at the iDRAC, before any reset:
the next reset runs them.
"""

# The iDRAC's message: a configuration job is already scheduled.
JOB_SCHEDULED = 'SYS011'
# The management interface whose clean step deletes an iDRAC's jobs.
CLEARS_JOBS = 'idrac-redfish'
# That step, as a manual clean step.
CLEAR_JOB_QUEUE = {'interface': 'management', 'step': 'clear_job_queue',
                   'args': {}}
# What deletes them at the iDRAC itself.
DELETE_AT_THE_IDRAC = 'racadm jobqueue delete -i JID_CLEARALL'
# ... and the job that runs, which JID_CLEARALL keeps.
FORCE_DELETE_AT_THE_IDRAC = 'racadm jobqueue delete -i JID_CLEARALL_FORCE'


def job_scheduled(error):
    """Whether ironic's error is the iDRAC's refusal for a scheduled
    job."""
    return bool(error) and JOB_SCHEDULED in error


def explain(error):
    """The clause saying what ironic's error means where it is an iDRAC's
    refusal for a scheduled job; None for any other error."""
    if not job_scheduled(error):
        return None
    return ('the iDRAC refuses a BIOS change while a configuration job is '
            'scheduled (%s): an interrupted step, or a change at the iDRAC, '
            'left one' % JOB_SCHEDULED)


def free_node_remedy(node, cleared=False):
    """What ends the refusal on a node prepare takes (its rerun;
    ``cleared``: a run that cleared the queue first, whose step the iDRAC
    still refused: a running job, which clear_job_queue keeps)."""
    if cleared:
        return ('delete the job that runs at the iDRAC (%s), then rerun'
                % FORCE_DELETE_AT_THE_IDRAC)
    if cannot_clear(node) is None:
        return ('rerun with --clear-job-queue, whose clear_job_queue step '
                'deletes the jobs first')
    return 'delete its jobs at the iDRAC (%s), then rerun, or %s' % (
        DELETE_AT_THE_IDRAC, _to_idrac_management(node))


def _to_idrac_management(node):
    """How a node gets the management interface whose step clears the
    queue: ironic's idrac hardware type has it, the redfish type not."""
    return ('move it to the idrac hardware type with %s management '
            '(openstack baremetal node set %s --driver idrac '
            '--management-interface %s) and rerun with --clear-job-queue'
            % (CLEARS_JOBS, node.get('name') or node['uuid'], CLEARS_JOBS))


def running_node_remedy(project=False):
    """What ends the refusal on a node that runs a server: ironic's step
    is a clean step, and any reset (a freed node's cleaning included)
    runs the jobs, so they go at the iDRAC first (``project``: the
    operator's task)."""
    who = "ask the cloud's operator to delete" if project else 'delete'
    return ('%s its jobs at the iDRAC (%s) before the node next resets, '
            'which runs them (freeing the node resets it, as a power on '
            'does where ironic powered it off for the failure), then rerun'
            % (who, DELETE_AT_THE_IDRAC))


def cannot_clear(node):
    """Why ``--clear-job-queue`` cannot run on the node, or None."""
    interface = node.get('management_interface')
    if interface == CLEARS_JOBS:
        return None
    return ('--clear-job-queue runs ironic\'s clear_job_queue step of the '
            '%s management interface; %s has %s: delete its jobs at the '
            'iDRAC (%s), or %s' % (
                CLEARS_JOBS, node.get('name') or node['uuid'],
                interface or 'another', DELETE_AT_THE_IDRAC,
                _to_idrac_management(node)))
