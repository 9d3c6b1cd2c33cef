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

"""What each deploy step does to a server that runs on the node: a running
server takes a step only when this table knows it to be safe there.

A toggle of a bare-metal server runs its template's steps as ironic service
steps on the running node.  Some steps destroy data: ironic's agent RAID
``apply_configuration`` deletes the existing volumes before it creates the
new ones (``delete_existing=True``, ``ironic/drivers/modules/agent.py``;
redfish keeps them by default but builds a new root volume), the agent's
erase and image steps write over the disks
(``ironic_python_agent/hardware.py``), and vendors have their own: iDRAC's
``management.import_configuration`` applies a server configuration profile,
RAID included (``ironic/drivers/modules/drac/management.py``), iLO 5's
``management.erase_devices`` sanitizes the disks out of band
(``ironic/drivers/modules/ilo/management.py``), and clearing the Secure Boot
keys (redfish, iLO) leaves a server that may not boot.  Those are for a
deploy or a cleaning, where nothing is to keep; on a running server they
destroy what it runs.  Others reboot it (BIOS and firmware changes take
effect at the next boot; an in-band step boots the agent ramdisk first),
and a few leave the host alone (a BMC reset, an export).

Some change what the server boots with: a BIOS reset to its defaults
(``bios.factory_reset``, iLO's ``management.reset_bios_to_default``) may
change the boot mode (UEFI or legacy) and Secure Boot, and so does a BIOS
``apply_configuration`` that sets them (Dell's ``BootMode`` and
``SecureBoot``, Lenovo's ``BootModes_SystemBootMode``, Supermicro's
``SecureBootEnable_0122``, a legacy BIOS's ``CSMSupport``...): the server
may not boot again; and
``deploy.inject_files`` writes files into the instance's own partitions,
over what is there
(``ironic_python_agent/hardware.py``).

So a running server takes only the steps this table knows to be safe on it,
which may reboot it: SAFE.  A step that destroys data is never taken; a
step that risks the server's boot, and any step the table does not know,
is taken only when the operator names it (``--allow-step``), and the
refusal says what is at risk.  Steps of priority 0 are disabled, in a
template as ironic skips them at deploy: a toggle never runs them.  Plain
functions over step dicts.
"""

import collections
import re

DESTROYS = 'destroys data'
AT_RISK = 'risks the boot'
REBOOTS = 'reboots'
SAFE = 'safe'
UNKNOWN = 'unknown'

_VOLUMES = 'the RAID volumes and everything on them'
_DISKS = "the contents of the node's disks"
_KEYS = 'the Secure Boot keys (the server may not boot again)'
_PROFILE = ('the RAID volumes and settings, which the imported configuration '
            'profile replaces')
# (interface, step): the data it destroys on a running server.
DESTROYS_DATA = {
    ('raid', 'apply_configuration'): _VOLUMES,
    ('raid', 'create_configuration'): _VOLUMES,
    ('raid', 'delete_configuration'): _VOLUMES,
    ('deploy', 'deploy'): 'the root disk, which a deploy writes over',
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
    ('deploy', 'inject_files'):
        "files of the instance's partitions, which it writes over",
    # iDRAC (drac/management.py)
    ('management', 'import_configuration'): _PROFILE,
    ('management', 'import_export_configuration'): _PROFILE,
    # iLO (ilo/management.py), redfish (redfish/management.py)
    ('management', 'erase_devices'): _DISKS,
    ('management', 'one_button_secure_erase'):
        "the node's disks, BIOS settings and licences",
    ('management', 'clear_secure_boot_keys'): _KEYS,
    ('management', 'reset_secure_boot_keys_to_default'):
        'the Secure Boot keys the server was enrolled with (it may not boot '
        'again)',
}
_BOOT_MODE = ('the boot mode and Secure Boot settings, which the BIOS '
              'defaults may change (the server may not boot again)')
# (interface, step): what a running server risks; taken only when allowed.
RISKS_BOOT = {
    ('bios', 'factory_reset'): _BOOT_MODE,
    ('management', 'reset_bios_to_default'): _BOOT_MODE,
}
# BIOS settings of the boot mode and Secure Boot, as vendors name them.
BOOT_SETTING = re.compile(
    r'boot[ _]?mode[ _]?(select)?([_#][0-9a-f]{4})?$|secure[ _]?boot'
    r'|(^|_)csm', re.I)
