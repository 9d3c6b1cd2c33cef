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

"""What ironic's ``redfish`` BIOS interface does with a BIOS step, release
by release: the one map of it.  The release is read from the API's
maximum version (35.0 = 1.111, 36.0 and 37.0 = 1.112, 38.0 = 1.113,
39.0 = 1.115), as read in ironic's released code
(``drivers/modules/redfish/bios.py``):

- 35.0: a BIOS step ends without the agent, from a periodic poll of the
  BMC (``_query_bios_apply_status``); before, only the agent's heartbeat
  ends it.  35.0 also records the ramdisk as enabled for a service
  request that does not say ``disable_ramdisk`` (API 1.108,
  ``services.versions.SERVICE_WITHOUT_RAMDISK``): a toggle's request of
  BIOS steps says it where the API has it (a runbook carries its own).
- 36.0: the step is checked against ironic's cache of the registry
  before the write (``_validate_settings``: a setting cached read-only,
  a value not allowed), whatever else the step sets; 37.0 converts
  Integer and Boolean values too.
- 37.0: a BMC that reports no ``BootProgress`` is polled for the values
  themselves; on 35 and 36 the poll raises, and the step ends failed at
  ironic's callback timeout (``[conductor] clean_callback_timeout``,
  ``service_callback_timeout``).
- 38.0: a setting still listed in the BMC's pending settings counts as
  applied where that list holds more than the request
  (``purge_pending_behavior``).  HPE's iLO and Lenovo's XCC list every
  setting there, so on 35.0 to 37.x their BIOS step never ends: the poll
  sees ``BootProgress``, touches the node and polls again.

36.0 and 37.0 report the same maximum: where a rule tells them apart,
1.112 is read as 36.0, the careful reading.  An unknown range (an
endpoint without version discovery) is read as the newest release.
Plain data and functions.
"""

import collections

from osc_deploy_config.domain.hardware import bios_profiles

# One release's rules: ``label`` names it; ``agentless``: a BIOS step ends
# without the agent; ``validates``: checked against the cache before the
# write (so a profile set in the same step unlocks nothing);
# ``pending_read_right``: a BMC that lists every setting as pending ends
# its step; ``without_boot_progress``: a BMC without BootProgress ends its
# step from the values.
Release = collections.namedtuple('Release', [
    'label', 'agentless', 'validates', 'pending_read_right',
    'without_boot_progress'])

# (the first API maximum, the release), oldest first.
RELEASES = (
    ((1, 0), Release('before 35.0', False, False, False, False)),
    ((1, 111), Release('35.x', True, False, False, False)),
    ((1, 112), Release('36.x or 37.x', True, True, False, False)),
    ((1, 113), Release('38.x', True, True, True, True)),
    ((1, 115), Release('39.0 or later', True, True, True, True)),
)
NEWEST = RELEASES[-1][1]
# The first release of each rule, as a refusal names it.
FIRST = {'agentless': '35.0', 'validates': '36.0',
         'pending_read_right': '38.0', 'without_boot_progress': '37.0'}
# Vendors whose BMC lists every BIOS setting as pending.
PENDING_LISTS_ALL = ('HPE iLO', 'Lenovo XCC')
# The BIOS interfaces of ironic's Redfish code (idrac-redfish is a
# subclass of it); other interfaces have rules of their own.
REDFISH_BIOS = ('redfish', 'idrac-redfish')


def of_api(maximum):
    """The Release of an ironic whose API maximum is ``maximum`` ((major,
    minor)); the newest where it is None (not known)."""
    if not maximum:
        return NEWEST
    return [r for first, r in RELEASES if tuple(maximum[:2]) >= first][-1]


def vendor(registry, node=None):
    """The BMC's vendor, from the profiles the node's BIOS registry has
    (``bios_profiles.PROFILES``), else from ironic's ``properties/vendor``;
    None when neither tells."""
    present = bios_profiles.present(registry)
    if present:
        return present[0].vendor
    told = ((node or {}).get('properties') or {}).get('vendor') or ''
    for name in PENDING_LISTS_ALL + ('Dell iDRAC',):
        if name.split()[0].lower() in told.lower():
            return name
    return None


def stall(release, node, registry, boot_progress=None):
    """Why a BIOS step on the node would never end (or end only at ironic's
    callback timeout) on this release; None when it ends.
    ``boot_progress``: whether the BMC reports BootProgress (None: not
    known, which ironic's API does not show)."""
    if node.get('bios_interface') not in REDFISH_BIOS:
        return None
    found = vendor(registry, node)
    # before 35.0 the agent's heartbeat ends the step: not judged here
    if found in PENDING_LISTS_ALL and release.agentless and not (
            release.pending_read_right):
        return ('ironic %s never ends a BIOS step on %s, whose pending '
                'settings list every setting; ironic %s or later does'
                % (release.label, found, FIRST['pending_read_right']))
    if boot_progress is False and not release.without_boot_progress:
        return ('ironic %s ends a BIOS step on a BMC without BootProgress '
                'only at its callback timeout, failed; ironic %s or later '
                'does not' % (release.label, FIRST['without_boot_progress']))
    return None


# Where ironic records that a step runs without its ramdisk, by state.
_NO_RAMDISK = {'clean wait': 'cleaning_disable_ramdisk',
               'service wait': 'service_disable_ramdisk'}


def waiting_step(node, release=NEWEST):
    """What a node's redfish BIOS step waits for, in words, and what ends
    it (``node``: with its ``driver_internal_info`` and ``properties``);
    None where no BIOS step waits.  Ironic records no time the step
    began (each poll touches the node)."""
    internal = node.get('driver_internal_info') or {}
    waiting = internal.get('redfish_bios_state') or {}
    if not waiting.get('reboot_requested'):
        return None
    state = node.get('provision_state')
    settings = ', '.join('%s=%s' % item for item in sorted((
        waiting.get('requested_bios_attrs') or {}).items())) or 'its settings'
    own_disk = internal.get(_NO_RAMDISK.get(state)) and (
        ', without the ramdisk: the node boots its own disk%s' % (
            ' (the server\'s)' if state == 'service wait' else ', and a '
            'disk with nothing to boot never ends the wait where the BMC '
            'reports its boot progress')) or ''
    stalls = stall(release, node, None)
    return ('its BIOS step waits in "%s" for the node to boot an OS with %s '
            'applied%s; the step cannot be aborted, and a BMC that reports '
            'its boot progress keeps the callback timeout away: %s' % (
                state, settings, own_disk, stalls + ', even once the node '
                'has them' if stalls else 'boot an OS at the node\'s BMC '
                '(from its disk, media or the network) with them set, and '
                'ironic ends the step'))
