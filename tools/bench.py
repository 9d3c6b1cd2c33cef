#!/usr/bin/env python3
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

"""Benchmarks of osc-deploy-config on the mini cloud: a report, not a test.

Every figure is a ratio of two measurements of the same run: our plugin
against python-ironicclient, or our command against the floor of the API
calls it must make.  Requests are counted at the HTTP layer (every request
``requests`` sends), not estimated.  The report is written as markdown and
JSON (``--output``, default ``.bench/``) with the machine and versions.

    tools/tox -e bench [-- --sizes 1,100,1000 --sync-nodes 500]
    tools/tox -e bench -- --only complete    # no mini cloud

The bench creates its objects (``bench-*`` nodes and flavors,
``CUSTOM_DEPLOY_CONFIG_BENCH*`` templates) and deletes them afterwards,
also those a crashed run left.  nova's ironic compute is stopped until the
sync benchmark, so that it does not turn a thousand enrolled nodes into
resource providers while the others measure; the sync benchmark starts it
with only its nodes left, and waits for placement as ``sync`` does.
"""

import argparse
import concurrent.futures
import hashlib
import importlib.metadata
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse

CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(CHECKOUT, 'tools', 'minicloud'))
sys.path.insert(0, os.path.join(CHECKOUT, 'tools'))
import bench_report  # noqa: E402
import waiting  # noqa: E402

MINICLOUD = os.path.join(CHECKOUT, 'tools', 'minicloud', 'minicloud')
BIN = os.path.dirname(sys.executable)
ADMIN, SYSTEM = 'minicloud-admin', 'minicloud-system-admin'
# the project manager of the rollout's project toggle
BENCH_MANAGER = 'bench-manager'
DEMO = 'minicloud-demo'     # a plain project member
IRONIC_VERSION, NOVA_VERSION, PLACEMENT_VERSION = '1.87', '2.61', '1.39'
RUNBOOKS_VERSION = '1.92'
BENCH_TYPE = 'bench'
SYNC_TEMPLATE = 'CUSTOM_DEPLOY_CONFIG_BENCHSYNC_ON'
CAPABLE_TRAIT = 'CUSTOM_BENCH_CAPABLE'
NEVER_TRAIT = 'CUSTOM_BENCH_NEVER'
SERVER = 'bench-server'
LIST_SERVERS = 'bench-list'
PREFLIGHT_SERVER = 'bench-preflight'
HOOKS_SERVER = 'bench-hooks'
FLEET_SERVERS = 'bench-fleet'
PARALLEL_SETUP = 4
VERSIONS_OF = ('osc-deploy-config', 'python-openstackclient',
               'python-ironicclient', 'openstacksdk', 'osc-lib', 'cliff',
               'keystoneauth1', 'stevedore')

# Run in a fresh interpreter: what loading one distribution's OSC entry
# points costs after the modules every ``openstack`` run has imported.
LOAD_SCRIPT = '''
import importlib.metadata, json, sys, time
import openstackclient.shell, osc_lib.command.command, osc_lib.utils
eps = [ep for ep in importlib.metadata.distribution(sys.argv[1]).entry_points
       if ep.group.startswith('openstack.')]
start = time.perf_counter()
for ep in eps:
    ep.load()
print(json.dumps([time.perf_counter() - start, len(eps)]))
'''

# Run ``openstack`` with every HTTP request recorded as it is sent.
COUNT_SCRIPT = '''
import json, sys
import requests.adapters
sent = []
send = requests.adapters.HTTPAdapter.send
def counting_send(self, request, *args, **kwargs):
    sent.append([request.method, request.url])
    return send(self, request, *args, **kwargs)
requests.adapters.HTTPAdapter.send = counting_send
from openstackclient import shell
try:
    code = shell.main(sys.argv[2:])
finally:
    with open(sys.argv[1], 'w') as out:
        json.dump(sent, out)
sys.exit(code)
'''


def log(text):
    print(text, file=sys.stderr, flush=True)


def median(values):
    return statistics.median(values)


def wall(argv, env, check=True):
    """Seconds one command took, start to exit."""
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    took = time.perf_counter() - start
    if check and done.returncode:
        raise SystemExit('%s failed: %s' % (' '.join(argv), done.stderr))
    return took


