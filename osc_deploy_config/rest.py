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
command's features need (see ``versions``)."""

import urllib.parse

from osc_deploy_config import versions


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
    def __init__(self, proxy, *features):
        self.proxy = proxy
        self.features = features
        self.version = versions.need(*features)

    def _send(self, method, path, feature=None, **kwargs):
        """One request; the response, or the SDK's exception.  A call that
        needs more than the object's features names its own."""
        from openstack import exceptions

        features = (feature,) if feature else self.features
        response = self.proxy.request(
            path, method, microversion=versions.need(*features),
            raise_exc=False, **kwargs
        )
        versions.check_response(response, *features)
        exceptions.raise_from_response(response)
        return response

    def _request(self, method, path, feature=None, **kwargs):
        """One request; its JSON answer."""
        response = self._send(method, path, feature, **kwargs)
        return response.json() if response.content else None
