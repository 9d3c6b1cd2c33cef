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

"""``openstack flavor|image deploy-config set|unset|show|list``: the
commands of the two owners of configs, flavors and images
(``use_cases.configs.owner_configs``).  Each command here is one of four,
made for flavors or for images by its ``owner``."""

from osc_lib.cli import format_columns
from osc_lib.command import command

from osc_deploy_config.v1 import cli

# How long set and unset wait for placement to show a set's tags.
WAIT_TIMEOUT = 300
# What set and unset change, by owner, for the help of --dry-run.
_CHANGED = {'flavor': 'extra-spec', 'image': 'property'}


def _owner_configs():
    from osc_deploy_config.use_cases.configs import owner_configs

    return owner_configs


def _owner_argument(parser, owner):
    parser.add_argument(owner, metavar='<%s>' % owner,
                        help='%s (name or ID).' % owner.title())


class _ChangeDeployConfig(cli.OneLineErrors, cli.Progress, command.Lister):
    """set or unset: plan the change of the owner's specs, then make it
    (or, with --dry-run, show it); the sets it asks for first, made and
    their nodes tagged."""

    owner = None            # 'flavor' or 'image'
    unsetting = False
    items_metavar = '<type=value>'
    items_help = None

    def get_parser(self, prog_name):
        parser = cli.keep_epilog_lines(super().get_parser(prog_name))
        _owner_argument(parser, self.owner)
        parser.add_argument('items', metavar=self.items_metavar, nargs='+',
                            help=self.items_help)
        parser.add_argument('--dry-run', action='store_true',
                            help='Show the %s change, make none.'
                            % _CHANGED[self.owner])
        parser.add_argument(
            '--no-wait', action='store_true',
            help='Where configs whose templates share a step are asked '
                 'together, their set\'s template is made and the nodes '
                 'that can take it tagged first: return once ironic has '
                 'the tags. By default the command waits until placement '
                 'shows them, as sync does.')
        parser.add_argument(
            '--wait-timeout', metavar='<seconds>', type=int,
            default=WAIT_TIMEOUT,
            help='How long to wait for placement (default %d).'
                 % WAIT_TIMEOUT)
        return parser

    def take_action(self, parsed_args):
        owner_configs = _owner_configs()
        items = owner_configs.parse_items(parsed_args.items, self.unsetting)
        change = (owner_configs.unset_configs if self.unsetting
                  else owner_configs.set_configs)
        return change(self.app.client_manager.deploy_config, self.owner,
                      getattr(parsed_args, self.owner), items,
                      parsed_args.dry_run, owner_configs.Tagging(
                          not parsed_args.no_wait, parsed_args.wait_timeout,
                          self.say))


class _UnsetDeployConfig(_ChangeDeployConfig):
    unsetting = True
    items_metavar = '<type>'
    items_help = 'Deploy config types, e.g. hyperthreading.'


class _ShowDeployConfig(cli.OneLineErrors, command.ShowOne):
    owner = None

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        _owner_argument(parser, self.owner)
        return parser

    def take_action(self, parsed_args):
        owner_configs = _owner_configs()
        show = (owner_configs.show_flavor if self.owner == 'flavor'
                else owner_configs.show_image)
        found = show(self.app.client_manager.deploy_config,
                     getattr(parsed_args, self.owner))
        return tuple(found), tuple(_formatted(v) for v in found.values())


def _formatted(value):
    """One formatter per structured column."""
    if isinstance(value, dict):
        return format_columns.DictColumn(value)
    if isinstance(value, list):
        return format_columns.ListColumn(value)
    return value


class _ListDeployConfig(cli.OneLineErrors, command.Lister):
    owner = None

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            '--all', action='store_true',
            help='Also the %ss that ask for no deploy config.' % self.owner)
        return parser

    def take_action(self, parsed_args):
        rows = _owner_configs().list_configs(
            self.app.client_manager.deploy_config, self.owner,
            parsed_args.all)
        return ('ID', 'Name', 'Deploy Configs', 'Sets'), [
            (ident, name, format_columns.ListColumn(configs),
             format_columns.ListColumn(sets))
            for ident, name, configs, sets in rows]


class SetFlavorDeployConfig(_ChangeDeployConfig):
    _description = ('Ask a flavor for deploy configs: its extra specs get '
                    'the config and the required trait of its template')
    owner = 'flavor'
    items_help = ('Deploy configs, e.g. hyperthreading=disabled. A new value '
                  "of a type replaces the flavor's old one.")
    _epilog = """Examples::

  openstack flavor deploy-config set --dry-run bm.gold \\
      hyperthreading=disabled
  openstack flavor deploy-config set bm.gold hyperthreading=disabled \\
      disks=raid1
"""


class UnsetFlavorDeployConfig(_UnsetDeployConfig):
    _description = ('Remove deploy configs from a flavor: exactly the '
                    'extra specs "set" added for them')
    owner = 'flavor'


class ShowFlavorDeployConfig(_ShowDeployConfig):
    _description = ("Show a flavor's deploy configs, their templates, the "
                    'nodes tagged for each in ironic, the nodes the '
                    'scheduler can land on now (placement), and any drift')
    owner = 'flavor'


class ListFlavorDeployConfig(_ListDeployConfig):
    _description = 'List every flavor with its deploy configs'
    owner = 'flavor'


class SetImageDeployConfig(_ChangeDeployConfig):
    _description = ('Ask an image for deploy configs: its properties get '
                    'the config and the required trait of its template')
    owner = 'image'
    items_help = ('Deploy configs, e.g. hyperthreading=disabled. A new value '
                  "of a type replaces the image's old one.")
    _epilog = """Examples::

  openstack image deploy-config set --dry-run hpc-image \\
      hyperthreading=disabled
  openstack image deploy-config set hpc-image hyperthreading=disabled
"""


class UnsetImageDeployConfig(_UnsetDeployConfig):
    _description = ('Remove deploy configs from an image: exactly the '
                    'properties "set" added for them')
    owner = 'image'


class ShowImageDeployConfig(_ShowDeployConfig):
    _description = ("Show an image's deploy configs, their templates and "
                    'required traits, and any drift')
    owner = 'image'


class ListImageDeployConfig(_ListDeployConfig):
    _description = 'List every image with its deploy configs'
    owner = 'image'