def wall_and_cpu(argv, env):
    """Wall and CPU seconds (user + system) one command took."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    took = wall(argv, env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return took, (after.ru_utime - before.ru_utime
                  + after.ru_stime - before.ru_stime)


def interleaved(runs, env, **commands):
    """Median wall time of each command, runs interleaved after one
    warm-up each (stevedore's entry point cache, the page cache)."""
    return {name: median(took for took, _ in found) for name, found in
            interleaved_times(runs, env, **commands).items()}


def interleaved_times(runs, env, **commands):
    """The wall and CPU seconds of every run of each command, as
    ``interleaved`` runs them."""
    times = {name: [] for name in commands}
    for argv in commands.values():
        wall(argv, env)
    for _ in range(runs):
        for name, argv in commands.items():
            times[name].append(wall_and_cpu(argv, env))
    return times


class Cloud:
    """Direct API access for setting up, the floor, and checks."""

    def __init__(self):
        import openstack

        self.admin = openstack.connect(cloud=ADMIN)
        self.system = openstack.connect(cloud=SYSTEM)
        self.ironic = self.system.baremetal
        self.nova = self.admin.compute
        self.placement = self.admin.placement
        self.services = self._services()

    def _services(self):
        """host:port -> service type, from the catalog."""
        found = {}
        access = self.admin.session.auth.get_access(self.admin.session)
        for entry in access.service_catalog.catalog:
            for endpoint in entry['endpoints']:
                url = urllib.parse.urlsplit(endpoint['url'])
                found[url.netloc] = entry['type']
        return found

    def call(self, proxy, method, path, version, ok=(200, 201, 202, 204),
             **kwargs):
        response = proxy.request(path, method, microversion=version,
                                 raise_exc=False, **kwargs)
        if response.status_code not in ok:
            raise SystemExit('%s %s: %s %s' % (method, path,
                                               response.status_code,
                                               response.text[:300]))
        if response.status_code >= 300 or not response.content:
            return None
        return response.json()

    def ironic_call(self, method, path, **kwargs):
        return self.call(self.ironic, method, path, IRONIC_VERSION, **kwargs)

    def nova_call(self, method, path, **kwargs):
        return self.call(self.nova, method, path, NOVA_VERSION, **kwargs)

    def ironic_list(self, collection, fields):
        from osc_deploy_config.services import rest

        found, path = [], '/%s?fields=%s' % (collection, fields)
        while path:
            page = self.ironic_call('GET', path)
            found += page[collection]
            path = rest.relative_link(page.get('next'), '/v1')
        return found

    def providers(self, required=None):
        """UUIDs of the resource providers (with this trait)."""
        path = '/resource_providers' + (
            '?required=%s' % required if required else '')
        return {p['uuid'] for p in self.call(
            self.placement, 'GET', path,
            PLACEMENT_VERSION)['resource_providers']}

    def max_versions(self):
        ironic = self.ironic.get('/', microversion=None)
        nova = self.nova.get('/', microversion=None).json()
        return {
            'ironic': ironic.headers[
                'X-OpenStack-Ironic-API-Maximum-Version'],
            'nova': nova['version']['version'],
        }


def parallel(function, items):
    with concurrent.futures.ThreadPoolExecutor(PARALLEL_SETUP) as pool:
        return list(pool.map(function, items))


# ---------------------------------------------------------------- objects

def bench_config(number):
    from osc_deploy_config.domain.configs import deploy_config

    return deploy_config.Config(BENCH_TYPE, 'v%04d' % number)


def template_body(config, capability_traits):
    from osc_deploy_config.domain.configs import deploy_config
    from osc_deploy_config.domain.configs import steps

    return {
        'name': deploy_config.template_trait(config),
        'steps': [steps.bios_step([('BenchSetting', config.value)])],
        'extra': deploy_config.template_extra(config, capability_traits),
    }


def grow(cloud, size, have):
    """Bench templates, nodes and flavors up to ``size`` of each."""
    from osc_deploy_config.domain.configs import config_specs

    numbers = range(have + 1, size + 1)

    def template(number):
        config = bench_config(number)
        cloud.ironic_call('POST', '/deploy_templates',
                          json=template_body(config, [NEVER_TRAIT]))

    def node(number):
        cloud.ironic_call('POST', '/nodes', json={
            'name': 'bench-%04d' % number, 'driver': 'fake-hardware',
            'resource_class': 'bench',
            'properties': {'cpu_arch': 'x86_64'}})

    def flavor(number):
        config = bench_config(number)
        made = cloud.nova_call('POST', '/flavors', json={'flavor': {
            'name': 'bench.f%04d' % number, 'vcpus': 1, 'ram': 64,
            'disk': 1}})['flavor']
        change = config_specs.plan_set({}, [config], {
            config: {'name': template_body(config, ())['name']}})
        cloud.nova_call('POST', '/flavors/%s/os-extra_specs' % made['id'],
                        json={'extra_specs': change.set})

    for make in (template, node, flavor):
        parallel(make, numbers)


def delete_servers(cloud, prefix):
    """Delete the servers of any project whose name starts so."""
    path = '/servers?all_tenants=True&name=^%s' % prefix
    servers = cloud.nova_call('GET', path)['servers']
    parallel(lambda s: cloud.nova_call('DELETE', '/servers/%s' % s['id'],
                                       ok=(204, 404)), servers)
    waiting.wait_for('%d servers deleted' % len(servers), lambda: not (
        cloud.nova_call('GET', path)['servers']), 600, 1)
    return len(servers)


def unpair(cloud):
    """Clear the instance of every bench node (``server_list_long``)."""
    paired = [n['uuid'] for n in cloud.ironic_list(
        'nodes', 'uuid,name,instance_uuid')
        if (n['name'] or '').startswith('bench-') and n['instance_uuid']]
    parallel(lambda n: cloud.ironic_call('PATCH', '/nodes/%s' % n, json=[
        {'op': 'remove', 'path': '/instance_uuid'}]), paired)


def clean(cloud):
    """Delete every bench object, whatever run made it."""
    servers = delete_servers(cloud, 'bench-')
    unpair(cloud)
    templates = [t['uuid'] for t in cloud.ironic_list('deploy_templates',
                                                      'uuid,name')
                 if t['name'].startswith('CUSTOM_DEPLOY_CONFIG_BENCH')]
    undeploy(cloud, [n for n in cloud.ironic_list(
        'nodes', 'uuid,name,provision_state')
        if (n['name'] or '').startswith('bench-')
        and n['provision_state'] != 'enroll'])
    nodes = [n['uuid'] for n in cloud.ironic_list('nodes', 'uuid,name')
             if (n['name'] or '').startswith('bench-')]
    found = cloud.nova_call('GET', '/flavors?is_public=None&limit=100000')
    bench_flavors = [f['id'] for f in found['flavors']
                     if f['name'].startswith('bench.')]
    parallel(lambda t: cloud.ironic_call(
        'DELETE', '/deploy_templates/%s' % t, ok=(204, 404)), templates)
    parallel(lambda n: cloud.ironic_call('DELETE', '/nodes/%s' % n,
                                         ok=(204, 404)), nodes)
    parallel(lambda f: cloud.nova_call('DELETE', '/flavors/%s' % f,
                                       ok=(202, 204, 404)), bench_flavors)
    images = [i.id for i in cloud.admin.image.images()
              if (i.name or '').startswith('bench.i')]
    for image in images:    # one at a time: glance on SQLite locks
        # 400: an image a failed delete left "deleted"
        cloud.call(cloud.admin.image, 'DELETE', '/images/%s' % image, None,
                   ok=(204, 400, 404))
    # what a rollout run that failed half-way left: its nodes' providers,
    # its grant's runbooks, its project manager
    providers = [p['uuid'] for p in cloud.call(
        cloud.placement, 'GET', '/resource_providers',
        PLACEMENT_VERSION)['resource_providers']
        if p['name'].startswith('bench-provider-')]
    _drop_providers(cloud, providers)
    runbooks = [r['uuid'] for r in cloud.call(
        cloud.ironic, 'GET', '/runbooks?fields=uuid,name&limit=1000',
        RUNBOOKS_VERSION)['runbooks']
        if '.CUSTOM_DEPLOY_CONFIG_BENCH' in r['name']]
    parallel(lambda r: cloud.call(
        cloud.ironic, 'DELETE', '/runbooks/%s' % r, RUNBOOKS_VERSION,
        ok=(204, 404)), runbooks)
    manager = cloud.admin.identity.find_user(BENCH_MANAGER)
    if manager:
        cloud.admin.identity.delete_user(manager)
    return (servers, len(templates), len(nodes), len(bench_flavors),
            len(images), len(providers), len(runbooks))


def undeploy(cloud, nodes):
    """Bench nodes an earlier run adopted (``fleet_rollout``), back to a
    state ironic deletes nodes in."""
    def one(node):
        path = '/nodes/%s' % node['uuid']
        if node['provision_state'] == 'active':
            cloud.ironic_call('PATCH', path, json=[
                {'op': 'remove', 'path': '/instance_uuid'}], ok=(200, 400))
            cloud.ironic_call('PUT', path + '/states/provision',
                              json={'target': 'deleted'})
        waiting.wait_for('%s undeployed' % node['name'], lambda: (
            cloud.ironic_call('GET', path + '?fields=provision_state')[
                'provision_state'] in ('available', 'manageable',
                                       'clean failed', 'enroll')), 300, 1)

    parallel(one, nodes)


def boot_server(cloud):
    """A virtual server on bench.f0001, its host tagged for v0001 and
    v0000 (the config it may toggle to, outside the N templates): what
    ``server resize --deploy-config`` plans against."""
    cloud.ironic_call('POST', '/deploy_templates',
                      json=template_body(bench_config(0), [NEVER_TRAIT]))
    host = cloud.call(cloud.placement, 'GET',
                      '/resource_providers?name=fake-compute',
                      PLACEMENT_VERSION)['resource_providers'][0]
    traits = [template_body(bench_config(n), ())['name'] for n in (0, 1)]
    for trait in traits:
        cloud.call(cloud.placement, 'PUT', '/traits/%s' % trait,
                   PLACEMENT_VERSION)
    path = '/resource_providers/%s/traits' % host['uuid']
    now = cloud.call(cloud.placement, 'GET', path, PLACEMENT_VERSION)
    cloud.call(cloud.placement, 'PUT', path, PLACEMENT_VERSION, json={
        'resource_provider_generation': now['resource_provider_generation'],
        'traits': sorted(set(now['traits']) | set(traits))})
    flavor = next(f for f in cloud.nova_call('GET', '/flavors')['flavors']
                  if f['name'] == 'bench.f0001')
    image = next(i for i in cloud.admin.image.images() if i.name == 'tiny')
    server = cloud.nova_call('POST', '/servers', json={'server': {
        'name': SERVER, 'flavorRef': flavor['id'], 'imageRef': image.id,
        'networks': 'none'}})['server']

    def active():
        status = cloud.nova_call('GET', '/servers/%s' % server['id'])[
            'server']['status']
        if status == 'ERROR':
            raise SystemExit('the bench server failed to boot')
        return status == 'ACTIVE'

    waiting.wait_for('the bench server to be ACTIVE', active, 300)
    return host, path, traits


def untag_host(cloud, path, traits):
    now = cloud.call(cloud.placement, 'GET', path, PLACEMENT_VERSION)
    cloud.call(cloud.placement, 'PUT', path, PLACEMENT_VERSION, json={
        'resource_provider_generation': now['resource_provider_generation'],
        'traits': sorted(set(now['traits']) - set(traits))})


# ---------------------------------------------------------------- figures

def plugin_load(runs, env):
    """Median in-process ``EntryPoint.load`` time of our OSC entry points
    and of python-ironicclient's."""
    times = {'osc-deploy-config': [], 'python-ironicclient': []}
    counts = {}
    for _ in range(runs):
        for dist in times:
            done = subprocess.run([sys.executable, '-c', LOAD_SCRIPT, dist],
                                  env=env, capture_output=True, text=True,
                                  check=True)
            seconds, counts[dist] = json.loads(done.stdout)
            times[dist].append(seconds)
    return {dist: {'ms': median(t) * 1000, 'entry_points': counts[dist]}
            for dist, t in times.items()}


def completion(runs, env, without):
    """``openstack complete`` with our plugin and in the virtualenv with the
    same packages but ours, ``runs`` pairs: the median wall and CPU time of
    each, and the median ratio within a pair, which the load of a shared
    machine moves less.  Needs no cloud."""
    found = interleaved_times(
        runs, env, **{'with': [BIN + '/openstack', 'complete'],
                      'without': [without + '/bin/openstack', 'complete']})
    ratios = [(wall / their_wall, cpu / their_cpu)
              for (wall, cpu), (their_wall, their_cpu)
              in zip(found['with'], found['without'], strict=True)]
    return {'runs': runs, 'with': medians(found['with']),
            'without': medians(found['without']),
            'pair_ratio': medians(ratios)}


def medians(times):
    """The median wall and CPU of (wall, CPU) pairs."""
    return {'wall': median(took for took, _ in times),
            'cpu': median(cpu for _, cpu in times)}


def venv_without_plugin(workdir):
    """A virtualenv with exactly this one's packages but ours (pip and
    setuptools too: cliff reads every distribution's files when it names a
    command's plugin, and pip's count)."""
    frozen = subprocess.run(
        [sys.executable, '-m', 'pip', 'freeze', '--all',
         '--exclude-editable'],
        capture_output=True, text=True, check=True).stdout
    frozen = ''.join(line + '\n' for line in frozen.splitlines()
                     if not line.lower().startswith('osc-deploy-config'))
    digest = hashlib.sha256(frozen.encode()).hexdigest()[:12]
    venv = os.path.join(workdir, 'without-plugin-' + digest)
    if not os.path.exists(os.path.join(venv, 'ready')):
        log('creating %s (once)' % venv)
        subprocess.run([sys.executable, '-m', 'venv', '--clear', venv],
                       check=True)
        with tempfile.NamedTemporaryFile('w', suffix='.txt') as reqs:
            reqs.write(frozen)
            reqs.flush()
            done = subprocess.run(
                [venv + '/bin/pip', 'install', '-q',
                 '--disable-pip-version-check', '-r', reqs.name],
                capture_output=True, text=True)
            if done.returncode:
                raise SystemExit('installing %s failed:\n%s'
                                 % (venv, done.stdout + done.stderr))
        open(os.path.join(venv, 'ready'), 'w').close()
    return venv


class Counter:
    """Runs ``openstack`` commands with their requests recorded."""

    def __init__(self, cloud, env):
        self.cloud = cloud
        self.env = env

    def run(self, *args, cloud=ADMIN, python=sys.executable):
        with tempfile.NamedTemporaryFile(suffix='.json') as record:
            start = time.perf_counter()
            # away from the checkout, whose package and egg-info ``-c``
            # would put on sys.path of a virtualenv without our plugin
            done = subprocess.run(
                [python, '-c', COUNT_SCRIPT, record.name,
                 '--os-cloud', cloud, *args],
                env=self.env, stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE, text=True,
                cwd=tempfile.gettempdir())
            took = time.perf_counter() - start
            sent = json.load(open(record.name))
        if done.returncode:
            raise SystemExit('openstack %s failed: %s'
                             % (' '.join(args), done.stderr))
        return self.classify(sent), took

    def classify(self, sent):
        """Requests per service; version discovery and tokens apart."""
        counts = {}
        for _method, url in sent:
            parts = urllib.parse.urlsplit(url)
            service = self.cloud.services.get(parts.netloc, parts.netloc)
            if service == 'identity':
                kind = 'keystone'
            elif parts.path.strip('/') in ('', 'v1', 'v2.1', 'v2'):
                kind = 'discovery'
            else:
                kind = service
            counts[kind] = counts.get(kind, 0) + 1
        counts['total'] = len(sent)
        return counts


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
        SERVER)),
)


