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

"""A thin wrapper of nova's flavor and server API over the SDK's compute
proxy.

Like ``ironic``: each request names its microversion; objects are dicts.
From 2.61 a flavor listing carries every flavor's extra specs, so one
request answers for all flavors; from 2.47 a server embeds its flavor.
"""

import re
import urllib.parse

from osc_lib import exceptions

from osc_deploy_config.services import rest
from osc_deploy_config.services import versions


class _Flavors:
    """Flavors with their extra specs and access."""

    def flavors(self):
        """Every flavor, public or not, with its extra specs."""
        return _with_specs(*self._pages('/flavors/detail?is_public=None',
                                        'flavors'))

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

    def flavor_with_specs(self, name_or_id):
        """One flavor (``flavor``), refused in one line where nova hides
        its extra specs."""
        return _with_specs(self.flavor(name_or_id))[0]

    def flavor(self, name_or_id, by_name_filter=False):
        """One flavor, with its extra specs, at the cost of its own reads:
        by ID (one request), else by name: with ``by_name_filter`` (a nova
        of compute API 2.102 or later) one filtered listing, otherwise its
        ID from the flavor summaries (a fraction of the detailed listing on
        a cloud of many flavors) and one read."""
        from openstack import exceptions as sdk_exceptions

        try:
            return self._request('GET', '/flavors/%s' % urllib.parse.quote(
                name_or_id, safe=''))['flavor']
        except sdk_exceptions.NotFoundException:
            pass
        if by_name_filter:
            named = self._request('GET', '/flavors/detail?%s' % (
                urllib.parse.urlencode({
                    'is_public': 'None',
                    'name': '^%s$' % re.escape(name_or_id)})),
                versions.FLAVORS_BY_NAME)['flavors']
        else:
            named = [f for f in self._pages('/flavors?is_public=None',
                                            'flavors')
                     if f['name'] == name_or_id]
        if len(named) != 1:
            raise exceptions.CommandError(
                '%s flavor named %s' % ('No' if not named else 'More than one',
                                        name_or_id))
        if 'extra_specs' in named[0]:
            return named[0]
        return self._request('GET', '/flavors/%s' % named[0]['id'])['flavor']

    def set_extra_specs(self, flavor_id, specs):
        self._request('POST', '/flavors/%s/os-extra_specs' % flavor_id,
                      json={'extra_specs': specs})

    def extra_specs(self, flavor_id):
        return self._request('GET', '/flavors/%s/os-extra_specs'
                             % flavor_id)['extra_specs']

    def delete_extra_spec(self, flavor_id, key):
        """Idempotent: a key already gone (a concurrent change removed it)
        is no error."""
        self._delete_item('/flavors/%s/os-extra_specs/%s' % (
            flavor_id, urllib.parse.quote(key, safe='')), 'extra spec')

    def create_flavor(self, name, sizes, description, public=True):
        """A flavor without extra specs (see ``finish_flavor``); a private
        one is open to no project yet (``add_flavor_access``)."""
        return self._request('POST', '/flavors', json={'flavor': {
            'name': name, 'vcpus': sizes['vcpus'], 'ram': sizes['ram'],
            'disk': sizes['disk'], 'swap': int(sizes['swap'] or 0),
            'OS-FLV-EXT-DATA:ephemeral': sizes['ephemeral'],
            'description': description,
            'os-flavor-access:is_public': public}})['flavor']

    def flavor_access(self, flavor_id):
        """The projects a private flavor is open to."""
        return sorted(a['tenant_id'] for a in self._request(
            'GET', '/flavors/%s/os-flavor-access' % flavor_id)[
            'flavor_access'])

    def add_flavor_access(self, flavor_id, project_id):
        """Idempotent: access a concurrent toggle added already (nova's
        409) is no error."""
        from openstack import exceptions as sdk_exceptions

        try:
            self._request('POST', '/flavors/%s/action' % flavor_id, json={
                'addTenantAccess': {'tenant': project_id}})
        except sdk_exceptions.ConflictException as exc:
            if 'already exists' not in str(exc.details or exc):
                raise

    def remove_flavor_access(self, flavor_id, project_id):
        self._request('POST', '/flavors/%s/action' % flavor_id, json={
            'removeTenantAccess': {'tenant': project_id}})

    def finish_flavor(self, flavor, extra_specs):
        """Give a flavor exactly these extra specs."""
        current = flavor.get('extra_specs') or {}
        if any(current.get(k) != v for k, v in extra_specs.items()):
            self.set_extra_specs(flavor['id'], extra_specs)
        for key in sorted(set(current) - set(extra_specs)):
            self.delete_extra_spec(flavor['id'], key)
        return dict(flavor, extra_specs=extra_specs)


