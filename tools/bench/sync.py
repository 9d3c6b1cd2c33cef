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

"""Section 4: ``node deploy-config sync`` until placement shows it,
against the floor of its trait writes and nova's copy."""

import os
import subprocess
import sys
import time

import waiting

from bench import cloud as clouds
from bench import measure
from bench import objects

SYNC_TEMPLATE = 'CUSTOM_DEPLOY_CONFIG_BENCHSYNC_ON'
CAPABLE_TRAIT = 'CUSTOM_BENCH_CAPABLE'


def sync_vs_floor(cloud, counter, nodes, rounds, nova_log):
    """Tagging ``nodes`` capable nodes that nova manages, until placement
    shows it: our ``sync`` against the floor (the trait writes back to
    back on one session, then polling placement every 0.1 s until nova's
    copy is there); ``sync --no-wait`` against the writes alone; and the
    alternative design, writing the providers' traits ourselves, for its
    time and what nova's log says of it."""
    from osc_deploy_config.domain.configs import deploy_config

    sync_config = deploy_config.Config('benchsync', 'on')
    cloud.ironic_call('POST', '/deploy_templates',
                      json=objects.template_body(sync_config, [CAPABLE_TRAIT]))
    bench_nodes = sorted((n for n in cloud.ironic_list('nodes', 'uuid,name')
                          if (n['name'] or '').startswith('bench-')),
                         key=lambda n: n['name'])
    if len(bench_nodes) < nodes:
        raise SystemExit('only %d bench nodes for --sync-nodes %d'
                         % (len(bench_nodes), nodes))
    capable = [n['uuid'] for n in bench_nodes[:nodes]]
    clouds.parallel(lambda n: cloud.ironic_call(
        'DELETE', '/nodes/%s' % n['uuid']),
             bench_nodes[nodes:])
    clouds.parallel(lambda n: cloud.ironic_call('PUT', '/nodes/%s/traits' % n,
                                         json={'traits': [CAPABLE_TRAIT]}),
             capable)
    cloud.call(cloud.placement, 'PUT', '/traits/%s' % SYNC_TEMPLATE,
               clouds.PLACEMENT_VERSION)

    measure.log('starting nova\'s ironic compute; waiting for %d resource '
        'providers' % nodes)
    subprocess.run([sys.executable, clouds.MINICLOUD, 'start',
                    'nova-compute-ironic'], check=True)
    waiting.wait_for('%d bench nodes as resource providers' % nodes,
                     lambda: set(capable) <= cloud.providers(), 1200, 2)

    def carriers():
        return cloud.providers(required=SYNC_TEMPLATE) & set(capable)

    def tagged():
        return sum(SYNC_TEMPLATE in (n['traits'] or ())
                   for n in cloud.ironic_list('nodes', 'uuid,traits'))

    def untag():
        clouds.parallel(lambda n: cloud.ironic_call(
            'DELETE', '/nodes/%s/traits/%s' % (n, SYNC_TEMPLATE),
            ok=(204, 404)), capable)
        waiting.wait_for('placement to drop the bench trait',
                         lambda: not carriers(), 600, 0.5)

    def write_ironic():
        for node in capable:
            cloud.ironic_call('PUT', '/nodes/%s/traits/%s'
                              % (node, SYNC_TEMPLATE))

    def sync(*options):
        counts, took = counter.run('baremetal', 'node', 'deploy-config',
                                   'sync', *options, SYNC_TEMPLATE)
        if tagged() != nodes:
            raise SystemExit('sync tagged %d nodes, not %d'
                             % (tagged(), nodes))
        return counts, took

    untag()
    found = {'writes': [], 'copied': [], 'no_wait': [], 'ours': [],
             'nova_errors': 0}
    counts = counts_no_wait = None
    for number in range(rounds):
        measure.log('sync round %d of %d' % (number + 1, rounds))
        start = time.perf_counter()
        write_ironic()
        found['writes'].append(time.perf_counter() - start)
        waiting.wait_for('placement to show the bench trait',
                         lambda: len(carriers()) == nodes, 600, 0.1)
        found['copied'].append(time.perf_counter() - start)
        untag()
        counts_no_wait, took = sync('--no-wait')
        found['no_wait'].append(took)
        untag()
        nova_log.mark()
        counts, took = sync()
        shown = len(carriers())
        if shown != nodes:
            raise SystemExit('sync returned with %d of %d nodes in '
                             'placement' % (shown, nodes))
        found['ours'].append(took)
        untag()
        found['nova_errors'] += nova_log.failed_trait_updates()

    measure.log('the alternative: writing the providers\' traits ourselves')
    nova_log.mark()
    start = time.perf_counter()
    write_ironic()
    for node in capable:
        path = '/resource_providers/%s/traits' % node
        now = cloud.call(cloud.placement, 'GET', path,
                         clouds.PLACEMENT_VERSION)
        cloud.call(cloud.placement, 'PUT', path, clouds.PLACEMENT_VERSION,
                   json={'resource_provider_generation':
                         now['resource_provider_generation'],
                         'traits': now['traits'] + [SYNC_TEMPLATE]})
    own_writes = time.perf_counter() - start
    # Until nova's next pass over these providers has run: each of them
    # conflicts once (its cached generation is stale), or the time of
    # three copies has passed.
    try:
        waiting.wait_for('nova\'s next pass over the providers',
                         lambda: nova_log.failed_trait_updates() >= nodes,
                         3 * measure.median(found['copied']), 1)
    except waiting.TimedOut:
        pass
    own_errors = nova_log.failed_trait_updates()
    untag()
    return {
        'nodes': nodes, 'rounds': rounds,
        'writes_s': measure.median(found['writes']),
        'copied_s': measure.median(found['copied']),
        'no_wait_s': measure.median(found['no_wait']),
        'ours_s': measure.median(found['ours']),
        'copied_all_s': found['copied'], 'ours_all_s': found['ours'],
        'requests': counts, 'requests_no_wait': counts_no_wait,
        'floor_requests': nodes,
        'nova_errors_ours': found['nova_errors'],
        'own_writes_s': own_writes, 'own_requests': 3 * nodes,
        'nova_errors_own': own_errors,
    }


class NovaLog:
    """What nova's ironic compute logged since the last mark."""

    def __init__(self, path):
        self.path = path
        self.offset = 0

    def mark(self):
        self.offset = os.path.getsize(self.path)

    def failed_trait_updates(self):
        with open(self.path, errors='replace') as logged:
            logged.seek(self.offset)
            return sum('Failed to update traits' in line
                       for line in logged)
