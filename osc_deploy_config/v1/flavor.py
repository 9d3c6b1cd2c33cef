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

"""``openstack flavor deploy-config set|unset|show|list``.

nova calls use the cloud entry's project scope, ironic calls the system
scope when the credentials allow it (see ``clients``).
"""

import logging

from osc_lib import exceptions
from osc_lib.cli import format_columns
from osc_lib.command import command

from osc_deploy_config.v1 import cli

LOG = logging.getLogger(__name__)
CHANGE_COLUMNS = ('Action', 'Extra Spec', 'Value')


def _apis(app, *ironic_features):
    from osc_deploy_config import ironic
    from osc_deploy_config import nova
    from osc_deploy_config import versions

    clients = app.client_manager.deploy_config
    return (clients, nova.Nova(clients.compute), ironic.Ironic(
        clients.baremetal, versions.DEPLOY_TEMPLATES, *ironic_features))


def templates_by_config(clients, ironic):
    """One template listing: {config: template}."""
    with clients.ironic_errors('list deploy templates'):
        return ironic.config_templates(fields=['uuid', 'name', 'steps'])


def _apply(nova, flavor, change, dry_run):
    """Write a SpecChange (set first, then unset); rows saying what."""
    prefix = 'would ' if dry_run else ''
    rows = [(prefix + 'set', k, v) for k, v in sorted(change.set.items())]
    rows += [(prefix + 'unset', k, flavor['extra_specs'].get(k))
             for k in change.unset]
    if not dry_run:
        if change.set:
            nova.set_extra_specs(flavor['id'], change.set)
        for key in change.unset:
            nova.delete_extra_spec(flavor['id'], key)
    return CHANGE_COLUMNS, rows


class ChangeDeployConfigs(cli.OneLineErrors, command.Lister):
    """set and unset of a flavor's or an image's deploy configs: the
    object, the items (``SettingConfigs`` or ``UnsettingConfigs``) and
    --dry-run."""

    target = changed = None     # 'flavor', 'extra-spec'
    items_metavar = items_help = None

    def get_parser(self, prog_name):
        parser = cli.keep_epilog_lines(super().get_parser(prog_name))
        parser.add_argument(self.target, metavar='<%s>' % self.target,
                            help='%s (name or ID).' % self.target.title())
        parser.add_argument('items', metavar=self.items_metavar, nargs='+',
                            help=self.items_help)
        parser.add_argument('--dry-run', action='store_true',
                            help='Show the %s change, make none.'
                            % self.changed)
        return parser


class SettingConfigs:
    """The items of set: configs."""

    items_metavar = '<type=value>'

    def parse_item(self, text):
        from osc_deploy_config import deploy_config

        return deploy_config.parse_config(text)

    def type_of(self, config):
        return config.type

    def value_of(self, config):
        return config.value


class UnsettingConfigs:
    """The items of unset: config types."""

    items_metavar = '<type>'
    items_help = 'Deploy config types, e.g. hyperthreading.'

    def parse_item(self, text):
        from osc_deploy_config import deploy_config

        return deploy_config.parse_config_type(text)

    def type_of(self, config_type):
        return config_type

    def value_of(self, config_type):
        return None


class _ChangeFlavorDeployConfig(ChangeDeployConfigs):
    """set and unset: plan an extra-spec change from one flavor listing and
    one template listing, then make it (or, with --dry-run, show it)."""

    target, changed = 'flavor', 'extra-spec'

    def take_action(self, parsed_args):
        items = [self.parse_item(i) for i in parsed_args.items]
        clients, nova, ironic = _apis(self.app)
        flavor = nova.find_flavor(parsed_args.flavor)
        by_config = templates_by_config(clients, ironic)
        change = self.plan(flavor['extra_specs'], items, by_config)
        result = _apply(nova, flavor, change, parsed_args.dry_run)
        if not parsed_args.dry_run and (change.set or change.unset):
            self.settle(nova, flavor, items, by_config)
        return result

    def settle(self, nova, flavor, items, templates_by_config):
        """Read the flavor back: repair what a concurrent change of it left
        mixed, and tell when that change won."""
        from osc_deploy_config import flavors

        types = [self.type_of(i) for i in items]
        specs = nova.extra_specs(flavor['id'])
        repair = flavors.reconcile(specs, types, templates_by_config)
        if repair.set or repair.unset:
            LOG.info('Flavor %s was changed concurrently; repairing %s',
                     flavor['name'],
                     ', '.join(sorted(repair.set) + repair.unset))
            _apply(nova, dict(flavor, extra_specs=specs), repair, False)
        lost = [t for t, item in zip(types, items, strict=True)
                if specs.get(flavors.config_spec(t)) != self.value_of(item)]
        if lost:
            raise exceptions.CommandError(
                'A concurrent change of flavor %s won for %s: it now asks '
                'for %s' % (flavor['name'], ', '.join(lost), ', '.join(
                    str(c) for c in flavors.configs_of(specs)
                    if c.type in lost) or 'none of them'))


