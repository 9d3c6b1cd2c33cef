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

"""Which call needs which API microversion, negotiated per call.

No global pin: each command asks for the versions its calls need.  Where
the SDK has already read a service's range in its version discovery (ironic
and placement), a call the server is too old for is refused before it is
sent (``check_supported``).  Elsewhere (nova, whose discovery would cost a
request of its own; an endpoint override without a version document), the
request itself tells: a server refuses a version it lacks with 406
(``check_response``).  Either way negotiating costs no request of
its own, and a server too old for a call gets one line naming the service,
the need and the server's maximum.
"""

import re
import urllib.parse

from osc_lib import exceptions

# The features our calls need; each names itself in a version error.
DEPLOY_TEMPLATES = 'deploy templates'
NODE_TRAITS = 'node traits'
# a node's lessee (1.65): the project a project's toggle must be
NODE_LESSEE = 'node lessee'
NODE_RETIREMENT = 'node retirement'
NODE_SERVICING = 'node servicing'
NODE_BIOS = 'node BIOS settings'
NODE_BIOS_REGISTRY = 'node BIOS registry'
NODE_HISTORY = 'node history'
NODE_CLEANING_WITHOUT_RAMDISK = 'manual cleaning without the ramdisk'
# runbooks (1.92) gated by their own traits, not by their names (1.112):
# what a grant to one project takes
PROJECT_RUNBOOKS = 'runbooks of a project, gated by their traits'
LISTED_FLAVOR_EXTRA_SPECS = 'flavor extra specs in listings'
SERVER_FLAVOR_DETAILS = 'server flavor details'
SERVER_LOCKS = 'server lock reasons'
ACTION_EVENT_DETAILS = 'instance action event details'
HYPERVISORS_BY_NAME = 'hypervisor search in listings'
FLAVORS_BY_NAME = 'flavor listings by name'
PROVIDER_TRAITS = 'resource provider traits'
IMAGE_PROPERTIES = 'image properties'
PROVIDERS_BY_TRAIT = 'resource providers by trait'
ALLOCATION_CANDIDATES = 'allocation candidates with traits'
# The release behind a range: ``domain.hardware.ironic_releases``, from
# the range's maximum.  A BIOS step ends without the agent from 35.0.
BIOS_STEPS_WITHOUT_AGENT = 'BIOS steps finished without the agent'
# A service request that keeps the ramdisk off (``disable_ramdisk``).
SERVICE_WITHOUT_RAMDISK = 'servicing without the ramdisk'
# feature: (service type, minimum microversion)
NEEDS = {
    DEPLOY_TEMPLATES: ('baremetal', '1.55'),
    NODE_TRAITS: ('baremetal', '1.37'),
    NODE_RETIREMENT: ('baremetal', '1.61'),
    NODE_LESSEE: ('baremetal', '1.65'),
    NODE_SERVICING: ('baremetal', '1.87'),
    NODE_BIOS: ('baremetal', '1.40'),
    NODE_BIOS_REGISTRY: ('baremetal', '1.74'),
    NODE_HISTORY: ('baremetal', '1.78'),
    NODE_CLEANING_WITHOUT_RAMDISK: ('baremetal', '1.70'),
    PROJECT_RUNBOOKS: ('baremetal', '1.112'),
    LISTED_FLAVOR_EXTRA_SPECS: ('compute', '2.61'),
    SERVER_FLAVOR_DETAILS: ('compute', '2.47'),
    # a server shows who locked it and why, a lock takes a reason (with the
    # flavor details of 2.47, and instance action listings by page, 2.58)
    SERVER_LOCKS: ('compute', '2.73'),
    ACTION_EVENT_DETAILS: ('compute', '2.84'),
    HYPERVISORS_BY_NAME: ('compute', '2.53'),
    FLAVORS_BY_NAME: ('compute', '2.102'),
    PROVIDER_TRAITS: ('placement', '1.6'),
    # glance has no microversions: its v2 API
    IMAGE_PROPERTIES: ('image', '2.0'),
    PROVIDERS_BY_TRAIT: ('placement', '1.18'),
    # traits in provider summaries (1.17), forbidden traits (1.22)
    ALLOCATION_CANDIDATES: ('placement', '1.22'),
    BIOS_STEPS_WITHOUT_AGENT: ('baremetal', '1.111'),
    SERVICE_WITHOUT_RAMDISK: ('baremetal', '1.108'),
}
_MAXIMUM_HEADERS = ('X-OpenStack-Ironic-API-Maximum-Version',)
_MAXIMUM_IN_TEXT = re.compile(r'maximum is (\d+\.\d+)|, (\d+\.\d+)\]')


def parse(version):
    """``'1.55'`` -> ``(1, 55)``."""
    major, _, minor = str(version).partition('.')
    return int(major), int(minor or 0)


def need(*features):
    """The version a command's calls need: the highest of their minimums."""
    return '%d.%d' % max(parse(NEEDS[f][1]) for f in features)


def check_supported(endpoint, *features):
    """Raise the version line when the service's discovered range
    (``endpoint``: keystoneauth's EndpointData, or None) ends below what
    these features need; say nothing when discovery did not tell."""
    maximum = getattr(endpoint, 'max_microversion', None)
    if not isinstance(maximum, tuple) or not maximum:
        return
    if maximum >= parse(need(*features)):
        return
    url = urllib.parse.urlsplit(getattr(endpoint, 'url', None) or '')
    raise _too_old(url, '%d.%d' % maximum[:2], features)


def maximum(endpoint):
    """The service's discovered maximum ((major, minor)); None when
    discovery did not tell."""
    found = getattr(endpoint, 'max_microversion', None)
    return found[:2] if isinstance(found, tuple) and found else None


def reaches(endpoint, feature):
    """Whether the service's discovered range (``endpoint``, as in
    ``check_supported``) reaches the version of ``feature``; None when
    discovery did not tell."""
    found = maximum(endpoint)
    return None if found is None else found >= parse(NEEDS[feature][1])


def _too_old(url, maximum, features):
    return exceptions.CommandError(
        'The %s service at %s://%s supports API version %s at most; %s '
        'need %s or later'
        % (NEEDS[features[0]][0], url.scheme, url.netloc, maximum,
           ' and '.join(features), need(*features)))


def check_response(response, *features):
    """Raise one clear line when the server refused our version (406)
    because it is older; other 406s (a field unknown at this version) are
    left to the caller."""
    if response.status_code != 406:
        return
    maximum = next((response.headers[h] for h in _MAXIMUM_HEADERS
                    if h in response.headers), None)
    if maximum is None:
        found = _MAXIMUM_IN_TEXT.search(response.text or '')
        maximum = found and (found.group(1) or found.group(2))
    if maximum and parse(maximum) >= parse(need(*features)):
        return
    raise _too_old(urllib.parse.urlsplit(response.url or ''),
                   maximum or 'unknown', features)
