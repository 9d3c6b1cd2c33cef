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

import importlib.metadata
import json
import subprocess
import sys
from unittest import mock

import testtools

from osc_deploy_config import plugin
from osc_deploy_config.services import clients


class TestPluginInterface(testtools.TestCase):
    def test_registered_as_an_osc_extension(self):
        eps = importlib.metadata.entry_points(group='openstack.cli.extension')
        self.assertEqual(
            ['osc_deploy_config.plugin'],
            [ep.value for ep in eps if ep.name == plugin.API_NAME],
        )

    def test_default_version_names_the_command_group(self):
        # Without DEFAULT_API_VERSION, OSC registers no command group and
        # the plugin's commands silently vanish.
        self.assertIn(plugin.DEFAULT_API_VERSION, plugin.API_VERSIONS)
        self.assertEqual(
            'os_%s_api_version' % plugin.API_NAME, plugin.API_VERSION_OPTION
        )

    def test_one_global_option_the_vocabulary_file(self):
        import argparse

        parser = argparse.ArgumentParser()
        self.assertIs(parser, plugin.build_option_parser(parser))
        self.assertEqual('v.yaml', parser.parse_args([
            '--os-deploy-config-vocabulary', 'v.yaml'])
            .os_deploy_config_vocabulary)
        with mock.patch.dict('os.environ',
                             {'OS_DEPLOY_CONFIG_VOCABULARY': 'e.yaml'}):
            parser = plugin.build_option_parser(argparse.ArgumentParser())
        self.assertEqual('e.yaml', parser.parse_args(
            []).os_deploy_config_vocabulary)

    def test_make_client_touches_no_service(self):
        instance = mock.Mock(spec=['sdk_connection'])
        made = plugin.make_client(instance)
        self.assertIsInstance(made, clients.Clients)
        self.assertEqual([], instance.mock_calls)


class TestPluginImportCost(testtools.TestCase):
    """OSC imports the plugin module on every run: it must import nothing
    that OSC has not loaded already."""

    def test_imports_only_itself(self):
        probe = (
            'import json, sys; before = set(sys.modules); '
            'import osc_deploy_config.plugin; '
            'print(json.dumps(sorted(set(sys.modules) - before)))'
        )
        done = subprocess.run(
            [sys.executable, '-c', probe],
            capture_output=True, text=True, check=True,
        )
        self.assertEqual(
            ['osc_deploy_config', 'osc_deploy_config.plugin'],
            json.loads(done.stdout),
        )

    def test_command_modules_import_only_ours_after_osc(self):
        modules = sorted(
            ep.value.split(':')[0] for group in (
                'openstack.deploy_config.v1', 'openstack.extension',
                'openstack.cli.server_resize')
            for ep in importlib.metadata.entry_points(group=group)
            if ep.value.startswith('osc_deploy_config.'))
        self.assertIn('osc_deploy_config.v1.server_hooks', modules)
        probe = (
            'import json, sys; import openstackclient.shell; '
            'from osc_lib.command import command; '
            'from osc_lib.cli import format_columns; '
            'from cliff import hooks; '
            'before = set(sys.modules); '
            'import %s; '
            'print(json.dumps(sorted(set(sys.modules) - before)))'
            % ', '.join(dict.fromkeys(modules))
        )
        done = subprocess.run(
            [sys.executable, '-c', probe],
            capture_output=True, text=True, check=True,
        )
        self.assertEqual(
            [], [m for m in json.loads(done.stdout)
                 if m not in ('osc_deploy_config', 'osc_deploy_config.v1',
                              'osc_deploy_config.v1.cli', *modules)])
