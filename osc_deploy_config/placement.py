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

"""What placement knows of a server's host: the scheduler's view."""

from osc_deploy_config import rest
from osc_deploy_config import versions


class Placement(rest.Api):
    def __init__(self, proxy):
        super().__init__(proxy, versions.PROVIDER_TRAITS)

    def providers_of(self, consumer):
        """The resource providers a server's allocations use, each with
        its name, traits, inventories and what the server holds there."""
        allocations = self._request(
            'GET', '/allocations/%s' % consumer)['allocations']
        providers = []
        for uuid, held in sorted(allocations.items()):
            base = '/resource_providers/%s' % uuid
            providers.append({
                'uuid': uuid,
                'name': self._request('GET', base)['name'],
                'traits': self._request('GET', base + '/traits')['traits'],
                'inventories': self._request(
                    'GET', base + '/inventories')['inventories'],
                'resources': held['resources'],
            })
        return providers