def requests_per_size(cloud, counter, sizes):
    """Requests of every command with N bench templates, nodes and
    flavors, for each N of ``sizes``; and how many objects of each kind
    the cloud then had."""
    table, objects, have, server = {}, {}, 0, None
    for size in sizes:
        log('growing to %d templates, nodes and flavors' % size)
        grow(cloud, size, have)
        have = size
        if server is None:
            server = boot_server(cloud)
        for name, args in COMMANDS:
            counts, _ = counter.run(*args)
            table.setdefault(name, {})[size] = counts
        objects[size] = {
            'templates': len(cloud.ironic_list('deploy_templates', 'uuid')),
            'nodes': len(cloud.ironic_list('nodes', 'uuid')),
            'flavors': len(cloud.nova_call(
                'GET', '/flavors?is_public=None&limit=100000')['flavors']),
        }
    return table, objects, server


def template_list_vs_ironicclient(runs, env, without):
    """Wall time of listing every template: ours; ironicclient's
    standalone CLI; and ironicclient's own command under ``openstack``
    where our plugin is not installed.  Each also with ``--help`` (its
    start-up alone)."""
    args = ('--os-cloud', SYSTEM, 'baremetal', 'deploy', 'template', 'list')
    ours = [BIN + '/openstack', *args]
    theirs = [BIN + '/baremetal', *args[:2], *args[3:]]
    theirs_in_osc = [without + '/bin/openstack', *args]
    return interleaved(runs, env, ours=ours, ironicclient=theirs,
                       ironicclient_osc=theirs_in_osc,
                       ours_startup=ours + ['--help'],
                       ironicclient_startup=theirs + ['--help'],
                       ironicclient_osc_startup=theirs_in_osc + ['--help'])


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
                      json=template_body(sync_config, [CAPABLE_TRAIT]))
    bench_nodes = sorted((n for n in cloud.ironic_list('nodes', 'uuid,name')
                          if (n['name'] or '').startswith('bench-')),
                         key=lambda n: n['name'])
    if len(bench_nodes) < nodes:
        raise SystemExit('only %d bench nodes for --sync-nodes %d'
                         % (len(bench_nodes), nodes))
    capable = [n['uuid'] for n in bench_nodes[:nodes]]
    parallel(lambda n: cloud.ironic_call('DELETE', '/nodes/%s' % n['uuid']),
             bench_nodes[nodes:])
    parallel(lambda n: cloud.ironic_call('PUT', '/nodes/%s/traits' % n,
                                         json={'traits': [CAPABLE_TRAIT]}),
             capable)
    cloud.call(cloud.placement, 'PUT', '/traits/%s' % SYNC_TEMPLATE,
               PLACEMENT_VERSION)

    log('starting nova\'s ironic compute; waiting for %d resource '
        'providers' % nodes)
    subprocess.run([sys.executable, MINICLOUD, 'start',
                    'nova-compute-ironic'], check=True)
    waiting.wait_for('%d bench nodes as resource providers' % nodes,
                     lambda: set(capable) <= cloud.providers(), 1200, 2)

    def carriers():
        return cloud.providers(required=SYNC_TEMPLATE) & set(capable)

    def tagged():
        return sum(SYNC_TEMPLATE in (n['traits'] or ())
                   for n in cloud.ironic_list('nodes', 'uuid,traits'))

    def untag():
        parallel(lambda n: cloud.ironic_call(
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
        log('sync round %d of %d' % (number + 1, rounds))
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

    log('the alternative: writing the providers\' traits ourselves')
    nova_log.mark()
    start = time.perf_counter()
    write_ironic()
    for node in capable:
        path = '/resource_providers/%s/traits' % node
        now = cloud.call(cloud.placement, 'GET', path, PLACEMENT_VERSION)
        cloud.call(cloud.placement, 'PUT', path, PLACEMENT_VERSION, json={
            'resource_provider_generation':
                now['resource_provider_generation'],
            'traits': now['traits'] + [SYNC_TEMPLATE]})
    own_writes = time.perf_counter() - start
    # Until nova's next pass over these providers has run: each of them
    # conflicts once (its cached generation is stale), or the time of
    # three copies has passed.
    try:
        waiting.wait_for('nova\'s next pass over the providers',
                         lambda: nova_log.failed_trait_updates() >= nodes,
                         3 * median(found['copied']), 1)
    except waiting.TimedOut:
        pass
    own_errors = nova_log.failed_trait_updates()
    untag()
    return {
        'nodes': nodes, 'rounds': rounds,
        'writes_s': median(found['writes']),
        'copied_s': median(found['copied']),
        'no_wait_s': median(found['no_wait']),
        'ours_s': median(found['ours']),
        'copied_all_s': found['copied'], 'ours_all_s': found['ours'],
        'requests': counts, 'requests_no_wait': counts_no_wait,
        'floor_requests': nodes,
        'nova_errors_ours': found['nova_errors'],
        'own_writes_s': own_writes, 'own_requests': 3 * nodes,
        'nova_errors_own': own_errors,
    }


def grow_images(cloud, count):
    """``count`` bench images (queued, no data): a cloud of that many
    images, for the lookups by name."""
    have = {i.name for i in cloud.admin.image.images()
            if (i.name or '').startswith('bench.i')}
    wanted = ['bench.i%04d' % n for n in range(1, count + 1)]
    for name in wanted:     # one at a time: glance on SQLite locks
        if name not in have:
            cloud.call(cloud.admin.image, 'POST', '/images', None, json={
                'name': name, 'disk_format': 'raw',
                'container_format': 'bare'})


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
    for cloud_name, who in ((DEMO, 'member'), (ADMIN, 'admin')):
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
        delete_servers(cloud, name)
        counter.run('server', 'create', '--flavor', 'm1.tiny', '--image',
                    'tiny', '--nic', 'none', '--wait', name,
                    cloud=cloud_name)
        for label, (args, server) in commands.items():
            log('  %s, %s' % (label, who))
            found['%s (%s)' % (label, who)] = _hook_cost(
                cloud, counter, env, without, runs, cloud_name, args,
                server)
        delete_servers(cloud, name)
    return found


def _hook_cost(cloud, counter, env, without, runs, cloud_name, args,
               server):
    def settle():
        """Back to where the command started: no server to create, or the
        server ACTIVE on m1.tiny."""
        if args[1] == 'create':
            delete_servers(cloud, server)
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
        for label, osc in (('ours', BIN), ('without', without + '/bin')):
            times[label].append(wall([osc + '/openstack', '--os-cloud',
                                      cloud_name, *args], env))
            settle()
    return {'requests': counts['ours'], 'requests_without':
            counts['without'], 'ours_s': median(times['ours']),
            'without_s': median(times['without']), 'runs': runs}


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
    parallel(lambda pair: cloud.ironic_call(
        'PATCH', '/nodes/%s' % pair[0]['uuid'], json=[
            {'op': 'add', 'path': '/instance_uuid',
             'value': pair[1]['id']}]), list(zip(nodes, found, strict=True)))
    after, _ = counter.run(*args)
    short, _ = counter.run(*args[:-1])
    shown = json.loads(subprocess.run(
        [BIN + '/openstack', '--os-cloud', ADMIN, *args, '-f', 'json'],
        env=env, capture_output=True, text=True, check=True).stdout)
    read = sum(1 for row in shown if row['Server'].startswith(LIST_SERVERS)
               and row['Actual'])
    if read != servers:
        raise SystemExit('list --long read the BIOS of %d of %d servers'
                         % (read, servers))
    times = interleaved(runs, env, long=[BIN + '/openstack', '--os-cloud',
                                         ADMIN, *args],
                        short=[BIN + '/openstack', '--os-cloud', ADMIN,
                               *args[:-1]])
    unpair(cloud)
    delete_servers(cloud, LIST_SERVERS)
    cloud.nova_call('DELETE', '/os-quota-sets/%s' % project)
    return {'servers': servers, 'rows': len(shown), 'before': before,
            'after': after, 'short': short, 'long_s': times['long'],
            'short_s': times['short']}


def fleet_rollout(cloud, counter, servers, unavailable, singles):
    """A rollout over ``servers`` bare-metal servers at each
    ``--max-unavailable`` of ``unavailable``: wall time against
    ceil(N/M) times the median single toggle (``singles`` runs of
    ``server resize --deploy-config``), requests per server, and the load
    on ironic and nova per second.

    The servers are virtual ones (nova's fake driver boots forty in
    seconds), each paired with a bench node that ironic adopted as active
    with the server as its instance: the toggle finds the node and
    services it through ironic (the fake BIOS), reads it back and records
    it, as for a server nova deployed there.  nova's ironic compute is
    stopped meanwhile, so it leaves the pairing alone."""
    from osc_deploy_config.domain.configs import config_specs
    from osc_deploy_config.domain.configs import deploy_config

    configs = {v: deploy_config.Config('benchfleet', v) for v in ('on',
                                                                  'off')}
    made = {}
    for value, config in configs.items():
        body = template_body(config, ())
        body['steps'] = [{'interface': 'bios', 'step': 'apply_configuration',
                          'args': {'settings': [{'name': 'BenchFleet',
                                                 'value': value}]},
                          'priority': 150}]
        made[value] = cloud.ironic_call('POST', '/deploy_templates',
                                        json=body)
    flavor = cloud.nova_call('POST', '/flavors', json={'flavor': {
        'name': 'bench.fleet', 'vcpus': 1, 'ram': 64, 'disk': 1}})['flavor']
    change = config_specs.plan_set({}, [configs['on']], {
        c: made[v] for v, c in configs.items()})
    cloud.nova_call('POST', '/flavors/%s/os-extra_specs' % flavor['id'],
                    json={'extra_specs': change.set})
    host_traits = [t['name'] for t in made.values()]
    _tag_fake_compute(cloud, host_traits)
    found = _boot_many(cloud, FLEET_SERVERS, flavor, servers)
    providers = _adopt_nodes(cloud, found, host_traits)
    try:
        return _fleet_rounds(cloud, counter, found, made, providers,
                             unavailable, singles)
    finally:
        _untag_fake_compute(cloud, host_traits)
        _drop_providers(cloud, providers)


def _fleet_rounds(cloud, counter, found, made, providers, unavailable,
                  singles):
    """The single toggles, the rollouts and the project's toggles of
    ``fleet_rollout``."""
    single = {'s': [], 'requests': []}
    for number in range(singles):
        value = ('off', 'on')[number % 2]
        counts, took = counter.run('server', 'resize', '--deploy-config',
                                   'benchfleet=%s' % value, found[0]['id'])
        single['s'].append(took)
        single['requests'].append(counts)
    if singles % 2:
        counter.run('server', 'resize', '--deploy-config', 'benchfleet=on',
                    found[0]['id'])
    rounds = []
    for number, width in enumerate(unavailable):
        value = ('off', 'on')[number % 2]
        floor = raw_floor(cloud, providers, value, width)
        rollout = ('server', 'deploy-config', 'set', '--flavor', 'bench.fleet',
                   '--all-projects', '--deploy-config',
                   'benchfleet=%s' % value, '--max-unavailable', str(width))
        planning, _ = counter.run(*rollout, '--dry-run')
        counts, took = counter.run(*rollout)
        _check_read_back(cloud, found, value)
        rounds.append({'max_unavailable': width, 's': took,
                       'requests': counts, 'planning': planning,
                       'value': value, 'floor': floor})
    project = project_toggle(cloud, counter, found[0], made, singles,
                             rounds[-1]['value'] if rounds else 'on')
    return {'servers': len(found), 'single_s': median(single['s']),
            'single_all_s': single['s'],
            'single_requests': single['requests'][0], 'rounds': rounds,
            'project': project}


def raw_floor(cloud, nodes, value, width):
    """What any tool must do to service ``nodes``, ``width`` at a time: the
    service request, and polls until the node is active again (as soon
    and as often as a toggle polls); its wall time and requests."""
    import threading

    steps = [{'interface': 'bios', 'step': 'apply_configuration',
              'args': {'settings': [{'name': 'BenchFleet',
                                     'value': value}]}}]
    sent, lock = [0], threading.Lock()

    def call(method, path, **kwargs):
        with lock:
            sent[0] += 1
        return cloud.ironic_call(method, path, **kwargs)

    def one(node):
        call('PUT', '/nodes/%s/states/provision' % node,
             json={'target': 'service', 'service_steps': steps})
        interval = 0.25
        while True:
            time.sleep(interval)
            interval = min(2 * interval, 3)
            state = call('GET', '/nodes/%s?fields=provision_state,'
                         'target_provision_state' % node)
            if state['provision_state'] == 'active' and not state[
                    'target_provision_state']:
                return
            if state['provision_state'] == 'service failed':
                raise SystemExit('the floor\'s servicing of %s failed'
                                 % node)

    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(width) as pool:
        list(pool.map(one, nodes))
    return {'s': time.monotonic() - start, 'requests': sent[0]}


def project_toggle(cloud, counter, server, made, runs, current):
    """The same server toggled by a manager of its project (a user with
    no role on the system, through the project's runbooks), against the
    operator's toggle: requests and wall time of each, ``runs`` pairs, each
    toggle a change (the server runs benchfleet=``current``)."""
    import secrets

    import yaml

    project = cloud.admin.current_project_id
    node = next(n for n in cloud.ironic_list('nodes', 'uuid,instance_uuid')
                if n['instance_uuid'] == server['id'])['uuid']
    # ironic makes the instance's project the node's lessee at deploy;
    # the bench adopted the node, so it says so itself
    cloud.ironic_call('PATCH', '/nodes/%s' % node, json=[
        {'op': 'add', 'path': '/lessee', 'value': project}])
    # and the templates' traits, which sync gives a capable node (a
    # project's runbook runs only on a node that carries its trait)
    for template in made.values():
        cloud.call(cloud.ironic, 'PUT', '/nodes/%s/traits/%s' % (
            node, template['name']), IRONIC_VERSION, ok=(204,))
    user, password = BENCH_MANAGER, secrets.token_hex(12)
    made_user = cloud.admin.identity.create_user(
        name=user, password=password, default_project_id=project,
        domain_id='default')
    manager = cloud.admin.identity.find_role('manager')
    cloud.admin.identity.assign_project_role_to_user(project, made_user,
                                                     manager)
    with open(os.environ['OS_CLIENT_CONFIG_FILE']) as f:
        clouds = yaml.safe_load(f)
    clouds['clouds'][BENCH_MANAGER] = dict(clouds['clouds'][ADMIN])
    clouds['clouds'][BENCH_MANAGER]['auth'] = dict(
        clouds['clouds'][ADMIN]['auth'], username=user, password=password)
    with tempfile.NamedTemporaryFile('w', suffix='.yaml',
                                     delete=False) as f:
        yaml.safe_dump(clouds, f)
    env = dict(counter.env, OS_CLIENT_CONFIG_FILE=f.name)
    manager_counter = Counter(cloud, env)
    try:
        counter.run('project', 'deploy-config', 'set', project,
                    'benchfleet=on', 'benchfleet=off')
        found = {'operator': [], 'project': []}
        value = current
        for number in range(2 * runs):
            who = ('operator', 'project')[number % 2]
            value = {'on': 'off', 'off': 'on'}[value]
            run = counter if who == 'operator' else manager_counter
            counts, took = run.run('server', 'resize', '--deploy-config',
                                   'benchfleet=%s' % value, server['id'],
                                   cloud=ADMIN if who == 'operator'
                                   else BENCH_MANAGER)
            found[who].append({'requests': counts, 's': took})
        return found
    finally:
        counter.run('project', 'deploy-config', 'unset', project, '--all')
        cloud.admin.identity.delete_user(made_user)
        os.unlink(f.name)


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
                                left, cloud=SYSTEM)
                counter.run('baremetal', 'deploy', 'template', 'create',
                            '--config', '%s=%s' % (config, value), *(
                                kind or ('--requires-trait',
                                         'HW_CPU_HYPERTHREADING')),
                            '--bios-setting', '%s=%s' % (setting, set_to),
                            cloud=SYSTEM)
                names.append(_template_of(counter, config, value, kind))
        counter.run('baremetal', 'node', 'deploy-config', 'prepare', 'bm-6',
                    '--config', 'turbo=disabled', cloud=SYSTEM)
        counter.run('baremetal', 'node', 'deploy-config', 'sync', *names,
                    cloud=SYSTEM)
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
                         '--os-cloud', SYSTEM) for name in names]):
            _tidy(counter, args)


