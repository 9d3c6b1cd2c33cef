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

"""BIOS settings checked against the hardware's BIOS registry.

Ironic (API 1.74) reports with each node's BIOS settings the registry the
hardware publishes: each setting's ``attribute_type`` (Enumeration,
Integer, String, Boolean, Password), ``allowable_values``, bounds, lengths
and ``read_only``.  A template's BIOS settings are checked against the
registries of the nodes that can take it, before ironic stores a setting
that every deploy would then fail on, or silently skip.  A node whose
BIOS reports no registry is not guessed about.  A setting a vendor
profile's value locks (``bios_profiles``) is refused where the node's
profile locks it.  Ironic before 36.0 passes a step to the BMC as it is,
and the BMC takes a profile and what it unlocks in one request: the
setting is then writable, whatever ``read_only`` says, when the same step
sets the profile to a value that unlocks it (``same_step_unlocks``, the
default).  From 36.0 ironic checks each setting against its cache first:
a setting cached read-only, or locked by the profile's current value, is
refused whatever the step sets (the node is prepared first), and so is
every value of an Enumeration whose registry names its values by number
while the BIOS reports display strings (Supermicro).  Plain functions
over the dicts of ironic's API.
"""

import collections

from osc_deploy_config.domain.hardware import bios_profiles

# One refusal: a setting (name=value), why, and the nodes that refuse it.
Problem = collections.namedtuple('Problem', ['setting', 'reason', 'nodes'])
NO_SUCH_SETTING = 'no such setting in the BIOS registry'


def has_registry(entries):
    """Whether a node's detailed BIOS settings carry a registry."""
    return any(e.get('attribute_type') for e in entries)


def problems(wanted, registries, same_step_unlocks=True,
             skips_unchanged=True):
    """[Problem] of the settings ``wanted`` ({name: value}) against
    ``registries`` ({node label: its detailed BIOS settings}), one per
    setting and reason, naming every node that refuses it
    (``same_step_unlocks`` False: as ironic 36 and later check it;
    ``skips_unchanged`` False: before 35.0, which writes even a step of
    the values a node has)."""
    grouped = {}
    for node, entries in sorted(registries.items()):
        by_name = {e['name']: e for e in entries}
        locks = bios_profiles.locked_on(wanted, by_name, same_step_unlocks,
                                        skips_unchanged)
        unlocked = bios_profiles.unlocked(wanted, by_name) \
            if same_step_unlocks else frozenset()
        for name, value in sorted(wanted.items()):
            if name not in locks:
                reason = refusal(by_name.get(name), value, name in unlocked,
                                 same_step_unlocks)
            elif same_step_unlocks:
                reason = bios_profiles.reason(locks[name])
            else:
                reason = bios_profiles.prepare_first(name, entries)
            if reason:
                grouped.setdefault(('%s=%s' % (name, value), reason),
                                   []).append(node)
    return [Problem(setting, reason, nodes)
            for (setting, reason), nodes in sorted(grouped.items())]


def refusal(entry, value, unlocked=False, same_step_unlocks=True):
    """Why the registry ``entry`` of a setting refuses ``value``, or None
    (``unlocked``: read-only or not, it is writable when the step is
    applied; ``same_step_unlocks`` False: ironic 36 and later, which take
    only the value names they cache)."""
    if entry is None:
        return NO_SUCH_SETTING
    if entry.get('read_only') and not unlocked:
        return 'the setting is read-only'
    kind = str(entry.get('attribute_type') or '').lower()
    value = str(value)
    if kind == 'enumeration':
        allowed = [str(v) for v in entry.get('allowable_values') or ()]
        reported = str(entry.get('value'))
        if not same_step_unlocks and by_number(allowed) and \
                not reported.isdigit():
            return "ironic 36 and later accept only the registry's value " \
                "names (%s) and read back the BIOS's display strings (%s): " \
                "no value of %s can be applied through ironic's redfish " \
                'BIOS interface' % (', '.join(allowed), reported,
                                    entry.get('name', 'the setting'))
        if allowed and value not in allowed and not (
                by_number(allowed) and not value.isdigit()):
            return 'allowed values are %s' % ', '.join(allowed)
    elif kind == 'integer':
        return _out_of_bounds(entry, value)
    elif kind == 'boolean':
        if value.lower() not in ('true', 'false'):
            return 'the setting is a Boolean (true or false)'
    elif kind in ('string', 'password'):
        low, high = entry.get('min_length'), entry.get('max_length')
        if (low is not None and len(value) < low) or (
                high is not None and len(value) > high):
            return 'length must be %s to %s' % (
                0 if low is None else low, 'any' if high is None else high)
    return None


def by_number(allowed):
    """Whether a registry names an Enumeration's values by number only
    (Supermicro: ``0``, ``1``), while its BIOS reports and takes the
    display strings (``Enable``), which ironic does not keep: before
    ironic 36 a display string is then not judged; from 36 ironic refuses
    it, and a number fails its read-back (``refusal``)."""
    return bool(allowed) and all(str(v).isdigit() for v in allowed)


def _out_of_bounds(entry, value):
    try:
        number = int(value)
    except ValueError:
        return 'the setting is an Integer'
    low, high = entry.get('lower_bound'), entry.get('upper_bound')
    if (low is not None and number < low) or (
            high is not None and number > high):
        return 'the setting must be %s to %s' % (
            'any' if low is None else low, 'any' if high is None else high)
    return None


def describe(found):
    """The one line that refuses ``found`` (a non-empty [Problem])."""
    return 'BIOS registry refuses %s' % '; '.join(
        '%s on %s: %s' % (p.setting, ', '.join(p.nodes), p.reason)
        for p in found)
