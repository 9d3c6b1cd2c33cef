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

"""The BIOS of an emulated BMC: a vendor's registry, its Dependencies, and
what the vendor's BMC does with pending settings.  Plain data and functions
(no HTTP, no sushy-tools), so that the unit tests drive it directly.

A BIOS state is a dict: ``vendor``, ``current`` and ``pending`` attributes,
and ``messages`` (the Redfish messages of the last apply).
"""

import copy
import functools
import hashlib
import json
import os

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data')
VENDORS = ('dell', 'hpe')
# Factory values that differ from the captured server's: Dell ships its
# R750 at "Performance Per Watt (DAPC)"; the captured one had been set to
# PerfOptimized.  HPE's capture is at the factory profile already.
FACTORY = {'dell': {'SysProfile': 'PerfPerWattOptimizedDapc'},
           'hpe': {'WorkloadProfile': 'GeneralPowerEfficientCompute'}}
SUCCESS = {'MessageId': 'Base.1.0.Success', 'Severity': 'OK',
           'Message': 'Successfully Completed Request'}


@functools.cache
def _load(vendor, name):
    with open(os.path.join(DATA, vendor, name)) as f:
        return json.load(f)


def registry(vendor):
    """The vendor's trimmed registry, as captured (a copy)."""
    return copy.deepcopy(_load(vendor, 'registry.json'))


def registry_id(vendor):
    return _load(vendor, 'registry.json')['Id']


def _dependencies(vendor):
    return _load(vendor, 'registry.json')['RegistryEntries']['Dependencies']


def _holds(term, values):
    value = values.get(term['MapFromAttribute'])
    want = term['MapFromValue']
    if term['MapFromCondition'] == 'EQU':
        return value == want
    if term['MapFromCondition'] == 'NEQ':
        return value != want
    return False


def applies(dep, values):
    """Whether a Dependency's MapFrom holds for these values.  Terms join
    by their MapTerms; where a term has none (Dell's registry), by OR."""
    terms = dep['Dependency']['MapFrom']
    result = _holds(terms[0], values)
    for term in terms[1:]:
        if term.get('MapTerms') == 'AND':
            result = result and _holds(term, values)
        else:
            result = result or _holds(term, values)
    return result


def locks(vendor, name, values):
    """The Dependencies that make ``name`` read-only under ``values``."""
    return [d for d in _dependencies(vendor)
            if d['Dependency']['MapToAttribute'] == name
            and d['Dependency']['MapToProperty'] == 'ReadOnly'
            and d['Dependency']['MapToValue'] is True
            and applies(d, values)]


def _has_lock(vendor, name):
    return any(d['Dependency']['MapToAttribute'] == name
               and d['Dependency']['MapToProperty'] == 'ReadOnly'
               for d in _dependencies(vendor))


def forced_values(vendor, values):
    """The values a profile sets (CurrentValue Dependencies that hold)."""
    out = dict(values)
    for dep in _dependencies(vendor):
        body = dep['Dependency']
        if body['MapToProperty'] == 'CurrentValue' and applies(dep, values):
            out[body['MapToAttribute']] = body['MapToValue']
    return out


def factory(vendor):
    """A BIOS at the vendor's factory values, nothing pending."""
    values = dict(_load(vendor, 'bios.json')['Attributes'])
    values.update(FACTORY[vendor])
    return {'vendor': vendor, 'current': forced_values(vendor, values),
            'pending': {}, 'messages': [SUCCESS]}


def apply_times(vendor):
    """The apply times the vendor's BMC lists for a BIOS change, as
    captured (iLO: none)."""
    return list(_load(vendor, 'bios.json')['SupportedApplyTimes'])


def uses_etags(vendor):
    """Whether the vendor's BMC tags its BIOS resources with ETags, and
    checks a change's ``If-Match`` against them (iLO), as captured."""
    return _load(vendor, 'bios.json')['ETags']


def etag(attributes):
    """A strong ETag of these values (an iLO's: 8 hex digits)."""
    digest = hashlib.sha256(json.dumps(attributes, sort_keys=True).encode())
    return '"%s"' % digest.hexdigest()[:8].upper()


def live_registry(bios):
    """The registry as the BMC serves it now.  Dell's iDRAC reports
    ReadOnly from the Dependencies under the current values; HPE's iLO
    keeps the static flags and checks Dependencies at apply only."""
    reg = registry(bios['vendor'])
    if bios['vendor'] == 'dell':
        for attr in reg['RegistryEntries']['Attributes']:
            name = attr['AttributeName']
            if _has_lock('dell', name):
                attr['ReadOnly'] = bool(locks('dell', name,
                                              bios['current']))
    return reg


