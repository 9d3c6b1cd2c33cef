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

"""Section 2: the requests of every command at each size of the
cloud."""

from bench import declared
from bench import measure
from bench import objects

COMMANDS = (
    ('template list', ('baremetal', 'deploy', 'template', 'list')),
    ('template list --long', ('baremetal', 'deploy', 'template', 'list',
                              '--long')),
    ('template show', ('baremetal', 'deploy', 'template', 'show',
                       'CUSTOM_DEPLOY_CONFIG_BENCH_V0001')),
    ('node deploy-config list', ('baremetal', 'node', 'deploy-config',
                                 'list', '--config', 'bench=v0001')),
    ('node deploy-config sync --dry-run', (
        'baremetal', 'node', 'deploy-config', 'sync', '--dry-run',
        'CUSTOM_DEPLOY_CONFIG_BENCH_V0001')),
    ('flavor deploy-config list', ('flavor', 'deploy-config', 'list')),
    ('flavor deploy-config show', ('flavor', 'deploy-config', 'show',
                                   'bench.f0001')),
    ('server resize --deploy-config --dry-run', (
        'server', 'resize', '--deploy-config', 'bench=v0000', '--dry-run',
        objects.SERVER)),
)


def requests_per_size(cloud, counter, sizes):
    """Requests of every command with N bench templates, nodes and
    flavors, for each N of ``sizes``; and how many objects of each kind
    the cloud then had."""
    table, counted, have, server = {}, {}, 0, None
    for size in sizes:
        measure.log('growing to %d templates, nodes and flavors' % size)
        objects.grow(cloud, size, have)
        have = size
        if server is None:
            server = objects.boot_server(cloud)
        for name, args in COMMANDS:
            counts, _ = counter.run(*args)
            table.setdefault(name, {})[size] = counts
        for name, counts in declared.requests(counter).items():
            table.setdefault(name, {})[size] = counts
        counted[size] = {
            'templates': len(cloud.ironic_list('deploy_templates', 'uuid')),
            'nodes': len(cloud.ironic_list('nodes', 'uuid')),
            'flavors': len(cloud.nova_call(
                'GET', '/flavors?is_public=None&limit=100000')['flavors']),
        }
    return table, counted, server
