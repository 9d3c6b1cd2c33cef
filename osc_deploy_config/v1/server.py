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

"""``openstack server resize --deploy-config TYPE=VALUE``: a command hook.

OSC's ``server resize`` requires one of --flavor, --confirm and --revert;
the hook adds --deploy-config to that group (so the parser refuses it with
any of them), relaxes the requirement only for it, and does the toggle
(``toggle.Toggle``) in ``before()``, leaving OSC's own action nothing to
do.

A virtual server is resized by nova to a flavor with the configs changed;
nova cannot resize a bare-metal server, so its node is serviced by ironic
with the target templates' steps instead.  Either way the host must pass
the scheduler check in placement before anything changes.
"""

from cliff import hooks


class ResizeDeployConfigHook(hooks.CommandHook):
    """Adds --deploy-config, --dry-run and --auto-confirm."""

    def __init__(self, command):
        super().__init__(command)
        # cliff calls get_parser() below from Command.get_parser, before
        # OSC's subclass adds --flavor and its group: extend the finished
        # parser instead.
        build = command.get_parser

        def get_parser(prog_name):
            return self.extend(build(prog_name))

        command.get_parser = get_parser

    def get_parser(self, parser):
        return parser

    def extend(self, parser):
        from osc_deploy_config.v1 import cli

        cli.one_line_errors(parser)
        cli.demote_keystoneauth_warnings()
        phase = next(g for g in parser._mutually_exclusive_groups
                     if any('--flavor' in a.option_strings
                            for a in g._group_actions))
        phase.required = False
        phase.add_argument(
            '--deploy-config',
            metavar='<type=value>',
            action='append',
            dest='deploy_configs',
            help='Toggle a deploy config (repeat for several), e.g. '
                 'hyperthreading=disabled: a virtual server is resized to a '
                 'flavor with the config changed, a bare-metal server is '
                 'serviced in place with the template\'s steps. The host must '
                 'carry the template trait (see openstack baremetal node '
                 'deploy-config sync). (osc-deploy-config)',
        )
        parser.add_argument(
            '--dry-run', action='store_true',
            help='With --deploy-config: show the plan, change nothing.')
        parser.add_argument(
            '--auto-confirm', action='store_true',
            help='With --deploy-config: confirm the resize once it has '
                 'verified (implies --wait).')
        self._parser = parser
        return parser

    def get_epilog(self):
        return ('Example (osc-deploy-config): openstack server resize '
                '--deploy-config hyperthreading=disabled --auto-confirm '
                'web-1')

    def before(self, parsed_args):
        if not parsed_args.deploy_configs:
            if parsed_args.dry_run or parsed_args.auto_confirm:
                self._parser.error('--dry-run and --auto-confirm go with '
                                   '--deploy-config')
            if not (parsed_args.flavor or parsed_args.confirm
                    or parsed_args.revert):
                self._parser.error('one of the arguments --flavor --confirm '
                                   '--revert --deploy-config is required')
            return parsed_args
        from osc_deploy_config import deploy_config
        from osc_deploy_config import toggle

        configs = [deploy_config.parse_config(c)
                   for c in parsed_args.deploy_configs]
        toggle.Toggle(
            self.cmd.app.client_manager.deploy_config, parsed_args.server,
            configs, self.say, dry_run=parsed_args.dry_run,
            wait=parsed_args.wait, auto_confirm=parsed_args.auto_confirm,
        ).run()
        # OSC's own resize has nothing left to do.
        self.cmd.take_action = lambda parsed_args: None
        return parsed_args

    def after(self, parsed_args, return_code):
        return return_code

    def say(self, text):
        stdout = self.cmd.app.stdout
        stdout.write(text + '\n')
        stdout.flush()
