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

"""Races: the same change twice at once ends consistent; a loser gets one
clear line or does nothing."""

import subprocess
import threading

from tests.functional import base
from tests.functional import faults
from tests.functional import test_resize

ROUNDS = 2


class TestRaces(test_resize.VirtualToggleTestCase):
    def at_once(self, *commands):
        """Start the commands together; their finished processes."""
        started = []
        for args in commands:
            argv, env = self.openstack_argv(*args, parse=False)
            started.append((args, subprocess.Popen(
                argv, env=env, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, text=True)))
        done = []
        for args, process in started:
            out, err = process.communicate(timeout=600)
            self._commands.append('$ %s (concurrently)\n[exit %d]\n%s%s' % (
                ' '.join(args), process.returncode, out, err))
            done.append((process.returncode, out, err))
        return done

    def assert_clean_loss(self, done, pattern):
        """Every failure is one line matching ``pattern``."""
        for returncode, _, err in done:
            if returncode:
                self.assertEqual(1, len(err.strip().splitlines()), err)
                self.assertRegex(err, pattern)

    def test_two_flavor_sets_of_one_type(self):
        config_type, made = self.new_pair()
        flavor = self.unique_name('fn-race')
        self.create_flavor(flavor, 1, 64, 1)
        traits = {v: 'trait:%s' % made[v]['name'] for v in made}
        for _ in range(ROUNDS):
            done = self.at_once(
                ('flavor', 'deploy-config', 'set', flavor,
                 '%s=on' % config_type),
                ('flavor', 'deploy-config', 'set', flavor,
                 '%s=off' % config_type))
            self.assert_clean_loss(done, 'concurrent change of flavor')
            specs = self.openstack('flavor', 'show', flavor)['properties']
            value = specs['deploy-config:%s' % config_type]
            self.assertEqual({'deploy-config:%s' % config_type: value,
                              traits[value]: 'required'}, specs)
            # a winner says so: the value is a succeeding writer's
            self.assertIn(value, [v for v, (rc, _, _) in zip(
                ('on', 'off'), done, strict=True) if rc == 0])
            self.openstack('flavor', 'deploy-config', 'unset', flavor,
                           config_type)

    def test_two_syncs(self):
        _, template = self.new_config(base.ADMIN, '--no-requires-trait')
        name = template['name']
        capable = sorted(row['Node'] for row in self.openstack(
            'baremetal', 'node', 'deploy-config', 'list', '--config',
            template['config']) if row['Capable'])

        def tagged():
            return sorted(n for n, traits in self.node_traits().items()
                          if name in traits)

        # the race is ironic's: placement's copy is test_deploy_template's
        sync = ('baremetal', 'node', 'deploy-config', 'sync', '--no-wait',
                name)
        for _ in range(ROUNDS):
            done = self.at_once(sync, sync)
            self.assertEqual([0, 0], [rc for rc, _, _ in done],
                             [err for _, _, err in done])
            self.assertEqual(capable, tagged())
            # now incapable (a trait it requires, none has): both untag
            self.openstack('baremetal', 'deploy', 'template', 'set', name,
                           '--requires-trait', 'CUSTOM_FN_NOBODY',
                           parse=False)
            done = self.at_once(sync, sync)
            self.assertEqual([0, 0], [rc for rc, _, _ in done],
                             [err for _, _, err in done])
            self.assertEqual([], tagged())
            self.openstack('baremetal', 'deploy', 'template', 'set', name,
                           '--no-requires-trait', parse=False)

    def test_two_toggles_of_one_server(self):
        """One toggles, the other fails in one line: the first to lock the
        server holds it (its confirmation waits at a proxy until the other
        has ended, so that the two overlap whatever the machine's speed)."""
        config_type, _, server, target = self.server_to_toggle('on')
        before = self.flavors()
        release, held = threading.Event(), []

        def fault(method, path, body):
            if b'confirmResize' in body and not held:
                held.append(path)
                return release
            return None

        toggle = ('server', 'resize', '--deploy-config',
                  '%s=on' % config_type, '--auto-confirm', server['id'])
        with faults.FaultProxy(self.endpoint('compute'), fault) as proxy:
            clouds = self.through_proxy(proxy, 'compute', like=base.ADMIN,
                                        path='/v2.1')
            started = [self.start(toggle, clouds) for _ in range(2)]
            self.wait_for('one toggle to confirm, the other to end', lambda: (
                held and any(p.poll() is not None for p in started)))
            release.set()
            done = [self.finish(toggle, process) for process in started]
        self.assertEqual([0, 1], sorted(rc for rc, _, _ in done))
        self.assert_clean_loss(done, 'being toggled by another command')
        shown = self.openstack('server', 'show', server['id'])
        self.assertEqual(('ACTIVE', target, False), (
            shown['status'], shown['flavor']['original_name'],
            shown['locked']))
        self.assertEqual(sorted(before + [target]), self.flavors())

    def start(self, args, clouds):
        argv, env = self.openstack_argv(*args, cloud='faulty', parse=False,
                                        clouds_yaml=clouds)
        return subprocess.Popen(argv, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    def finish(self, args, process):
        out, err = process.communicate(timeout=300)
        self._commands.append('$ %s (concurrently)\n[exit %d]\n%s%s' % (
            ' '.join(args), process.returncode, out, err))
        return process.returncode, out, err
