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

"""``openstack image deploy-config set|unset|show|list``: the image twin of
``flavor deploy-config``.

nova hands ironic the image's ``trait:<trait>=required`` properties with
the flavor's, so an image asks for a template exactly as a flavor does;
``set`` writes the same two keys as image properties (``flavors`` plans
both), in one glance request.
"""

import logging

from osc_lib.cli import format_columns
from osc_lib.command import command

from osc_deploy_config.v1 import cli
from osc_deploy_config.v1 import flavor as flavor_commands

LOG = logging.getLogger(__name__)
CHANGE_COLUMNS = ('Action', 'Property', 'Value')


def _apis(app):
    from osc_deploy_config import glance
    from osc_deploy_config import ironic
    from osc_deploy_config import versions

    clients = app.client_manager.deploy_config
    return clients, glance.Glance(clients.image), ironic.Ironic(
        clients.baremetal, versions.DEPLOY_TEMPLATES)


class _ChangeImageDeployConfig(flavor_commands.ChangeDeployConfigs):
    """set and unset: plan a property change from the image and one
    template listing, then make it in one request (or show it)."""

    target, changed = 'image', 'property'

    def take_action(self, parsed_args):
        items = [self.parse_item(i) for i in parsed_args.items]
        clients, images, ironic = _apis(self.app)
        image = images.find_image(parsed_args.image)
        by_config = flavor_commands.templates_by_config(clients, ironic)
        change = self.plan(image, items, by_config)
        prefix = 'would ' if parsed_args.dry_run else ''
        rows = [(prefix + 'set', k, v) for k, v in sorted(change.set.items())]
        rows += [(prefix + 'unset', k, image.get(k)) for k in change.unset]
        if not parsed_args.dry_run and (change.set or change.unset):
            images.change_properties(image, change.set, change.unset)
        return CHANGE_COLUMNS, rows


class SetImageDeployConfig(flavor_commands.SettingConfigs,
                           _ChangeImageDeployConfig):
    _description = ('Ask an image for deploy configs: its properties get '
                    'the config and the required trait of its template')
    items_help = ('Deploy configs, e.g. hyperthreading=disabled. A new value '
                  "of a type replaces the image's old one.")
    _epilog = """Examples::

  openstack image deploy-config set --dry-run hpc-image \\
      hyperthreading=disabled
  openstack image deploy-config set hpc-image hyperthreading=disabled
"""

    def plan(self, image, configs, templates_by_config):
        from osc_deploy_config import flavors

        return flavors.plan_set(image, configs, templates_by_config)


class UnsetImageDeployConfig(flavor_commands.UnsettingConfigs,
                             _ChangeImageDeployConfig):
    _description = ('Remove deploy configs from an image: exactly the '
                    'properties "set" added for them')

    def plan(self, image, types, templates_by_config):
        from osc_deploy_config import flavors

        return flavors.plan_unset(image, types, templates_by_config,
                                  owner='image')


class ShowImageDeployConfig(cli.OneLineErrors, command.ShowOne):
    _description = ("Show an image's deploy configs, their templates and "
                    'required traits, and any drift')

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('image', metavar='<image>',
                            help='Image (name or ID).')
        return parser

    def take_action(self, parsed_args):
        from osc_deploy_config import flavors

        clients, images, ironic = _apis(self.app)
        image = images.find_image(parsed_args.image)
        by_config = flavor_commands.templates_by_config(clients, ironic)
        configs = flavors.configs_of(image)
        drift = flavors.drift(image, by_config, owner='image')
        for warning in drift:
            LOG.warning('%s', warning)
        templates = {str(c): by_config[c]['name'] for c in configs
                     if c in by_config}
        data = {
            'id': image['id'],
            'name': image.get('name'),
            'deploy_configs': format_columns.ListColumn(
                [str(c) for c in configs]),
            'templates': format_columns.DictColumn(templates),
            'required_traits': format_columns.DictColumn({
                config: '%s=%s' % (flavors.trait_spec(name),
                                   flavors.REQUIRED)
                for config, name in templates.items()}),
            'drift': format_columns.ListColumn(drift),
        }
        return tuple(data), tuple(data.values())


class ListImageDeployConfig(flavor_commands.ListDeployConfigs):
    _description = 'List every image with its deploy configs'
    plural = 'images'

    def listed(self):
        from osc_deploy_config import glance

        found = glance.Glance(
            self.app.client_manager.deploy_config.image).images()
        return [(i['id'], i.get('name'), i) for i in sorted(
            found.values(), key=lambda i: (i.get('name') or '', i['id']))]
