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

"""What placement knows: the scheduler's view of hosts and nodes."""

import urllib.parse

from osc_deploy_config.services import rest
from osc_deploy_config.services import versions


class Placement(rest.Api):
    range_known = True

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

    def provider_names(self):
        """{name: UUID} of every resource provider: one request."""
        return {p['name']: p['uuid'] for p in self._request(
            'GET', '/resource_providers')['resource_providers']}

    def inventories(self, provider):
        return self._request('GET', '/resource_providers/%s/inventories'
                             % provider)['inventories']

    def providers(self, required=None):
        """The UUIDs of every resource provider, or of those that carry the
        trait ``required``: one request."""
        path = '/resource_providers'
        if required:
            path += '?' + urllib.parse.urlencode({'required': required})
        found = self._unless_unknown_trait(path, versions.PROVIDERS_BY_TRAIT)
        return {p['uuid'] for p in found.get('resource_providers', ())}

    def schedulable(self, resources, required=(), forbidden=()):
        """{provider UUID: its traits} for the providers the scheduler could
        place these resources on now: placement's allocation candidates
        (free capacity, so neither reserved nor used; every required trait,
        no forbidden one).  One request."""
        query = {'resources': ','.join(
            '%s:%d' % item for item in sorted(resources.items()))}
        traits = sorted(required) + ['!' + t for t in sorted(forbidden)]
        if traits:
            query['required'] = ','.join(traits)
        found = self._unless_unknown_trait(
            '/allocation_candidates?' + urllib.parse.urlencode(query),
            versions.ALLOCATION_CANDIDATES)
        return {uuid: set(summary.get('traits') or ())
                for uuid, summary in found.get(
                    'provider_summaries', {}).items()}

    def free_providers(self, resource_classes):
        """{provider UUID: its traits} for the providers with a unit of one
        of these resource classes free now: one request per class."""
        found = {}
        for resource_class in sorted(resource_classes):
            found.update(self.schedulable({resource_class: 1}))
        return found

    def _unless_unknown_trait(self, path, feature):
        """A listing; empty when it names a trait placement has never seen
        (it answers 400: no provider has it)."""
        from openstack import exceptions as sdk_exceptions

        try:
            return self._request('GET', path, feature)
        except sdk_exceptions.BadRequestException as exc:
            said = exc.response.text if exc.response is not None else ''
            if 'No such trait' not in said:
                raise
            return {}
