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

"""The operator's story on the mini cloud, as a terminal transcript.

    python tools/demo.py [--keep]

Brings the mini cloud up (or reuses it), runs real ``openstack`` commands,
prints each with its output, checks each effect, and ends with a table of
what was shown and how long it took.  Without ``--keep``, a cloud the demo
started is stopped at the end.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MINICLOUD = os.path.join(CHECKOUT, 'tools', 'minicloud', 'minicloud')
sys.path.insert(0, os.path.dirname(MINICLOUD))
import waiting  # noqa: E402

OPENSTACK = shutil.which('openstack', path=os.path.dirname(sys.executable))


class DemoFailed(Exception):
    pass


class Transcript:
    """Runs the story's commands, shows them, and checks their effects."""

    def __init__(self, clouds_yaml):
        self.env = dict(os.environ, OS_CLIENT_CONFIG_FILE=clouds_yaml,
                        PYTHONWARNINGS='ignore')
        self.env.pop('OS_CLOUD', None)
        os.environ['OS_CLIENT_CONFIG_FILE'] = clouds_yaml  # for the SDK
        self.shown = []     # (step, seconds, checks passed)
        self._step = None

    def step(self, title):
        self._finish_step()
        print('\n== %s' % title, flush=True)
        self._step = [title, time.monotonic(), 0]

    def run(self, *args, cloud='minicloud-admin'):
        """Run a command and show it, as an operator would see it."""
        argv = ['openstack', '--os-cloud', cloud, *args]
        print('$ %s' % ' '.join(argv), flush=True)
        done = self._openstack(argv[1:])
        print(done.stdout + done.stderr, end='', flush=True)
        if done.returncode:
            raise DemoFailed('command failed: %s' % ' '.join(argv))

    def query(self, *args, cloud='minicloud-admin'):
        """Ask the cloud, without showing it; returns the JSON output."""
        done = self._openstack(['--os-cloud', cloud, *args, '-f', 'json'])
        if done.returncode:
            raise DemoFailed('query failed: openstack %s: %s'
                             % (' '.join(args), done.stderr.strip()))
        return json.loads(done.stdout)

    def fails(self, *args, cloud='minicloud-admin'):
        """Run and show a command that must fail; return its error."""
        argv = ['openstack', '--os-cloud', cloud, *args]
        print('$ %s' % ' '.join(argv), flush=True)
        done = self._openstack(argv[1:])
        print(done.stdout + done.stderr, end='', flush=True)
        if done.returncode == 0:
            raise DemoFailed('command should have failed: %s'
                             % ' '.join(argv))
        return done.stderr

    def exits(self, code, *args, cloud='minicloud-admin'):
        """Run and show a command; whether it exited with ``code``."""
        argv = ['openstack', '--os-cloud', cloud, *args]
        print('$ %s' % ' '.join(argv), flush=True)
        done = self._openstack(argv[1:])
        print(done.stdout + done.stderr, end='', flush=True)
        print('[exit %d]' % done.returncode, flush=True)
        return done.returncode == code

    def quiet(self, *args, cloud='minicloud-admin'):
        """Change the cloud without showing it."""
        done = self._openstack(['--os-cloud', cloud, *args])
        if done.returncode:
            raise DemoFailed('openstack %s: %s' % (' '.join(args),
                                                   done.stderr.strip()))

    def boot(self, name, flavor, image='tiny'):
        """Boot a server as the member ``demo``, shown; its ID once
        ACTIVE."""
        self.run('server', 'create', '--flavor', flavor, '--image', image,
                 '--nic', 'none', '--wait', name, '-c', 'name', '-c',
                 'status', cloud='minicloud-demo')
        return self.query('server', 'show', name,
                          cloud='minicloud-demo')['id']

    def wait_schedulable(self, nodes, trait,
                         resource_class='CUSTOM_BAREMETAL_GOLD',
                         timeout=120):
        """Until nova's placement sees the nodes unreserved with the trait
        (nova-compute copies ironic's view every few seconds)."""
        import openstack

        print('   (waiting for placement to see the tags)', flush=True)
        conn = openstack.connect(cloud='minicloud-admin')
        system = openstack.connect(cloud=SYSTEM)
        found = [system.baremetal.find_node(n, ignore_missing=False)
                 for n in nodes]
        ids = [n.id for n in found if not n.instance_id]
        if not ids:
            raise DemoFailed('no free node among %s' % ', '.join(nodes))

        def ready(rp):
            inv = conn.placement.get('/resource_providers/%s/inventories'
                                     % rp, microversion='1.39').json()
            found = inv.get('inventories', {}).get(resource_class)
            traits = conn.placement.get('/resource_providers/%s/traits' % rp,
                                        microversion='1.39').json()
            return found and found['reserved'] == 0 and trait in traits.get(
                'traits', ())

        try:
            waiting.wait_for('placement to see %s on %s' % (
                trait, ', '.join(nodes)), lambda: all(
                    ready(rp) for rp in ids), timeout, interval=1)
        except waiting.TimedOut as exc:
            raise DemoFailed(str(exc)) from None

    def _openstack(self, args):
        return subprocess.run([OPENSTACK, *args], env=self.env,
                              capture_output=True, text=True)

    def check(self, what, ok):
        print('   %s %s' % ('ok:' if ok else 'FAILED:', what), flush=True)
        if not ok:
            raise DemoFailed(what)
        self._step[2] += 1

    def _finish_step(self):
        if self._step:
            title, t0, checks = self._step
            self.shown.append((title, time.monotonic() - t0, checks))
            self._step = None

    def summary(self):
        self._finish_step()
        width = max(len(title) for title, _, _ in self.shown)
        print('\n%-*s %8s %7s' % (width, 'shown', 'seconds', 'checks'))
        for title, seconds, checks in self.shown:
            print('%-*s %8.1f %7d' % (width, title, seconds, checks))
        sys.stdout.flush()


