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

"""What a hook has read, handed to the OSC command it runs before.

A hook on ``server create`` or ``server rebuild`` reads the flavor, the
image or the server that OSC's own command then looks up again, by the
same name or ID.  Handing OSC the objects the hook read makes OSC's lookup
answer from them, with no request: the hook costs OSC nothing it would not
have read anyway.  Only a lookup of the very reference the hook resolved is
answered; any other goes to the service as before.
"""

import logging

LOG = logging.getLogger(__name__)


def answer_lookups(proxy, method, ref, resource):
    """From now on, ``proxy.<method>(ref, ...)`` returns ``resource`` (an
    SDK resource made from what the hook read)."""
    asks = getattr(proxy, method)

    def lookup(name_or_id, *args, **kwargs):
        if name_or_id == ref:
            return resource
        return asks(name_or_id, *args, **kwargs)

    setattr(proxy, method, lookup)


def flavor(proxy, ref, found):
    from openstack.compute.v2 import flavor as sdk_flavor

    answer_lookups(proxy, 'find_flavor', ref,
                   sdk_flavor.Flavor.existing(**found))


def image(proxy, ref, found):
    from openstack.image.v2 import image as sdk_image

    # glance names an image's own link "self", which a keyword cannot be
    attrs = {k: v for k, v in found.items() if k != 'self'}
    answer_lookups(proxy, 'find_image', ref, sdk_image.Image.existing(**attrs))


def server(proxy, ref, found):
    from openstack.compute.v2 import server as sdk_server

    answer_lookups(proxy, 'find_server', ref,
                   sdk_server.Server.existing(**found))
