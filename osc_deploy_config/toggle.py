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

"""Carrying out a deploy-config toggle of a running server.

The plan is ``resize``'s; this is its execution over the service wrappers
(``nova``, ``ironic``, ``placement``): the scheduler check against
placement first, then a nova resize to the planned flavor (a virtual
server) or ironic servicing of the node with the target templates' steps
(bare metal, which nova cannot resize).  Every step can be rerun: a toggle
interrupted anywhere completes when run again.
"""

import time

from openstack import exceptions as sdk_exceptions
from osc_lib import exceptions

from osc_deploy_config import effects
from osc_deploy_config import glance
from osc_deploy_config import ironic
from osc_deploy_config import nova
from osc_deploy_config import placement
from osc_deploy_config import resize
from osc_deploy_config import versions

POLL_SECONDS = 1
WAIT_SECONDS = 1800
# how long a concurrent toggle's confirmation may take to show
CONFIRM_RACE_SECONDS = 60
NODE_FIELDS = ('uuid', 'name', 'provision_state', 'target_provision_state',
               'maintenance', 'last_error', 'traits')


class Toggle:
    """One deploy-config toggle: plan, check, then resize or service.

    ``clients``: the plugin's per-service proxies (``clients.Clients``);
    ``configs``: the deploy configs (``Config``) to toggle; ``say``: where
    the lines for the user go, one per call.
    """

    def __init__(self, clients, server, configs, say, dry_run=False,
                 wait=False, auto_confirm=False, sleep=time.sleep):
        self.clients = clients
        self.server_ref = server
        self.configs = list(configs)
        self.say = say
        self.dry_run = dry_run
        self.wait = wait or auto_confirm
        self.auto_confirm = auto_confirm
        self.sleep = sleep
        self._last_progress = None

    def progress(self, text):
        """Say how a wait goes, once per change."""
        if text != self._last_progress:
            self._last_progress = text
            self.say('  ' + text)

    def run(self):
        servers = nova.NovaServers(self.clients.compute)
        server = servers.find_server(self.server_ref)
        image_id = (server.get('image') or {}).get('id')
        resize.refuse_image_configs(
            server, glance.Glance(self.clients.image).image_properties(
                image_id) if image_id else {}, self.configs)
        baremetal = ironic.Ironic(self.clients.baremetal,
                                  versions.DEPLOY_TEMPLATES,
                                  versions.NODE_TRAITS)
        with self.clients.ironic_errors('list deploy templates and nodes'):
            node = baremetal.node_of_instance(server['id'], NODE_FIELDS)
            if node is None and servers.runs_on_ironic(server):
                raise exceptions.CommandError(self.hidden_node(server))
            by_config = baremetal.config_templates(
                fields=['uuid', 'name', 'steps'])
        listed = servers.flavors()
        plan = resize.plan(server, self.configs, by_config, listed)
        wanted = ', '.join(str(c) for c in self.configs)
        if node is None and self.pending_resize(servers, server, plan):
            return
        if not plan.changed:
            self.say('Server %s already runs with %s: nothing to do.'
                     % (server['name'], wanted))
            return
        if plan.target_flavor is None and node is None and not (
                resize.unfinished_flavor(plan, listed,
                                         resize.sizes_of(server['flavor']))):
            resize.refuse_taken_name(plan, listed)
        problems = resize.scheduler_problems(
            placement.Placement(self.clients.placement).providers_of(
                server['id']), plan.target_specs, node)
        if problems:
            fix = ('openstack baremetal node deploy-config sync' if node else
                   'openstack resource provider trait set on the host')
            raise exceptions.CommandError(
                'Server %s cannot take %s on its host: %s. Nothing was '
                'changed; make the host capable and tag it (%s), or migrate '
                'the server first.' % (server['name'], wanted,
                                       '; '.join(problems), fix))
        changed = [c for c in self.configs if plan.current.get(c.type) != c]
        if node:
            steps = [s for c in changed
                     for s in resize.service_steps(by_config[c])]
            self.plan_lines(server, plan, 'service node %s with %s' % (
                node['name'] or node['uuid'],
                ', '.join('%s.%s' % (s['interface'], s['step'])
                          for s in steps)))
            if not self.dry_run:
                self.service(servers, server, node, changed, steps)
        else:
            self.plan_lines(server, plan, 'resize to flavor %s%s' % (
                (plan.target_flavor or {}).get('name') or plan.new_flavor_name,
                '' if plan.target_flavor else ' (to be created)'))
            if not self.dry_run:
                self.resize(servers, server, plan, listed)

    def hidden_node(self, server):
        """Why a bare-metal server's node is not found, in one line."""
        if self.clients.baremetal_scope == 'project':
            return (
                'Server %s is a bare-metal server, but ironic does not show '
                'its node to these credentials: its default policy shows '
                'nodes to a system-scoped token only, and these credentials '
                'have no role on the system. Use a cloud entry with '
                '"system_scope: all", or ask for a system role (openstack '
                'role add --system all --user USER admin). Nothing was '
                'changed.' % server['name'])
        return ('Server %s is a bare-metal server, but ironic shows no node '
                'with its instance: nothing was changed.' % server['name'])

    def plan_lines(self, server, plan, action):
        current = ', '.join(str(c) for c in plan.current.values()) or 'none'
        self.say('%sServer %s: deploy configs %s -> %s: %s.' % (
            'Dry run, nothing changed. ' if self.dry_run else '',
            server['name'], current,
            ', '.join(str(c) for c in plan.target.values()),
            ('would ' if self.dry_run else '') + action))

    # ------------------------------------------------------------ virtual

    def pending_resize(self, servers, server, plan):
        """Whether an earlier resize of the server is still under way or
        awaits confirmation (an interrupted toggle, a concurrent one):
        finish ours, refuse another's.  True when that settles it."""
        task = server.get('OS-EXT-STS:task_state')
        if task:
            raise exceptions.CommandError(
                'Server %s is busy (%s): another change is under way; rerun '
                'when it ends. Nothing was changed.' % (server['name'], task))
        if server['status'] != 'VERIFY_RESIZE':
            return False
        if plan.changed:
            raise exceptions.CommandError(
                'Server %s has a resize awaiting confirmation: confirm or '
                'revert it first (openstack server resize confirm|revert '
                '%s). Nothing was changed.' % (server['name'], server['id']))
        if self.auto_confirm and not self.dry_run:
            status = self.confirm(servers, server)
            self.say('Server %s is %s on flavor %s.' % (
                server['name'], status, server['flavor']['original_name']))
        else:
            self.say('Server %s runs with %s; its resize awaits '
                     'confirmation: openstack server resize confirm %s'
                     % (server['name'], ', '.join(
                         str(c) for c in self.configs), server['id']))
        return True

    def target_flavor(self, servers, server, plan, listed):
        """The flavor to resize to: an identical one, ours left half-made
        by an interrupted or concurrent toggle (finished), or a new one."""
        if plan.target_flavor:
            return plan.target_flavor
        sizes = resize.sizes_of(server['flavor'])
        flavor = resize.unfinished_flavor(plan, listed, sizes)
        if flavor is None:
            try:
                flavor = servers.create_flavor(
                    plan.new_flavor_name, sizes, resize.derived_description(
                        server['flavor']['original_name']))
            except sdk_exceptions.ConflictException:
                # a concurrent toggle made it first
                flavor = resize.unfinished_flavor(plan, servers.flavors(),
                                                  sizes)
                if flavor is None:
                    raise exceptions.CommandError(
                        'Flavor %s was created concurrently and differs from '
                        'the target: rerun' % plan.new_flavor_name) from None
        return servers.finish_flavor(flavor, plan.target_specs)

    def resize(self, servers, server, plan, listed):
        flavor = self.target_flavor(servers, server, plan, listed)
        try:
            request_id = servers.resize(server['id'], flavor['id'])
        except sdk_exceptions.HttpException as exc:
            # a concurrent change: 409, or 500 for nova's own race
            # (UnexpectedTaskStateError)
            if exc.status_code != 409 and (exc.status_code or 0) < 500:
                raise
            raise exceptions.CommandError(
                'Nova refused to resize server %s: %s (another change under '
                'way?); rerun when it ends' % (server['name'], ' '.join(
                    str(exc.details or exc).split()))) from None
        if not self.wait:
            self.say('Resize to %s requested (%s); confirm it with '
                     'openstack server resize confirm %s'
                     % (flavor['name'], request_id, server['id']))
            return
        status = self.wait_server(servers, server['id'])
        if status != 'VERIFY_RESIZE':
            raise exceptions.CommandError(
                'Resize of server %s failed: %s' % (
                    server['name'],
                    self.resize_error(servers, server['id'], request_id)))
        if self.auto_confirm:
            status = self.confirm(servers, server)
        self.say('Server %s is %s on flavor %s.'
                 % (server['name'], status, flavor['name']))

    def confirm(self, servers, server):
        """Confirm the resize; one a concurrent toggle confirms first is
        as good (nova then answers 400 "has not been resized" or 409,
        while the server may still show VERIFY_RESIZE)."""
        try:
            servers.confirm_resize(server['id'])
        except (sdk_exceptions.BadRequestException,
                sdk_exceptions.ConflictException):
            # the other confirm may still be under way: give it a moment
            deadline = time.monotonic() + CONFIRM_RACE_SECONDS
            while servers.find_server(server['id'])[
                    'status'] == 'VERIFY_RESIZE':
                if time.monotonic() > deadline:
                    raise
                self.sleep(POLL_SECONDS)
        return self.wait_server(servers, server['id'],
                                leaving='VERIFY_RESIZE')

    def wait_server(self, servers, server_id, leaving=None):
        """Until no task runs on the server (and it has left the status
        ``leaving``, for the actions nova answers before they start)."""
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            server = servers.find_server(server_id)
            task = server.get('OS-EXT-STS:task_state')
            if not task and server['status'] != leaving:
                return server['status']
            self.progress('%s (%s)' % (server['status'], task or 'confirming'))
            if time.monotonic() > deadline:
                raise exceptions.CommandError(
                    'Server %s still %s after %ds'
                    % (server_id, task, WAIT_SECONDS))
            self.sleep(POLL_SECONDS)

    def resize_error(self, servers, server_id, request_id):
        """Why nova gave up: the failed event of our resize action (nova
        answers 202, then puts the server back with no fault)."""
        action = servers.instance_action(server_id, request_id)
        for event in action.get('events') or ():
            if event.get('result') == 'Error':
                return '%s: %s' % (event['event'], event.get('details')
                                   or 'error (nova 2.84 tells more)')
        return action.get('message') or 'the server is back on its flavor'

    # ------------------------------------------------------------ bare metal

    def service(self, servers, server, node, changed, steps):
        node_api = ironic.Ironic(self.clients.baremetal,
                                 versions.NODE_SERVICING)
        with self.clients.ironic_errors('service nodes'):
            state = node_api.node(node['uuid'], NODE_FIELDS)
            if state['provision_state'] not in ('active', 'service failed'):
                self.wait_node(node_api, node)
            node_api.service(node['uuid'], steps)
            self.wait_node(node_api, node)
            self.verify(node_api, node, changed, steps)
            node_api.set_node_extra(node['uuid'], {
                'deploy_config_%s' % c.type.replace('.', '_'): c.value
                for c in changed})
        servers.set_metadata(server['id'], resize.record(changed))
        self.say('Server %s: node %s serviced, now %s.' % (
            server['name'], node['name'] or node['uuid'],
            ', '.join(str(c) for c in changed)))

    def verify(self, node_api, node, changed, steps):
        """The node must show what the steps set: ironic reports success
        for a step the hardware ignored."""
        raid_config = None
        if effects.raid_levels(steps) is not None:
            raid_config = node_api.node(node['uuid'],
                                        ['raid_config'])['raid_config']
        missing = effects.missing(steps, node_api.bios_settings(
            node['uuid']), raid_config)
        if missing:
            raise exceptions.CommandError(
                'Servicing node %s finished, but the hardware does not show '
                '%s: %s. Nothing was recorded; rerun to retry once the node '
                'takes the settings.' % (
                    node['name'] or node['uuid'],
                    ', '.join(str(c) for c in changed), '; '.join(missing)))

    def wait_node(self, node_api, node):
        """Until servicing ends: active, or an error with ironic's reason."""
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            state = node_api.node(node['uuid'], NODE_FIELDS)
            if state['provision_state'] == 'active' and not state[
                    'target_provision_state']:
                return
            if state['provision_state'] == 'service failed':
                raise exceptions.CommandError(
                    'Servicing node %s failed: %s. Rerun to retry.'
                    % (node['name'] or node['uuid'], state['last_error']))
            self.progress('node %s %s' % (node['name'] or node['uuid'],
                                          state['provision_state']))
            if time.monotonic() > deadline:
                raise exceptions.CommandError(
                    'Node %s still %s after %ds' % (
                        node['uuid'], state['provision_state'], WAIT_SECONDS))
            self.sleep(POLL_SECONDS)
