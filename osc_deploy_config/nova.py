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

"""A thin wrapper of nova's flavor API over the SDK's compute proxy.

Like ``ironic``: each request names its microversion; objects are dicts.
From 2.61 a flavor listing carries every flavor's extra specs, so one
request answers for all flavors.
"""

import urllib.parse

from osc_lib import exceptions

from osc_deploy_config import rest


class Nova(rest.Api):
    def __init__(self, proxy, *features):
        super().__init__(proxy, 'flavor extra specs in listings', *features)

    def flavors(self):
        """Every flavor, public or not, with its extra specs."""
        found = []
        path = '/flavors/detail?is_public=None'
        while path:
            page = self._request('GET', path)
            found.extend(page['flavors'])
            path = _next_path(page.get('flavors_links'))
        return found

    def find_flavor(self, name_or_id):
        """One flavor by ID or unique name, from one listing."""
        flavors = self.flavors()
        by_id = [f for f in flavors if f['id'] == name_or_id]
        named = by_id or [f for f in flavors if f['name'] == name_or_id]
        if not named:
            raise exceptions.CommandError(
                'No flavor with a name or ID of %s exists' % name_or_id)
        if len(named) > 1:
            raise exceptions.CommandError(
                'More than one flavor is named %s: use its ID' % name_or_id)
        return named[0]

    def set_extra_specs(self, flavor_id, specs):
        self._request('POST', '/flavors/%s/os-extra_specs' % flavor_id,
                      json={'extra_specs': specs})

    def delete_extra_spec(self, flavor_id, key):
        self._request('DELETE', '/flavors/%s/os-extra_specs/%s' % (
            flavor_id, urllib.parse.quote(key, safe='')))


def _next_path(links):
    for link in links or ():
        if link.get('rel') == 'next':
            parts = urllib.parse.urlsplit(link['href'])
            path = parts.path
            root = path.find('/flavors')
            return path[root:] + ('?' + parts.query if parts.query else '')
    return None