HT_ON = 'CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_ENABLED'
HT_OFF = 'CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_DISABLED'
# bm-4's kind of hardware (baremetal-silver), whose BIOS names it
# ProcHyperthreading
HT_ON_SILVER = HT_ON + '_FOR_BAREMETAL_SILVER'
HT_OFF_SILVER = HT_OFF + '_FOR_BAREMETAL_SILVER'
# bm-5's (baremetal-copper), a Dell's: LogicalProc
HT_ON_COPPER = HT_ON + '_FOR_BAREMETAL_COPPER'
HT_OFF_COPPER = HT_OFF + '_FOR_BAREMETAL_COPPER'
# bm-6's (baremetal-bronze), an HPE AMD's: ProcSMT
HT_ON_BRONZE = HT_ON + '_FOR_BAREMETAL_BRONZE'
HT_OFF_BRONZE = HT_OFF + '_FOR_BAREMETAL_BRONZE'
# turbo off, as each Redfish node's BIOS names it
TURBO_OFF = 'CUSTOM_DEPLOY_CONFIG_TURBO_DISABLED_FOR_BAREMETAL_'
TURBO_OFF_COPPER, TURBO_OFF_BRONZE = TURBO_OFF + 'COPPER', TURBO_OFF + 'BRONZE'
HPE_FACTORY_PROFILE = 'GeneralPowerEfficientCompute'
RAID1 = 'CUSTOM_DEPLOY_CONFIG_DISKS_RAID1'
DEMO_TEMPLATES = (HT_ON, HT_OFF, RAID1, HT_ON_SILVER, HT_OFF_SILVER,
                  HT_ON_COPPER, HT_OFF_COPPER, HT_ON_BRONZE, HT_OFF_BRONZE,
                  TURBO_OFF_COPPER, TURBO_OFF_BRONZE)
# The config types the demo offers: every template of theirs (whoever made
# it: the README's commands make some) goes at the start, and every set.
DEMO_TYPES = ('hyperthreading', 'disks', 'turbo')
PREFIX = 'CUSTOM_DEPLOY_CONFIG_'
SET_PREFIX = PREFIX + 'SET_'
# bm-6's two BIOS configs at once, as latency-sensitive work asks them
LOWLAT = 'demo-lowlat'
LOWLAT_SET = (SET_PREFIX + 'HYPERTHREADING_DISABLED_AND_TURBO_DISABLED'
              '_FOR_BAREMETAL_BRONZE')
SYSTEM = 'minicloud-system-admin'


SERVER = 'demo-ht'
SILVER_SERVER = 'demo-ht-silver'
VIRTUAL = 'demo-vm'
# An image that asks for hyperthreading=disabled, a flavor without configs.
IMAGE_SERVER, IMAGE_FLAVOR, IMAGE = ('demo-image', 'bm.demo-any',
                                     'demo-ht-off')
# To land a server on bm-2 (not capable of hyperthreading) on purpose.
PLAIN_SERVER, PLAIN_FLAVOR, PLAIN_TRAIT = ('demo-plain', 'bm.demo-plain',
                                           'CUSTOM_DEMO_PLAIN')


def reset(demo):
    """Remove what an earlier demo left: its grants, server, flavor
    configs, templates and their traits."""
    demo.quiet('project', 'deploy-config', 'unset', 'demo', '--all')
    for server in demo.query('server', 'list', cloud='minicloud-demo'):
        if server['Name'] in (SERVER, VIRTUAL, PLAIN_SERVER, IMAGE_SERVER,
                              SILVER_SERVER, LOWLAT):
            demo.quiet('server', 'delete', '--wait', server['ID'],
                       cloud='minicloud-demo')
    for flavor in demo.query('flavor', 'list', '--all'):
        if flavor['Name'].startswith(('m1.tiny+', 'bm.gold+', PLAIN_FLAVOR,
                                      IMAGE_FLAVOR)):
            demo.quiet('flavor', 'delete', flavor['ID'])
    for image in demo.query('image', 'list', '--name', IMAGE):
        demo.quiet('image', 'delete', image['ID'])
    for flavor in ('bm.gold', 'bm.silver', 'bm.copper', 'bm.bronze'):
        specs = demo.query('flavor', 'show', flavor)['properties']
        asked = [t for t in DEMO_TYPES if 'deploy-config:%s' % t in specs]
        if asked:
            demo.quiet('flavor', 'deploy-config', 'unset', '--no-wait',
                       flavor, *asked)
    host = demo.query('resource', 'provider', 'list', '--name',
                      'fake-compute')[0]['uuid']
    traits = {t['name'] for t in demo.query('resource', 'provider', 'trait',
                                            'list', host)}
    ours = {t for t in traits if t.startswith(PREFIX)}
    if ours:
        demo.quiet('resource', 'provider', 'trait', 'set', host, *[
            arg for t in sorted(traits - ours) for arg in ('--trait', t)])
    # the sets first: a member goes only once its sets are gone
    stale = sorted((t['name'] for t in demo.query(
        'baremetal', 'deploy', 'template', 'list', '--long')
        if t['name'].startswith(SET_PREFIX) or (t.get('extra') or {}).get(
            'deploy_config_type') in DEMO_TYPES),
        key=lambda name: not name.startswith(SET_PREFIX))
    if stale:
        demo.quiet('baremetal', 'deploy', 'template', 'delete', *stale)
    for node in demo.query('baremetal', 'node', 'list', '--fields', 'name',
                           'traits', cloud=SYSTEM):
        for trait in (set(DEMO_TEMPLATES + (PLAIN_TRAIT,)) | set(
                stale)) & set(node['traits']):
            demo.quiet('baremetal', 'node', 'remove', 'trait', node['name'],
                       trait, cloud=SYSTEM)
    bios = {b['name']: b['value'] for b in demo.query(
        'baremetal', 'node', 'bios', 'setting', 'list', 'bm-6',
        cloud=SYSTEM)}
    if bios.get('WorkloadProfile') != HPE_FACTORY_PROFILE:
        # an earlier demo prepared bm-6: its profile back, through ironic
        step = json.dumps([{'interface': 'bios', 'step': 'apply_configuration',
                            'args': {'settings': [{
                                'name': 'WorkloadProfile',
                                'value': HPE_FACTORY_PROFILE}]}}])
        for verb in (('manage',), ('clean', '--clean-steps', step,
                                   '--disable-ramdisk'), ('provide',)):
            demo.quiet('baremetal', 'node', *verb, '--wait', '120', 'bm-6',
                       cloud=SYSTEM)


