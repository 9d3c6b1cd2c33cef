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

"""Section 6: what our hooks add to OSC's own server commands."""

import sys

import waiting

from bench import cloud as clouds
from bench import measure
from bench import objects

PREFLIGHT_SERVER = 'bench-preflight'
HOOKS_SERVER = 'bench-hooks'


def wait_active(cloud, name, statuses=('ACTIVE', 'VERIFY_RESIZE')):
    def active():
        found = cloud.nova_call('GET', '/servers/detail?all_tenants=True&'
                                'name=^%s$' % name)['servers']
        if any(s['status'] == 'ERROR' for s in found):
            raise SystemExit('bench server %s is in ERROR' % name)
        return (len(found) == 1 and found[0]['status'] in statuses
                and not found[0]['OS-EXT-STS:task_state'] and found[0])

    return waiting.wait_for('%s settled' % name, active, 300, 0.5)


def hook_costs(cloud, counter, env, without, runs):
    """What our hooks on OSC's own commands add to them, for a plain
    member and for an admin, on a cloud of at least 1000 flavors and 1000
    images: requests (ours against the same virtualenv without our
    plugin) and wall time, median of ``runs`` interleaved pairs.  Each
    command is a plain one that asks for no deploy config: server create,
    server rebuild (of a virtual server), server resize --flavor (then
    confirmed, untimed)."""
    cloud.nova_call('POST', '/flavors', json={'flavor': {
        'name': 'bench.hooks', 'vcpus': 1, 'ram': 512, 'disk': 1}})
    found = {}
    for cloud_name, who in ((clouds.DEMO, 'member'), (clouds.ADMIN, 'admin')):
        name = '%s-%s' % (HOOKS_SERVER, who)
        commands = {
            'server create': (('server', 'create', '--flavor', 'm1.tiny',
                               '--image', 'tiny', '--nic', 'none',
                               PREFLIGHT_SERVER), PREFLIGHT_SERVER),
            'server rebuild': (('server', 'rebuild', '--image', 'tiny',
                                name), name),
            'server resize': (('server', 'resize', '--flavor',
                               'bench.hooks', name), name),
        }
        objects.delete_servers(cloud, name)
        counter.run('server', 'create', '--flavor', 'm1.tiny', '--image',
                    'tiny', '--nic', 'none', '--wait', name,
                    cloud=cloud_name)
        for label, (args, server) in commands.items():
            measure.log('  %s, %s' % (label, who))
            found['%s (%s)' % (label, who)] = _hook_cost(
                cloud, counter, env, without, runs, cloud_name, args,
                server)
        objects.delete_servers(cloud, name)
    return found


def _hook_cost(cloud, counter, env, without, runs, cloud_name, args,
               server):
    def settle():
        """Back to where the command started: no server to create, or the
        server ACTIVE on m1.tiny."""
        if args[1] == 'create':
            objects.delete_servers(cloud, server)
            return
        found = wait_active(cloud, server)
        if found['status'] != 'VERIFY_RESIZE':
            return
        action = '/servers/%s/action' % found['id']
        cloud.nova_call('POST', action, json={'confirmResize': None})
        wait_active(cloud, server, ('ACTIVE',))
        tiny = next(f for f in cloud.nova_call('GET', '/flavors')['flavors']
                    if f['name'] == 'm1.tiny')
        cloud.nova_call('POST', action, json={'resize': {
            'flavorRef': tiny['id']}})
        wait_active(cloud, server, ('VERIFY_RESIZE',))
        cloud.nova_call('POST', action, json={'confirmResize': None})
        wait_active(cloud, server, ('ACTIVE',))

    counts = {}
    for label, python in (('ours', sys.executable),
                          ('without', without + '/bin/python')):
        counts[label], _ = counter.run(*args, cloud=cloud_name,
                                       python=python)
        settle()
    times = {'ours': [], 'without': []}
    for _ in range(runs):
        for label, osc in (('ours', measure.BIN),
                           ('without', without + '/bin')):
            times[label].append(measure.wall([osc + '/openstack', '--os-cloud',
                                      cloud_name, *args], env))
            settle()
    return {'requests': counts['ours'], 'requests_without':
            counts['without'], 'ours_s': measure.median(times['ours']),
            'without_s': measure.median(times['without']), 'runs': runs}
