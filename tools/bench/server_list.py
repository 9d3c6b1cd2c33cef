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

"""Section 5: ``server deploy-config list --long`` over many
servers."""

import json
import subprocess

import waiting

from bench import cloud as clouds
from bench import measure
from bench import objects

LIST_SERVERS = 'bench-list'


def server_list_long(cloud, counter, env, servers, runs):
    """``server deploy-config list --long`` with ``servers`` more servers
    that each run on a node: requests added per server, and wall time
    with and without ``--long``.  The servers are virtual (nova's fake
    driver boots a hundred in seconds); each is paired with an enrolled
    bench node by the node's ``instance_uuid`` (ironic's record of the
    instance on a node, as nova sets it at deploy), so that the command
    finds a node and reads its BIOS for every one of them."""
    args = ('server', 'deploy-config', 'list', '--long')
    before, _ = counter.run(*args)
    project = cloud.admin.current_project_id
    cloud.nova_call('PUT', '/os-quota-sets/%s' % project, json={
        'quota_set': {'instances': -1, 'cores': -1, 'ram': -1}})
    flavor = next(f for f in cloud.nova_call('GET', '/flavors')['flavors']
                  if f['name'] == 'bench.f0001')
    image = next(i for i in cloud.admin.image.images() if i.name == 'tiny')
    cloud.nova_call('POST', '/servers', json={'server': {
        'name': LIST_SERVERS, 'flavorRef': flavor['id'],
        'imageRef': image.id, 'networks': 'none', 'min_count': servers,
        'max_count': servers}})

    def booted():
        # nova names one server as asked, several <name>-1, <name>-2, ...
        found = cloud.nova_call('GET', '/servers/detail?name=^%s'
                                % LIST_SERVERS)['servers']
        if any(s['status'] == 'ERROR' for s in found):
            raise SystemExit('a bench server failed to boot')
        return len(found) == servers and all(
            s['status'] == 'ACTIVE' for s in found) and found

    found = waiting.wait_for('%d bench servers ACTIVE' % servers, booted,
                             600, 1)
    nodes = sorted((n for n in cloud.ironic_list('nodes', 'uuid,name')
                    if (n['name'] or '').startswith('bench-')),
                   key=lambda n: n['name'])[:servers]
    clouds.parallel(lambda pair: cloud.ironic_call(
        'PATCH', '/nodes/%s' % pair[0]['uuid'], json=[
            {'op': 'add', 'path': '/instance_uuid',
             'value': pair[1]['id']}]), list(zip(nodes, found, strict=True)))
    after, _ = counter.run(*args)
    short, _ = counter.run(*args[:-1])
    shown = json.loads(subprocess.run(
        [measure.BIN + '/openstack', '--os-cloud', clouds.ADMIN, *args, '-f',
         'json'],
        env=env, capture_output=True, text=True, check=True).stdout)
    read = sum(1 for row in shown if row['Server'].startswith(LIST_SERVERS)
               and row['Actual'])
    if read != servers:
        raise SystemExit('list --long read the BIOS of %d of %d servers'
                         % (read, servers))
    openstack = [measure.BIN + '/openstack', '--os-cloud', clouds.ADMIN]
    times = measure.interleaved(runs, env, long=[*openstack, *args],
                                short=[*openstack, *args[:-1]])
    objects.unpair(cloud)
    objects.delete_servers(cloud, LIST_SERVERS)
    cloud.nova_call('DELETE', '/os-quota-sets/%s' % project)
    return {'servers': servers, 'rows': len(shown), 'before': before,
            'after': after, 'short': short, 'long_s': times['long'],
            'short_s': times['short']}