def node_traits(demo):
    return {n['name']: set(n['traits']) for n in demo.query(
        'baremetal', 'node', 'list', '--fields', 'name', 'traits',
        cloud=SYSTEM)}


def story(demo, workdir):
    demo.step('The cloud: nova computes, one of them for ironic')
    demo.run('compute', 'service', 'list', '-c', 'Binary', '-c', 'Host',
             '-c', 'State')
    services = demo.query('compute', 'service', 'list')
    computes = {s['Host'] for s in services if s['Binary'] == 'nova-compute'}
    demo.check('a fake compute and an ironic compute are up',
               computes == {'fake-compute', 'ironic-compute'} and all(
                   s['State'] == 'up' for s in services))

    demo.step('The bare-metal nodes, as ironic sees them')
    fields = ('--fields', 'name', 'provision_state', 'maintenance', 'traits')
    demo.run('baremetal', 'node', 'list', *fields, cloud=SYSTEM)
    nodes = {n['name']: n for n in demo.query(
        'baremetal', 'node', 'list', *fields, cloud=SYSTEM)}
    demo.check('bm-0, bm-1, bm-3, bm-4, bm-5 and bm-6 (other vendors\' '
               'hardware) are capable of hyperthreading',
               [n for n in sorted(nodes)
                if 'HW_CPU_HYPERTHREADING' in nodes[n]['traits']]
               == ['bm-0', 'bm-1', 'bm-3', 'bm-4', 'bm-5', 'bm-6'])
    demo.check('bm-3 is in maintenance',
               [n for n in sorted(nodes) if nodes[n]['maintenance']]
               == ['bm-3'])

    demo.step('Deploy templates for hyperthreading on and off')
    for value, bios in (('enabled', 'Enabled'), ('disabled', 'Disabled')):
        demo.run('baremetal', 'deploy', 'template', 'create', '--config',
                 'hyperthreading=%s' % value, '--bios-setting',
                 'HyperThreading=%s' % bios)
    created = demo.query('baremetal', 'deploy', 'template', 'list',
                         '--config-type', 'hyperthreading')
    demo.check('one template per config, named after it, requiring '
               'HW_CPU_HYPERTHREADING',
               sorted((t['name'], tuple(t['capability_traits']))
                      for t in created)
               == [(HT_OFF, ('HW_CPU_HYPERTHREADING',)),
                   (HT_ON, ('HW_CPU_HYPERTHREADING',))])

    demo.step('A RAID profile any node can take, from a file')
    raid_file = os.path.join(workdir, 'raid1.json')
    with open(raid_file, 'w') as f:
        json.dump({'logical_disks': [{'size_gb': 'MAX', 'raid_level': '1',
                                      'is_root_volume': True}]}, f)
    demo.run('baremetal', 'deploy', 'template', 'create', '--config',
             'disks=raid1', '--raid-config', raid_file,
             '--no-requires-trait', '-c', 'name', '-c', 'steps', '-c',
             'capability_traits')
    raid = demo.query('baremetal', 'deploy', 'template', 'show', RAID1)
    demo.check('a raid.apply_configuration step from the file',
               [(s['interface'], s['step']) for s in raid['steps']]
               == [('raid', 'apply_configuration')])

    demo.step('A second template for a config is refused')
    refused = demo.fails('baremetal', 'deploy', 'template', 'create',
                         'CUSTOM_HT_AGAIN', '--config',
                         'hyperthreading=enabled', '--bios-setting',
                         'HyperThreading=Enabled')
    demo.check('one clear line, nothing created',
               'one template per config' in refused and 'CUSTOM_HT_AGAIN'
               not in {t['name'] for t in demo.query(
                   'baremetal', 'deploy', 'template', 'list')})

    demo.step('A misspelled BIOS setting: the BIOS registry refuses it')
    refused = demo.fails('baremetal', 'deploy', 'template', 'create',
                         '--config', 'hyperthreading=auto', '--bios-setting',
                         'HyperThreding=Enabled')
    demo.check('one line naming the setting and the capable nodes, nothing '
               'created', 'BIOS registry refuses HyperThreding=Enabled on '
               'bm-0, bm-1, bm-3, bm-4' in refused
               and 'CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_AUTO' not in {
                   t['name'] for t in demo.query(
                       'baremetal', 'deploy', 'template', 'list')})

    demo.step('Which nodes can take which config')
    demo.run('baremetal', 'node', 'deploy-config', 'list', '--config',
             'hyperthreading=enabled')
    listed = {r['Node']: r for r in demo.query(
        'baremetal', 'node', 'deploy-config', 'list', '--config',
        'hyperthreading=enabled')}
    demo.check('bm-0, bm-1 and bm-3 (in maintenance: capable all the '
               'same); bm-2 lacks the trait; bm-4\'s BIOS has no '
               'HyperThreading', {n for n, r in listed.items()
                                  if r['Capable']} == {'bm-0', 'bm-1', 'bm-3'}
               and 'HyperThreading' in listed['bm-4']['Reason'])

    demo.step('Tag the capable nodes: sync (dry run first)')
    demo.run('baremetal', 'node', 'deploy-config', 'sync', '--dry-run')
    demo.check('the dry run changed nothing', not any(
        set(DEMO_TEMPLATES) & t for t in node_traits(demo).values()))
    demo.run('baremetal', 'node', 'deploy-config', 'sync')
    traits = node_traits(demo)
    demo.check('bm-0, bm-1 and bm-3 carry every template trait',
               all({HT_ON, HT_OFF, RAID1} <= traits[n]
                   for n in ('bm-0', 'bm-1', 'bm-3')))
    demo.check('bm-2 and bm-4 carry only the RAID profile',
               set(DEMO_TEMPLATES) & traits['bm-2'] == {RAID1}
               and set(DEMO_TEMPLATES) & traits['bm-4'] == {RAID1})
    listed = {r['Node']: r for r in demo.query(
        'baremetal', 'node', 'deploy-config', 'list', '--config',
        'hyperthreading=enabled')}
    demo.check('sync returned once placement showed the tags: bm-0 and '
               'bm-1 schedulable, bm-3 tagged but reserved (maintenance)',
               [n for n in sorted(listed) if listed[n]['Schedulable']]
               == ['bm-0', 'bm-1'] and listed['bm-3']['Tagged'])
    demo.run('baremetal', 'node', 'deploy-config', 'sync')
    demo.check('a rerun changes nothing', node_traits(demo) == traits)

    demo.step('The flavor bm.gold asks for hyperthreading=enabled')
    demo.run('flavor', 'deploy-config', 'set', 'bm.gold',
             'hyperthreading=enabled')
    specs = demo.query('flavor', 'show', 'bm.gold')['properties']
    demo.check('it requires the template trait, not HW_CPU_HYPERTHREADING',
               specs.get('trait:' + HT_ON) == 'required'
               and 'trait:HW_CPU_HYPERTHREADING' not in specs
               and specs.get('deploy-config:hyperthreading') == 'enabled')
    demo.run('flavor', 'deploy-config', 'show', 'bm.gold')
    shown = demo.query('flavor', 'deploy-config', 'show', 'bm.gold')
    demo.check('three nodes tagged, two schedulable now (placement), bm-3 '
               'reserved', shown['tagged_nodes'] == {
                   'hyperthreading=enabled': 3}
               and shown['schedulable_nodes'] == 2
               and 'bm-3 reserved (maintenance)' in ' '.join(shown['drift']))

    demo.step('Boot from bm.gold at once: a capable node, BIOS set at '
              'deploy')
    server_id = demo.boot(SERVER, 'bm.gold')
    node = demo.query('server', 'show', server_id)[
        'OS-EXT-SRV-ATTR:hypervisor_hostname']
    name = demo.query('baremetal', 'node', 'show', node, cloud=SYSTEM)['name']
    demo.run('baremetal', 'node', 'bios', 'setting', 'list', name,
             cloud=SYSTEM)
    bios = {b['name']: b['value'] for b in demo.query(
        'baremetal', 'node', 'bios', 'setting', 'list', name, cloud=SYSTEM)}
    demo.check('%s (capable, tagged) runs it with HyperThreading=Enabled'
               % name, name in ('bm-0', 'bm-1')
               and bios.get('HyperThreading') == 'Enabled')

    demo.step('Toggle it off in place: ironic services the node')
    demo.run('server', 'resize', '--deploy-config', 'hyperthreading=disabled',
             '--dry-run', server_id)
    demo.run('server', 'resize', '--deploy-config', 'hyperthreading=disabled',
             server_id)
    demo.run('baremetal', 'node', 'bios', 'setting', 'list', name,
             cloud=SYSTEM)
    bios = {b['name']: b['value'] for b in demo.query(
        'baremetal', 'node', 'bios', 'setting', 'list', name, cloud=SYSTEM)}
    shown = demo.query('server', 'show', server_id)
    node = demo.query('baremetal', 'node', 'show', name, cloud=SYSTEM)
    record = node['properties'].get('deploy_config_applied') or {}
    demo.check('BIOS flipped, node active, server ACTIVE and unlocked, the '
               'config recorded on the node',
               bios.get('HyperThreading') == 'Disabled'
               and node['provision_state'] == 'active'
               and (shown['status'], shown['locked']) == ('ACTIVE', False)
               and record.get('configs') == {'hyperthreading': 'disabled'})
    demo.run('server', 'deploy-config', 'show', server_id)
    (row,) = demo.query('server', 'deploy-config', 'show', server_id)
    demo.check('wanted (from the toggle) and in effect on the hardware',
               (row['Wanted'], row['Source'], row['Actual'],
                row['In Effect']) == ('disabled', 'toggle',
                                      'HyperThreading=Disabled', 'yes'))

    demo.step('A RAID profile is never toggled on a running server')
    before = demo.query('baremetal', 'node', 'show', name, cloud=SYSTEM)
    refusal = demo.fails('server', 'resize', '--deploy-config',
                         'disks=raid1', server_id)
    after = demo.query('baremetal', 'node', 'show', name, cloud=SYSTEM)
    demo.check('refused in one line naming the step and the data at risk; '
               'raid_config and the node unchanged',
               'raid.apply_configuration would destroy the RAID volumes'
               in refusal and (before['raid_config'],
                               before['provision_state']) == (
                   after['raid_config'], after['provision_state']))

    demo.step('Rebuild it as anyone would: it works, the toggle survives')
    demo.run('server', 'rebuild', '--image', 'tiny', '--wait', server_id,
             '-c', 'name', '-c', 'status')
    bios = {b['name']: b['value'] for b in demo.query(
        'baremetal', 'node', 'bios', 'setting', 'list', name, cloud=SYSTEM)}
    (row,) = demo.query('server', 'deploy-config', 'show', server_id)
    demo.check('ACTIVE, HyperThreading=Disabled read back, in effect',
               demo.query('server', 'show', server_id)['status'] == 'ACTIVE'
               and bios.get('HyperThreading') == 'Disabled'
               and (row['Wanted'], row['In Effect']) == ('disabled', 'yes'))

    self_service_story(demo, server_id, name)
    image_story(demo, workdir)
    silver_id = kinds_story(demo)

    demo.step('A bare-metal server on a node not capable is refused')
    demo.run('baremetal', 'node', 'add', 'trait', 'bm-2', PLAIN_TRAIT,
             cloud=SYSTEM)
    demo.run('flavor', 'create', '--vcpus', '4', '--ram', '8192', '--disk',
             '40', PLAIN_FLAVOR, '-c', 'name', '-c', 'properties', *[
                 arg for prop in ('resources:CUSTOM_BAREMETAL_GOLD=1',
                                  'resources:VCPU=0', 'resources:MEMORY_MB=0',
                                  'resources:DISK_GB=0',
                                  'trait:%s=required' % PLAIN_TRAIT)
                 for arg in ('--property', prop)])
    demo.wait_schedulable(('bm-2',), PLAIN_TRAIT)
    plain_id = demo.boot(PLAIN_SERVER, PLAIN_FLAVOR)
    bios = demo.query('baremetal', 'node', 'bios', 'setting', 'list', 'bm-2',
                      cloud=SYSTEM)
    refusal = demo.fails('server', 'resize', '--deploy-config',
                         'hyperthreading=disabled', plain_id)
    demo.check('refused before any change: bm-2 lacks the template trait',
               'node bm-2 lacks ' + HT_OFF in refusal and bios == demo.query(
                   'baremetal', 'node', 'bios', 'setting', 'list', 'bm-2',
                   cloud=SYSTEM))

    demo.step('A virtual server: a host without the trait is refused')
    vm_id = demo.boot(VIRTUAL, 'm1.tiny')
    refusal = demo.fails('server', 'resize', '--deploy-config',
                         'hyperthreading=disabled', '--auto-confirm', vm_id)
    demo.check('one line naming the missing trait; flavor unchanged',
               'fake-compute lacks ' + HT_OFF in refusal
               and demo.query('server', 'show', vm_id)['flavor'][
                   'original_name'] == 'm1.tiny')

    demo.step('Tag the host, then the toggle goes through nova')
    host = demo.query('resource', 'provider', 'list', '--name',
                      'fake-compute')[0]['uuid']
    traits = [t['name'] for t in demo.query('resource', 'provider', 'trait',
                                            'list', host)]
    demo.run('resource', 'provider', 'trait', 'set', host, '-f', 'value',
             *[arg for t in sorted(set(traits) | {HT_OFF})
               for arg in ('--trait', t)])
    demo.run('server', 'resize', '--deploy-config', 'hyperthreading=disabled',
             '--auto-confirm', vm_id)
    flavor = demo.query('server', 'show', vm_id)['flavor']
    demo.check('ACTIVE on m1.tiny+hyperthreading=disabled',
               flavor['original_name'] == 'm1.tiny+hyperthreading=disabled'
               and flavor['extra_specs'].get('trait:' + HT_OFF)
               == 'required')
    fleet_story(demo, host, (server_id, vm_id, plain_id, silver_id))
    declared_story(demo, workdir)


