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
what their hardware runs (``use_cases.servers.server_report``).  The hooks
on OSC's own ``server`` commands are in ``v1.server_hooks``."""


from osc_lib import exceptions
from osc_lib.command import command

from osc_deploy_config.v1 import cli


def _server_report():
    from osc_deploy_config.use_cases.servers import server_report

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
            help='Also Actual, In Effect and Read At: one BIOS read per '
                 'bare-metal server, made concurrently.')
        parser.add_argument(
            '--outdated', action='store_true',
            help='Only the servers whose configs differ from what their '
                 'flavor asks for now (roll it out with openstack server '
                 'deploy-config set --flavor FLAVOR).')
        return parser

    def take_action(self, parsed_args):
        return _server_report().list_servers(
            self.app.client_manager.deploy_config, parsed_args.all_projects,
            parsed_args.long, parsed_args.outdated)


class SetServerDeployConfig(cli.OneLineErrors, cli.Progress,
                            cli.RolloutTable, command.Lister):
    _description = (
        'Toggle deploy configs on many servers, at most --max-unavailable '
        'down at once (those already down included): the configs given, or '
        'what their flavor asks for now. Every server is planned first; each '
        'goes through the one-server toggle (openstack server resize '
        '--deploy-config) with all its checks. Progress on stderr, a row per '
        'server on stdout, whatever happens; a rerun finishes what an '
        'interrupted run left. Exit status: 0 when every server runs the '
        'configs (or was skipped, its host incapable), 1 otherwise, 130 '
        'after Ctrl-C.')
    _epilog = """Examples::

  openstack server deploy-config set --flavor hpc.gold --all-projects \\
      --dry-run
  openstack server deploy-config set --flavor hpc.gold --all-projects \\
      --max-unavailable 4
  openstack server deploy-config set web-1 web-2 \\
      --deploy-config hyperthreading=disabled
"""

    def get_parser(self, prog_name):
        parser = cli.keep_epilog_lines(super().get_parser(prog_name))
        parser.add_argument('servers', metavar='<server>', nargs='*',
                            help='Servers (name or ID).')
        parser.add_argument(
            '--deploy-config', metavar='<type=value>', action='append',
            dest='deploy_configs', default=[],
            help='A config to toggle to (repeat for several types). '
                 'Default, with --flavor: what the flavor asks for now.')
        parser.add_argument(
            '--flavor', metavar='<flavor>',
            help='Also the servers of this flavor (or of a flavor a toggle '
                 'derived from it).')
        scope = parser.add_mutually_exclusive_group()
        scope.add_argument('--project', metavar='<project>',
                           help='Servers of this project (name or ID).')
        scope.add_argument('--all-projects', action='store_true',
                           help='Servers of every project.')
        parser.add_argument(
            '--max-unavailable', metavar='<count>', type=int, default=1,
            help='At most this many of the selected servers down at once, '
                 'those already down (not ACTIVE, their node in maintenance '
                 'or servicing, busy with another change) included '
                 '(default 1).')
        parser.add_argument(
            '--max-failures', metavar='<count>', type=int, default=0,
            help='After more failures than this (planning\'s included), no '
                 'new server starts; those in flight finish (default 0).')
        parser.add_argument('--dry-run', action='store_true',
                            help='Plan every server, change nothing.')
        cli.add_toggle_options(parser, whole_command=True)
        return parser

    def take_action(self, parsed_args):
        from osc_deploy_config.domain.configs import deploy_config
        from osc_deploy_config.use_cases.fleet import rollout

        configs = [deploy_config.parse_config(c)
                   for c in parsed_args.deploy_configs]
        self.rollout = rollout.Rollout(
            self.app.client_manager.deploy_config, self.say,
            parsed_args.max_unavailable, parsed_args.max_failures,
            **cli.toggle_options(parsed_args))
        self.hold_interrupts(self.rollout)
        columns, self.rows = rollout.roll_out(
            self.rollout, parsed_args.servers, configs, parsed_args.flavor,
            parsed_args.project, parsed_args.all_projects,
            parsed_args.dry_run)
        return columns, self.rows

    def rollout_printed(self):
        return self.rollout

    def run(self, parsed_args):
        """The rows first, whatever happens; then the exit status: 130
        after Ctrl-C, 1 unless the fleet got there."""
        from osc_deploy_config.domain.fleet import fleet_plan

        self.rollout, self.rows = None, []
        code = super().run(parsed_args)
        rollout = self.rollout
        if rollout is None or parsed_args.dry_run:
            return code
        if rollout.interrupted:
            self.say('Rerun the same command to finish: %s'
                     % cli.command_line())
            raise KeyboardInterrupt()
        if rollout.spent_by:
            raise exceptions.CommandError(
                '--max-unavailable %d is spent before any server starts, by '
                '%s: nothing was changed. Rerun once they are back, or allow '
                'more down at once.' % (rollout.max_unavailable,
                                        rollout.spent_by))
        if not fleet_plan.arrived(self.rows):
            raise exceptions.CommandError(
                '%d of %d server(s) do not run the configs: %s' % (
                    sum(1 for r in self.rows if not fleet_plan.arrived([r])),
                    len(self.rows), '; '.join(
                        '%s: %s' % (r[1], r[-2]) for r in self.rows
                        if not fleet_plan.arrived([r]))))
        return code

