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

"""Permissions: a project member writes nothing; --debug shows no secret."""

import secrets

import yaml

from tests.functional import base
from tests.functional import test_resize

FERNET = 'gAAAAA'
PERMISSION = (r'refused|[Ff]orbidden|403|[Pp]olicy|not allowed|permission|'
              r'[Dd]enied|not granted')


class TestMember(test_resize.VirtualToggleTestCase):
    def test_member_writes_nothing(self):
        config_type, made = self.new_pair()
        self.tag_host(made['on']['name'])
        on = '%s=on' % config_type
        template = made['on']['name']
        server = self.create_server(base.VIRTUAL_FLAVOR, cloud=base.DEMO)
        writes = [
            ('baremetal', 'deploy', 'template', 'create', '--config',
             '%s=third' % config_type, '--bios-setting', 'A=1'),
            ('baremetal', 'deploy', 'template', 'set', template, '--extra',
             'owner=demo'),
            ('baremetal', 'deploy', 'template', 'unset', template, '--extra',
             'deploy_config_requires_traits'),
            ('baremetal', 'deploy', 'template', 'delete', template),
            ('baremetal', 'node', 'deploy-config', 'sync'),
            ('flavor', 'deploy-config', 'set', base.VIRTUAL_FLAVOR, on),
            ('flavor', 'deploy-config', 'unset', base.BAREMETAL_FLAVOR,
             'hyperthreading'),
            ('server', 'resize', '--deploy-config', on, '--auto-confirm',
             server['id']),
        ]
        before = self.cloud_state()
        problems = []
        for args in writes:
            done = self.openstack(*args, cloud=base.DEMO, parse=False,
                                  fail_ok=True)
            lines = done.stderr.strip().splitlines()
            if (done.returncode == 0 or len(lines) != 1
                    or 'Traceback' in done.stderr):
                problems.append('%s -> %d: %r' % (' '.join(args),
                                                  done.returncode,
                                                  done.stderr))
            else:
                self.assertRegex(lines[0], PERMISSION, ' '.join(args))
        self.assertEqual([], problems)
        self.assertEqual(before, self.cloud_state())


class TestSecrets(base.FunctionalTestCase):
    def test_debug_shows_no_password_or_token(self):
        user = self.unique_name('fn-secret')
        password = secrets.token_hex(16)
        self.openstack('user', 'create', '--domain', 'Default',
                       '--password', password, user)
        self.addCleanup(self.openstack, 'user', 'delete', user, parse=False)
        self.openstack('role', 'add', '--user', user, '--project', 'admin',
                       'admin', parse=False)
        self.openstack('role', 'add', '--user', user, '--system', 'all',
                       'admin', parse=False)
        with open(self.clouds_yaml) as f:
            auth = yaml.safe_load(f)['clouds'][base.ADMIN]['auth']
        clouds = self.clouds_with('secret', base.ADMIN, auth=dict(
            auth, username=user, password=password))
        # keystone's fernet tokens all begin so: what a leak would show
        self.assertTrue(self.sdk(base.ADMIN).session.get_token().startswith(
            FERNET))
        for args in (('baremetal', 'deploy', 'template', 'list'),
                     ('flavor', 'deploy-config', 'list'),
                     ('baremetal', 'node', 'deploy-config', 'list')):
            # a real process: --debug output is the whole process's
            done = self.openstack('--debug', *args, cloud='secret',
                                  parse=False, fail_ok=True,
                                  clouds_yaml=clouds, process=True)
            output = done.stdout + done.stderr
            self.assertEqual(0, done.returncode, done.stderr[-2000:])
            self.assertIn('REQ: curl', output)   # --debug did log requests
            self.assertIn('X-Auth-Token: {SHA256}', output)
            self.assertNotIn(password, output)
            self.assertNotIn(FERNET, output)
