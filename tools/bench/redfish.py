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

"""``--only redfish``: a toggle through ironic's redfish BIOS (the
emulated iLO) against one through the fake-steps BIOS."""

import subprocess

from bench import cloud as clouds
from bench import measure


def redfish_toggle(counter, runs):
    """A toggle through ironic's redfish BIOS interface (bm-6, behind the
    mini cloud's emulated iLO: a PATCH, a reboot and the BMC's boot
    progress) against one through the fake-steps BIOS (bm-0, at once):
    requests and wall time of each, ``runs`` toggles each.  Makes its own
    templates, flavors and servers, and removes them."""
    made = {'turbo': ('ProcAMDBoost', ('--resource-class',
                                       'baremetal-bronze')),
            'benchrf': ('BenchFleet', ())}
    names, servers, flavors = [], [], []
    try:
        for config, (setting, kind) in made.items():
            for value, set_to in (('enabled', 'Enabled'),
                                  ('disabled', 'Disabled')):
                left = _template_of(counter, config, value, kind)
                if left:        # an interrupted bench's
                    counter.run('baremetal', 'deploy', 'template', 'delete',
                                left, cloud=clouds.SYSTEM)
                counter.run('baremetal', 'deploy', 'template', 'create',
                            '--config', '%s=%s' % (config, value), *(
                                kind or ('--requires-trait',
                                         'HW_CPU_HYPERTHREADING')),
                            '--bios-setting', '%s=%s' % (setting, set_to),
                            cloud=clouds.SYSTEM)
                names.append(_template_of(counter, config, value, kind))
        counter.run('baremetal', 'node', 'deploy-config', 'prepare', 'bm-6',
                    '--config', 'turbo=disabled', cloud=clouds.SYSTEM)
        counter.run('baremetal', 'node', 'deploy-config', 'sync', *names,
                    cloud=clouds.SYSTEM)
        for config, base in (('turbo', 'bm.bronze'), ('benchrf', 'bm.gold')):
            # no '+' in the name: OSC finds a server by name with a regex
            flavor = 'bench.%s' % base[3:]
            counter.run('flavor', 'create', '--vcpus', '4', '--ram', '8192',
                        '--disk', '40', '--property', 'resources:'
                        'CUSTOM_BAREMETAL_%s=1' % base[3:].upper(),
                        *[arg for r in ('VCPU', 'MEMORY_MB', 'DISK_GB')
                          for arg in ('--property', 'resources:%s=0' % r)],
                        flavor)
            flavors.append(flavor)
            counter.run('flavor', 'deploy-config', 'set', flavor,
                        '%s=disabled' % config)
            counter.run('server', 'create', '--flavor', flavor, '--image',
                        'tiny', '--nic', 'none', '--wait', flavor)
            servers.append((config, flavor))
        found = {}
        for config, server in servers:
            found[config] = []
            for number in range(runs):
                value = ('enabled', 'disabled')[number % 2]
                counts, took = counter.run(
                    'server', 'resize', '--deploy-config',
                    '%s=%s' % (config, value), server)
                found[config].append({'requests': counts, 's': took})
        return {'redfish': found['turbo'], 'fake-steps': found['benchrf']}
    finally:
        for args in ([('server', 'delete', '--wait', server)
                      for _, server in servers]
                     + [('flavor', 'delete', flavor) for flavor in flavors]
                     + [('baremetal', 'deploy', 'template', 'delete', name,
                         '--os-cloud', clouds.SYSTEM) for name in names]):
            _tidy(counter, args)


def _tidy(counter, args):
    """A clean-up command, whose failure is logged and does not hide the
    error that led here."""
    try:
        counter.run(*args)
    except SystemExit as exc:
        measure.log('clean-up: %s' % exc)


def _template_of(counter, config, value, kind=()):
    """The name of the template of a config (``show --config``, of a
    resource class with ``kind``), or an empty string when there is
    none."""
    done = subprocess.run(['openstack', '--os-cloud', clouds.SYSTEM,
                           'baremetal',
                           'deploy', 'template', 'show', '--config',
                           '%s=%s' % (config, value), *kind, '-f', 'value',
                           '-c', 'name'], env=counter.env,
                          capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else ''
