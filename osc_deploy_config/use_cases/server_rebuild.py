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

"""``server rebuild`` of a toggled bare-metal server: which configs it
will revert.

A rebuild redeploys the node with the instance traits of the server's
flavor and image, so ironic applies their templates, not the ones a toggle
applied later; the server's record of the toggle stays, and ``server
deploy-config show`` then reports it as not in effect.
"""

from osc_deploy_config import server_configs
from osc_deploy_config.services import versions


def revert_warning(clients, server_ref):
    """The line that says which configs a rebuild of the server reverts,
    and the toggle that restores them; None when it reverts none."""
    nova = clients.nova(versions.SERVER_FLAVOR_DETAILS)
    server = nova.find_server(server_ref)
    reverting = server_configs.reverted_by_rebuild(server)
    if not reverting:
        return None
    return ('Rebuilding server %s redeploys it with its flavor\'s deploy '
            'configs, so %s; toggle again afterwards (openstack server '
            'resize --deploy-config %s %s).' % (
                server['name'], '; '.join(
                    '%s reverts from %s (a toggle) to %s' % (
                        toggled.type, toggled.value,
                        deployed.value if deployed else 'none')
                    for toggled, deployed in reverting),
                ' --deploy-config '.join(str(t) for t, _ in reverting),
                server['id']))