def self_service_story(demo, server_id, name):
    """Project demo switches its own server within the operator's
    grant."""
    demo.step('A project switches its own server, within the operator\'s '
              'grant')
    demo.run('project', 'deploy-config', 'set', 'demo',
             'hyperthreading=enabled', 'hyperthreading=disabled')
    shown = demo.query('project', 'deploy-config', 'show', 'demo')
    demo.check('a runbook demo owns for each config, matching its template',
               sorted((r['Config'], r['State']) for r in shown) == [
                   ('hyperthreading=disabled', 'ok'),
                   ('hyperthreading=enabled', 'ok')])
    refusal = demo.fails('server', 'resize', '--deploy-config',
                         'hyperthreading=enabled', server_id,
                         cloud='minicloud-demo')
    demo.check('demo\'s member is told that its managers may',
               "its project's managers may switch it" in refusal)
    demo.run('server', 'resize', '--deploy-config', 'hyperthreading=enabled',
             server_id, cloud='minicloud-demo-manager')
    bios = {b['name']: b['value'] for b in demo.query(
        'baremetal', 'node', 'bios', 'setting', 'list', name, cloud=SYSTEM)}
    node = demo.query('baremetal', 'node', 'show', name, cloud=SYSTEM)
    record = node['extra'].get('deploy_config_project_applied') or {}
    demo.check('demo\'s manager switched it through demo\'s runbook: '
               'HyperThreading=Enabled, recorded in the node\'s extra as '
               'demo\'s', bios.get('HyperThreading') == 'Enabled'
               and record.get('configs') == {'hyperthreading': 'enabled'}
               and demo.query('server', 'show', server_id)['locked'] is False)
    demo.run('server', 'deploy-config', 'show', server_id,
             cloud='minicloud-demo')
    refusal = demo.fails('server', 'resize', '--deploy-config',
                         'hyperthreading=disabled', server_id,
                         cloud='minicloud-other-manager')
    demo.check('another project\'s manager does not even see it',
               'No server' in refusal)


