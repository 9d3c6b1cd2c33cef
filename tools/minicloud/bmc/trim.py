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

"""Regenerate the BMC emulator's trimmed registries from the captures.

    python3 tools/minicloud/bmc/trim.py /work/shared/registries

Keeps the settings the project uses, the vendor's profiles, every
Dependency that a profile drives or that governs a kept setting, and every
setting those Dependencies name (so that they can be evaluated); drops the
rest, and the Menus.  The emulator reads only the files this writes.
"""

import gzip
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# folder: (the capture's folder, the profiles, the settings used)
MODELS = {
    'dell': ('dell-r750', ['SysProfile'],
             ['ProcTurboMode', 'LogicalProc', 'ProcVirtualization',
              'SriovGlobalEnable', 'ProcCStates']),
    'hpe': ('hpe-dl385-gen10plus-v2',
            ['WorkloadProfile', 'AMDPerformanceWorkloadProfile'],
            ['ProcSMT', 'ProcAMDBoost', 'Sriov', 'ProcAmdIoVt']),
}
REGISTRY_FIELDS = ('@odata.type', 'Id', 'Name', 'Description', 'Language',
                   'OwningEntity', 'RegistryVersion', 'SupportedSystems')


def _load(path):
    with gzip.open(path, 'rt') as f:
        return json.load(f)


def _sources(dep):
    return {m['MapFromAttribute'] for m in dep['Dependency']['MapFrom']}


def kept_dependencies(dependencies, profiles, used):
    """Those a profile drives, and those that govern a used setting."""
    wanted = set(profiles) | set(used)
    return [d for d in dependencies
            if _sources(d) & set(profiles)
            or d['Dependency']['MapToAttribute'] in wanted]


def trim(registry, bios, profiles, used):
    """(registry, current values) reduced to what the emulator needs."""
    entries = registry['RegistryEntries']
    deps = kept_dependencies(entries['Dependencies'], profiles, used)
    names = set(profiles) | set(used)
    for dep in deps:
        names |= _sources(dep) | {dep['Dependency']['MapToAttribute']}
    attributes = [a for a in entries['Attributes']
                  if a['AttributeName'] in names]
    out = {k: registry[k] for k in REGISTRY_FIELDS if k in registry}
    out['RegistryEntries'] = {'Attributes': attributes,
                              'Dependencies': deps}
    values = {a['AttributeName']: bios['Attributes'][a['AttributeName']]
              for a in attributes if a['AttributeName'] in bios['Attributes']}
    return out, {'AttributeRegistry': bios.get('AttributeRegistry'),
                 'Attributes': values,
                 # how the BMC takes a change: the apply times it lists
                 # (none, as the iLO), and whether it tags with ETags
                 'SupportedApplyTimes': bios.get('@Redfish.Settings', {}).get(
                     'SupportedApplyTimes', []),
                 'ETags': '@odata.etag' in bios}


def main(argv):
    if len(argv) != 1:
        raise SystemExit(__doc__)
    for model, (folder, profiles, used) in MODELS.items():
        src = os.path.join(argv[0], folder)
        registry, bios = trim(
            _load(os.path.join(src, 'bios-attribute-registry.json.gz')),
            _load(os.path.join(src, 'bios.json.gz')), profiles, used)
        for name, data in (('registry.json', registry), ('bios.json', bios)):
            with open(os.path.join(HERE, 'data', model, name), 'w') as f:
                json.dump(data, f, indent=1, sort_keys=True)
                f.write('\n')
        print('%s: %d attributes, %d dependencies' % (
            model, len(registry['RegistryEntries']['Attributes']),
            len(registry['RegistryEntries']['Dependencies'])))


if __name__ == '__main__':
    main(sys.argv[1:])