def _tidy(counter, args):
    """A clean-up command, whose failure is logged and does not hide the
    error that led here."""
    try:
        counter.run(*args)
    except SystemExit as exc:
        log('clean-up: %s' % exc)


def _template_of(counter, config, value, kind=()):
    """The name of the template of a config (``show --config``, of a
    resource class with ``kind``), or an empty string when there is
    none."""
    done = subprocess.run(['openstack', '--os-cloud', SYSTEM, 'baremetal',
                           'deploy', 'template', 'show', '--config',
                           '%s=%s' % (config, value), *kind, '-f', 'value',
                           '-c', 'name'], env=counter.env,
                          capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else ''


def _tag_fake_compute(cloud, traits, remove=False):
    host = cloud.call(cloud.placement, 'GET',
                      '/resource_providers?name=fake-compute',
                      PLACEMENT_VERSION)['resource_providers'][0]
    for trait in traits:
        cloud.call(cloud.placement, 'PUT', '/traits/%s' % trait,
                   PLACEMENT_VERSION)
    path = '/resource_providers/%s/traits' % host['uuid']
    now = cloud.call(cloud.placement, 'GET', path, PLACEMENT_VERSION)
    wanted = set(now['traits']) - set(traits) if remove else set(
        now['traits']) | set(traits)
    cloud.call(cloud.placement, 'PUT', path, PLACEMENT_VERSION, json={
        'resource_provider_generation': now['resource_provider_generation'],
        'traits': sorted(wanted)})


def _untag_fake_compute(cloud, traits):
    _tag_fake_compute(cloud, traits, remove=True)


def _boot_many(cloud, name, flavor, count):
    """``count`` virtual servers of the flavor in one request; ACTIVE."""
    project = cloud.admin.current_project_id
    cloud.nova_call('PUT', '/os-quota-sets/%s' % project, json={
        'quota_set': {'instances': -1, 'cores': -1, 'ram': -1}})
    image = next(i for i in cloud.admin.image.images() if i.name == 'tiny')
    cloud.nova_call('POST', '/servers', json={'server': {
        'name': name, 'flavorRef': flavor['id'], 'imageRef': image.id,
        'networks': 'none', 'min_count': count, 'max_count': count}})

    def booted():
        found = cloud.nova_call('GET', '/servers/detail?name=^%s' % name)[
            'servers']
        if any(s['status'] == 'ERROR' for s in found):
            raise SystemExit('a bench server failed to boot')
        return len(found) == count and all(
            s['status'] == 'ACTIVE' for s in found) and found

    return sorted(waiting.wait_for('%d bench servers ACTIVE' % count,
                                   booted, 600, 1), key=lambda s: s['name'])


def _adopt_nodes(cloud, servers, traits):
    """Make one bench node per server active, with the fake BIOS, the
    server its instance (ironic's adoption: no deploy), and give each the
    resource provider nova gives a deployed node (its UUID), with these
    traits; the providers' UUIDs."""
    nodes = sorted((n for n in cloud.ironic_list(
        'nodes', 'uuid,name,provision_state,instance_uuid')
        if (n['name'] or '').startswith('bench-')
        and not n['instance_uuid']), key=lambda n: n['name'])[
            :len(servers)]
    if len(nodes) < len(servers):
        raise SystemExit('only %d bench nodes for %d fleet servers'
                         % (len(nodes), len(servers)))

    def adopt(pair):
        node, server = pair
        path = '/nodes/%s' % node['uuid']
        cloud.ironic_call('PATCH', path, json=[
            {'op': 'add', 'path': '/bios_interface', 'value': 'fake-steps'}])
        for target, state in (('manage', 'manageable'),
                              ('adopt', 'active')):
            cloud.ironic_call('PUT', path + '/states/provision',
                              json={'target': target})
            waiting.wait_for('%s %s' % (node['name'], state), lambda s=state: (
                cloud.ironic_call('GET', path + '?fields=provision_state')[
                    'provision_state'] == s), 120, 0.5)
        cloud.ironic_call('PATCH', path, json=[
            {'op': 'add', 'path': '/instance_uuid', 'value': server['id']}])
        cloud.call(cloud.placement, 'POST', '/resource_providers',
                   PLACEMENT_VERSION, json={'name': 'bench-provider-%s' %
                                            node['name'], 'uuid':
                                            node['uuid']}, ok=(200, 409))
        base = '/resource_providers/%s' % node['uuid']
        now = cloud.call(cloud.placement, 'GET', base, PLACEMENT_VERSION)
        cloud.call(cloud.placement, 'PUT', base + '/traits',
                   PLACEMENT_VERSION, json={
                       'resource_provider_generation': now['generation'],
                       'traits': sorted(traits)})

    parallel(adopt, list(zip(nodes, servers, strict=True)))
    return [n['uuid'] for n in nodes]


def _drop_providers(cloud, providers):
    """Delete the resource providers ``_adopt_nodes`` made."""
    parallel(lambda p: cloud.call(
        cloud.placement, 'DELETE', '/resource_providers/%s' % p,
        PLACEMENT_VERSION, ok=(204, 404)), providers)


def _check_read_back(cloud, servers, value):
    """Every fleet server's node shows the value."""
    nodes = [n for n in cloud.ironic_list('nodes', 'uuid,instance_uuid')
             if n['instance_uuid'] in {s['id'] for s in servers}]
    shown = parallel(lambda n: {s['name']: s['value'] for s in
                                cloud.ironic_call('GET', '/nodes/%s/bios'
                                                  % n['uuid'])['bios']}.get(
                                    'BenchFleet'), nodes)
    if len(nodes) != len(servers) or set(shown) != {value}:
        raise SystemExit('the rollout left BenchFleet at %s, not %s'
                         % (sorted(set(map(str, shown))), value))


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


# ---------------------------------------------------------------- report

def machine():
    with open('/proc/meminfo') as meminfo:
        mem_kib = int(meminfo.readline().split()[1])
    return {
        'platform': platform.platform(),
        'cpus': os.cpu_count(),
        'memory_gib': round(mem_kib / 2 ** 20, 1),
        'python': platform.python_version(),
    }


def versions(cloud=None):
    found = {name: importlib.metadata.version(name) for name in VERSIONS_OF}
    with open(os.path.join(CHECKOUT, 'tools', 'minicloud',
                           'requirements.txt')) as pins:
        for line in pins:
            if '==' in line and not line.startswith('#'):
                name, pin = line.strip().split('==')
                found['minicloud ' + name] = pin
    if cloud:
        found.update(('max API ' + k, v)
                     for k, v in cloud.max_versions().items())
    return found


def write_report(output, report, name='report'):
    """The report as JSON and markdown in ``output``; prints the markdown."""
    os.makedirs(output, exist_ok=True)
    with open(os.path.join(output, name + '.json'), 'w') as out:
        json.dump(report, out, indent=2, sort_keys=True)
    text = bench_report.markdown(report)
    with open(os.path.join(output, name + '.md'), 'w') as out:
        out.write(text)
    print(text)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--sizes', default='1,100,1000')
    parser.add_argument('--sync-nodes', type=int, default=500,
                        help='0 leaves the sync benchmark out')
    parser.add_argument('--sync-rounds', type=int, default=3)
    parser.add_argument('--list-servers', type=int, default=100)
    parser.add_argument('--fleet-servers', type=int, default=40,
                        help='0 leaves the rollout benchmark out')
    parser.add_argument('--fleet-unavailable', default='1,4,10')
    parser.add_argument('--runs', type=int, default=7,
                        help='runs of each timed command')
    parser.add_argument('--runs-load', type=int, default=21)
    parser.add_argument('--runs-complete', type=int, default=15,
                        help='pairs of `openstack complete` runs')
    parser.add_argument('--only', choices=['complete', 'redfish'],
                        help='run only this section (complete: no mini '
                             'cloud; redfish: a toggle through ironic\'s '
                             'redfish BIOS against a fake-steps one)')
    parser.add_argument('--output', default=os.path.join(CHECKOUT, '.bench'))
    args = parser.parse_args(argv)
    sizes = sorted(int(s) for s in args.sizes.split(','))
    if max(args.sync_nodes, args.list_servers + args.fleet_servers) > \
            sizes[-1]:
        parser.error('--sync-nodes, --list-servers and --fleet-servers need '
                     'as many bench nodes: at most the largest of --sizes')
    started, start = time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime()), \
        time.monotonic()
    home = os.environ.get('MINICLOUD_HOME', os.path.join(CHECKOUT,
                                                         '.minicloud'))
    env = dict(os.environ, PYTHONWARNINGS='ignore',
               OS_CLIENT_CONFIG_FILE=os.path.join(home, 'etc',
                                                  'clouds.yaml'))
    env.pop('OS_CLOUD', None)
    os.environ.update(env)
    report = {'date': started, 'machine': machine(), 'argv': argv,
              'sizes': sizes, 'runs': args.runs,
              'runs_load': args.runs_load}
    without = venv_without_plugin(os.path.join(CHECKOUT, '.bench'))
    if args.only == 'complete':
        log('openstack complete, with and without the plugin')
        report.update(versions=versions(),
                      complete=completion(args.runs_complete, env, without),
                      seconds=time.monotonic() - start)
        return write_report(args.output, report, 'report-complete')

    log('minicloud up')
    subprocess.run([sys.executable, MINICLOUD, 'up', '--ironic-release',
                    'pinned'], check=True,
                   stdout=subprocess.DEVNULL)
    cloud = Cloud()
    report['versions'] = versions(cloud)
    if args.only == 'redfish':
        log('a toggle through ironic\'s redfish BIOS, and a fake-steps one')
        report.update(redfish=redfish_toggle(Counter(cloud, env), args.runs),
                      seconds=time.monotonic() - start)
        return write_report(args.output, report, 'report-redfish')

    log('plugin load')
    report['plugin_load'] = plugin_load(args.runs_load, env)
    log('openstack complete, with and without the plugin')
    report['complete'] = completion(args.runs_complete, env, without)

    subprocess.run([sys.executable, MINICLOUD, 'stop',
                    'nova-compute-ironic'], check=True)
    try:
        log('removed leftovers: %s' % (clean(cloud),))
        counter = Counter(cloud, env)
        report['requests'], report['objects'], server = \
            requests_per_size(cloud, counter, sizes)
        report['templates_listed'] = len(cloud.ironic_list(
            'deploy_templates', 'uuid'))
        log('template list vs ironicclient')
        report['template_list'] = template_list_vs_ironicclient(
            args.runs, env, without)
        log('the hooks on OSC\'s server create, rebuild and resize, in a '
            'cloud of %d images' % sizes[-1])
        grow_images(cloud, sizes[-1])
        report['hooks'] = hook_costs(cloud, counter, env, without,
                                     args.runs)
        log('server deploy-config list --long over %d servers'
            % args.list_servers)
        report['server_list'] = server_list_long(
            cloud, counter, env, args.list_servers, args.runs)
        untag_host(cloud, server[1], server[2])
        if args.fleet_servers:
            log('a rollout over %d bare-metal servers' % args.fleet_servers)
            report['fleet'] = fleet_rollout(
                cloud, counter, args.fleet_servers,
                [int(m) for m in args.fleet_unavailable.split(',')], 3)
        if args.sync_nodes:
            log('sync over %d nodes' % args.sync_nodes)
            report['sync'] = sync_vs_floor(
                cloud, counter, args.sync_nodes, args.sync_rounds,
                NovaLog(os.path.join(home, 'logs',
                                     'nova-compute-ironic.log')))
    finally:
        log('cleaning up: %s' % (clean(cloud),))
        subprocess.run([sys.executable, MINICLOUD, 'start',
                        'nova-compute-ironic'], check=True)
    report['seconds'] = time.monotonic() - start
    write_report(args.output, report)


if __name__ == '__main__':
    main(sys.argv[1:])