def kinds_story(demo):
    """One config on another vendor's hardware; the server's ID."""
    demo.step('Another kind of hardware: the same config, no vendor names')
    for value in ('enabled', 'disabled'):
        demo.run('baremetal', 'deploy', 'template', 'create', '--config',
                 'hyperthreading=%s' % value)
    made = {t['name']: t['resource_class'] for t in demo.query(
        'baremetal', 'deploy', 'template', 'list', '--config-type',
        'hyperthreading')}
    demo.check('bm-4\'s registry names it ProcHyperthreading, bm-5\'s '
               'LogicalProc, bm-6\'s ProcSMT: a template for each of their '
               'classes; the gold ones serve their own class',
               made == {HT_ON: None, HT_OFF: None,
                        HT_ON_SILVER: 'baremetal-silver',
                        HT_OFF_SILVER: 'baremetal-silver',
                        HT_ON_COPPER: 'baremetal-copper',
                        HT_OFF_COPPER: 'baremetal-copper',
                        HT_ON_BRONZE: 'baremetal-bronze',
                        HT_OFF_BRONZE: 'baremetal-bronze'})
    demo.run('baremetal', 'node', 'deploy-config', 'sync')
    demo.run('flavor', 'deploy-config', 'set', 'bm.silver',
             'hyperthreading=enabled')
    specs = demo.query('flavor', 'show', 'bm.silver')['properties']
    demo.check('bm.silver requires its own class\'s template',
               specs.get('trait:' + HT_ON_SILVER) == 'required')
    demo.wait_schedulable(('bm-4',), HT_ON_SILVER,
                          'CUSTOM_BAREMETAL_SILVER')
    server_id = demo.boot(SILVER_SERVER, 'bm.silver')
    demo.run('server', 'resize', '--deploy-config', 'hyperthreading=disabled',
             server_id)
    bios = {b['name']: b['value'] for b in demo.query(
        'baremetal', 'node', 'bios', 'setting', 'list', 'bm-4',
        cloud=SYSTEM)}
    (row,) = demo.query('server', 'deploy-config', 'show', server_id)
    demo.check('bm-4 deployed it, and took the toggle: ProcHyperthreading='
               'Disabled, in effect',
               bios.get('ProcHyperthreading') == 'Disabled'
               and (row['Template'], row['In Effect']) == (HT_OFF_SILVER,
                                                           'yes'))
    profiles_story(demo)
    return server_id


