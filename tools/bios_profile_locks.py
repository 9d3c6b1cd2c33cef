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

"""Print ``bios_profiles.LOCKS`` from the captured registries'
Dependencies, for pasting into the module, which never reads them:

    python tools/bios_profile_locks.py [REGISTRIES_FOLDER]

The folder defaults to ``$OSC_DEPLOY_CONFIG_REGISTRIES``, else
``../shared/registries`` beside the checkout.  What a profile value locks
is read as ``tests/unit/test_captured_registries.py`` checks it
(``locks_by_value``); a setting keeps its place in the module's order,
new ones follow by name, and the names by analogy
(``bios_profiles.BY_ANALOGY``) are added where their model's is.
"""

import os
import sys
import textwrap

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

from osc_deploy_config.domain.hardware import bios_profiles  # noqa: E402
from tests.unit import test_captured_registries as captured  # noqa: E402

WIDTH = 79


def table():
    """{profile: [(values, the settings each locks)]}, the values that
    lock the same settings grouped, in the registry's order."""
    found = {}
    for folder, profiles in sorted(captured.PROFILES_IN.items()):
        for profile in profiles:
            groups = {}
            for value, locked in captured.locks_by_value(
                    folder, profile).items():
                locked |= {copy for copy, model in
                           bios_profiles.BY_ANALOGY.items()
                           if model in locked}
                groups.setdefault(tuple(_ordered(profile, locked)),
                                  []).append(value)
            found[profile] = [(tuple(v), s) for s, v in groups.items()]
    return found


def _ordered(profile, names):
    known = bios_profiles.lockable(profile)
    return sorted(names, key=lambda n: (
        known.index(n) if n in known else len(known), n))


def _tuple(items):
    return ', '.join(repr(i) for i in items) + (',' if len(items) == 1
                                                else '')


def _wrapped(text, first, end):
    """``text`` after ``first``, wrapped at WIDTH under its opening."""
    return textwrap.wrap(first + text + end, WIDTH,
                         subsequent_indent=' ' * len(first),
                         break_long_words=False, break_on_hyphens=False)


def main(folder):
    captured.FOLDER = folder
    lines = ['LOCKS = {']
    for profile, groups in table().items():
        lines.append('    %r: (' % profile)
        for values, locked in groups:
            line = '        ((%s), (%s)),' % (_tuple(values), _tuple(locked))
            if len(line) <= WIDTH:
                lines.append(line)
                continue
            lines += _wrapped(_tuple(values), '        ((', '),')
            lines += _wrapped(_tuple(locked), '         (', ')),')
        lines.append('    ),')
    lines.append('}')
    print('\n'.join(lines))


if __name__ == '__main__':
    main(sys.argv[1] if len(sys.argv) > 1 else captured.FOLDER)
