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

"""One ``apply`` at a time: a lock that ironic makes atomic.

The lock is a deploy template under one fixed name: ironic creates a
name once (a second create is refused with 409), so two applies started
together cannot both take it.  Its one step is disabled (priority 0) and
no node, flavor or image carries its trait, so ironic never runs it.  It
names its holder and the time it was taken; it is released when the
apply ends, and a lock a killed apply left is broken only by hand
(``--break-lock``).
"""

import datetime
import os
import socket
import uuid

from openstack import exceptions as sdk_exceptions
from osc_lib import exceptions

from osc_deploy_config.services import ironic as ironic_api
from osc_deploy_config.services import versions

# not of the pattern of a config's template (CUSTOM_DEPLOY_CONFIG_...)
NAME = 'CUSTOM_OSC_DEPLOY_CONFIG_APPLY_LOCK'
HOLDER = 'deploy_config_apply_lock'
STEP = {'interface': 'deploy', 'step': 'deploy_config_apply_lock',
        'args': {}, 'priority': 0}


class Lock:
    """The lock, taken (``take``) and released (``release``)."""

    def __init__(self, clients, say):
        self.clients, self.say = clients, say
        self.uuid = None

    def take(self, break_lock=False):
        """Take it, or one line naming who holds it since when; with
        ``break_lock``, the lock held is deleted first (said).  A create
        whose answer is lost (a timeout, a 5xx, Ctrl-C) is released where
        ironic made it: its token says it is this apply's."""
        ironic = self.clients.ironic(versions.DEPLOY_TEMPLATES)
        if break_lock:
            self.break_held(ironic)
        holder = {'holder': _holder(self.clients), 'since': _now().strftime(
            '%Y-%m-%dT%H:%M:%SZ'), 'token': uuid.uuid4().hex}
        for _ in range(2):     # once more where it went between
            try:
                made = ironic.create_deploy_template({
                    'name': NAME, 'steps': [STEP],
                    'extra': {HOLDER: holder}})
            except sdk_exceptions.ConflictException:
                try:
                    held = ironic.deploy_template(NAME)
                except sdk_exceptions.NotFoundException:
                    continue
                raise exceptions.CommandError(
                    'Another apply holds the lock (%s): wait for it to '
                    'end; if it was killed, rerun with --break-lock' % (
                        _held(held))) from None
            except ironic_api.Refused as exc:
                raise exceptions.CommandError(
                    'Cannot take the lock that one apply at a time holds '
                    '(deploy template %s): %s; apply needs credentials that '
                    'may create and delete deploy templates (a '
                    'system-scoped admin)' % (NAME, exc)) from None
            except BaseException:
                self.release_made(ironic, holder['token'])
                raise
            self.uuid = made['uuid']
            return
        raise exceptions.CommandError(
            'The lock %s was taken and released twice while this apply '
            'took it: rerun' % NAME)

    def release_made(self, ironic, token):
        """Delete the lock where it is the one this apply's create made
        (its answer lost)."""
        try:
            held = ironic.deploy_template(NAME)
            if ((held.get('extra') or {}).get(HOLDER) or {}).get(
                    'token') == token:
                ironic.delete_deploy_template(held['uuid'])
        except (exceptions.CommandError, sdk_exceptions.HttpException):
            pass    # not made, or out of reach: the next one is told

    def break_held(self, ironic):
        try:
            held = ironic.deploy_template(NAME)
        except sdk_exceptions.NotFoundException:
            return
        self.say('Breaking the lock (%s)' % _held(held))
        try:
            ironic.delete_deploy_template(held['uuid'])
        except sdk_exceptions.NotFoundException:
            pass

    def release(self):
        """Release it, if taken; a release that fails is said, with the
        command that releases it."""
        if self.uuid is None:
            return
        try:
            self.clients.ironic(versions.DEPLOY_TEMPLATES
                                ).delete_deploy_template(self.uuid)
        except sdk_exceptions.NotFoundException:
            pass    # broken by hand meanwhile
        except (exceptions.CommandError, sdk_exceptions.HttpException) as exc:
            self.say('The lock was not released (%s): the next apply takes '
                     'it with --break-lock' % (getattr(exc, 'details', None)
                                               or exc))
        self.uuid = None


def _holder(clients):
    """Who takes the lock: the user and project of the token, the host
    and the process."""
    access = clients.token()
    user = '%s in %s' % (getattr(access, 'username', None), getattr(
        access, 'project_name', None) or 'the system scope')
    return '%s, on %s, pid %d' % (user, socket.gethostname(), os.getpid())


def _held(template):
    """Its holder and age, as the lock says them."""
    found = (template.get('extra') or {}).get(HOLDER) or {}
    since = found.get('since') or template.get('created_at') or ''
    try:
        taken = datetime.datetime.strptime(
            since[:19], '%Y-%m-%dT%H:%M:%S').replace(
                tzinfo=datetime.timezone.utc)
        seconds = int((_now() - taken).total_seconds())
        age = ', %s ago' % ('%d s' % seconds if seconds < 120 else
                            '%d min' % (seconds // 60))
    except ValueError:
        age = ''
    return 'taken by %s since %s%s' % (found.get('holder') or 'unknown',
                                       since or 'unknown', age)


def _now():
    return datetime.datetime.now(datetime.timezone.utc)
