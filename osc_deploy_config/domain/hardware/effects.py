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

"""What a template's steps should leave on the hardware, and whether the
node shows it.

Ironic runs a step it does not know as a no-op and reports success, and a
BIOS may ignore a setting: a finished deploy or servicing proves nothing.
The effect is read back from what ironic reports of the node: its BIOS
settings (API 1.40) and its ``raid_config``.  Both are ironic's cache of the
hardware, refreshed only when ironic cleans, services or verifies the node
(or a step applies settings): each reading carries the time ironic recorded
it (``read_at``), never presented as live.  Plain functions over the dicts
of ironic's API.
"""

import datetime


def bios_settings(steps):
    """{name: value} the BIOS steps set, the last step winning."""
    wanted = {}
    for step in steps:
        if (step['interface'], step['step']) == ('bios',
                                                 'apply_configuration'):
            wanted.update((s['name'], s['value'])
                          for s in step['args'].get('settings') or ())
    return wanted


def raid_levels(steps):
    """The RAID levels of the logical disks the RAID steps configure, or
    None when no step configures RAID."""
    for step in reversed(steps):
        if (step['interface'], step['step']) == ('raid',
                                                 'apply_configuration'):
            disks = step['args']['raid_config'].get('logical_disks') or ()
            return sorted(str(d.get('raid_level')) for d in disks)
    return None


def readable(steps):
    """Whether ironic reports the effect of every one of the steps."""
    return all((s['interface'], s['step']) in (
        ('bios', 'apply_configuration'), ('raid', 'apply_configuration'))
        for s in steps)


def values(bios):
    """{name: value} of a node's BIOS settings as ironic lists them."""
    return {s['name']: s['value'] for s in bios or ()}


def raid_levels_of(raid_config):
    """The RAID levels of a node's ``raid_config``, sorted."""
    return sorted(str(d.get('raid_level')) for d in
                  (raid_config or {}).get('logical_disks') or ())


def shown(steps, bios, raid_config):
    """What the node shows of what the steps set, in words
    (``HyperThreading=Enabled``, ``RAID 1``); empty when the steps set
    nothing ironic reports.  ``bios``: {name: value}."""
    found = ['%s=%s' % (name, bios.get(name, '(none)'))
             for name in sorted(bios_settings(steps))]
    if raid_levels(steps) is not None:
        found.append('RAID %s' % ('+'.join(raid_levels_of(raid_config))
                                  or 'none'))
    return found


def read_at(steps, bios, raid_config):
    """When ironic recorded what the node shows of the steps' effect: the
    oldest of its timestamps on those BIOS settings and on the RAID
    configuration, as ``2026-12-01T10:00:00Z``; None when it has none.
    ``bios``: the settings as ironic lists them."""
    wanted = bios_settings(steps)
    stamps = [s.get('updated_at') or s.get('created_at')
              for s in bios or () if s['name'] in wanted]
    if raid_levels(steps) is not None:
        stamps.append((raid_config or {}).get('last_updated'))
    parsed = [_utc(stamp) for stamp in stamps]
    if not parsed or None in parsed:
        return None
    return min(parsed).strftime('%Y-%m-%dT%H:%M:%SZ')


def _utc(stamp):
    """ironic's ``2026-12-01T10:00:00+00:00`` or its RAID configuration's
    ``2026-12-01 10:00:00.123456`` (UTC), as an aware datetime."""
    if not stamp:
        return None
    try:
        parsed = datetime.datetime.fromisoformat(str(stamp))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=datetime.timezone.utc)
    return parsed.astimezone(datetime.timezone.utc)


def missing(steps, bios, raid_config):
    """What the node does not show of the steps' effect, in words; empty
    when it shows all of it.  ``bios``: {name: value} of the node's BIOS
    settings; ``raid_config``: the node's."""
    found = []
    for name, value in sorted(bios_settings(steps).items()):
        if bios.get(name) != value:
            found.append('BIOS %s=%s (the node has %s)' % (
                name, value, bios.get(name, 'no such setting')))
    levels = raid_levels(steps)
    if levels is not None:
        have = raid_levels_of(raid_config)
        if have != levels:
            found.append('RAID %s (the node has %s)' % (
                '+'.join(levels), '+'.join(have) or 'none'))
    return found