def profiles_story(demo):
    """Turbo, which a vendor profile locks, through ironic's own redfish
    BIOS interface and the emulated BMCs of bm-5 (Dell) and bm-6 (HPE)."""
    demo.step('A setting a vendor profile locks: offered once prepared')
    planned = demo.query('baremetal', 'deploy', 'template', 'create',
                         '--config', 'turbo=disabled', '--dry-run')
    demo.run('baremetal', 'deploy', 'template', 'create', '--config',
             'turbo=disabled', '--dry-run', '-c', 'settings', '-c', 'notes')
    demo.check('ironic 39 refuses a locked setting even beside its profile: '
               'each template sends the setting alone, and the notes name '
               'the profile to prepare',
               planned['settings'].get('baremetal-copper', '').startswith(
                   'ProcTurboMode=Disabled')
               and planned['settings'].get('baremetal-bronze', '')
               .startswith('ProcAMDBoost=Disabled')
               and 'SysProfile=Custom' in planned['notes'].get(
                   'baremetal-copper', ''))
    demo.run('baremetal', 'deploy', 'template', 'create', '--config',
             'turbo=disabled')
    synced = {r['Node']: r for r in demo.query(
        'baremetal', 'node', 'deploy-config', 'sync', TURBO_OFF_BRONZE)}
    demo.check('bm-6\'s default WorkloadProfile locks ProcAMDBoost: not '
               'offered, with the command that prepares it',
               synced['bm-6']['Action'] == 'not offered'
               and 'deploy-config prepare bm-6' in synced['bm-6']['Reason'])
    demo.run('baremetal', 'node', 'deploy-config', 'prepare', 'bm-6')
    traits = demo.query('baremetal', 'node', 'show', 'bm-6', '--fields',
                        'traits', cloud=SYSTEM)['traits']
    demo.check('bm-6 prepared (WorkloadProfile=Custom, by manual cleaning '
               'through its BMC) and offered turbo=disabled now',
               TURBO_OFF_BRONZE in traits)
    compose_story(demo)


