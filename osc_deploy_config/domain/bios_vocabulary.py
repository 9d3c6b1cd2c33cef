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

"""Vendor-neutral configs: the BIOS attribute and value that mean a config
on each vendor's hardware, found in the hardware's own BIOS registry.

BIOS attribute names differ by vendor: hyperthreading is ``LogicalProc`` on
Dell iDRAC, ``ProcHyperthreading`` on HPE iLO, ``Processors_HyperThreading``
on Lenovo XCC, ``Hyper-Threading`` or ``Hyper-Threading [ALL]`` on
Supermicro, and a BMC refuses a name its registry lacks.  Metal3's
baremetal-operator maps three vendor-neutral firmware fields
(``simultaneousMultithreadingEnabled``, ``virtualizationEnabled``,
``sriovEnabled``) to each BMC type's names; this table does the same for
config types, and ironic's BIOS registry (API 1.74) tells which name, and
which spelling of the value, a node's BIOS has.  Sources, by vendor:

Dell iDRAC
    Metal3 baremetal-operator ``pkg/hardwareutils/bmc/idrac.go``:
    ``LogicalProc``, ``ProcVirtualization``, ``SriovGlobalEnable``; Dell's
    BIOS attribute registry (``BIOS.Setup.1-1``): ``ProcTurboMode``.
HPE iLO 4 and 5
    Metal3 ``pkg/hardwareutils/bmc/ilo4.go`` and ``ilo5.go``:
    ``ProcHyperthreading``, ``ProcVirtualization``, ``Sriov``; iLO 5's BIOS
    attributes: ``ProcTurbo``.
Lenovo XCC
    Lenovo Press LP1477, ThinkSystem UEFI settings:
    ``Processors_HyperThreading``,
    ``Processors_IntelVirtualizationTechnology``,
    ``DevicesandIOPorts_SRIOV``, ``Processors_TurboMode``; their values are
    ``Enable``/``Disable`` on 1st-generation Xeon Scalable, ``Enabled``/
    ``Disabled`` since.
Supermicro
    The AMI Aptio setup questions, as Supermicro's SUM and Redfish name
    them: ``Hyper-Threading`` (single socket), ``Hyper-Threading [ALL]``
    (dual socket), ``Intel Virtualization Technology``, ``SR-IOV Support``,
    ``Turbo Mode``; values ``Enable``/``Disable``.
The mini cloud
    Its fake BIOS of kind ``a`` (``tools/minicloud/fake_steps``):
    ``HyperThreading``.

Plain functions over the detailed BIOS settings ironic lists.
"""

import collections

from osc_deploy_config.domain import bios_registry

# One name of a config's setting: the attribute, whose it is, and where
# the name comes from.
Meaning = collections.namedtuple('Meaning', ['name', 'vendor', 'source'])
_METAL3_IDRAC = 'Metal3 baremetal-operator bmc/idrac.go'
_METAL3_ILO = 'Metal3 baremetal-operator bmc/ilo4.go, ilo5.go'
_DELL = "Dell's BIOS attribute registry (BIOS.Setup.1-1)"
_HPE = "HPE iLO 5's BIOS attributes"
_LENOVO = 'Lenovo Press LP1477, ThinkSystem UEFI settings'
_AMI = 'AMI Aptio setup questions, as Supermicro SUM and Redfish name them'
_MINICLOUD = "the mini cloud's fake BIOS, kind a"
# config type: the names of its setting, in the order they are looked for
NAMES = {
    'hyperthreading': (
        Meaning('LogicalProc', 'Dell iDRAC', _METAL3_IDRAC),
        Meaning('ProcHyperthreading', 'HPE iLO', _METAL3_ILO),
        Meaning('Processors_HyperThreading', 'Lenovo XCC', _LENOVO),
        Meaning('Hyper-Threading', 'Supermicro', _AMI),
        Meaning('Hyper-Threading [ALL]', 'Supermicro', _AMI),
        Meaning('HyperThreading', 'mini cloud', _MINICLOUD),
    ),
    'virtualization': (
        Meaning('ProcVirtualization', 'Dell iDRAC, HPE iLO',
                '%s; %s' % (_METAL3_IDRAC, _METAL3_ILO)),
        Meaning('Processors_IntelVirtualizationTechnology', 'Lenovo XCC',
                _LENOVO),
        Meaning('Intel Virtualization Technology', 'Supermicro', _AMI),
    ),
    'sriov': (
        Meaning('SriovGlobalEnable', 'Dell iDRAC', _METAL3_IDRAC),
        Meaning('Sriov', 'HPE iLO', _METAL3_ILO),
        Meaning('DevicesandIOPorts_SRIOV', 'Lenovo XCC', _LENOVO),
        Meaning('SR-IOV Support', 'Supermicro', _AMI),
    ),
    'turbo': (
        Meaning('ProcTurboMode', 'Dell iDRAC', _DELL),
        Meaning('ProcTurbo', 'HPE iLO', _HPE),
        Meaning('Processors_TurboMode', 'Lenovo XCC', _LENOVO),
        Meaning('Turbo Mode', 'Supermicro', _AMI),
    ),
}
# config value: its spellings, in the order they are looked for
VALUES = {
    'enabled': ('Enabled', 'Enable'),
    'disabled': ('Disabled', 'Disable'),
}

# The setting that means a config on one kind of hardware.
Match = collections.namedtuple('Match', ['name', 'value', 'vendor'])
# A resource class the vocabulary found nothing for, and why.
Unmatched = collections.namedtuple('Unmatched', ['resource_class', 'nodes',
                                                 'why'])


def knows(config):
    """Whether the vocabulary has the config's type and value."""
    return config.type in NAMES and config.value in VALUES


def match(config, registry):
    """The Match for ``config`` in one node's BIOS registry (its detailed
    settings): the first name of the table it has, writable, with a
    spelling of the value it allows; None."""
    by_name = {e['name']: e for e in registry}
    for meaning in NAMES[config.type]:
        entry = by_name.get(meaning.name)
        if entry is None:
            continue
        for value in VALUES[config.value]:
            if bios_registry.refusal(entry, value) is None:
                return Match(meaning.name, value, meaning.vendor)
    return None


def per_class(config, registries):
    """({resource class: Match}, [Unmatched]) over ``registries``
    ({resource class: {node label: its detailed BIOS settings}}): a class
    matches when every node of it with a registry agrees on the setting."""
    matched, unmatched = {}, []
    for resource_class, nodes in sorted(registries.items()):
        reporting = {n: r for n, r in nodes.items()
                     if bios_registry.has_registry(r)}
        found = {n: match(config, r) for n, r in sorted(reporting.items())}
        kinds = set(found.values())
        if not reporting:
            why = 'no BIOS registry reported'
        elif None in kinds:
            why = 'no setting of %s in the BIOS registry of %s' % (
                config.type, ', '.join(n for n, m in found.items()
                                       if m is None))
        elif len(kinds) > 1:
            why = 'its nodes name it differently (%s)' % ', '.join(
                '%s: %s' % (n, m.name) for n, m in found.items())
        else:
            matched[resource_class] = kinds.pop()
            continue
        unmatched.append(Unmatched(resource_class, sorted(nodes), why))
    return matched, unmatched
