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

"""The mini cloud as the bench sees it: its clouds' names, direct API
access for setting up, the floors and the checks, and requests sent a few
at a time."""

import concurrent.futures
import os
import urllib.parse

CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
MINICLOUD = os.path.join(CHECKOUT, 'tools', 'minicloud', 'minicloud')

ADMIN, SYSTEM = 'minicloud-admin', 'minicloud-system-admin'
# the project manager of the rollout's project toggle
BENCH_MANAGER = 'bench-manager'
DEMO = 'minicloud-demo'     # a plain project member
IRONIC_VERSION, NOVA_VERSION, PLACEMENT_VERSION = '1.87', '2.61', '1.39'
RUNBOOKS_VERSION = '1.92'
PARALLEL_SETUP = 4


class Cloud:
    """Direct API access for setting up, the floor, and checks."""

    def __init__(self):
        import openstack

        self.admin = openstack.connect(cloud=ADMIN)
        self.system = openstack.connect(cloud=SYSTEM)
        self.ironic = self.system.baremetal
        self.nova = self.admin.compute
        self.placement = self.admin.placement
        self.services = self._services()

    def _services(self):
        """host:port -> service type, from the catalog."""
        found = {}
        access = self.admin.session.auth.get_access(self.admin.session)
        for entry in access.service_catalog.catalog:
            for endpoint in entry['endpoints']:
                url = urllib.parse.urlsplit(endpoint['url'])
                found[url.netloc] = entry['type']
        return found

    def call(self, proxy, method, path, version, ok=(200, 201, 202, 204),
             **kwargs):
        response = proxy.request(path, method, microversion=version,
                                 raise_exc=False, **kwargs)
        if response.status_code not in ok:
            raise SystemExit('%s %s: %s %s' % (method, path,
                                               response.status_code,
                                               response.text[:300]))
        if response.status_code >= 300 or not response.content:
            return None
        return response.json()

    def ironic_call(self, method, path, **kwargs):
        return self.call(self.ironic, method, path, IRONIC_VERSION, **kwargs)

    def nova_call(self, method, path, **kwargs):
        return self.call(self.nova, method, path, NOVA_VERSION, **kwargs)

    def ironic_list(self, collection, fields):
        from osc_deploy_config.services import rest

        found, path = [], '/%s?fields=%s' % (collection, fields)
        while path:
            page = self.ironic_call('GET', path)
            found += page[collection]
            path = rest.relative_link(page.get('next'), '/v1')
        return found

    def providers(self, required=None):
        """UUIDs of the resource providers (with this trait)."""
        path = '/resource_providers' + (
            '?required=%s' % required if required else '')
        return {p['uuid'] for p in self.call(
            self.placement, 'GET', path,
            PLACEMENT_VERSION)['resource_providers']}

    def max_versions(self):
        ironic = self.ironic.get('/', microversion=None)
        nova = self.nova.get('/', microversion=None).json()
        return {
            'ironic': ironic.headers[
                'X-OpenStack-Ironic-API-Maximum-Version'],
            'nova': nova['version']['version'],
        }


def parallel(function, items):
    with concurrent.futures.ThreadPoolExecutor(PARALLEL_SETUP) as pool:
        return list(pool.map(function, items))
