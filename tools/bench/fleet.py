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

"""Section 7: a rollout over bare-metal servers, against ceil(N/M)
single toggles and against the raw floor of its servicings; and one server
toggled by its project's manager against the operator."""

import concurrent.futures
import contextlib
import os
import tempfile
import time

import waiting

from bench import cloud as clouds
from bench import measure
from bench import objects

# the fake BIOS's extra: how long its steps take (minicloud_fake_steps)
SLOW_STEPS = 'minicloud_bios_slow_steps'


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
    with _fleet(cloud, 'benchfleet', servers) as (found, made, providers):
        return _fleet_rounds(cloud, counter, found, made, providers,
                             unavailable, singles)


def slow_rollout(cloud, counter, servers, unavailable, seconds):
    """The rollout of ``fleet_rollout`` at the hardware's speed: each
    servicing takes ``seconds`` (the fake BIOS's slow steps, as a BMC's
    job and a reboot take minutes), against the raw floor at that speed,
    at each ``--max-unavailable`` of ``unavailable``."""
    with _fleet(cloud, 'benchslow', servers, seconds) as (found, _,
                                                          providers):
        rounds = [_round(cloud, counter, found, providers, 'benchslow',
                         number, width)
                  for number, width in enumerate(unavailable)]
    return {'servers': servers, 'step_s': seconds, 'rounds': rounds}


@contextlib.contextmanager
def _fleet(cloud, kind, servers, seconds=0):
    """``servers`` servers of a flavor that asks for ``kind``=on (the
    templates of on and off made), each on an adopted node whose BIOS
    steps take ``seconds``: (the servers, {value: template}, the nodes'
    UUIDs)."""
    from osc_deploy_config.domain.configs import config_specs
    from osc_deploy_config.domain.configs import deploy_config

    configs = {v: deploy_config.Config(kind, v) for v in ('on', 'off')}
    made = {}
    for value, config in configs.items():
        body = objects.template_body(config, ())
        body['steps'] = [{'interface': 'bios', 'step': 'apply_configuration',
                          'args': {'settings': [{'name': 'BenchFleet',
                                                 'value': value}]},
                          'priority': 150}]
        made[value] = cloud.ironic_call('POST', '/deploy_templates',
                                        json=body)
    flavor = cloud.nova_call('POST', '/flavors', json={'flavor': {
        'name': 'bench.%s' % kind[5:], 'vcpus': 1, 'ram': 64,
        'disk': 1}})['flavor']
    change = config_specs.plan_set({}, [configs['on']], {
        c: made[v] for v, c in configs.items()})
    cloud.nova_call('POST', '/flavors/%s/os-extra_specs' % flavor['id'],
                    json={'extra_specs': change.set})
    host_traits = [t['name'] for t in made.values()]
    objects.tag_fake_compute(cloud, host_traits)
    found = _boot_many(cloud, 'bench-%s' % kind[5:], flavor, servers)
    providers = _adopt_nodes(cloud, found, host_traits, seconds)
    try:
        yield found, made, providers
    finally:
        objects.untag_fake_compute(cloud, host_traits)
        objects.drop_providers(cloud, providers)


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
    rounds = [_round(cloud, counter, found, providers, 'benchfleet', number,
                     width) for number, width in enumerate(unavailable)]
    project = project_toggle(cloud, counter, found[0], made, singles,
                             rounds[-1]['value'] if rounds else 'on')
    return {'servers': len(found), 'single_s': measure.median(single['s']),
            'single_all_s': single['s'],
            'single_requests': single['requests'][0], 'rounds': rounds,
            'project': project}


def _round(cloud, counter, found, providers, kind, number, width):
    """The raw floor, then the rollout (its dry run apart), at
    --max-unavailable ``width``: to off in even rounds, on in odd ones."""
    value = ('off', 'on')[number % 2]
    floor = raw_floor(cloud, providers, value, width)
    rollout = ('server', 'deploy-config', 'set', '--flavor',
               'bench.%s' % kind[5:], '--all-projects', '--deploy-config',
               '%s=%s' % (kind, value), '--max-unavailable', str(width))
    planning, planning_s = counter.run(*rollout, '--dry-run')
    counts, took = counter.run(*rollout)
    _check_read_back(cloud, found, value)
    return {'max_unavailable': width, 's': took, 'requests': counts,
            'planning': planning, 'planning_s': planning_s, 'value': value,
            'floor': floor}


