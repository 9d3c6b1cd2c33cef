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

"""``openstack complete``: the options our hooks add, with hooks loaded only
for the commands that have some (which the installed entry points name)."""

from unittest import mock

from cliff import commandmanager
import fixtures
from openstackclient.compute.v2 import server as osc_server
from osc_lib.test import base
from stevedore import extension

from osc_deploy_config.v1 import complete
from osc_deploy_config.v1 import server_hooks

RESIZE_HOOKS = 'openstack.cli.server_resize'
ExtensionManager = extension.ExtensionManager   # before the tests patch it


def load_hooks(namespace, invoke_on_load, invoke_kwds):
    """stevedore, loading a command's hooks: ours on ``server resize``."""
    found = []
    if namespace == RESIZE_HOOKS:
        hook = server_hooks.ResizeDeployConfigHook
        found.append(extension.Extension('deploy_config', None, hook,
                                         hook(**invoke_kwds)))
    return ExtensionManager.make_test_instance(found, namespace=namespace)


class TestComplete(base.TestCommand):
    def setUp(self):
        super().setUp()
        # OSC's namespace, without loading its ~1000 commands
        self.app.command_manager = commandmanager.CommandManager(None)
        self.app.command_manager.namespace = 'openstack.cli'
        self.app.NAME = 'openstack'
        self.app.interactive_mode = False
        self.app.command_manager.add_command('server resize',
                                             osc_server.ResizeServer)
        self.app.command_manager.add_command('server show',
                                             osc_server.ShowServer)
        self.hooks = self.useFixture(fixtures.MockPatch(
            'stevedore.extension.ExtensionManager', autospec=True,
            side_effect=load_hooks)).mock

    def complete(self):
        """Each command's completions, as ``openstack complete --shell
        none`` prints them."""
        cmd = complete.CompleteCommand(self.app, None)
        cmd.run(cmd.get_parser('openstack complete').parse_args(
            ['--shell', 'none']))
        return {name.strip(): words.strip("'").split() for name, words in (
            line.split('=', 1)
            for line in self.app.stdout.make_string().splitlines())}

    def test_hook_options_are_completed(self):
        resize = self.complete()['cmds_server_resize']
        self.assertIsSubset(['--flavor', '--deploy-config', '--dry-run',
                             '--auto-confirm', '--allow-step',
                             '--wait-timeout'], resize)

    def test_only_commands_with_hooks_load_them(self):
        self.assertIn('--format', self.complete()['cmds_server_show'])
        # server show was built without its name: cliff looked for no hooks
        self.hooks.assert_called_once_with(
            namespace=RESIZE_HOOKS, invoke_on_load=True,
            invoke_kwds={'command': mock.ANY})

    def test_hook_groups_are_read_from_the_installed_entry_points(self):
        groups = complete.entry_point_groups('openstack.cli.')
        self.assertIsSubset(['openstack.cli.server_create',
                             'openstack.cli.server_rebuild', RESIZE_HOOKS],
                            groups)
        self.assertEqual([], [g for g in groups
                              if not g.startswith('openstack.cli.')])
