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

"""Rebuilding a bare-metal server: at which compute microversion, and
which of its configs to apply again after.

From compute API 2.93 nova-api asks for every rebuild to reimage the boot
volume (``reimage_boot_volume``), and nova's ironic driver refuses every
such rebuild: the server goes to ERROR ("Ironic doesn't support rebuilding
volume backed instances", ``nova/virt/ironic/driver.py``).  At 2.92 the
same rebuild works.  So a bare-metal rebuild is sent at 2.92 unless the
user asked for what only a later version offers, or the nova is one known
to rebuild ironic servers at every version (``IRONIC_REBUILD_FIXED_IN``,
none yet: verified on nova 34, whose maximum is 2.104).

A rebuild redeploys the node with the traits of the server's flavor and
image, so ironic applies their templates again: a config a toggle applied
since reverts, and is applied again after (``reapplied``).  Plain functions
over plain data.
"""

import uuid

from osc_lib import exceptions

from osc_deploy_config.domain.servers import server_configs

# The highest compute microversion nova's ironic driver can rebuild at.
IRONIC_REBUILD_MAX = (2, 92)
# The first nova, by its maximum compute microversion, whose ironic driver
# rebuilds at every microversion; None while no nova does.
IRONIC_REBUILD_FIXED_IN = None


def version_text(version):
    return '%d.%d' % version


def on_ironic_by_flavor(flavor):
    """Whether a server's flavor is a bare-metal one, as nova documents
    them: no VCPU, memory or disk, one unit of a custom resource class.
    What a user who may not see the server's hypervisor can tell."""
    specs = flavor.get('extra_specs') or {}
    custom = [k for k, v in specs.items()
              if k.startswith('resources:CUSTOM_') and str(v) == '1']
    return bool(custom) and all(
        str(specs.get('resources:%s' % rc)) == '0'
        for rc in ('VCPU', 'MEMORY_MB', 'DISK_GB'))


def hypervisor_may_be_ironic(server):
    """Whether the server's hypervisor, when nova shows it, may be an
    ironic node: nova's ironic driver names each by its node's UUID."""
    hostname = server.get('OS-EXT-SRV-ATTR:hypervisor_hostname') or ''
    try:
        uuid.UUID(hostname)
    except ValueError:
        return False
    return True


def pinned_version(server_name, negotiated, nova_max, explicit=None,
                   reimage=False):
    """The compute microversion to send a bare-metal server's rebuild at,
    or None to leave OSC's.  ``negotiated``: what OSC would send;
    ``nova_max``: nova's maximum (None: unknown); ``explicit``: the version
    the user asked for (--os-compute-api-version), if any.  Refuses, in one
    line, what nova's ironic driver cannot rebuild."""
    if reimage:
        raise exceptions.CommandError(
            'Server %s is a bare-metal server: nova\'s ironic driver cannot '
            'reimage a boot volume, and refuses every rebuild that asks to '
            '(the server would go to ERROR). Nothing was changed; leave out '
            '--reimage-boot-volume.' % server_name)
    if fixed(nova_max) or negotiated <= IRONIC_REBUILD_MAX:
        return None
    if explicit:
        raise exceptions.CommandError(
            'Server %s is a bare-metal server: from compute API 2.93 nova '
            'asks its ironic driver to reimage a boot volume, which it '
            'refuses (the server would go to ERROR). Nothing was changed; '
            'rebuild at %s or lower (--os-compute-api-version %s), or leave '
            'the version to osc-deploy-config.' % (
                server_name, version_text(IRONIC_REBUILD_MAX),
                version_text(IRONIC_REBUILD_MAX)))
    return IRONIC_REBUILD_MAX


def fixed(nova_max):
    """Whether this nova is known to rebuild ironic servers at every
    microversion."""
    return bool(IRONIC_REBUILD_FIXED_IN and nova_max
                and nova_max >= IRONIC_REBUILD_FIXED_IN)


def reapplied(server, applied):
    """The configs a toggle applied (``applied``: the node's record) that
    a rebuild reverts: [Config]."""
    return [toggled for toggled, _ in
            server_configs.reverted_by_rebuild(server, applied)]
