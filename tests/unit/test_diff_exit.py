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

"""``openstack deploy-config diff`` exits as ``kubectl diff`` does, 2 on a
failure to authenticate too (issue 53): the real OSC shell, on a
clouds.yaml of the test's, with keystoneauth's token request and the SDK's
connection as the boundaries doubled."""

import os

import fixtures
from keystoneauth1 import access
from keystoneauth1 import exceptions as ksa_exceptions
from keystoneauth1 import fixture
from keystoneauth1.identity.generic import base as generic
from openstackclient import shell as osc_shell
import yaml

from tests.functional import shell
from tests.unit import fakes

AUTH = {'auth_url': 'http://keystone.test/v3', 'username': 'admin',
        'password': 'secret', 'project_name': 'admin',
        'user_domain_name': 'Default', 'project_domain_name': 'Default'}
# what keystone answers the password with
TOKEN = access.create(body=fixture.V3Token(project_name='admin'))
# a file with one config the fake cloud has no template of
CHANGED = """\
version: 1
configs:
  hyperthreading:
    disabled:
      bios: {LogicalProc: Disabled}
"""
HT_OFF = 'CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_DISABLED'


class TestDiffExit(fakes.TestCommand):

    def setUp(self):
        super().setUp()
        self.dir = self.useFixture(fixtures.TempDir()).path
        self.token = self.useFixture(fixtures.MockPatchObject(
            generic.BaseGenericPlugin, 'get_auth_ref', autospec=True,
            return_value=TOKEN)).mock
        self.useFixture(fixtures.MockPatch(
            'openstack.connection.Connection', autospec=True,
            return_value=self.conn))

    def diff(self, cloud, text='version: 1\n'):
        """``openstack --os-cloud test deploy-config diff -f FILE`` of a
        file of ``text`` (by default equal to the fake cloud), with
        ``cloud`` as the cloud ``test``: its exit code, stdout and stderr
        lines."""
        clouds = os.path.join(self.dir, 'clouds.yaml')
        with open(clouds, 'w') as f:
            yaml.safe_dump({'clouds': {'test': cloud}}, f)
        declared = os.path.join(self.dir, 'declared.yaml')
        with open(declared, 'w') as f:
            f.write(text)
        env = {k: v for k, v in os.environ.items() if not k.startswith('OS_')}
        env['OS_CLIENT_CONFIG_FILE'] = clouds
        done = shell.run(['openstack', '--os-cloud', 'test', 'deploy-config',
                          'diff', '-f', declared], env)
        return done.returncode, done.stdout, done.stderr.splitlines()

    def requests(self):
        """How many requests the fake services were sent."""
        return sum(len(service.requests) for service in (
            self.ironic, self.nova, self.placement, self.glance)) + len(
            self.keystone.proxy.mock_calls)

    def test_a_refused_password_exits_2_in_one_line(self):
        self.token.side_effect = ksa_exceptions.Unauthorized(
            'The request you have made requires authentication.')
        self.assertEqual(
            (2, '', ['The request you have made requires authentication. '
                     '(HTTP 401)']),
            self.diff({'auth': AUTH}))
        self.assertEqual(0, self.requests())

    def test_an_unreachable_keystone_exits_2_in_one_line(self):
        self.token.side_effect = ksa_exceptions.ConnectFailure(
            'Unable to establish connection to http://keystone.test/v3')
        self.assertEqual(
            (2, '', ['Unable to establish connection to '
                     'http://keystone.test/v3']),
            self.diff({'auth': AUTH}))

    def test_missing_auth_settings_exit_2_in_one_line(self):
        """Each missing setting has a line of its own in osc-lib's
        message: one line still."""
        self.assertEqual(
            (2, '', ['Missing value auth-url required for auth plugin '
                     'v3applicationcredential; Missing value '
                     'application_credential_secret required for auth '
                     'plugin v3applicationcredential']),
            self.diff({'auth_type': 'v3applicationcredential'}))
        self.token.assert_not_called()

    def test_the_command_gets_the_token_before_it_reads_the_cloud(self):
        """The shell's hook before the command's run gets no token (its
        failure would exit 1): the command's run gets it, once, before
        its first request; its output and exit codes are as before."""
        hooks_ended, seen = [], []
        run_hook = osc_shell.OpenStackShell.prepare_to_run_command

        def hook(app, cmd):
            run_hook(app, cmd)
            hooks_ended.append(cmd)

        self.useFixture(fixtures.MockPatchObject(
            osc_shell.OpenStackShell, 'prepare_to_run_command',
            autospec=True, side_effect=hook))
        self.token.side_effect = lambda plugin, session, **kwargs: (
            seen.append((len(hooks_ended), self.requests())) or TOKEN)
        code, out, err = self.diff({'auth': AUTH}, CHANGED)
        self.assertEqual([(1, 0)], seen)
        self.assertGreater(self.requests(), 0)
        self.assertEqual((1, []), (code, err))
        self.assertIn('| template | %s | create | name' % HT_OFF, out)
        self.assertEqual(
            (0, '\n', ['No changes: the cloud is equal to %s'
                       % os.path.join(self.dir, 'declared.yaml')]),
            self.diff({'auth': AUTH}))
