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

"""``--only sets``: a boot of a flavor that asks for a set of two BIOS
configs against a boot of one that asks for one config, on the
fake-steps nodes; and what asking for each cost once, at ``flavor
deploy-config set`` (where the set is made and its nodes tagged)."""

import waiting

from bench import cloud as clouds
from bench import measure
from bench import objects

SERVER = 'bench-sets'
CONFIGS = (('benchseta', 'FnToggle'), ('benchsetb', 'BenchFleet'))
NODES = ('bm-0', 'bm-1')


def boot_with_a_set(cloud, counter, runs):
    """{'one config' | 'a set of two': {'set': requests of ``flavor
    deploy-config set``, 'boots': [{'requests', 's'}]}}: ``runs`` boots of
    ``openstack server create --wait`` each (its pre-flight included),
    interleaved, each server deleted and its node free again before the
    next.  Makes its own templates and flavors, and removes them."""
    made, flavors = [], []
    try:
        for config, setting in CONFIGS:
            made.append(_template(counter, config, setting))
        counter.run('baremetal', 'node', 'deploy-config', 'sync', *made,
                    cloud=clouds.SYSTEM)
        found = {}
        for label, asked in (('one config', CONFIGS[:1]),
                             ('a set of two', CONFIGS)):
            flavor = 'bench.sets-%d' % len(asked)
            _flavor(counter, flavor)
            flavors.append(flavor)
            counts, took = counter.run(
                'flavor', 'deploy-config', 'set', flavor,
                *['%s=on' % c for c, _ in asked])
            found[label] = {'set': counts, 'set_s': took, 'boots': [],
                            'flavor': flavor}
        for _ in range(runs):
            for one in found.values():
                _free(cloud)
                counts, took = counter.run(
                    'server', 'create', '--flavor', one['flavor'], '--image',
                    'tiny', '--nic', 'none', '--wait', SERVER)
                one['boots'].append({'requests': counts, 's': took})
                objects.delete_servers(cloud, SERVER)
        return found
    finally:
        objects.delete_servers(cloud, SERVER)
        for flavor in flavors:
            _tidy(counter, ('flavor', 'delete', flavor))
        sets = [t['name'] for t in cloud.ironic_list('deploy_templates',
                                                     'name')
                if t['name'].startswith('CUSTOM_DEPLOY_CONFIG_SET_BENCHSET')]
        # a project-scoped admin's: what needs a set is read from nova too
        for name in sets + made:
            _tidy(counter, ('baremetal', 'deploy', 'template', 'delete',
                            name))


def _template(counter, config, setting):
    name = 'CUSTOM_DEPLOY_CONFIG_%s_ON' % config.upper()
    _tidy(counter, ('baremetal', 'deploy', 'template', 'delete',
                    name))     # an earlier run's
    counter.run('baremetal', 'deploy', 'template', 'create', '--config',
                '%s=on' % config, '--bios-setting', '%s=on' % setting,
                '--requires-trait', 'HW_CPU_HYPERTHREADING',
                cloud=clouds.SYSTEM)
    return name


def _flavor(counter, name):
    _tidy(counter, ('flavor', 'delete', name))
    counter.run('flavor', 'create', '--vcpus', '4', '--ram', '8192',
                '--disk', '40', '--property',
                'resources:CUSTOM_BAREMETAL_GOLD=1',
                *[arg for r in ('VCPU', 'MEMORY_MB', 'DISK_GB')
                  for arg in ('--property', 'resources:%s=0' % r)], name)


def _free(cloud):
    """Until placement offers both nodes again (an earlier boot's node
    cleaned and back): each boot's pre-flight judges as many candidates
    (a BIOS read each)."""
    uuids = {n['uuid'] for n in cloud.ironic_list('nodes', 'uuid,name')
             if n['name'] in NODES}

    def offered():
        return all(cloud.call(
            cloud.placement, 'GET', '/resource_providers/%s/inventories' % u,
            clouds.PLACEMENT_VERSION)['inventories'].get(
                'CUSTOM_BAREMETAL_GOLD', {}).get('reserved') == 0
            for u in uuids)

    waiting.wait_for('%s free' % ', '.join(NODES), offered, 300, 0.5)


def _tidy(counter, args):
    try:
        counter.run(*args)
    except SystemExit as exc:
        measure.log('clean-up: %s' % str(exc)[:200])
