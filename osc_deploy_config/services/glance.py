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

"""A thin wrapper of glance's image API over the SDK's image proxy: an
image's properties, where it can ask for deploy configs as a flavor does
(nova hands its ``trait:*=required`` to ironic with the flavor's)."""

import urllib.parse
import uuid

from osc_lib import exceptions

from osc_deploy_config.services import rest
from osc_deploy_config.services import versions

JSON_PATCH = 'application/openstack-images-v2.1-json-patch'


class Glance(rest.Api):
    version_root = '/v2'

    def __init__(self, proxy):
        super().__init__(proxy, versions.IMAGE_PROPERTIES)

    def images(self, every=False):
        """{image ID: properties} of every image these credentials see, one
        request per page of glance's largest; with ``every``, those glance
        leaves out of its listings by default too: hidden ones
        (``os_hidden``), and other projects' community images."""
        query = '/images?limit=1000' + ('&visibility=all' if every else '')
        found = {image['id']: image
                 for image in self._pages(query, 'images')}
        if every:
            found.update((image['id'], image) for image in self._pages(
                query + '&os_hidden=true', 'images'))
        return found

    def any_image_id(self):
        """The ID of one image these credentials see, or None."""
        found = self._request('GET', '/images?limit=1')['images']
        return found[0]['id'] if found else None

    def probe_create(self, body):
        """(status, text) of an image create (a probe of
        ``domain.hardening``, built to store nothing)."""
        return self.probe('POST', '/images', json=body)

    def find_image(self, name_or_id):
        """An image (its properties as top-level keys) by ID or name: one
        request."""
        if _is_uuid(name_or_id):
            found = self.image_properties(name_or_id)
            if found:
                return found
        found = self._request('GET', '/images?%s' % urllib.parse.urlencode(
            {'name': name_or_id}))['images']
        if len(found) != 1:
            raise exceptions.CommandError(
                '%s image named %s' % ('No' if not found else 'More than one',
                                       name_or_id))
        return found[0]

    def change_properties(self, image, to_set, to_unset):
        """Set and remove properties in one request (glance applies a
        patch whole or not at all)."""
        patch = [{'op': 'replace' if key in image else 'add',
                  'path': '/%s' % key, 'value': value}
                 for key, value in sorted(to_set.items())]
        patch += [{'op': 'remove', 'path': '/%s' % key} for key in to_unset
                  if key in image]
        return self._request('PATCH', '/images/%s' % image['id'], json=patch,
                             headers={'Content-Type': JSON_PATCH})

    def image_properties(self, image_id):
        """An image's properties (glance returns them as top-level keys);
        {} when the image is gone."""
        from openstack import exceptions as sdk_exceptions

        try:
            return self._request('GET', '/images/%s' % urllib.parse.quote(
                image_id, safe=''))
        except sdk_exceptions.NotFoundException:
            return {}


def _is_uuid(text):
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return True
