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

"""What a toggle reports: its Outcome, and the words for configs and
hosts."""

import dataclasses

from openstack import exceptions as sdk_exceptions

# Outcome.result
TOGGLED, UNCHANGED, PLANNED = 'toggled', 'unchanged', 'planned'
REQUESTED, AWAITING_CONFIRMATION = 'requested', 'awaiting confirmation'


@dataclasses.dataclass
class Outcome:
    """What one toggle did: the server, its host (compute host or node),
    its configs before and after, how (resize or service), and the result
    (one of TOGGLED, UNCHANGED, PLANNED, REQUESTED,
    AWAITING_CONFIRMATION)."""

    server: str
    server_id: str
    host: str
    before: str
    after: str
    how: str
    result: str
    detail: str = ''


def configs_text(configs):
    return ', '.join(str(c) for c in configs) or 'none'


def host_of(server, node):
    if node:
        return node.get('name') or node['uuid']
    return server.get('OS-EXT-SRV-ATTR:host') or ''


def label(node):
    return node.get('name') or node['uuid']


def one_line(exc):
    """An error in one line: a CommandError's text, an HTTP error's status
    and detail."""
    if isinstance(exc, sdk_exceptions.HttpException):
        return ('%s %s' % (exc.status_code or '', ' '.join(
            str(exc.details or exc).split()))).strip()
    return ' '.join(str(exc).split()) or type(exc).__name__
