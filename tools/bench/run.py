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

"""The runner: the sections in order, the mini cloud set up and cleaned
up around them, and the report written."""

import argparse
import contextlib
import importlib.metadata
import json
import os
import platform
import subprocess
import sys
import time

import bench
from bench import cloud as clouds
from bench import declared
from bench import fleet
from bench import hooks
from bench import load
from bench import measure
from bench import objects
from bench import per_command
from bench import redfish
from bench import report as reports
from bench import server_list
from bench import sets
from bench import sync
from bench import template_list

VERSIONS_OF = ('osc-deploy-config', 'python-openstackclient',
               'python-ironicclient', 'openstacksdk', 'osc-lib', 'cliff',
               'keystoneauth1', 'stevedore')


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
    with open(os.path.join(clouds.CHECKOUT, 'tools', 'minicloud',
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
    text = reports.markdown(report)
    with open(os.path.join(output, name + '.md'), 'w') as out:
        out.write(text)
    print(text)


def parse(argv):
    parser = argparse.ArgumentParser(
        prog='tools/tox -e bench --', description=bench.__doc__.split(
            '\n')[0])
    parser.add_argument('--sizes', default='1,100,1000')
    parser.add_argument('--sync-nodes', type=int, default=500,
                        help='0 leaves the sync benchmark out')
    parser.add_argument('--sync-rounds', type=int, default=3)
    parser.add_argument('--list-servers', type=int, default=100)
    parser.add_argument('--fleet-servers', type=int, default=40,
                        help='0 leaves the rollout benchmark out')
    parser.add_argument('--fleet-unavailable', default='1,4,10')
    parser.add_argument('--slow-servers', type=int, default=20,
                        help='servers of the rollout at the hardware\'s '
                             'speed; 0 leaves it out')
    parser.add_argument('--slow-seconds', type=float, default=5,
                        help='how long each servicing takes then')
    parser.add_argument('--runs', type=int, default=7,
                        help='runs of each timed command')
    parser.add_argument('--runs-load', type=int, default=21)
    parser.add_argument('--runs-complete', type=int, default=15,
                        help='pairs of `openstack complete` runs')
    parser.add_argument('--only', choices=['complete', 'redfish', 'fleet',
                                           'sets', 'apply'],
                        help='run only this section (complete: no mini '
                             'cloud; redfish: a toggle through ironic\'s '
                             'redfish BIOS against a fake-steps one; fleet: '
                             'section 7, the rollouts; sets: a boot with a '
                             'set of configs against one with one config; '
                             'apply: an apply changing one BIOS template '
                             'over --apply-nodes capable nodes)')
    parser.add_argument('--apply-nodes', type=int, default=100)
    parser.add_argument('--output', default=os.path.join(clouds.CHECKOUT,
                                                         '.bench'))
    args = parser.parse_args(argv)
    args.sizes = sorted(int(s) for s in args.sizes.split(','))
    args.fleet_unavailable = [int(m) for m in
                              args.fleet_unavailable.split(',')]
    if not args.only and max(
            args.sync_nodes, args.list_servers + args.fleet_servers,
            args.fleet_servers + args.slow_servers) > args.sizes[-1]:
        parser.error('--sync-nodes, --list-servers, --fleet-servers and '
                     '--slow-servers need as many bench nodes: at most the '
                     'largest of --sizes')
    return args


def main(argv):
    args = parse(argv)
    started, start = time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime()), \
        time.monotonic()
    home = os.environ.get('MINICLOUD_HOME', os.path.join(clouds.CHECKOUT,
                                                         '.minicloud'))
    env = dict(os.environ, PYTHONWARNINGS='ignore',
               OS_CLIENT_CONFIG_FILE=os.path.join(home, 'etc',
                                                  'clouds.yaml'))
    env.pop('OS_CLOUD', None)
    os.environ.update(env)
    report = {'date': started, 'machine': machine(), 'argv': argv,
              'sizes': args.sizes, 'runs': args.runs,
              'runs_load': args.runs_load}
    if args.only == 'complete':
        measure.log('openstack complete, with and without the plugin')
        report.update(versions=versions(), complete=load.completion(
            args.runs_complete, env, without_plugin()),
            seconds=time.monotonic() - start)
        return write_report(args.output, report, 'report-complete')

    measure.log('minicloud up')
    subprocess.run([sys.executable, clouds.MINICLOUD, 'up',
                    '--ironic-release', 'pinned'], check=True,
                   stdout=subprocess.DEVNULL)
    cloud = clouds.Cloud()
    report['versions'] = versions(cloud)
    if args.only == 'redfish':
        measure.log('a toggle through ironic\'s redfish BIOS, and a '
                    'fake-steps one')
        report.update(redfish=redfish.redfish_toggle(
            measure.Counter(cloud, env), args.runs),
            seconds=time.monotonic() - start)
        return write_report(args.output, report, 'report-redfish')
    if args.only == 'apply':
        measure.log('an apply changing one BIOS template over %d nodes'
                    % args.apply_nodes)
        try:
            report.update(apply=declared.apply_over_nodes(
                cloud, measure.Counter(cloud, env), args.apply_nodes),
                seconds=time.monotonic() - start)
        finally:
            measure.log('cleaning up: %s' % (objects.clean(cloud),))
        return write_report(args.output, report, 'report-apply')
    if args.only == 'sets':
        measure.log('a boot with a set of two configs, and with one')
        report.update(sets=sets.boot_with_a_set(
            cloud, measure.Counter(cloud, env), args.runs),
            seconds=time.monotonic() - start)
        return write_report(args.output, report, 'report-sets')
    if args.only != 'fleet':
        measure.log('plugin load')
        report['plugin_load'] = load.plugin_load(args.runs_load, env)
        measure.log('openstack complete, with and without the plugin')
        report['complete'] = load.completion(args.runs_complete, env,
                                             without_plugin())
    with compute_stopped(cloud):
        measure.log('removed leftovers: %s' % (objects.clean(cloud),))
        counter = measure.Counter(cloud, env)
        if args.only == 'fleet':
            objects.grow(cloud, args.fleet_servers + args.slow_servers, 0)
        else:
            cloud_sections(cloud, counter, env, args, report)
        fleet_section(cloud, counter, args, report)
        if args.sync_nodes and args.only != 'fleet':
            measure.log('sync over %d nodes' % args.sync_nodes)
            report['sync'] = sync.sync_vs_floor(
                cloud, counter, args.sync_nodes, args.sync_rounds,
                sync.NovaLog(os.path.join(home, 'logs',
                                          'nova-compute-ironic.log')))
    report['seconds'] = time.monotonic() - start
    write_report(args.output, report, 'report-fleet' if args.only
                 else 'report')


def cloud_sections(cloud, counter, env, args, report):
    """Sections 2, 3, 5 and 6, on the bench's objects at each size."""
    without = without_plugin()
    report['requests'], report['objects'], server = \
        per_command.requests_per_size(cloud, counter, args.sizes)
    report['templates_listed'] = len(cloud.ironic_list(
        'deploy_templates', 'uuid'))
    measure.log('template list vs ironicclient')
    report['template_list'] = template_list.template_list_vs_ironicclient(
        args.runs, env, without)
    measure.log('the hooks on OSC\'s server create, rebuild and resize, in '
                'a cloud of %d images' % args.sizes[-1])
    objects.grow_images(cloud, args.sizes[-1])
    report['hooks'] = hooks.hook_costs(cloud, counter, env, without,
                                       args.runs)
    measure.log('server deploy-config list --long over %d servers'
                % args.list_servers)
    report['server_list'] = server_list.server_list_long(
        cloud, counter, env, args.list_servers, args.runs)
    objects.untag_host(cloud, server[1], server[2])


def fleet_section(cloud, counter, args, report):
    """Section 7: the rollout with servicings that take no time (the API's
    overhead), then at the hardware's speed."""
    if args.fleet_servers:
        measure.log('a rollout over %d bare-metal servers'
                    % args.fleet_servers)
        report['fleet'] = fleet.fleet_rollout(
            cloud, counter, args.fleet_servers, args.fleet_unavailable, 3)
    if args.slow_servers:
        measure.log('a rollout over %d bare-metal servers, %g s a '
                    'servicing' % (args.slow_servers, args.slow_seconds))
        report['fleet_slow'] = fleet.slow_rollout(
            cloud, counter, args.slow_servers, args.fleet_unavailable,
            args.slow_seconds)


@contextlib.contextmanager
def compute_stopped(cloud):
    """nova's ironic compute stopped meanwhile (the sync section starts
    it), and every bench object deleted at the end."""
    subprocess.run([sys.executable, clouds.MINICLOUD, 'stop',
                    'nova-compute-ironic'], check=True)
    try:
        yield
    finally:
        measure.log('cleaning up: %s' % (objects.clean(cloud),))
        subprocess.run([sys.executable, clouds.MINICLOUD, 'start',
                        'nova-compute-ironic'], check=True)


def without_plugin():
    """The virtualenv without our plugin, made once."""
    return load.venv_without_plugin(os.path.join(clouds.CHECKOUT, '.bench'))