# (interface, step) that take effect at a reboot, which ironic does.
REBOOTING = {
    ('bios', 'apply_configuration'),
    ('firmware', 'update'),
    ('management', 'update_firmware'),
    ('management', 'update_firmware_sum'),
    ('management', 'flash_firmware_sum'),
    ('deploy', 'burnin_cpu'),
    ('deploy', 'burnin_gpu'),
    ('deploy', 'burnin_memory'),
    ('deploy', 'burnin_network'),
}
# (interface, step) that leave the running host alone: the BMC resets or
# exports, ironic's own network step around in-band ones, and what the
# fake hardware the mini cloud and tests run declares.
HOST_UNTOUCHED = {
    ('management', 'export_configuration'),
    ('management', 'clear_job_queue'),
    ('management', 'reset_idrac'),
    ('management', 'known_good_state'),
    ('management', 'reset_ilo'),
    ('network', 'reattach_networking'),
    ('deploy', 'log_passthrough'),
    ('vendor', 'log_passthrough'),
}

# One step, what it does to a running server, and what is at risk.
Risk = collections.namedtuple('Risk', ['step', 'kind', 'at_risk'])


def step_name(step):
    return '%s.%s' % (step['interface'], step['step'])


def enabled(steps):
    """The steps ironic runs: priority 0 disables a template's step."""
    return [s for s in steps if int(s.get('priority', 1)) != 0]


def risk(step):
    """The Risk of one step: DESTROYS, AT_RISK, REBOOTS, SAFE or
    UNKNOWN."""
    key = (step['interface'], step['step'])
    if key in DESTROYS_DATA:
        return Risk(step_name(step), DESTROYS, DESTROYS_DATA[key])
    if key in RISKS_BOOT:
        return Risk(step_name(step), AT_RISK, RISKS_BOOT[key])
    boot = boot_settings(step)
    if boot:
        return Risk(step_name(step), AT_RISK,
                    'the boot mode and Secure Boot, which %s %s (the '
                    'server may not boot again)' % (
                        ', '.join(boot), 'sets' if len(boot) == 1 else 'set'))
    if key in REBOOTING:
        return Risk(step_name(step), REBOOTS, None)
    if key in HOST_UNTOUCHED:
        return Risk(step_name(step), SAFE, None)
    return Risk(step_name(step), UNKNOWN, None)


def boot_settings(step):
    """The settings of a BIOS ``apply_configuration`` that set the boot
    mode or Secure Boot, as ``name=value``."""
    if (step['interface'], step['step']) != ('bios', 'apply_configuration'):
        return []
    settings = (step.get('args') or {}).get('settings')
    return ['%s=%s' % (s.get('name'), s.get('value'))
            for s in settings if isinstance(s, dict)
            and BOOT_SETTING.search(str(s.get('name')))
            ] if isinstance(settings, list) else []


def destroying(steps):
    """[Risk] of the steps that destroy data on a running server."""
    return [r for r in map(risk, steps) if r.kind == DESTROYS]


def unknown(steps, allowed=()):
    """[Risk] of the steps not known to be safe on a running server (not
    in the table, or risking its boot), but for those the operator allowed
    (``allowed``: ``interface.step`` names)."""
    return [r for r in map(risk, steps)
            if r.kind in (UNKNOWN, AT_RISK) and r.step not in allowed]


def grantable(steps):
    """Whether a running server may take every step without the
    operator's ``--allow-step``: what a project may be granted."""
    return all(risk(s).kind in (SAFE, REBOOTS) for s in steps)


def why_not_known_safe(found):
    """The words for the steps ``unknown`` found: what each risks."""
    unknown_names = list(dict.fromkeys(r.step for r in found
                                       if r.kind == UNKNOWN))
    said = ['%s %s not known to be safe on a running server (it may '
            'destroy its data)' % (', '.join(unknown_names),
                                   'is' if len(unknown_names) == 1 else 'are')
            ] if unknown_names else []
    said.extend('%s risks %s' % (r.step, r.at_risk) for r in dict.fromkeys(
        r for r in found if r.kind == AT_RISK))
    return '; '.join(said)


def describe(steps):
    """The steps for a plan: ``bios.apply_configuration (reboots),
    vendor.mine (allowed: its effect on a running server is not known)``.
    """
    said = []
    for found in map(risk, steps):
        if found.kind == SAFE:
            said.append(found.step)
        elif found.kind == UNKNOWN:
            said.append('%s (allowed: its effect on a running server is '
                        'not known)' % found.step)
        elif found.kind == AT_RISK:
            said.append('%s (allowed: it risks %s)' % (found.step,
                                                       found.at_risk))
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
