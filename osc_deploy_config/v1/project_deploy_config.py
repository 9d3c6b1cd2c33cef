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

"""``openstack project deploy-config set|unset|show|list``: the configs the
operator lets a project switch its own servers to
(``use_cases.grants.project_grants``)."""

from osc_lib.command import command

from osc_deploy_config.v1 import cli


def _project_grants():
    from osc_deploy_config.use_cases.grants import project_grants

    return project_grants


def _project_argument(parser):
    parser.add_argument('project', metavar='<project>',
                        help='Project (ID, or name: see --project-domain).')
    parser.add_argument('--project-domain', metavar='<project-domain>',
                        help='Domain the project belongs to (name or ID): '
                             'a name found in several domains is refused '
                             'without it.')


class SetProjectDeployConfig(cli.OneLineErrors, command.Lister):
    _description = (
        'Let a project switch its own servers to these deploy configs: for '
        'each template serving a config (one per resource class, or one for '
        'every kind), a runbook the project owns, with the template\'s '
        'trait and steps (ironic API 1.112); and the derived flavors its '
        'virtual servers need, private and open to it. A config whose '
        'template has a step a running server may not take is refused. A '
        'rerun repairs what drifted from the templates.')
    _epilog = """Examples::

  openstack project deploy-config set demo hyperthreading=enabled \\
      hyperthreading=disabled --dry-run
  openstack project deploy-config set demo hyperthreading=enabled \\
      hyperthreading=disabled
"""

    def get_parser(self, prog_name):
        parser = cli.keep_epilog_lines(super().get_parser(prog_name))
        _project_argument(parser)
        parser.add_argument('configs', metavar='<type=value>', nargs='+',
                            help='Deploy configs to grant, e.g. '
                                 'hyperthreading=disabled.')
        parser.add_argument('--dry-run', action='store_true',
                            help='Show the runbooks and flavors to make, '
                                 'make none.')
        return parser

    def take_action(self, parsed_args):
        return _project_grants().grant(
            self.app.client_manager.deploy_config, parsed_args.project,
            parsed_args.configs, parsed_args.dry_run,
            parsed_args.project_domain)


class UnsetProjectDeployConfig(cli.OneLineErrors, command.Lister):
    _description = ('Withdraw deploy configs from a project: delete the '
                    'runbooks of its grant, and close the derived flavors '
                    'that ask for them to it (its servers keep running '
                    'what they run).')

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _project_argument(parser)
        parser.add_argument('configs', metavar='<type=value>', nargs='*',
                            help='Deploy configs to withdraw.')
        parser.add_argument('--all', action='store_true', dest='every',
                            help='Withdraw every config granted.')
        return parser

    def take_action(self, parsed_args):
        return _project_grants().withdraw(
            self.app.client_manager.deploy_config, parsed_args.project,
            parsed_args.configs, parsed_args.every,
            parsed_args.project_domain)


class ShowProjectDeployConfig(cli.OneLineErrors, command.Lister):
    _description = ('Show the deploy configs a project may switch its '
                    'servers to: each runbook of its grant, the template it '
                    'publishes, and whether it has drifted from it')

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _project_argument(parser)
        return parser

    def take_action(self, parsed_args):
        return _project_grants().show(self.app.client_manager.deploy_config,
                                      parsed_args.project,
                                      parsed_args.project_domain)


class ListProjectDeployConfig(cli.OneLineErrors, command.Lister):
    _description = ('List every project\'s grants: the configs each may '
                    'switch its servers to, and any drift from their '
                    'templates')

    def take_action(self, parsed_args):
        return _project_grants().list_grants(
            self.app.client_manager.deploy_config)


class CheckProjectDeployConfig(cli.OneLineErrors, command.Lister):
    _description = (
        'Check whether a project can reach a deploy config around its '
        'grant. Each door (its nodes\' instance_info, image properties that '
        'ask for a template, directly and through nova, raw deploy and '
        'service steps, runbooks of its own, a rebuild naming a runbook) is '
        'probed with a manager\'s and a member\'s token of the project, in '
        'requests that change nothing; what is read (lessees, owners, '
        'runbooks the project may run) says so. A door is closed only '
        'where a probe was refused; one with no safe probe is "not probed", '
        'with why. Run by the operator (an admin), the tokens are those of '
        'short-lived users made in the project for the check and always '
        'removed; run by a project\'s manager or member, its own.')

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _project_argument(parser)
        return parser

    def take_action(self, parsed_args):
        from osc_deploy_config.use_cases.grants import hardening_check

        return hardening_check.check(self.app.client_manager.deploy_config,
                                     parsed_args.project,
                                     parsed_args.project_domain)


class ShowHardening(cli.OneLineErrors, command.Lister):
    _description = (
        'The configuration lines the hardening needs on this cloud, derived '
        'from its deploy templates and images: ironic\'s '
        '[api]disallow_deploy_steps and disallow_service_steps (the guarded '
        'steps no template uses: BIOS, RAID, firmware, erase, Secure Boot), '
        'and nova\'s [DEFAULT]non_inheritable_image_properties (the image '
        'properties that ask for configs, which a snapshot must not '
        'inherit). Run it again after adding templates or images. Needs a '
        'system-scoped token.')
    _epilog = """Examples::

  openstack deploy-config hardening show
  openstack deploy-config hardening show -f value -c Option -c Value
"""

    def get_parser(self, prog_name):
        return cli.keep_epilog_lines(super().get_parser(prog_name))

    def take_action(self, parsed_args):
        from osc_deploy_config.use_cases.grants import hardening_check

        return hardening_check.settings(self.app.client_manager.deploy_config)
