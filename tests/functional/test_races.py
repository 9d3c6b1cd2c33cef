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

from tests.functional import base
from tests.functional import test_resize

ROUNDS = 3


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
        self.openstack('flavor', 'create', '--vcpus', '1', '--ram', '64',
                       '--disk', '1', flavor)
        self.addCleanup(self.delete_flavor_named, flavor)
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
            return sorted(n['name'] for n in self.openstack(
                'baremetal', 'node', 'list', '--fields', 'name', 'traits',
                cloud=base.SYSTEM_ADMIN) if name in n['traits'])

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
        config_type, _, server, target = self.server_to_toggle('on')
        before = self.flavors()
        toggle = ('server', 'resize', '--deploy-config',
                  '%s=on' % config_type, '--auto-confirm', server['id'])
        done = self.at_once(toggle, toggle)
        self.assert_clean_loss(done, 'busy|refused to resize|awaiting '
                               'confirmation|another change')
        self.assertIn(0, [rc for rc, _, _ in done])
        self.wait_for('the server to settle', lambda: self.openstack(
            'server', 'show', server['id'])['status'] in ('ACTIVE',
                                                         'VERIFY_RESIZE'))
        self.toggle(server['id'], '%s=on' % config_type, '--auto-confirm')
        shown = self.openstack('server', 'show', server['id'])
        self.assertEqual('ACTIVE', shown['status'])
        self.assertEqual(target, shown['flavor']['original_name'])
        self.assertEqual(sorted(before + [target]), self.flavors())
