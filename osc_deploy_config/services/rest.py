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

"""The REST calls of one service, over an SDK proxy, at the versions the
command's features need (see ``versions``).

Reads are idempotent: a refused connection or a 503 (a service restarting,
a proxy in front of it) is retried with keystoneauth's backoff (0.5 s,
doubling).  A write is retried only where a service says so
(``retriable_writes``), never a create.  Retries are logged for --debug
only (``v1.cli.demote_keystoneauth_warnings``); a service that stays
unreachable or fails a read (5xx) gets one line naming it and its URL.
"""

import re
import urllib.parse

from osc_lib import exceptions as osc_exceptions

from osc_deploy_config.services import versions

READ_RETRIES = 2
WRITE_RETRIES = 5   # as the SDK retries ironic's by default
SERVICE_NAMES = {
    'baremetal': 'baremetal service (ironic)',
    'compute': 'compute service (nova)',
    'placement': 'placement service',
    'image': 'image service (glance)',
}


_SCOPE_REFUSED = 'requires a scope of'
_URL = re.compile(r'https?://[^/\s:]+(:\d+)?')


def relative_link(url, version_root):
    """A service's absolute link (a next page) as a path relative to its
    versioned endpoint: ``http://h/v1/nodes?marker=x`` -> ``/nodes?...``
    for the root ``/v1``."""
    if not url:
        return None
    parts = urllib.parse.urlsplit(url)
    path = parts.path
    at = path.find(version_root + '/')
    if at >= 0:
        path = path[at + len(version_root):]
    return path + ('?' + parts.query if parts.query else '')


class Api:
    """One service's calls, at the version the features need."""

    # The path of the service's versioned endpoint, which its links carry.
    version_root = ''
    # Whether the SDK reads the service's version range when it builds the
    # proxy (openstacksdk 4 does for ironic and placement, not for nova):
    # only then is checking it before a request free of a request.
    range_known = False

    def __init__(self, proxy, *features):
        self.proxy = proxy
        self.features = features
        self.version = versions.need(*features)
        self._supported = set()

    def _send(self, method, path, feature=None, **kwargs):
        """One request; the response, or the SDK's exception.  A call of a
        feature of its own names it, and goes at that feature's version."""
        from keystoneauth1 import exceptions as ksa_exceptions
        from openstack import exceptions

        features = (feature,) if feature else self.features
        self._check_supported(features)
        try:
            response = self.proxy.request(
                path, method, microversion=versions.need(*features),
                raise_exc=False, **dict(self._retries(method, path), **kwargs)
            )
        except ksa_exceptions.ConnectionError as exc:
            raise unreachable(self.service_type, str(exc),
                              _reason(exc)) from None
        versions.check_response(response, *features)
        if response.status_code == 500 and _SCOPE_REFUSED in response.text:
            # an older ironic (22.1) answers a token of the wrong scope
            # with 500: it is a refusal, as newer ones say with 403
            response.status_code = 403
        if method == 'GET' and response.status_code >= 500:
            raise osc_exceptions.CommandError(
                'The %s at %s failed to answer %s: %d %s%s' % (
                    service_name(self.service_type),
                    root_url(response.url or ''),
                    urllib.parse.urlsplit(response.url or path).path,
                    response.status_code, response.reason,
                    ' (after %d retries)' % READ_RETRIES
                    if response.status_code == 503 else ''))
        self.refuse(method, path, response)
        exceptions.raise_from_response(response)
        return response

    def probe(self, method, path, **kwargs):
        """A request whose answer is the point, refusals included: its
        HTTP status, never retried, never raised."""
        from keystoneauth1 import exceptions as ksa_exceptions

        self._check_supported(self.features)
        try:
            return self.proxy.request(
                path, method, microversion=self.version, raise_exc=False,
                status_code_retries=0, connect_retries=0,
                **kwargs).status_code
        except ksa_exceptions.ConnectionError as exc:
            raise unreachable(self.service_type, str(exc),
                              _reason(exc)) from None

    def _retries(self, method, path):
        """Reads are retried on 503 and refused connections; a write only
        where the service says it is safe (``retriable_writes``)."""
        if method == 'GET':
            return {'connect_retries': READ_RETRIES,
                    'status_code_retries': READ_RETRIES,
                    'retriable_status_codes': [503]}
        # keystoneauth takes an empty list for its default, [429, 503], and
        # the SDK's proxies retry those (ironic's 5 times): a write not safe
        # to repeat must say "no retries" outright.
        codes = self.retriable_writes(method, path)
        return {'retriable_status_codes': codes,
                'status_code_retries': WRITE_RETRIES if codes else 0,
                'connect_retries': 0}

    def require(self):
        """Refuse, before any change, a service too old for this object's
        features (no request where the SDK knows its range)."""
        self._check_supported(self.features)

    def require_feature(self, feature):
        """Refuse, as ``require``, a service too old for one feature."""
        self._check_supported((feature,))

    def _check_supported(self, features):
        """Refuse, before sending, a call the service's discovered range
        cannot take (once per set of features)."""
        if not self.range_known or features in self._supported:
            return
        try:
            endpoint = self.proxy.get_endpoint_data()
        except Exception:   # noqa: BLE001 - the request will tell
            endpoint = None
        versions.check_supported(endpoint, *features)
        self._supported.add(features)

    def refuse(self, method, path, response):
        """A refusal the service's wrapper can say better than the SDK's
        exception (see ``ironic.Ironic``); nothing by default."""

    def retriable_writes(self, method, path):
        """The statuses on which this write may be sent again, up to
        WRITE_RETRIES times with keystoneauth's backoff."""
        return []

    @property
    def service_type(self):
        return versions.NEEDS[self.features[0]][0]

    def _pages(self, path, collection, feature=None, limit=0):
        """The objects of a listing, one request a page, following the
        service's next links: every page (``limit`` 0), the first (None),
        or at most ``limit`` objects."""
        found = []
        while path:
            page = self._request('GET', path, feature)
            found.extend(page[collection])
            if limit is None or (limit and len(found) >= limit):
                break
            path = relative_link(self.next_link(page, collection),
                                 self.version_root)
        return found[:limit] if limit else found

    def next_link(self, page, collection):
        """The link to the page after ``page``, or None."""
        return page.get('next')

    def _delete_item(self, path, item):
        """DELETE one item of an object, idempotently: a 404 whose detail
        names the item (already gone) is no error; one about the object
        itself (gone too) is."""
        from openstack import exceptions

        try:
            self._request('DELETE', path)
        except exceptions.NotFoundException as exc:
            if item not in str(exc.details or '').lower():
                raise

    def _request(self, method, path, feature=None, **kwargs):
        """One request; its JSON answer."""
        response = self._send(method, path, feature, **kwargs)
        return response.json() if response.content else None


def service_name(service_type):
    return SERVICE_NAMES.get(service_type, service_type + ' service')


def unreachable(service_type, url_text, reason):
    """The one line for a service that cannot be reached."""
    return osc_exceptions.CommandError('Cannot reach the %s at %s: %s' % (
        service_name(service_type), root_url(url_text), reason))


def root_url(text):
    """The scheme, host and port of the first URL in ``text``."""
    found = _URL.search(text)
    return found.group(0) if found else 'its catalog endpoint'


def _reason(exc):
    from keystoneauth1 import exceptions as ksa_exceptions

    if isinstance(exc, ksa_exceptions.ConnectTimeout):
        return 'connection timed out'
    if 'refused' in str(exc).lower():
        return 'connection refused'
    return type(exc).__name__
