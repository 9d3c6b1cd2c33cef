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

"""Which call needs which API microversion, checked per call.

No global pin: each command asks for what its calls need, and the SDK uses
the highest version both it and the server know.  A server too old for a
call gets one line naming the service, the need and the server's maximum.
"""

from osc_lib import exceptions

# feature: (service type, minimum microversion)
NEEDS = {
    'deploy templates': ('baremetal', '1.55'),
    'node traits': ('baremetal', '1.37'),
    'node retirement': ('baremetal', '1.61'),
    'node servicing': ('baremetal', '1.87'),
    'flavor extra specs in listings': ('compute', '2.61'),
    'server flavor details': ('compute', '2.47'),
}


def parse(version):
    """``'1.55'`` -> ``(1, 55)``."""
    major, _, minor = str(version).partition('.')
    return int(major), int(minor or 0)


def _format(version):
    return '%d.%d' % version


def server_maximum(proxy):
    """The highest microversion the service behind a proxy supports."""
    data = proxy.get_endpoint_data()
    maximum = getattr(data, 'max_microversion', None)
    return tuple(maximum) if maximum else None


def require(proxy, *features):
    """Check the service supports every feature; return the version the
    calls need (the highest of their minimums)."""
    service = NEEDS[features[0]][0]
    need = max(parse(NEEDS[f][1]) for f in features)
    maximum = server_maximum(proxy)
    if maximum is None or maximum < need:
        url = proxy.get_endpoint() or service
        raise exceptions.CommandError(
            'The %s service at %s supports API version %s at most; %s '
            'need %s or later'
            % (service, url,
               _format(maximum) if maximum else '1.0 (no microversions)',
               ' and '.join(features), _format(need))
        )
    return _format(need)