def compose_story(demo):
    """Two BIOS configs on one server: their set, booted on bm-6 through
    ironic's redfish driver, and one of them toggled."""
    demo.step('Hyperthreading and turbo off at once: one template for the '
              'set')
    demo.quiet('baremetal', 'deploy', 'template', 'create', '--config',
               'turbo=enabled')
    demo.quiet('baremetal', 'node', 'deploy-config', 'sync')
    demo.run('flavor', 'deploy-config', 'set', 'bm.bronze',
             'hyperthreading=disabled', 'turbo=disabled')
    shown = demo.query('flavor', 'deploy-config', 'show', 'bm.bronze')
    made = demo.query('baremetal', 'deploy', 'template', 'show', LOWLAT_SET)
    demo.check('bm.bronze asks for their set, made for it: one BIOS step '
               'with both settings, built from its members as they are',
               shown['sets'] == {'hyperthreading=disabled': LOWLAT_SET,
                                 'turbo=disabled': LOWLAT_SET}
               and [s['step'] for s in made['steps']]
               == ['apply_configuration'] and {'ProcSMT', 'ProcAMDBoost'}
               <= {s['name'] for s in made['steps'][0]['args']['settings']}
               and made['current'] is True)
    demo.wait_schedulable(('bm-6',), LOWLAT_SET, 'CUSTOM_BAREMETAL_BRONZE')
    server_id = demo.boot(LOWLAT, 'bm.bronze')
    bios = {b['name']: b['value'] for b in demo.query(
        'baremetal', 'node', 'bios', 'setting', 'list', 'bm-6',
        cloud=SYSTEM)}
    demo.check('bm-6 deployed both: ProcSMT=Disabled, ProcAMDBoost=Disabled',
               (bios.get('ProcSMT'), bios.get('ProcAMDBoost'))
               == ('Disabled', 'Disabled'))
    demo.run('server', 'resize', '--deploy-config', 'turbo=enabled',
             server_id)
    demo.run('server', 'deploy-config', 'show', server_id)
    rows = {r['Type']: (r['Wanted'], r['In Effect']) for r in demo.query(
        'server', 'deploy-config', 'show', server_id)}
    demo.check('turbo toggled on, hyperthreading kept off, both in effect',
               rows == {'hyperthreading': ('disabled', 'yes'),
                        'turbo': ('enabled', 'yes')})
    # its cores back to the project's quota, for the servers to come
    demo.quiet('server', 'delete', '--wait', server_id,
               cloud='minicloud-demo')


def fleet_story(demo, host, fleet_ids):
    demo.step('Roll hyperthreading=enabled out: planned first, two at once')
    traits = [t['name'] for t in demo.query('resource', 'provider', 'trait',
                                            'list', host)]
    demo.quiet('resource', 'provider', 'trait', 'set', host, *[
        arg for t in sorted(set(traits) | {HT_ON}) for arg in ('--trait', t)])
    fleet = (*fleet_ids, '--deploy-config', 'hyperthreading=enabled',
             '--max-unavailable', '2')
    demo.run('server', 'deploy-config', 'set', *fleet, '--dry-run',
             '-c', 'Server', '-c', 'How', '-c', 'Outcome')
    demo.run('server', 'deploy-config', 'set', *fleet)
    outcomes = {r['Server']: r['Outcome'] for r in demo.query(
        'server', 'deploy-config', 'set', *fleet)}
    shown = {r['Server']: (r['Wanted'], r['In Effect']) for r in demo.query(
        'server', 'deploy-config', 'list', '--all-projects', '--long')}
    bios = {b['name']: b['value'] for b in demo.query(
        'baremetal', 'node', 'bios', 'setting', 'list', 'bm-4',
        cloud=SYSTEM)}
    demo.check('the servers there, both kinds of bare metal read back '
               '(bm-4: ProcHyperthreading=Enabled); the one on bm-2 '
               'skipped, untouched; a rerun changes nothing',
               outcomes[SERVER] == outcomes[VIRTUAL] == 'unchanged'
               == outcomes[SILVER_SERVER]
               and outcomes[PLAIN_SERVER].startswith('skipped: ')
               and shown[SERVER] == shown[SILVER_SERVER] == ('enabled', 'yes')
               and shown[VIRTUAL][0] == 'enabled'
               and bios.get('ProcHyperthreading') == 'Enabled')