class SetFlavorDeployConfig(SettingConfigs, _ChangeFlavorDeployConfig):
    _description = ('Ask a flavor for deploy configs: its extra specs get '
                    'the config and the required trait of its template')
    items_help = ('Deploy configs, e.g. hyperthreading=disabled. A new value '
                  "of a type replaces the flavor's old one.")
    _epilog = """Examples::

  openstack flavor deploy-config set --dry-run bm.gold \\
      hyperthreading=disabled
  openstack flavor deploy-config set bm.gold hyperthreading=disabled \\
      disks=raid1
"""

    def plan(self, specs, configs, templates_by_config):
        from osc_deploy_config import flavors

        return flavors.plan_set(specs, configs, templates_by_config)


class UnsetFlavorDeployConfig(UnsettingConfigs, _ChangeFlavorDeployConfig):
    _description = ('Remove deploy configs from a flavor: exactly the '
                    'extra specs "set" added for them')

    def plan(self, specs, types, templates_by_config):
        from osc_deploy_config import flavors

        return flavors.plan_unset(specs, types, templates_by_config)


class ShowFlavorDeployConfig(cli.OneLineErrors, command.ShowOne):
    _description = ("Show a flavor's deploy configs, their templates, the "
                    'nodes tagged for each in ironic, the nodes the '
                    'scheduler can land on now (placement), and any drift')

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('flavor', metavar='<flavor>',
                            help='Flavor (name or ID).')
        return parser

    def take_action(self, parsed_args):
        from osc_deploy_config import flavors
        from osc_deploy_config import tagging
        from osc_deploy_config import versions

        clients, nova, ironic = _apis(self.app, versions.NODE_TRAITS,
                                      versions.NODE_RETIREMENT)
        flavor = nova.find_flavor(parsed_args.flavor)
        by_config = templates_by_config(clients, ironic)
        configs = flavors.configs_of(flavor['extra_specs'])
        with clients.ironic_errors('list nodes'):
            nodes = ironic.nodes(tagging.NODE_FIELDS) if configs else []
        if configs:
            clients.warn_if_nodes_hidden(nodes)
        candidates, free = _placement_view(clients, flavor)
        report = flavors.report(flavor, by_config, nodes, candidates, free)
        for warning in report.drift:
            LOG.warning('%s', warning)
        data = {
            'id': flavor['id'],
            'name': flavor['name'],
            'deploy_configs': format_columns.ListColumn(report.configs),
            'templates': format_columns.DictColumn(report.templates),
            'required_traits': format_columns.DictColumn(
                report.required_traits),
            'tagged_nodes': format_columns.DictColumn(report.tagged_nodes),
            'schedulable_nodes': report.schedulable_nodes,
            'drift': format_columns.ListColumn(report.drift),
        }
        return tuple(data), tuple(data.values())


def _placement_view(clients, flavor):
    """What the scheduler can do for the flavor now, from placement: its
    allocation candidates, and the free providers of its custom resource
    classes; (None, None), with a warning, when placement cannot be read.
    """
    from openstack import exceptions as sdk_exceptions

    from osc_deploy_config import flavors
    from osc_deploy_config import placement

    resources, required, forbidden = flavors.placement_request(flavor)
    try:
        api = placement.Placement(clients.placement)
        candidates = api.schedulable(resources, required, forbidden)
        free = api.free_providers(
            rc for rc in resources if rc.startswith('CUSTOM_'))
    except (exceptions.CommandError, sdk_exceptions.HttpException) as exc:
        LOG.warning('Schedulable nodes are unknown: placement could not be '
                    'read (%s)', getattr(exc, 'details', None) or exc)
        return None, None
    return candidates, free


class ListDeployConfigs(cli.OneLineErrors, command.Lister):
    """list of flavors' or images' deploy configs: ``listed`` gives (ID,
    name, extra specs or properties) in the order to show."""

    plural = None   # 'flavors'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            '--all', action='store_true',
            help='Also the %s that ask for no deploy config.' % self.plural)
        return parser

    def take_action(self, parsed_args):
        from osc_deploy_config import flavors

        rows = []
        for ident, name, specs in self.listed():
            configs = flavors.configs_of(specs)
            if configs or parsed_args.all:
                rows.append((ident, name, format_columns.ListColumn(
                    [str(c) for c in configs])))
        return ('ID', 'Name', 'Deploy Configs'), rows


class ListFlavorDeployConfig(ListDeployConfigs):
    _description = 'List every flavor with its deploy configs'
    plural = 'flavors'

    def listed(self):
        from osc_deploy_config import nova

        found = nova.Nova(self.app.client_manager.deploy_config.compute) \
            .flavors()
        return [(f['id'], f['name'], f.get('extra_specs'))
                for f in sorted(found, key=lambda f: f['name'])]
