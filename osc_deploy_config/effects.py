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
settings (API 1.40) and its ``raid_config``.  Plain functions over the
dicts of ironic's API.
"""


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
        have = sorted(str(d.get('raid_level')) for d in
                      (raid_config or {}).get('logical_disks') or ())
        if have != levels:
            found.append('RAID %s (the node has %s)' % (
                '+'.join(levels), '+'.join(have) or 'none'))
    return found
