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

"""A systems driver for sushy-tools: its fake driver's systems, with a
BIOS (``model``) whose pending settings apply at the next power-on, a boot
that reports its progress, and a short, configurable power delay.

Config keys (sushy-tools' app config): ``MINICLOUD_BMC_POWER_DELAY`` (s
until a power change is seen, default 1), ``MINICLOUD_BMC_BOOT_DELAY`` (s
from power-on to ``OSRunning``, default 1).  Each system of
``SUSHY_EMULATOR_FAKE_SYSTEMS`` names its BIOS ``vendor``.
"""

import time

from sushy_tools import error
from sushy_tools.emulator.resources.systems import fakedriver

from bmc import model

BOOTING = 'SystemHardwareInitializationComplete'
# The disk of a system that has nothing to boot (``set_disk``).
BLANK = 'Blank'
RUNNING = 'OSRunning'
# How many resets a system keeps a record of.
RESETS_KEPT = 20


class BmcDriver(fakedriver.FakeDriver):
    """FakeDriver's systems (kept in its persistent state), with a BIOS."""

    def _config_delay(self, key):
        return float(self._config.get(key, 1.0))

    def _get(self, identity):
        system = super()._get(identity)
        if 'bios' not in system:
            system['bios'] = model.factory(system.get('vendor', 'dell'))
            system['booted_at'] = (time.time() - 3600
                                   if system['power_state'] == 'On'
                                   else None)
            self._update(system)
        return system

    def _update_if_needed(self, system):
        """A power-on that comes due boots the BIOS: pending settings
        apply (as a real BMC applies them at reset)."""
        pending = system.get('pending_power')
        if pending and time.time() >= pending['apply_time']:
            changes = {'power_state': pending['power_state'],
                       'pending_power': None}
            if pending['power_state'] == 'On':
                changes['bios'] = model.apply_pending(
                    system.get('bios') or model.factory(
                        system.get('vendor', 'dell')))
                changes['booted_at'] = time.time()
                # a disk with nothing to boot leaves the boot in firmware
                changes['os_boots'] = system.get('disk') != BLANK
            else:
                changes['booted_at'] = None
            self._update(system, **changes)
        return system

    def set_power_state(self, identity, state):
        """As FakeDriver's, after a short delay, never a random one; a
        restart passes through Off, so it boots (and applies) again.  Each
        reset is recorded (``resets``), with whether the OS ran then; a
        graceful shutdown is the OS's own, which an OS that does not run
        never makes."""
        running = self.get_boot_progress(identity) == RUNNING
        system = self._get(identity)
        self._update(system, resets=(system.get('resets') or [])[
            -(RESETS_KEPT - 1):] + [{'ResetType': state, 'At': time.time(),
                                     'OsRunning': running}])
        if state == 'GracefulShutdown' and not running:
            return
        due = time.time() + self._config_delay('MINICLOUD_BMC_POWER_DELAY')
        if state in ('On', 'ForceOn'):
            target = 'On'
        elif state in ('ForceOff', 'GracefulShutdown'):
            target = 'Off'
        elif state in ('ForceRestart', 'GracefulRestart', 'PowerCycle'):
            system['power_state'] = 'Off'
            system['booted_at'] = None
            target = 'On'
        else:
            raise error.NotSupportedError(
                'Power state %s is not supported' % state)
        if system['power_state'] != target:
            self._update(system, pending_power={'power_state': target,
                                                'apply_time': due})

    def get_boot_progress(self, identity):
        """BootProgress LastState: 'None' while off, hardware
        initialisation for the boot delay, then the OS runs; a boot from a
        blank disk stays in hardware initialisation."""
        system = self._get(identity)
        booted = system.get('booted_at')
        if system['power_state'] != 'On' or booted is None:
            return 'None'
        if time.time() - booted < self._config_delay(
                'MINICLOUD_BMC_BOOT_DELAY') or not system.get('os_boots',
                                                            True):
            return BOOTING
        return RUNNING

    def set_disk(self, identity, contents):
        """The disk's contents from the next boot on: ``BLANK`` (nothing
        to boot: the boot never leaves firmware) or 'OS'."""
        self._update(self._get(identity), disk=contents)

    def get_disk(self, identity):
        return self._get(identity).get('disk') or 'OS'

    def refuse_precondition(self, identity):
        """Count a change refused for its ``If-Match`` (the tests read it:
        sushy met the iLO's 412)."""
        system = self._get(identity)
        self._update(system, preconditions_failed=system.get(
            'preconditions_failed', 0) + 1)

    def get_preconditions_failed(self, identity):
        return self._get(identity).get('preconditions_failed', 0)

    def get_resets(self, identity):
        """The last resets asked of the system, oldest first."""
        return list(self._get(identity).get('resets') or [])

    def get_bios(self, identity):
        return dict(self._get(identity)['bios']['current'])

    def set_bios(self, identity, attributes):
        system = self._get(identity)
        try:
            bios = model.patch(system['bios'], attributes or {})
        except model.Refused as exc:
            raise error.BadRequest(str(exc)) from None
        self._update(system, bios=bios)

    def schedule_job(self, identity):
        system = self._get(identity)
        self._update(system, bios=model.schedule_job(system['bios']))

    def clear_job_queue(self, identity):
        system = self._get(identity)
        self._update(system, bios=model.clear_job_queue(system['bios']))

    def reset_bios(self, identity):
        system = self._get(identity)
        self._update(system, bios=model.reset_to_defaults(system['bios']))

    def get_bios_state(self, identity):
        """The whole BIOS state: for the resources' additions."""
        return self._get(identity)['bios']

    def get_versions(self, identity):
        return {'BiosVersion': '1.0.0'}
