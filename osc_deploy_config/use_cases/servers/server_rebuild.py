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

"""``server rebuild`` of a bare-metal server that works, and keeps its
configs (``rebuild_plan`` decides).

Before OSC sends the rebuild: for a server on ironic, the compute
microversion OSC would send is brought down to what nova's ironic driver
can rebuild at (2.92), or the rebuild is refused when the user asked for
what only a later one offers.  After it: the configs a toggle had applied
(a rebuild redeploys with the flavor's) are applied again by the one-server
toggle, verified; or, when asked, the server goes back to its flavor's and
the toggle's record is dropped.  A virtual server is left to OSC: one read
of it, nothing changed.
"""

import logging

from openstack.compute.v2 import server as sdk_server
from osc_lib import exceptions

from osc_deploy_config.domain.configs import config_specs
from osc_deploy_config.domain.servers import rebuild_plan
from osc_deploy_config.domain.toggle import toggle_record
from osc_deploy_config.services import versions
from osc_deploy_config.use_cases.toggle import authority
from osc_deploy_config.use_cases.toggle import toggle
from osc_deploy_config.use_cases.toggle import waits

LOG = logging.getLogger(__name__)


class Rebuild:
    """The plugin's part of one ``server rebuild``.

    ``clients``: ``services.clients.Clients``; ``compute``: OSC's compute
    proxy, which sends the rebuild; ``say``: lines for the user.
    """

    def __init__(self, clients, compute, say):
        self.clients = clients
        self.compute = compute
        self.say = say
        self.nova = clients.nova(versions.SERVER_FLAVOR_DETAILS)
        self.server = None
        self.node = None
        self.reverting = []

    def read(self, server_ref):
        """Read the server (kept); whether it runs on ironic."""
        # as OSC's own rebuild finds it: among the project's servers
        self.server = self.nova.find_server(server_ref)
        if not self.on_ironic(self.server):
            LOG.debug('deploy-config rebuild: read server %s (on ironic?): '
                      'not on ironic, the rebuild is OSC\'s own; the server '
                      'handed to OSC', self.server['id'])
            return False
        return True

    def before(self, reimage=False):
        """For a server on ironic: pin the microversion (or refuse), and
        note the configs the rebuild will revert."""
        server = self.server
        negotiated = self.pin(reimage)
        LOG.debug('deploy-config rebuild: read server %s and its '
                  'hypervisor: on ironic, rebuild sent at compute API %s '
                  '(OSC: %s; nova\'s ironic driver refuses every rebuild '
                  'from 2.93); the server handed to OSC', server['id'],
                  self.compute.default_microversion or 'negotiated',
                  rebuild_plan.version_text(negotiated))
        self.reverting = rebuild_plan.reapplied(server, self.toggled())

    def toggled(self):
        """What the node's records say a toggle applied to the server: the
        operator's, and a project's for what it was granted; nothing when
        the node cannot be read."""
        ironic = self.clients.ironic(versions.NODE_TRAITS)
        try:
            self.node = ironic.node_of_instance(self.server['id'], (
                'uuid', 'properties', 'extra', 'resource_class'))
        except Exception as exc:    # noqa: BLE001 - nothing to apply then
            LOG.debug('deploy-config rebuild: the node of server %s cannot '
                      'be read (%s): no toggle to apply again',
                      self.server['id'], exc)
            return {}
        return toggle_record.applied(self.node, self.server['id'],
                                     self.granted(ironic))

    def granted(self, ironic):
        """The configs a project's record on the node counts for (read
        only when there is one)."""
        if not toggle_record.project_recorded(self.node, self.server['id']):
            return set()
        found = authority.decide(self.clients, ironic)
        known = authority.catalog(found, ironic).for_hardware(self.node)
        return found.granted(ironic, self.server, self.node, known)

    def pin(self, reimage):
        """Bring OSC's compute microversion down to what nova's ironic
        driver rebuilds at, or refuse; the version OSC would have sent."""
        explicit = self.compute.default_microversion
        nova_max = self.nova.maximum()
        negotiated = versions.parse(explicit) if explicit else min(
            versions.parse(sdk_server.Server._max_microversion),
            nova_max or (2, 1))
        pinned = rebuild_plan.pinned_version(
            self.server['name'], negotiated, nova_max, explicit, reimage)
        if pinned:
            self.compute.default_microversion = rebuild_plan.version_text(
                pinned)
        return negotiated

    def on_ironic(self, server):
        """From nova's own data: the hypervisor (an admin's view), else
        the flavor (a member's)."""
        if 'OS-EXT-SRV-ATTR:hypervisor_hostname' in server:
            return (rebuild_plan.hypervisor_may_be_ironic(server)
                    and bool(self.nova.runs_on_ironic(server)))
        return rebuild_plan.on_ironic_by_flavor(server['flavor'])

    def after(self, from_flavor=False, waited=False):
        """Once OSC asked for the rebuild: the configs it reverted applied
        again, or (``from_flavor``) the toggle's record dropped."""
        if not self.reverting:
            return
        if from_flavor:
            self.forget_toggles()
            return
        if not waited:
            self.say('Waiting for the rebuild of server %s to end, to apply '
                     '%s again...' % (self.server['name'], self.wanted()))
        rebuilt = waits.Waits(waits.Waiter(self.say), self.nova).rebuild(
            self.server)
        restore = 'openstack server resize %s %s' % (' '.join(
            '--deploy-config %s' % c for c in self.reverting),
            self.server['id'])
        if rebuilt['status'] == 'SHUTOFF':
            raise exceptions.CommandError(
                'Server %s was rebuilt and is SHUTOFF, as it was: it runs its '
                'flavor\'s deploy configs, and %s cannot be applied again to '
                'a stopped server (a toggle needs it ACTIVE). Once it runs '
                '(openstack server start %s): %s' % (
                    self.server['name'], self.wanted(), self.server['id'],
                    restore))
        try:
            toggle.ServerToggle(
                self.clients, self.reverting, self.say).run(self.server['id'])
        except exceptions.CommandError as exc:
            raise exceptions.CommandError(
                'Server %s was rebuilt and runs its flavor\'s deploy configs: '
                'applying %s again failed: %s Restore it with: %s' % (
                    self.server['name'], self.wanted(),
                    str(exc).rstrip('.') + '.', restore)) from None

    def wanted(self):
        return ', '.join(str(c) for c in self.reverting)

    def forget_toggles(self):
        """The server runs its flavor's configs again: drop the toggle's
        record on its node."""
        self.clients.ironic(versions.NODE_TRAITS).patch_node(
            self.node['uuid'], toggle_record.forget_patch(
                self.node, self.server['id'],
                [c.type for c in self.reverting]))
        self.say('Server %s runs its flavor\'s deploy configs again: %s.' % (
            self.server['name'], ', '.join(
                str(c) for c in deployed(self.server, self.reverting))
            or 'none'))


def deployed(server, configs):
    """The flavor's configs of the types of ``configs``."""
    types = {c.type for c in configs}
    return [c for c in config_specs.configs_of(
        server['flavor'].get('extra_specs')) if c.type in types]
