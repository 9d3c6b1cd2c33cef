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

"""``openstack server deploy-config show|list``: what servers ask for, and
what their hardware runs (``use_cases.server_report``).  The hooks on OSC's
own ``server`` commands are in ``v1.server_hooks``."""

from osc_lib.command import command

from osc_deploy_config.v1 import cli


def _server_report():
    from osc_deploy_config.use_cases import server_report

    return server_report


class ShowServerDeployConfig(cli.OneLineErrors, command.Lister):
    _description = ('Show the deploy configs a server asks for (from its '
                    'flavor, its image, or a toggle), their templates, what '
                    'its node reports, and whether each is in effect')

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('server', metavar='<server>',
                            help='Server (name or ID).')
        return parser

    def take_action(self, parsed_args):
        return _server_report().show(self.app.client_manager.deploy_config,
                                     parsed_args.server)


class ListServerDeployConfig(cli.OneLineErrors, command.Lister):
    _description = ('List the deploy configs servers ask for (from their '
                    'flavor, image, or a toggle); with --long, what their '
                    'nodes report and whether each is in effect')

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--all-projects', action='store_true',
                            help='The servers of every project (admin).')
        parser.add_argument(
            '--long', action='store_true',
            help='Also Actual and In Effect: one BIOS read per bare-metal '
                 'server, made concurrently.')
        return parser

    def take_action(self, parsed_args):
        return _server_report().list_servers(
            self.app.client_manager.deploy_config, parsed_args.all_projects,
            parsed_args.long)
