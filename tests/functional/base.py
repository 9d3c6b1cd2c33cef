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

"""Functional tests: the real ``openstack`` CLI against the mini cloud.

The first test of a run starts the mini cloud (``tools/minicloud/minicloud
up``) or reuses the one already running.  A failing test carries the errors
the services logged while it ran.
"""

import contextlib
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import time
import uuid

import fixtures
import os_resource_classes
import testtools
from testtools import content

from osc_deploy_config.domain.toggle import toggle_record
from osc_deploy_config.services import versions
from tests.functional import shell

CHECKOUT = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
MINICLOUD = os.path.join(CHECKOUT, 'tools', 'minicloud', 'minicloud')
sys.path.insert(0, os.path.dirname(MINICLOUD))
import waiting  # noqa: E402

HOME = os.path.abspath(
    os.environ.get('MINICLOUD_HOME', os.path.join(CHECKOUT, '.minicloud'))
)
OPENSTACK = shutil.which('openstack', path=os.path.dirname(sys.executable))
ADMIN = 'minicloud-admin'
SYSTEM_ADMIN = 'minicloud-system-admin'
DEMO = 'minicloud-demo'
BAREMETAL_FLAVOR = 'bm.gold'
VIRTUAL_FLAVOR = 'm1.tiny'
IMAGE = 'tiny'
SCHEDULABLE_NODES = ('bm-0', 'bm-1', 'bm-2')
RESOURCE_CLASS = 'CUSTOM_BAREMETAL_GOLD'
_LOG_PROBLEM = re.compile(r' (ERROR|CRITICAL) |Traceback|No valid host')

_clouds_yaml = None
# SDK connections by cloud, kept for the whole run: reading state costs no
# authentication of its own.
_connections = {}
# The newest API version the cloud's ironic has: read once per run.
_ironic_max = None


def minicloud_up():
    """Start the mini cloud once per test run, or reuse a running one
    with the ironic release $MINICLOUD_IRONIC_RELEASE names (default: the
    pinned one), restarting a cloud that runs another."""
    global _clouds_yaml
    if _clouds_yaml is None:
        os.makedirs(HOME, exist_ok=True)
        with open(os.path.join(HOME, 'tests.lock'), 'w') as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            release = os.environ.get('MINICLOUD_IRONIC_RELEASE', 'pinned')
            done = subprocess.run(
                [sys.executable, MINICLOUD, 'up', '--ironic-release',
                 release],
                capture_output=True,
                text=True,
                env=dict(os.environ, MINICLOUD_HOME=HOME),
            )
        if done.returncode:
            raise RuntimeError(
                'minicloud up failed:\n%s%s' % (done.stdout, done.stderr)
            )
        # what each step took, for a look at a slow start
        with open(os.path.join(HOME, 'logs', 'up.log'), 'a') as log:
            log.write(done.stdout)
        _prepare_ironic(os.environ.get('MINICLOUD_PREPARE_IRONIC_RELEASE'))
        _clouds_yaml = os.path.join(HOME, 'etc', 'clouds.yaml')
        os.environ['OS_CLIENT_CONFIG_FILE'] = _clouds_yaml  # for sdk()
    return _clouds_yaml


def _prepare_ironic(release):
    """Install the older ironic ``release`` in the background while the
    tests run (``tox -e functional-old-ironic``, next, switches to it);
    its output goes to the mini cloud's logs."""
    if not release:
        return
    with open(os.path.join(HOME, 'logs', 'prepare.log'), 'ab') as out:
        subprocess.Popen([sys.executable, MINICLOUD, 'prepare',
                          '--ironic-release', release],
                         stdin=subprocess.DEVNULL, stdout=out,
                         stderr=subprocess.STDOUT, start_new_session=True,
                         env=dict(os.environ, MINICLOUD_HOME=HOME))


class CommandFailed(Exception):
    def __init__(self, argv, returncode, stdout, stderr):
        super().__init__(
            '%s exited %d: %s' % (' '.join(argv), returncode, stderr.strip())
        )
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr


