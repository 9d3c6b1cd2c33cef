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

"""What each deploy step does to a server that runs on the node.

A toggle of a bare-metal server runs its template's steps as ironic service
steps on the running node.  Some of ironic's steps destroy data: its agent
RAID ``apply_configuration`` deletes the existing volumes before it creates
the new ones (``delete_existing=True``, ``ironic/drivers/modules/agent.py``;
redfish keeps them by default but builds a new root volume), and the agent's
erase and image steps write over the disks
(``ironic_python_agent/hardware.py``).  Those are for a deploy, where the
disk is empty; on a running server they destroy its data.  Others reboot
the server (BIOS and firmware changes take effect at the next boot; an
in-band step boots the agent ramdisk first).  A step this table does not
name may do anything: it is named in the plan, as unknown.

Tables of (interface, step), from the steps ironic's drivers and the agent
declare; plain functions over step dicts.
"""

import collections

DESTROYS = 'destroys data'
REBOOTS = 'reboots'
UNKNOWN = 'unknown'

_VOLUMES = 'the RAID volumes and everything on them'
_DISKS = "the contents of the node's disks"
# (interface, step): the data it destroys on a running server.
DESTROYS_DATA = {
    ('raid', 'apply_configuration'): _VOLUMES,
    ('raid', 'create_configuration'): _VOLUMES,
    ('raid', 'delete_configuration'): _VOLUMES,
    ('deploy', 'erase_devices'): _DISKS,
    ('deploy', 'erase_devices_express'): _DISKS,
    ('deploy', 'erase_devices_metadata'):
        "the partition tables and file system signatures of the node's "
        'disks',
    ('deploy', 'burnin_disk'): _DISKS,
    ('deploy', 'write_image'): 'the root disk, which an image overwrites',
    ('deploy', 'execute_bootc_install'):
        'the root disk, which an operating system is installed over',
    ('deploy', 'erase_pstore'): 'the persistent store (its crash logs)',
    ('deploy', 'clean_uefi_nvram'):
        'the UEFI boot entries (the server may not boot again)',
}
# (interface, step) that take effect only at a reboot, which ironic does.
REBOOTING = {
    ('bios', 'apply_configuration'),
    ('bios', 'factory_reset'),
    ('firmware', 'update'),
    ('management', 'update_firmware'),
    ('deploy', 'burnin_cpu'),
    ('deploy', 'burnin_gpu'),
    ('deploy', 'burnin_memory'),
    ('deploy', 'burnin_network'),
    ('deploy', 'inject_files'),
}
# What the fake hardware the mini cloud and tests run declares: harmless.
HARMLESS = {
    ('deploy', 'log_passthrough'),
    ('vendor', 'log_passthrough'),
}

# One step, what it does to a running server, and what is at risk.
Risk = collections.namedtuple('Risk', ['step', 'kind', 'at_risk'])


def step_name(step):
    return '%s.%s' % (step['interface'], step['step'])


def risk(step):
    """The Risk of one step: DESTROYS, REBOOTS, UNKNOWN or None (known
    harmless)."""
    key = (step['interface'], step['step'])
    if key in DESTROYS_DATA:
        return Risk(step_name(step), DESTROYS, DESTROYS_DATA[key])
    if key in REBOOTING:
        return Risk(step_name(step), REBOOTS, None)
    if key in HARMLESS:
        return None
    return Risk(step_name(step), UNKNOWN, None)


def risks(steps):
    """[Risk] of the steps that are not known harmless, in their order."""
    return [r for r in map(risk, steps) if r is not None]


def destroying(steps):
    """[Risk] of the steps that destroy data on a running server."""
    return [r for r in risks(steps) if r.kind == DESTROYS]


def describe(steps):
    """The steps for a plan: ``bios.apply_configuration (reboots),
    vendor.mine (unknown: its effect on a running server is not known)``.
    """
    said = []
    for step in steps:
        found = risk(step)
        if found is None:
            said.append(step_name(step))
        elif found.kind == UNKNOWN:
            said.append('%s (unknown: its effect on a running server is '
                        'not known)' % found.step)
        else:
            said.append('%s (%s)' % (found.step, found.kind))
    return ', '.join(said)


def deploy_only_warning(name, steps):
    """What ``deploy template create|set`` says of a template with a
    data-destroying step, or None."""
    found = destroying(steps)
    if not found:
        return None
    return ('Deploy template %s runs %s, which destroys %s on a running '
            'server: it applies at deploy only, and a running server cannot '
            'be toggled to it.' % (
                name, ', '.join(r.step for r in found),
                '; '.join(dict.fromkeys(r.at_risk for r in found))))
