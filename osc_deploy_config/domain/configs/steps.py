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

"""Deploy steps: read them, check them as ironic will, build profiles.

Ironic accepts a step name it does not know and skips it at deploy time, but
it refuses a malformed step list: we refuse the same things before any
request, with one line that says which step and why.
"""

import os
import re
import sys

from osc_lib import exceptions

# ironic.conductor.steps.DEPLOYING_INTERFACE_PRIORITY
INTERFACES = ('vendor', 'power', 'management', 'firmware', 'deploy', 'bios',
              'raid')
STEP_KEYS = ('interface', 'step', 'args', 'priority')
# Template steps run in priority order; 0 would disable them.
DEFAULT_PRIORITY = 150
_DIGITS = re.compile(r'[0-9]+')
# A step is a method of the driver interface: its name is an identifier.
# (ironic's schema takes any string, and then fails with a 500 on one its
# database cannot store, such as U+10000 on a utf8 MySQL.)
_STEP_NAME = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')


def _error(message, *args):
    return exceptions.CommandError(message % args)


def load_steps(source, stdin=None):
    """Steps from a JSON or YAML string, a file name, or ``-`` (stdin).

    The same sources as python-ironicclient's ``--steps``.
    """
    import yaml

    what = 'deploy steps'
    from_file = source != '-' and os.path.isfile(source)
    if source == '-':
        text = (stdin or sys.stdin).read()
        what += ' from standard input'
    elif from_file:
        try:
            with open(source, encoding='utf-8') as f:
                text = f.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise _error('Cannot read deploy steps from %s: %s', source,
                         exc) from None
        what += ' in file %s' % source
    else:
        text = source
    try:
        steps = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise _error('Malformed %s: %s', what, _yaml_problem(exc)) from None
    if source != '-' and not from_file and not isinstance(steps,
                                                          (list, dict)):
        raise _error('Deploy steps %r: no such file, and not a JSON or YAML '
                     'list of steps', source[:60])
    return steps


def _yaml_problem(exc):
    """What a YAML/JSON parser found wrong, and where, on one line."""
    problem = getattr(exc, 'problem', None) or str(exc).splitlines()[0]
    mark = getattr(exc, 'problem_mark', None)
    if mark is not None:
        problem += ' (line %d, column %d)' % (mark.line + 1, mark.column + 1)
    return problem


def validate_steps(steps):
    """Check steps against ironic's deploy step schema; return them with
    integer priorities.  Raises CommandError naming the first problem."""
    if not isinstance(steps, list):
        raise _error('Deploy steps must be a list of steps, not %s',
                     type(steps).__name__)
    if not steps:
        raise _error('Deploy steps must not be empty')
    checked, seen = [], set()
    for number, step in enumerate(steps, 1):
        checked.append(_validate_step(number, step))
        key = (step['interface'], step['step'])
        if key in seen:
            raise _error('Deploy step %d: duplicate step %r', number,
                         '%s.%s' % key)
        seen.add(key)
    return checked


def _validate_step(number, step):
    if not isinstance(step, dict):
        raise _error('Deploy step %d must be an object with keys %s',
                     number, ', '.join(STEP_KEYS))
    missing = [k for k in STEP_KEYS if k not in step]
    if missing:
        raise _error('Deploy step %d is missing %s', number,
                     ', '.join(missing))
    unknown = sorted(set(step) - set(STEP_KEYS))
    if unknown:
        raise _error('Deploy step %d has unknown keys %s', number,
                     ', '.join(map(repr, unknown)))
    if step['interface'] not in INTERFACES:
        raise _error('Deploy step %d: unknown interface %r (one of %s)',
                     number, step['interface'], ', '.join(INTERFACES))
    if not isinstance(step['step'], str) or not _STEP_NAME.fullmatch(
            step['step']):
        raise _error('Deploy step %d: "step" must name a step of the '
                     'interface (letters, digits and _), not %r', number,
                     step['step'])
    if not isinstance(step['args'], dict):
        raise _error('Deploy step %d: "args" must be an object', number)
    priority = step['priority']
    if isinstance(priority, str) and _DIGITS.fullmatch(priority):
        priority = int(priority)
    if (isinstance(priority, bool) or not isinstance(priority, int)
            or priority < 0):
        raise _error('Deploy step %d: priority must be an integer >= 0, '
                     'not %r', number, step['priority'])
    return dict(step, priority=priority)


def bios_step(settings, priority=DEFAULT_PRIORITY):
    """A BIOS profile: ``bios.apply_configuration`` with these settings."""
    return {
        'interface': 'bios',
        'step': 'apply_configuration',
        'args': {'settings': [{'name': name, 'value': value}
                              for name, value in settings]},
        'priority': priority,
    }


def parse_bios_setting(text):
    """``'HyperThreading=Disabled'`` -> ``('HyperThreading', 'Disabled')``."""
    name, sep, value = text.partition('=')
    if not sep or not name:
        raise _error('Invalid BIOS setting %r: expected NAME=VALUE', text)
    return name, value


def load_raid_config(path):
    """A RAID profile from a JSON or YAML file: ironic's target RAID config
    (``{"logical_disks": [...]}``)."""
    import yaml

    try:
        with open(path, encoding='utf-8') as f:
            raid = yaml.safe_load(f)
    except (OSError, UnicodeDecodeError) as exc:
        raise _error('Cannot read RAID config %s: %s', path, exc) from None
    except yaml.YAMLError as exc:
        raise _error('Malformed RAID config %s: %s', path,
                     _yaml_problem(exc)) from None
    disks = raid.get('logical_disks') if isinstance(raid, dict) else None
    if not isinstance(disks, list) or not disks or not all(
            isinstance(d, dict) for d in disks):
        raise _error('RAID config %s must be an object with a non-empty '
                     '"logical_disks" list of objects', path)
    return raid


def raid_step(raid_config, priority=DEFAULT_PRIORITY):
    """A RAID profile: ``raid.apply_configuration`` of this target."""
    return {
        'interface': 'raid',
        'step': 'apply_configuration',
        'args': {'raid_config': raid_config},
        'priority': priority,
    }