def image_story(demo, workdir):
    demo.step('An image asks for hyperthreading=disabled')
    disk = os.path.join(workdir, 'disk.raw')
    with open(disk, 'wb') as f:
        f.write(b'\0' * 1024)
    demo.run('image', 'create', '--disk-format', 'raw', '--container-format',
             'bare', '--public', '--file', disk, IMAGE, '-c', 'name', '-c',
             'status')
    demo.run('image', 'deploy-config', 'set', IMAGE,
             'hyperthreading=disabled')
    properties = demo.query('image', 'show', IMAGE)['properties']
    demo.check('the image requires the template trait, not '
               'HW_CPU_HYPERTHREADING',
               properties.get('trait:' + HT_OFF) == 'required'
               and 'trait:HW_CPU_HYPERTHREADING' not in properties)

    demo.step('bm.gold (enabled) with the image (disabled): refused first')
    servers = demo.query('server', 'list', '--all-projects')
    refusal = demo.fails('server', 'create', '--flavor', 'bm.gold',
                         '--image', IMAGE, '--nic', 'none', IMAGE_SERVER)
    demo.check('one line naming both configs and where each comes from; '
               'nothing created',
               refusal.strip() == (
                   'Deploy config conflict: flavor bm.gold asks for '
                   'hyperthreading=enabled, image %s for '
                   'hyperthreading=disabled; ironic would run both templates '
                   'and fail the deploy. Nothing was created.' % IMAGE)
               and servers == demo.query('server', 'list', '--all-projects'))

    demo.step('A plain flavor from the image: the node runs its config')
    demo.quiet('flavor', 'create', '--vcpus', '4', '--ram', '8192', '--disk',
               '40', IMAGE_FLAVOR, *[
                   arg for prop in ('resources:CUSTOM_BAREMETAL_GOLD=1',
                                    'resources:VCPU=0',
                                    'resources:MEMORY_MB=0',
                                    'resources:DISK_GB=0')
                   for arg in ('--property', prop)])
    demo.wait_schedulable(('bm-0', 'bm-1'), HT_OFF)
    server_id = demo.boot(IMAGE_SERVER, IMAGE_FLAVOR, image=IMAGE)
    demo.run('server', 'deploy-config', 'show', server_id)
    (row,) = demo.query('server', 'deploy-config', 'show', server_id)
    node = demo.query('baremetal', 'node', 'show', demo.query(
        'server', 'show', server_id)['OS-EXT-SRV-ATTR:hypervisor_hostname'],
        cloud=SYSTEM)
    demo.check('%s (tagged) deployed with the template: HyperThreading='
               'Disabled, in effect' % node['name'],
               node['name'] in ('bm-0', 'bm-1')
               and node['instance_info']['traits'] == [HT_OFF]
               and (row['Wanted'], row['Source'], row['Actual'],
                    row['In Effect']) == ('disabled', 'image',
                                          'HyperThreading=Disabled', 'yes'))


def declared_story(demo, workdir):
    demo.step('Configs as code: export, an edit, diff and apply')
    path = os.path.join(workdir, 'deploy-config.yaml')
    demo.run('deploy-config', 'export', '--file', path)
    with open(path) as f:
        text = f.read()
    print(text, end='', flush=True)
    demo.check('the cloud applied to itself changes nothing (diff exits 0)',
               demo.exits(0, 'deploy-config', 'diff', '-f', path))
    edited = text.replace('  %s:\n    hyperthreading: disabled' % IMAGE,
                          '  %s:\n    hyperthreading: enabled' % IMAGE)
    with open(path, 'w') as f:
        f.write(edited)
    exited = edited != text and demo.exits(1, 'deploy-config', 'diff',
                                           '-f', path)
    shown = demo._openstack(['--os-cloud', 'minicloud-admin', 'deploy-config',
                             'diff', '-f', path, '--format', 'json'])
    demo.check('one edited value: diff exits 1 and shows exactly that '
               'change', exited and [
                   (r['Kind'], r['Name'], r['Field'], r['Before'], r['After'])
                   for r in json.loads(shown.stdout or '[]')] == [
                   ('image', IMAGE, 'hyperthreading', 'disabled',
                    'enabled')])
    demo.run('deploy-config', 'apply', '-f', path)
    demo.check('applied: the image asks for hyperthreading=enabled, and '
               'diff exits 0',
               demo.query('image', 'deploy-config', 'show', IMAGE)[
                   'deploy_configs'] == ['hyperthreading=enabled']
               and demo.exits(0, 'deploy-config', 'diff', '-f', path))


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--keep', action='store_true',
                        help='leave the mini cloud up at the end')
    args = parser.parse_args(argv)
    was_up = subprocess.run([sys.executable, MINICLOUD, 'status'],
                            capture_output=True).returncode == 0
    t0 = time.monotonic()
    subprocess.run([sys.executable, MINICLOUD, 'up', '--ironic-release',
                    'pinned'], check=True,
                   stdout=subprocess.DEVNULL if was_up else None)
    up_seconds = time.monotonic() - t0
    clouds = os.path.join(os.environ.get('MINICLOUD_HOME', os.path.join(
        CHECKOUT, '.minicloud')), 'etc', 'clouds.yaml')
    demo = Transcript(os.path.abspath(clouds))
    demo.shown.append(('The mini cloud %s' % ('reused' if was_up
                                               else 'started'),
                       up_seconds, 0))
    try:
        reset(demo)
        with tempfile.TemporaryDirectory() as workdir:
            story(demo, workdir)
    except DemoFailed as exc:
        print('\ndemo failed: %s' % exc, file=sys.stderr)
        return 1
    finally:
        demo.summary()
        if args.keep or was_up:
            print('\nThe mini cloud is up. To use it:', flush=True)
            subprocess.run([sys.executable, MINICLOUD, 'env'])
        else:
            subprocess.run([sys.executable, MINICLOUD, 'down'],
                           stdout=subprocess.DEVNULL)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