class FunctionalTestCase(testtools.TestCase):
    """Runs ``openstack`` commands and waits for the cloud to settle."""

    def setUp(self):
        super().setUp()
        self.clouds_yaml = minicloud_up()
        self._log_offsets = self._log_sizes()
        self._commands = []
        self.addOnException(self._attach_service_errors)

    # ------------------------------------------------------------ the CLI

    def openstack(self, *args, cloud=ADMIN, parse=True, fail_ok=False,
                  clouds_yaml=None, stdin='', process=False):
        """Run ``openstack`` (``-f json`` when ``parse``); return its output.

        The CLI runs in this interpreter (see ``shell``); ``process`` runs
        a real ``openstack`` process instead, for what only a process
        shows.  With ``fail_ok`` the finished run is returned instead,
        whatever its exit code.
        """
        argv, env = self.openstack_argv(*args, cloud=cloud, parse=parse,
                                        clouds_yaml=clouds_yaml)
        started = time.monotonic()
        if process:
            done = subprocess.run(argv, capture_output=True, text=True,
                                  env=env, input=stdin)
        else:
            done = shell.run(argv, env, stdin)
        self.took(started, ' '.join(args))
        self._commands.append(
            '$ %s%s\n[exit %d]\n%s%s'
            % (' '.join(argv), '' if process else '  (in-process)',
               done.returncode, done.stdout, done.stderr)
        )
        if fail_ok:
            return done
        if done.returncode:
            raise CommandFailed(
                argv, done.returncode, done.stdout, done.stderr
            )
        if parse and done.stdout:
            return json.loads(done.stdout)
        return done.stdout

    def openstack_argv(self, *args, cloud=ADMIN, parse=True,
                       clouds_yaml=None):
        """The command line and environment of an ``openstack`` run."""
        argv = [OPENSTACK, '--os-cloud', cloud, *args]
        if parse:
            argv += ['-f', 'json']
        env = dict(
            os.environ,
            OS_CLIENT_CONFIG_FILE=clouds_yaml or self.clouds_yaml,
            PYTHONWARNINGS='ignore',
        )
        env.pop('OS_CLOUD', None)
        return argv, env

    def clouds_with(self, name, like, clouds_yaml=None, **settings):
        """A clouds.yaml with one more cloud entry: ``like``'s, with these
        settings (e.g. ``baremetal_endpoint_override``); of the tests'
        clouds.yaml, or of ``clouds_yaml``."""
        import yaml

        with open(clouds_yaml or self.clouds_yaml) as f:
            clouds = yaml.safe_load(f)
        clouds['clouds'][name] = dict(clouds['clouds'][like], **settings)
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'clouds.yaml')
        with open(path, 'w') as f:
            yaml.safe_dump(clouds, f)
        return path

    def through_proxy(self, proxy, service_type, like=SYSTEM_ADMIN, path='',
                      clouds_yaml=None, **more):
        """A clouds.yaml whose cloud "faulty" sends one service's requests
        through a ``faults.FaultProxy`` (``more``: other settings)."""
        more['%s_endpoint_override' % service_type] = proxy.url + path
        return self.clouds_with('faulty', like, clouds_yaml=clouds_yaml,
                                **more)

    def killed_when(self, argv, env, reached):
        """Run a command as a process, and kill it (SIGKILL) once
        ``reached()`` (a proxy holds its request)."""
        process = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        try:
            self.wait_for('the command to reach the held request',
                          lambda: reached() or process.poll() is not None,
                          timeout=60, interval=0.1)
            if process.poll() is not None:
                self.fail('the command ended first: %r'
                          % (process.communicate(),))
        finally:
            process.kill()
            out, err = process.communicate()
            self._commands.append('$ %s (killed)\n%s%s' % (
                ' '.join(argv), out, err))

    def unique_name(self, prefix):
        return '%s-%s' % (prefix, uuid.uuid4().hex[:8])

    # ------------------------------------------------------------ waiting

    def wait_for(self, what, check, timeout=120, interval=0.5):
        """Poll ``check`` until it returns something true, and return it."""
        started = time.monotonic()
        try:
            return waiting.wait_for(what, check, timeout, interval)
        except waiting.TimedOut as exc:
            self.fail(str(exc))
        finally:
            self.took(started, 'wait: ' + what)

    def took(self, started, what):
        """With $FN_TIMES, append how long a command or a wait took to that
        file, with the test's name (where a functional run spends its
        time)."""
        if os.environ.get('FN_TIMES'):
            with open(os.environ['FN_TIMES'], 'a') as f:
                f.write('%6.1f %s %s\n' % (time.monotonic() - started,
                                          self.id().split('.', 2)[-1], what))

    def sdk(self, cloud):
        """An SDK connection (one per cloud for the whole run), for waiting
        on conditions and reading state."""
        import openstack

        if cloud not in _connections:
            _connections[cloud] = openstack.connect(cloud=cloud)
        return _connections[cloud]

    @property
    def ironic_max(self):
        """The newest API version the cloud's ironic has ('1.86' on the
        older ironic of ``tox -e functional-old-ironic``)."""
        global _ironic_max
        if _ironic_max is None:
            _ironic_max = self.sdk(SYSTEM_ADMIN).baremetal.get(
                '/', microversion=None).headers[
                'X-OpenStack-Ironic-API-Maximum-Version']
        return _ironic_max

    @property
    def ironic_api(self):
        """The version the tests read and set ironic at: servicing's
        (1.87), or the newest an older ironic has."""
        newest = tuple(int(n) for n in self.ironic_max.split('.'))
        return '1.87' if newest >= (1, 87) else self.ironic_max

    def endpoint(self, service_type):
        """A service's catalog URL."""
        return self.sdk(ADMIN).session.get_endpoint(
            service_type=service_type, interface='public')

    def endpoint_root(self, service_type):
        """scheme://host:port of a service's catalog URL."""
        return re.match(r'https?://[^/]+',
                        self.endpoint(service_type)).group(0)

    def minicloud(self, *args):
        """Run a minicloud command on the tests' cloud; it must succeed."""
        done = subprocess.run([sys.executable, MINICLOUD, *args],
                              capture_output=True, text=True,
                              env=dict(os.environ, MINICLOUD_HOME=HOME))
        self.assertEqual(0, done.returncode, done.stdout + done.stderr)

    def free_nodes(self, *names):
        """The nodes among these without an instance (a kept demo cloud
        may have one), powered on (a server stopped on one powers it off,
        and the fake deploy does not power it on: nova would find the next
        server SHUTOFF); fails when none is free."""
        free = [n for n in names if not self.node(n)['instance_uuid']]
        self.assertTrue(free, 'every one of %s has an instance' % (names,))
        for name in free:
            self.power_on(name)
        return free

    def power_on(self, node):
        """Power a node on, as the seed does; until ironic says so."""
        if self.node(node)['power_state'] == 'power on':
            return
        self.sdk(SYSTEM_ADMIN).baremetal.put(
            '/nodes/%s/states/power' % node, json={'target': 'power on'},
            microversion=self.ironic_api)
        self.wait_for('%s powered on' % node, lambda: self.node(node)[
            'power_state'] == 'power on', 60, 0.25)

    def wait_schedulable(self, node, traits=()):
        """Until nova may land on the node: placement shows it unreserved,
        with every trait in ``traits``.  (nova-compute copies ironic's view
        to placement periodically.)"""
        placement = self.sdk(ADMIN).placement
        found = self.node(node)
        node_id = found['uuid']
        # the resource class nova gives the node's provider
        resource_class = os_resource_classes.normalize_name(
            found['resource_class'])

        def ready():
            inv = placement.get(
                '/resource_providers/%s/inventories' % node_id,
                microversion='1.39',
            )
            if inv.status_code != 200:
                return False
            rc = inv.json()['inventories'].get(resource_class)
            have = placement.get(
                '/resource_providers/%s/traits' % node_id,
                microversion='1.39',
            ).json()['traits']
            return rc and rc['reserved'] == 0 and set(traits) <= set(have)

        self.wait_for('%s schedulable with %s' % (node, traits), ready, 180)

    # ------------------------------------------------------------ state

    def cloud_state(self):
        """What our commands could change, read straight from the APIs:
        deploy templates, runbooks, flavors with their extra specs, nodes
        with traits, state, records, BIOS settings and RAID configuration,
        the traits
        placement shows for each provider, images with their properties,
        servers with status and flavor; once placement shows ironic's
        traits (an earlier test's clean-up may be on its way there)."""
        self.wait_placement_shows_ironic()
        ironic = self.sdk(SYSTEM_ADMIN).baremetal
        nova = self.sdk(ADMIN).compute
        get = self._get_json
        nodes = get(ironic, '/nodes?fields=uuid,name,traits,provision_state,'
                    'maintenance,extra,properties,instance_uuid,raid_config',
                    self.ironic_api)['nodes']
        for node in nodes:
            node['bios'] = get(ironic, '/nodes/%s/bios' % node['uuid'],
                               self.ironic_api)['bios']
        runbooks = get(ironic, '/runbooks?detail=True', '1.112')[
            'runbooks'] if versions.parse(self.ironic_max) >= (1, 112) else []
        return {
            'runbooks': sorted((r['name'], r['owner'], r['steps'])
                               for r in runbooks),
            'placement': self.placement_traits(),
            'templates': sorted(
                (t['name'], t['steps'], t['extra']) for t in get(
                    ironic, '/deploy_templates?detail=True', self.ironic_api)[
                    'deploy_templates']),
            'flavors': sorted(
                (f['name'], f['vcpus'], f['ram'], f['disk'],
                 f.get('description'), sorted(f['extra_specs'].items()))
                for f in get(nova, '/flavors/detail?is_public=None',
                             '2.61')['flavors']),
            'nodes': sorted(nodes, key=lambda n: n['uuid']),
            'images': sorted(
                (sorted(i.items()) for i in get(
                    self.sdk(ADMIN).image, '/images', None)['images']),
                key=str),
            'servers': sorted(
                (s['id'], s['status'], s['flavor']['original_name'],
                 s['metadata']) for s in get(
                    nova, '/servers/detail?all_tenants=True', '2.61')[
                    'servers']),
        }

    def _post_json(self, proxy, path, body, version):
        response = proxy.post(path, json=body, microversion=version)
        self.assertIn(response.status_code, (200, 201, 202), response.text)
        return response.json()

    def _get_json(self, proxy, path, version):
        response = proxy.get(path, microversion=version)
        self.assertEqual(200, response.status_code, response.text)
        return response.json()

    def placement_traits(self):
        """{provider name: its traits}, as the scheduler sees them."""
        placement = self.sdk(ADMIN).placement
        return {p['name']: sorted(self._get_json(
            placement, '/resource_providers/%s/traits' % p['uuid'],
            '1.39')['traits']) for p in self._get_json(
                placement, '/resource_providers', '1.39')[
                    'resource_providers']}

    def wait_placement_shows_ironic(self):
        """Until placement shows every node's ironic traits (nova copies
        them on its periodic task): a snapshot of the cloud taken before
        holds still while nothing changes them."""
        def settled():
            nodes = self._get_json(self.sdk(SYSTEM_ADMIN).baremetal,
                                   '/nodes?fields=uuid,traits',
                                   self.ironic_api)['nodes']
            shown = self.placement_traits()
            return all(set(n['traits']) <= set(shown.get(n['uuid'], ()))
                       and not {t for t in shown.get(n['uuid'], ())
                                if t.startswith('CUSTOM_')} - set(
                           n['traits']) for n in nodes)

        self.wait_for('placement to show the nodes\' traits', settled, 60)

    # ------------------------------------------------------------ objects

    # State is read, and the fake hardware set, through the SDK: what the
    # tests check, not what they test (a CLI run costs a process's worth of
    # authentication).

    def node(self, name):
        """A node as ironic's API shows it (every field)."""
        return self._get_json(self.sdk(SYSTEM_ADMIN).baremetal,
                              '/nodes/%s' % name, self.ironic_api)

    def deployed_steps(self, node):
        """The steps of the node's last deploy, from its history (ironic
        lists each deploy's steps at its start)."""
        history = self._get_json(
            self.sdk(SYSTEM_ADMIN).baremetal,
            '/nodes/%s/history?detail=True' % node, self.ironic_api)
        (last, *_) = [e for e in reversed(history['history'])
                      if e['event_type'] == 'deployment_start']
        return toggle_record.started_steps(last['event'])

    def bios(self, node):
        """{name: value} of the node's BIOS settings, as ironic has them."""
        return {s['name']: s['value'] for s in self._get_json(
            self.sdk(SYSTEM_ADMIN).baremetal, '/nodes/%s/bios' % node,
            self.ironic_api)['bios']}

    @contextlib.contextmanager
    def bios_that(self, node, behaviour, value='true'):
        """Meanwhile, the node's fake BIOS ``behaviour``: ``ignores_steps``
        (the steps succeed, nothing changes) or ``fails_steps`` (each
        fails with ``value``)."""
        path = '/nodes/%s' % node
        key = '/extra/minicloud_bios_%s' % behaviour
        ironic = self.sdk(SYSTEM_ADMIN).baremetal
        done = ironic.patch(path, microversion=self.ironic_api, json=[
            {'op': 'add', 'path': key, 'value': value}])
        self.assertEqual(200, done.status_code, done.text)
        try:
            yield
        finally:
            ironic.patch(path, microversion=self.ironic_api, json=[
                {'op': 'remove', 'path': key}])

    def create_baremetal_flavor(self, *required_traits,
                                resource_class=RESOURCE_CLASS):
        """A flavor like bm.gold (of another class when given) requiring
        these traits; deleted at clean-up."""
        name = self.unique_name('fn-bm')
        specs = {'resources:%s' % resource_class: '1', 'resources:VCPU': '0',
                 'resources:MEMORY_MB': '0', 'resources:DISK_GB': '0'}
        specs.update(('trait:%s' % t, 'required') for t in required_traits)
        return self.create_flavor(name, 4, 8192, 40, specs)

    def create_flavor(self, name, vcpus, ram, disk, specs=None):
        """A public flavor with these extra specs, made through the SDK
        (set-up); deleted at clean-up with the flavors toggles derived
        from it."""
        compute = self.sdk(ADMIN).compute
        made = self._post_json(compute, '/flavors', {'flavor': {
            'name': name, 'vcpus': vcpus, 'ram': ram, 'disk': disk}},
            '2.61')['flavor']
        self.addCleanup(self.forget_flavors, name)
        if specs:
            self._post_json(compute, '/flavors/%s/os-extra_specs' % made['id'],
                            {'extra_specs': specs}, '2.61')
        return name

    def forget_flavors(self, name):
        """Delete the flavor of this name and those toggles derived from
        it (``NAME+TYPE=VALUE``), through the SDK (clean-up): never a
        seeded flavor's name."""
        compute = self.sdk(ADMIN).compute
        for flavor in self._get_json(compute, '/flavors?is_public=None',
                                     '2.61')['flavors']:
            if name in (flavor['name'], flavor['name'].split('+')[0]):
                compute.delete('/flavors/%s' % flavor['id'],
                               microversion='2.61')

    def create_server(self, flavor, cloud=ADMIN, image=IMAGE, cli=False):
        """Boot a server and wait for ACTIVE (polled through the SDK: OSC's
        --wait looks every 5 s); deleted at clean-up.  Through the SDK, as
        set-up; with ``cli``, through ``openstack server create`` (with the
        plugin's pre-flight), where the boot is what a test is about."""
        name = self.unique_name('fn')
        if cli:
            server = self.openstack(
                'server', 'create', '--flavor', flavor, '--image', image,
                '--nic', 'none', name, cloud=cloud,
            )
        else:
            conn = self.sdk(cloud)
            (flavor_id,) = [f['id'] for f in self._get_json(
                conn.compute, '/flavors?is_public=None', '2.61')['flavors']
                if f['name'] == flavor]
            server = self._post_json(conn.compute, '/servers', {'server': {
                'name': name, 'networks': 'none', 'flavorRef': flavor_id,
                'imageRef': conn.image.find_image(
                    image, ignore_missing=False).id}}, '2.73')['server']
        self.addCleanup(self._delete_server, server['id'])

        def booted():
            found = self.server_details(server['id'])
            if found['status'] == 'ERROR':
                self.fail('server %s went to ERROR: %s' % (
                    name, (found.get('fault') or {}).get('message')))
            return found['status'] == 'ACTIVE' and found

        return dict(server, **booted() or self.wait_for(
            'server %s ACTIVE' % name, booted, 180, 0.25))

    def _delete_server(self, server_id):
        """Delete a server and wait until nova has (an ironic node then
        cleans, ~5 s, before it is schedulable again)."""
        compute = self.sdk(ADMIN).compute
        compute.delete('/servers/%s' % server_id, microversion='2.73')
        self.wait_for('server %s deleted' % server_id, lambda: compute.get(
            '/servers/%s' % server_id, microversion='2.73').status_code == 404,
            120, 0.25)

    def server_details(self, server_id):
        """The admin view of a server as nova's API shows it (host, node,
        lock, metadata)."""
        return self._get_json(self.sdk(ADMIN).compute,
                              '/servers/%s' % server_id, '2.73')['server']

    # ------------------------------------------------------------ logs

    def _log_sizes(self):
        logs = os.path.join(HOME, 'logs')
        return {
            name: os.path.getsize(os.path.join(logs, name))
            for name in os.listdir(logs)
            if name.endswith('.log')
        }

    def _attach_service_errors(self, exc_info):
        self.addDetail(
            'openstack commands', content.text_content(
                '\n'.join(self._commands) or '(none)')
        )
        logs = os.path.join(HOME, 'logs')
        for name in sorted(self._log_sizes()):
            with open(os.path.join(logs, name), errors='replace') as f:
                f.seek(self._log_offsets.get(name, 0))
                problems = [line for line in f if _LOG_PROBLEM.search(line)]
            if problems:
                self.addDetail(
                    'log %s' % name,
                    content.text_content(''.join(problems[-60:])),
                )