def raw_floor(cloud, nodes, value, width):
    """What any tool must do to service ``nodes``, ``width`` at a time: the
    service request, and polls until the node is active again (as soon
    and as often as a toggle polls: the toggle's own wait, aimed as a
    rollout's at when the servicings before ended); its wall time and
    requests."""
    import threading

    from osc_deploy_config.use_cases.toggle import waits

    steps = [{'interface': 'bios', 'step': 'apply_configuration',
              'args': {'settings': [{'name': 'BenchFleet',
                                     'value': value}]}}]
    sent, lock, pace = [0], threading.Lock(), waits.Pace()

    def call(method, path, **kwargs):
        with lock:
            sent[0] += 1
        return cloud.ironic_call(method, path, **kwargs)

    class Ironic:
        def node(self, uuid, fields):
            return call('GET', '/nodes/%s?fields=%s' % (uuid,
                                                        ','.join(fields)))

    def one(node):
        call('PUT', '/nodes/%s/states/provision' % node,
             json={'target': 'service', 'service_steps': steps})
        wait = waits.Waits(waits.Waiter(lambda line: None), None, Ironic())
        wait.pace = pace
        state = wait.servicing({'uuid': node}, pace=value)
        if state['provision_state'] != 'active':
            raise SystemExit('the floor\'s servicing of %s failed' % node)

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
            node, template['name']), clouds.IRONIC_VERSION, ok=(204,))
    user, password = clouds.BENCH_MANAGER, secrets.token_hex(12)
    made_user = cloud.admin.identity.create_user(
        name=user, password=password, default_project_id=project,
        domain_id='default')
    manager = cloud.admin.identity.find_role('manager')
    cloud.admin.identity.assign_project_role_to_user(project, made_user,
                                                     manager)
    with open(os.environ['OS_CLIENT_CONFIG_FILE']) as f:
        config = yaml.safe_load(f)
    entries = config['clouds']
    entries[clouds.BENCH_MANAGER] = dict(entries[clouds.ADMIN])
    entries[clouds.BENCH_MANAGER]['auth'] = dict(
        entries[clouds.ADMIN]['auth'], username=user, password=password)
    with tempfile.NamedTemporaryFile('w', suffix='.yaml',
                                     delete=False) as f:
        yaml.safe_dump(config, f)
    env = dict(counter.env, OS_CLIENT_CONFIG_FILE=f.name)
    manager_counter = measure.Counter(cloud, env)
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
                                   cloud=clouds.ADMIN if who == 'operator'
                                   else clouds.BENCH_MANAGER)
            found[who].append({'requests': counts, 's': took})
        return found
    finally:
        counter.run('project', 'deploy-config', 'unset', project, '--all')
        cloud.admin.identity.delete_user(made_user)
        os.unlink(f.name)


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


def _adopt_nodes(cloud, servers, traits, seconds=0):
    """Make one bench node per server active, with the fake BIOS (whose
    steps take ``seconds``), the server its instance (ironic's adoption:
    no deploy), and give each the resource provider nova gives a deployed
    node (its UUID), with these traits; the providers' UUIDs."""
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
            {'op': 'add', 'path': '/bios_interface', 'value': 'fake-steps'},
            {'op': 'add', 'path': '/extra/' + SLOW_STEPS,
             'value': str(seconds)}])
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
                   clouds.PLACEMENT_VERSION, json={
                       'name': 'bench-provider-%s' % node['name'],
                       'uuid': node['uuid']}, ok=(200, 409))
        base = '/resource_providers/%s' % node['uuid']
        now = cloud.call(cloud.placement, 'GET', base,
                         clouds.PLACEMENT_VERSION)
        cloud.call(cloud.placement, 'PUT', base + '/traits',
                   clouds.PLACEMENT_VERSION, json={
                       'resource_provider_generation': now['generation'],
                       'traits': sorted(traits)})

    clouds.parallel(adopt, list(zip(nodes, servers, strict=True)))
    return [n['uuid'] for n in nodes]


def _check_read_back(cloud, servers, value):
    """Every fleet server's node shows the value."""
    nodes = [n for n in cloud.ironic_list('nodes', 'uuid,instance_uuid')
             if n['instance_uuid'] in {s['id'] for s in servers}]
    shown = clouds.parallel(lambda n: {s['name']: s['value'] for s in
                                cloud.ironic_call('GET', '/nodes/%s/bios'
                                                  % n['uuid'])['bios']}.get(
                                    'BenchFleet'), nodes)
    if len(nodes) != len(servers) or set(shown) != {value}:
        raise SystemExit('the rollout left BenchFleet at %s, not %s'
                         % (sorted(set(map(str, shown))), value))