def _attribute_names(vendor):
    return {a['AttributeName'] for a in
            _load(vendor, 'registry.json')['RegistryEntries']['Attributes']}


class Refused(Exception):
    """A PATCH the BMC refuses outright (HTTP 400)."""


def patch(bios, attributes):
    """Store ``attributes`` as pending (applied at the next reset).  The
    iDRAC refuses, at once, a setting read-only under the values it would
    have: so a profile and the setting it unlocks may come together.  A
    PATCH after a ResetBios makes the pending set an ordinary one again."""
    unknown = sorted(set(attributes) - _attribute_names(bios['vendor']))
    if unknown:
        raise Refused('unknown BIOS attributes: %s' % ', '.join(unknown))
    if bios['vendor'] == 'dell':
        after = {**bios['current'], **bios['pending'], **attributes}
        for name, value in sorted(attributes.items()):
            if value != bios['current'].get(name) and locks(
                    'dell', name, after):
                raise Refused('%s is read-only under %s' % (
                    name, _profile_text('dell', name, after)))
    bios['pending'].update(attributes)
    bios.pop('resetting', None)
    return bios


def _profile_text(vendor, name, values):
    sources = sorted({t['MapFromAttribute'] for d in locks(vendor, name,
                                                           values)
                      for t in d['Dependency']['MapFrom']})
    return ', '.join('%s=%s' % (s, values.get(s)) for s in sources)


def refusal(vendor, name, values):
    """The Redfish message of a pending setting a profile locks."""
    profile = _profile_text(vendor, name, values)
    return {'MessageId': 'Base.1.8.PropertyNotWritable',
            'Message': ('The property %s is a read only property and '
                        'cannot be assigned a value: %s locks it.'
                        % (name, profile)),
            'MessageArgs': [name],
            'RelatedProperties': ['#/Attributes/%s' % name],
            'Severity': 'Critical',
            'Resolution': ('Set %s to Custom first, or leave %s out of '
                           'the request.' % (profile.split('=')[0], name))}


def apply_pending(bios):
    """What the BIOS does with the pending set at a reset.  iLO refuses
    the whole set if a changed setting is locked under the values it would
    have, and says so in the settings' Messages; otherwise (and always on
    a Dell, which checked at PATCH) the set is applied, then the profile's
    own values."""
    pending, bios['pending'] = bios['pending'], {}
    defaults = bios.pop('resetting', False)
    bios.pop('job', None)       # the job runs at the reset
    if not pending:
        return bios
    vendor = bios['vendor']
    after = dict(bios['current'], **pending)
    refused = [refusal(vendor, name, after)
               for name, value in sorted(pending.items())
               if value != bios['current'].get(name) and not defaults
               and vendor == 'hpe' and locks(vendor, name, after)]
    if refused:
        bios['messages'] = refused
        return bios
    bios['current'] = forced_values(vendor, after)
    bios['messages'] = [SUCCESS]
    return bios


# The iDRAC's refusal of a change while a configuration job is scheduled.
SYS011 = {
    'MessageId': 'IDRAC.2.8.SYS011', 'Severity': 'Warning',
    'Message': 'Pending configuration values are already committed, '
               'unable to perform another set operation.',
    'Resolution': 'Wait for the scheduled job to complete or delete the '
                  'configuration jobs before attempting more configuration '
                  'operations.'}


def schedule_job(bios):
    """The iDRAC makes a change asked for ``OnReset`` a configuration job,
    run at the next reset; until then it refuses another change
    (``job_refusal``)."""
    bios['jobs_made'] = bios.get('jobs_made', 0) + 1
    bios['job'] = 'JID_%d' % bios['jobs_made']
    return bios


def job_refusal(bios):
    """The message that refuses a change now (a job is scheduled), or
    None."""
    return SYS011 if bios.get('job') else None


def clear_job_queue(bios):
    """DellJobService.DeleteJobQueue (JID_CLEARALL): every job deleted,
    its pending settings with it."""
    bios.pop('job', None)
    bios.pop('resetting', None)
    bios['pending'] = {}
    return bios


def reset_to_defaults(bios):
    """Bios.ResetBios: the factory values become pending, applied at the
    next reset as a whole, whatever the profile was."""
    defaults = factory(bios['vendor'])['current']
    bios['pending'] = {k: v for k, v in defaults.items()
                       if bios['current'].get(k) != v}
    bios['resetting'] = True
    return bios


def settings_view(bios):
    """The Settings resource's Attributes: iDRAC lists only what is
    pending; iLO lists every setting, pending values over current ones."""
    if bios['vendor'] == 'dell':
        return dict(bios['pending'])
    return dict(bios['current'], **bios['pending'])