class _Servers:
    """Servers with their flavor, and the actions a toggle takes on them."""

    def find_server(self, name_or_id, all_projects=False):
        """A server's details (with its embedded flavor) by ID or name
        (among the project's, as OSC's own lookup, or every project's)."""
        from openstack import exceptions as sdk_exceptions

        try:
            return self._request('GET', '/servers/%s' % urllib.parse.quote(
                name_or_id, safe=''))['server']
        except sdk_exceptions.NotFoundException:
            pass
        query = {'name': '^%s$' % re.escape(name_or_id)}
        if all_projects:
            query['all_tenants'] = 'True'
        found = self._request('GET', '/servers/detail?%s' % (
            urllib.parse.urlencode(query)))['servers']
        if len(found) != 1:
            raise exceptions.CommandError(
                '%s server named %s' % ('No' if not found else 'More than one',
                                        name_or_id))
        return found[0]

    def server_if_any(self, server_id):
        """A server's details by ID, or None when nova answers 404 (gone):
        any other error is raised, not taken for one."""
        from openstack import exceptions as sdk_exceptions

        try:
            return self._request('GET', '/servers/%s' % urllib.parse.quote(
                server_id, safe=''))['server']
        except sdk_exceptions.NotFoundException:
            return None

    def servers(self, all_projects=False, project=None):
        """Every server (of every project, or of one), with its flavor's
        details."""
        query = {}
        if all_projects or project:
            query['all_tenants'] = 'True'
        if project:
            query['project_id'] = project
        return self._pages('/servers/detail' + (
            '?' + urllib.parse.urlencode(query) if query else ''), 'servers')

    def ironic_hypervisors(self):
        """The hypervisor names of the nodes nova's ironic driver runs."""
        return self._ironic_hypervisors('/os-hypervisors/detail')

    def _ironic_hypervisors(self, path):
        return {h['hypervisor_hostname'] for h in self._pages(
            path, 'hypervisors', versions.HYPERVISORS_BY_NAME)
            if h['hypervisor_type'] == 'ironic'}

    def runs_on_ironic(self, server):
        """Whether nova's ironic driver runs the server, from nova's own
        data (its hypervisor), whatever ironic shows these credentials.
        None when nova does not tell (a non-admin's view)."""
        hostname = server.get('OS-EXT-SRV-ATTR:hypervisor_hostname')
        if not hostname:
            return None
        return hostname in self._ironic_hypervisors(
            '/os-hypervisors/detail?%s' % urllib.parse.urlencode(
                {'hypervisor_hostname_pattern': hostname}))

    def _action(self, server_id, body):
        """A server action; returns its request ID."""
        return self._send('POST', '/servers/%s/action' % server_id,
                          json=body).headers.get('x-openstack-request-id')

    def resize(self, server_id, flavor_id):
        """Ask for the resize; returns its request ID."""
        return self._action(server_id, {'resize': {'flavorRef': flavor_id}})

    def confirm_resize(self, server_id):
        """Ask for the confirmation; returns its request ID."""
        return self._action(server_id, {'confirmResize': None})

    def lock(self, server_id, reason):
        """Lock the server with a reason; returns the lock's request ID."""
        return self._action(server_id, {'lock': {'locked_reason': reason}})

    def unlock(self, server_id):
        """Unlock the server; returns the unlock's request ID."""
        return self._action(server_id, {'unlock': None})

    def instance_actions(self, server_id, limit=50):
        """The server's latest instance actions, newest first."""
        return self._request(
            'GET', '/servers/%s/os-instance-actions?limit=%d'
            % (server_id, limit), versions.SERVER_LOCKS)['instanceActions']

    def instance_action(self, server_id, request_id):
        """An action and its events; from 2.84 a failed event says why."""
        path = '/servers/%s/os-instance-actions/%s' % (server_id, request_id)
        try:
            found = self._request('GET', path,
                                  versions.ACTION_EVENT_DETAILS)
        except exceptions.CommandError:   # an older nova
            found = self._request('GET', path)
        return found['instanceAction']


class Nova(_Flavors, _Servers, rest.Api):
    """Flavors with their extra specs, and (with the feature
    ``SERVER_FLAVOR_DETAILS``) servers with their flavor."""

    version_root = '/v2.1'

    def __init__(self, proxy, *features):
        super().__init__(proxy, versions.LISTED_FLAVOR_EXTRA_SPECS, *features)

    def retriable_writes(self, method, path):
        """Two writers of one flavor's extra specs at once: nova gives up
        its own retries with 409; the same merge may be sent again."""
        if method == 'POST' and path.endswith('/os-extra_specs'):
            return [409]
        return []

    def next_link(self, page, collection):
        return next((link['href'] for link in page.get(
            collection + '_links') or () if link.get('rel') == 'next'), None)

    def maximum(self):
        """Nova's maximum compute microversion, from the version discovery
        (one request, unless OSC made it already); None when unknown."""
        try:
            found = self.proxy.get_endpoint_data()
        except Exception:   # noqa: BLE001 - unknown, then
            return None
        maximum = getattr(found, 'max_microversion', None)
        return tuple(maximum[:2]) if isinstance(maximum, tuple) else None


def _with_specs(*flavors):
    """The flavors, refused where nova's policy hides their extra specs."""
    if any('extra_specs' not in f for f in flavors):
        raise exceptions.CommandError(
            'Nova does not show flavor extra specs to these credentials '
            '(a system-scoped token?): use a project-scoped admin')
    return list(flavors)
