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

"""The bench's objects in the cloud (``bench-*`` nodes, servers and
flavors, ``bench.i*`` images, ``CUSTOM_DEPLOY_CONFIG_BENCH*`` templates):
made for the sections, and deleted afterwards, also those a crashed run
left."""

import waiting

from bench import cloud as clouds

BENCH_TYPE = 'bench'
NEVER_TRAIT = 'CUSTOM_BENCH_NEVER'
SERVER = 'bench-server'


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
        clouds.parallel(make, numbers)


def grow_nodes(cloud, count):
    """Bench nodes up to ``count`` (enrolled fake-hardware ones)."""
    have = {n['name'] for n in cloud.ironic_list('nodes', 'name')}
    clouds.parallel(lambda number: cloud.ironic_call('POST', '/nodes', json={
        'name': 'bench-%04d' % number, 'driver': 'fake-hardware',
        'resource_class': 'bench', 'properties': {'cpu_arch': 'x86_64'}}), [
        n for n in range(1, count + 1) if 'bench-%04d' % n not in have])


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


def delete_servers(cloud, prefix):
    """Delete the servers of any project whose name starts so."""
    path = '/servers?all_tenants=True&name=^%s' % prefix
    servers = cloud.nova_call('GET', path)['servers']
    clouds.parallel(lambda s: cloud.nova_call(
        'DELETE', '/servers/%s' % s['id'], ok=(204, 404)), servers)
    waiting.wait_for('%d servers deleted' % len(servers), lambda: not (
        cloud.nova_call('GET', path)['servers']), 600, 1)
    return len(servers)


def unpair(cloud):
    """Clear the instance of every bench node (``server_list_long``)."""
    paired = [n['uuid'] for n in cloud.ironic_list(
        'nodes', 'uuid,name,instance_uuid')
        if (n['name'] or '').startswith('bench-') and n['instance_uuid']]
    clouds.parallel(lambda n: cloud.ironic_call(
        'PATCH', '/nodes/%s' % n, json=[
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
    clouds.parallel(lambda t: cloud.ironic_call(
        'DELETE', '/deploy_templates/%s' % t, ok=(204, 404)), templates)
    clouds.parallel(lambda n: cloud.ironic_call('DELETE', '/nodes/%s' % n,
                                         ok=(204, 404)), nodes)
    clouds.parallel(lambda f: cloud.nova_call('DELETE', '/flavors/%s' % f,
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
        clouds.PLACEMENT_VERSION)['resource_providers']
        if p['name'].startswith('bench-provider-')]
    drop_providers(cloud, providers)
    runbooks = [r['uuid'] for r in cloud.call(
        cloud.ironic, 'GET', '/runbooks?fields=uuid,name&limit=1000',
        clouds.RUNBOOKS_VERSION)['runbooks']
        if '.CUSTOM_DEPLOY_CONFIG_BENCH' in r['name']]
    clouds.parallel(lambda r: cloud.call(
        cloud.ironic, 'DELETE', '/runbooks/%s' % r, clouds.RUNBOOKS_VERSION,
        ok=(204, 404)), runbooks)
    manager = cloud.admin.identity.find_user(clouds.BENCH_MANAGER)
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

    clouds.parallel(one, nodes)


def boot_server(cloud):
    """A virtual server on bench.f0001, its host tagged for v0001 and
    v0000 (the config it may toggle to, outside the N templates): what
    ``server resize --deploy-config`` plans against."""
    cloud.ironic_call('POST', '/deploy_templates',
                      json=template_body(bench_config(0), [NEVER_TRAIT]))
    host = cloud.call(cloud.placement, 'GET',
                      '/resource_providers?name=fake-compute',
                      clouds.PLACEMENT_VERSION)['resource_providers'][0]
    traits = [template_body(bench_config(n), ())['name'] for n in (0, 1)]
    for trait in traits:
        cloud.call(cloud.placement, 'PUT', '/traits/%s' % trait,
                   clouds.PLACEMENT_VERSION)
    path = '/resource_providers/%s/traits' % host['uuid']
    now = cloud.call(cloud.placement, 'GET', path, clouds.PLACEMENT_VERSION)
    cloud.call(cloud.placement, 'PUT', path, clouds.PLACEMENT_VERSION, json={
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
    now = cloud.call(cloud.placement, 'GET', path, clouds.PLACEMENT_VERSION)
    cloud.call(cloud.placement, 'PUT', path, clouds.PLACEMENT_VERSION, json={
        'resource_provider_generation': now['resource_provider_generation'],
        'traits': sorted(set(now['traits']) - set(traits))})


def tag_fake_compute(cloud, traits, remove=False):
    host = cloud.call(cloud.placement, 'GET',
                      '/resource_providers?name=fake-compute',
                      clouds.PLACEMENT_VERSION)['resource_providers'][0]
    for trait in traits:
        cloud.call(cloud.placement, 'PUT', '/traits/%s' % trait,
                   clouds.PLACEMENT_VERSION)
    path = '/resource_providers/%s/traits' % host['uuid']
    now = cloud.call(cloud.placement, 'GET', path, clouds.PLACEMENT_VERSION)
    wanted = set(now['traits']) - set(traits) if remove else set(
        now['traits']) | set(traits)
    cloud.call(cloud.placement, 'PUT', path, clouds.PLACEMENT_VERSION, json={
        'resource_provider_generation': now['resource_provider_generation'],
        'traits': sorted(wanted)})


def untag_fake_compute(cloud, traits):
    tag_fake_compute(cloud, traits, remove=True)


def drop_providers(cloud, providers):
    """Delete the resource providers ``_adopt_nodes`` made."""
    clouds.parallel(lambda p: cloud.call(
        cloud.placement, 'DELETE', '/resource_providers/%s' % p,
        clouds.PLACEMENT_VERSION, ok=(204, 404)), providers)
