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

"""Command hooks on OSC's own ``server`` commands.

``openstack server resize --deploy-config TYPE=VALUE`` toggles a config;
``openstack server create`` refuses a boot whose deploy configs cannot
deploy; ``openstack server rebuild`` warns when it will revert a toggle.

OSC's ``server resize`` requires one of --flavor, --confirm and --revert;
the hook adds --deploy-config to that group (so the parser refuses it with
any of them), relaxes the requirement only for it, and does the toggle
(``use_cases.toggle``) in ``before()``, leaving OSC's own action
nothing to do.

A virtual server is resized by nova to a flavor with the configs changed;
nova cannot resize a bare-metal server, so its node is serviced by ironic
with the target templates' steps instead.  Either way the host must pass
the scheduler check in placement before anything changes.
"""

import logging

from cliff import hooks

from osc_deploy_config.v1 import cli

LOG = logging.getLogger(__name__)


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
        cli.add_toggle_options(parser)
        self._parser = parser
        return parser

    def get_epilog(self):
        return ('Example (osc-deploy-config): openstack server resize '
                '--deploy-config hyperthreading=disabled --auto-confirm '
                'web-1')

    def refuse_options_alone(self, parsed_args):
        """Without --deploy-config: OSC's own resize, whose options argparse
        cannot require on its own (the hook relaxed the group)."""
        if (parsed_args.dry_run or parsed_args.auto_confirm
                or parsed_args.allowed_steps or parsed_args.retry_failed
                or parsed_args.wait_timeout is not None):
            self._parser.error('--dry-run, --auto-confirm, --allow-step, '
                               '--retry-failed and --wait-timeout go with '
                               '--deploy-config')
        if not (parsed_args.flavor or parsed_args.confirm
                or parsed_args.revert):
            self._parser.error('one of the arguments --flavor --confirm '
                               '--revert --deploy-config is required')

    def before(self, parsed_args):
        if not parsed_args.deploy_configs:
            self.refuse_options_alone(parsed_args)
            return parsed_args
        from osc_deploy_config.domain.configs import deploy_config
        from osc_deploy_config.use_cases.toggle import toggle

        configs = [deploy_config.parse_config(c)
                   for c in parsed_args.deploy_configs]
        toggle.ServerToggle(
            self.cmd.app.client_manager.deploy_config, configs, self.say,
            wait=parsed_args.wait, auto_confirm=parsed_args.auto_confirm,
            **cli.toggle_options(parsed_args),
        ).run(parsed_args.server, dry_run=parsed_args.dry_run)
        # OSC's own resize has nothing left to do.
        self.cmd.take_action = lambda parsed_args: None
        return parsed_args

    def after(self, parsed_args, return_code):
        return return_code

    def say(self, text):
        stdout = self.cmd.app.stdout
        stdout.write(text + '\n')
        stdout.flush()


class CreatePreflightHook(hooks.CommandHook):
    """``server create``: refuses, before nova is asked, a boot whose
    deploy configs cannot deploy (``use_cases.servers.boot_preflight``)."""

    def get_parser(self, parser):
        return parser

    def get_epilog(self):
        return ''

    def before(self, parsed_args):
        from osc_deploy_config.services import handover
        from osc_deploy_config.use_cases.servers import boot_preflight

        manager = self.cmd.app.client_manager
        read = boot_preflight.check(
            manager.deploy_config, parsed_args.flavor, parsed_args.image,
            from_volume=any(getattr(parsed_args, option, None) for option in (
                'volume', 'snapshot', 'boot_from_volume')))
        if read is None:
            return parsed_args
        flavor, image, also = read
        handover.flavor(manager.compute, parsed_args.flavor, flavor)
        if image:
            handover.image(manager.image, parsed_args.image, image)
        LOG.debug('deploy-config pre-flight: read flavor %s and %s%s to '
                  'check their deploy configs; handed to server create',
                  flavor['id'], 'image %s' % image['id'] if image
                  else 'no image', ''.join(', ' + a for a in also))
        return parsed_args

    def after(self, parsed_args, return_code):
        return return_code


class RebuildDeployConfigHook(hooks.CommandHook):
    """``server rebuild`` of a bare-metal server works, and keeps its
    configs (``use_cases.servers.server_rebuild``): it is sent at the compute
    microversion nova's ironic driver can rebuild at, and the configs a
    toggle applied are applied again after, unless
    --deploy-config-from-flavor.  A virtual server's rebuild is OSC's own;
    what the hook cannot read, it leaves to OSC."""

    rebuild = None

    def get_parser(self, parser):
        parser.add_argument(
            '--deploy-config-from-flavor', action='store_true',
            help='A bare-metal server runs its flavor\'s deploy configs after '
                 'the rebuild (a toggle\'s are dropped); by default the '
                 'configs a toggle applied are applied again. '
                 '(osc-deploy-config)')
        return parser

    def get_epilog(self):
        return ''

    def before(self, parsed_args):
        from osc_deploy_config.services import handover
        from osc_deploy_config.use_cases.servers import server_rebuild

        manager = self.cmd.app.client_manager
        rebuild = server_rebuild.Rebuild(manager.deploy_config,
                                         manager.compute, self.say)
        try:
            on_ironic = rebuild.read(parsed_args.server)
        except Exception as exc:    # noqa: BLE001 - OSC says what is wrong
            LOG.debug('deploy-config rebuild check skipped: %s', exc)
            return parsed_args
        handover.server(manager.compute, parsed_args.server, rebuild.server)
        if on_ironic:
            rebuild.before(bool(parsed_args.reimage_boot_volume))
            self.rebuild = rebuild
        return parsed_args

    def after(self, parsed_args, return_code):
        if self.rebuild:
            self.rebuild.after(parsed_args.deploy_config_from_flavor,
                               parsed_args.wait)
        return return_code

    def say(self, text):
        """Progress on stderr: stdout has the server OSC shows."""
        self.cmd.app.stderr.write(text + '\n')
        self.cmd.app.stderr.flush()
