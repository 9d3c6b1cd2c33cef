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

"""``openstack baremetal deploy template ...``

A strict superset of python-ironicclient's commands of the same names: the
same arguments give the same output, and the deploy-config options add the
config and capability-trait columns.  Validation happens before the first
request.
"""

import itertools
import logging

from osc_lib import exceptions
from osc_lib.command import command

from osc_deploy_config.v1 import cli

LOG = logging.getLogger(__name__)
# python-ironicclient's fields (templates.FIELDS): the choices of --fields
# must be known before the domain modules are imported.
_FIELDS = ('uuid', 'name', 'steps', 'extra', 'created_at', 'updated_at')
_CONFIG_FIELDS = ('config', 'capability_traits', 'resource_class')
_SET_FIELDS = ('members', 'current')
# What a create by vendor-neutral config says, per resource class.
_VOCABULARY_FIELDS = ('config', 'templates', 'settings', 'notes',
                      'unmatched', 'created')
_STEPS_HELP = (
    "The deploy steps. May be the path to a YAML file containing the deploy "
    "steps; OR '-', with the deploy steps being read from standard input; OR "
    "a JSON string. The value should be a list of deploy-step dictionaries; "
    "each dictionary should have keys 'interface', 'step', 'args' and "
    "'priority'."
)


def _add_config_options(parser, creating):
    parser.add_argument(
        '--config',
        metavar='<type=value>',
        help='The deploy config this template realises, e.g. '
             'hyperthreading=enabled. Stored in the template\'s extra '
             '(deploy_config_type, deploy_config_value)%s.'
             % ('; the name defaults to CUSTOM_DEPLOY_CONFIG_<TYPE>_<VALUE>'
                if creating else ''),
    )
    _add_resource_class(parser, creating)
    requires = parser.add_mutually_exclusive_group()
    requires.add_argument(
        '--requires-trait',
        metavar='<trait>',
        action='append',
        dest='requires_traits',
        help='A trait a node must have to take this config (repeat for '
             'several). Default: the built-in one of well-known types '
             '(hyperthreading: HW_CPU_HYPERTHREADING).',
    )
    requires.add_argument(
        '--no-requires-trait',
        action='store_true',
        help='Any node can take this config.',
    )
    parser.add_argument(
        '--bios-setting',
        metavar='<name=value>',
        action='append',
        dest='bios_settings',
        help='A BIOS setting to apply (repeat for several): adds a '
             'bios.apply_configuration step, priority 150.',
    )
    parser.add_argument(
        '--raid-config',
        metavar='<file>',
        help='A JSON or YAML file with a target RAID configuration '
             '({"logical_disks": [...]}): adds a raid.apply_configuration '
             'step, priority 150.',
    )


def _add_resource_class(parser, creating):
    parser.add_argument(
        '--resource-class',
        metavar='<class>',
        help='The template serves the nodes of this resource class alone '
             '(hardware whose BIOS names its settings its own way); the '
             'flavors of that class ask for it. Stored in extra '
             '(deploy_config_resource_class)%s.' % (
                 '; the name gets _FOR_<CLASS>' if creating else ''),
    )


def _given(parsed_args, stdin):
    """What the user gave to create or change a template, as given."""
    from osc_deploy_config.domain.configs import templates

    return templates.TemplateInput(
        getattr(parsed_args, 'name', None), getattr(parsed_args, 'uuid', None),
        parsed_args.steps, parsed_args.bios_settings,
        parsed_args.raid_config, parsed_args.extra, parsed_args.config,
        parsed_args.requires_traits, parsed_args.no_requires_trait, stdin,
        parsed_args.resource_class)


def _templates():
    from osc_deploy_config.use_cases.configs import deploy_templates

    return deploy_templates


class CreateDeployTemplate(cli.OneLineErrors, command.ShowOne):
    _description = 'Create a new deploy template'
    _epilog = """Examples::

  openstack baremetal deploy template create \\
      --config hyperthreading=disabled --bios-setting LogicalProc=Disabled
  openstack baremetal deploy template create --config disks=raid1 \\
      --raid-config raid1.yaml --no-requires-trait
  openstack baremetal deploy template create CUSTOM_MINE --steps steps.yaml

A config of the vocabulary (hyperthreading, virtualization, sriov, turbo:
enabled or disabled) needs no vendor names: the BIOS registry of the
capable nodes tells each resource class's setting, and a template is made
for each class, with the vendor profile's custom value where a profile
locks the setting (notes says what else that profile governs). A
vocabulary file adds names (--os-deploy-config-vocabulary)::

  openstack baremetal deploy template create --config hyperthreading=enabled \
      --dry-run
  openstack baremetal deploy template create --config hyperthreading=enabled
"""

    def get_parser(self, prog_name):
        parser = cli.keep_epilog_lines(super().get_parser(prog_name))
        parser.add_argument(
            'name',
            metavar='<name>',
            nargs='?',
            help='Unique name for this deploy template. Must be a valid '
                 'trait name. Optional with --config.',
        )
        parser.add_argument('--uuid', metavar='<uuid>',
                            help='UUID of the deploy template.')
        parser.add_argument(
            '--extra',
            metavar='<key=value>',
            action='append',
            help='Record arbitrary key/value metadata. Can be specified '
                 'multiple times.',
        )
        parser.add_argument(
            '--steps', metavar='<steps>',
            help=_STEPS_HELP + ' Required unless --bios-setting or '
                               '--raid-config give the steps.',
        )
        _add_config_options(parser, creating=True)
        parser.add_argument(
            '--dry-run', action='store_true',
            help='Check everything, and show what would be created (per '
                 'resource class, for a config of the vocabulary); create '
                 'nothing.')
        return parser

    def take_action(self, parsed_args):
        created = _templates().create(self.app.client_manager.deploy_config,
                                      _given(parsed_args, self.app.stdin),
                                      parsed_args.dry_run)
        if 'templates' in created:      # one per resource class
            columns = _VOCABULARY_FIELDS
        else:
            columns = _FIELDS + (_CONFIG_FIELDS if parsed_args.config
                                 else ())
        return columns, tuple(created.get(c) for c in columns)


class ShowDeployTemplate(cli.OneLineErrors, command.ShowOne):
    _description = 'Show baremetal deploy template details.'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            'template',
            metavar='<template>',
            nargs='?',
            help='Name or UUID of the deploy template (or use --config).',
        )
        parser.add_argument(
            '--fields',
            nargs='+',
            dest='fields',
            metavar='<field>',
            action='append',
            choices=_FIELDS,
            default=[],
            help='One or more deploy template fields. Only these fields '
                 'will be fetched from the server.',
        )
        parser.add_argument(
            '--config',
            metavar='<type=value>',
            help='Show the template of this deploy config, with its config '
                 'and capability traits.',
        )
        parser.add_argument(
            '--resource-class',
            metavar='<class>',
            help='With --config: the template of this resource class (or, '
                 'without one of its own, the one for every kind).',
        )
        return parser

    def take_action(self, parsed_args):
        found = _templates().show(
            self.app.client_manager.deploy_config, parsed_args.template,
            parsed_args.config,
            list(itertools.chain.from_iterable(parsed_args.fields)),
            parsed_args.resource_class)
        return tuple(found), tuple(found.values())


def _add_list_display_options(parser):
    """--long or --fields, as python-ironicclient's list."""
    display = parser.add_mutually_exclusive_group()
    display.add_argument(
        '--long',
        dest='detail',
        action='store_true',
        default=False,
        help='Show detailed information about deploy templates.',
    )
    display.add_argument(
        '--fields',
        nargs='+',
        dest='fields',
        metavar='<field>',
        action='append',
        default=[],
        choices=_FIELDS + _CONFIG_FIELDS + _SET_FIELDS,
        help="One or more deploy template fields. Only these fields "
             "will be fetched from the server. Can not be used when "
             "'--long' is specified. config and capability_traits come "
             "from extra; members and current are a set's (its configs, "
             "and whether it is built from its members as they are now), "
             "which --long adds where the list holds a set.",
    )


def _add_config_filters(parser):
    """Our filters: --config-type or --config."""
    filters = parser.add_mutually_exclusive_group()
    filters.add_argument(
        '--config-type',
        metavar='<type>',
        help='Only templates of deploy configs of this type; adds the '
             'config and capability_traits columns.',
    )
    filters.add_argument(
        '--config',
        metavar='<type=value>',
        help='Only the template of this deploy config; adds the config '
             'and capability_traits columns.',
    )


class ListDeployTemplate(cli.OneLineErrors, command.Lister):
    _description = 'List baremetal deploy templates.'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            '--limit',
            metavar='<limit>',
            type=int,
            help='Maximum number of deploy templates to return per request, '
                 '0 for no limit. Default is the maximum number used by the '
                 'Baremetal API Service.',
        )
        parser.add_argument(
            '--marker',
            metavar='<template>',
            help='DeployTemplate UUID (for example, of the last deploy '
                 'template in the list from a previous request). Returns the '
                 'list of deploy templates after this UUID.',
        )
        parser.add_argument(
            '--sort',
            metavar='<key>[:<direction>]',
            help='Sort output by specified deploy template fields and '
                 'directions (asc or desc) (default: asc). Multiple fields '
                 'and directions can be specified, separated by comma.',
        )
        _add_list_display_options(parser)
        _add_config_filters(parser)
        return parser

    def take_action(self, parsed_args):
        return _templates().list_templates(
            self.app.client_manager.deploy_config, parsed_args.detail,
            itertools.chain.from_iterable(parsed_args.fields),
            parsed_args.limit, parsed_args.marker, parsed_args.sort,
            parsed_args.config, parsed_args.config_type)


class SetDeployTemplate(cli.OneLineErrors, command.Command):
    _description = 'Set baremetal deploy template properties.'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('template', metavar='<template>',
                            help='Name or UUID of the deploy template')
        parser.add_argument(
            '--name', metavar='<name>',
            help='Set unique name of the deploy template. Must be a valid '
                 'trait name.')
        parser.add_argument('--steps', metavar='<steps>', help=_STEPS_HELP)
        parser.add_argument(
            '--extra',
            metavar='<key=value>',
            action='append',
            help='Extra to set on this baremetal deploy template (repeat '
                 'option to set multiple extras).',
        )
        _add_config_options(parser, creating=False)
        return parser

    def take_action(self, parsed_args):
        if not _templates().update(self.app.client_manager.deploy_config,
                                   parsed_args.template,
                                   _given(parsed_args, self.app.stdin)):
            LOG.warning('Please specify what to set.')


class UnsetDeployTemplate(cli.OneLineErrors, command.Command):
    _description = 'Unset baremetal deploy template properties.'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('template', metavar='<template>',
                            help='Name or UUID of the deploy template')
        parser.add_argument(
            '--extra',
            metavar='<key>',
            action='append',
            help='Extra to unset on this baremetal deploy template (repeat '
                 'option to unset multiple extras).',
        )
        parser.add_argument(
            '--config',
            action='store_true',
            help='Remove the deploy config annotation (the deploy_config_* '
                 'keys of extra); the steps stay.',
        )
        return parser

    def take_action(self, parsed_args):
        keys = parsed_args.extra or []
        if not keys and not parsed_args.config:
            LOG.warning('Please specify what to unset.')
            return
        _templates().unset(self.app.client_manager.deploy_config,
                           parsed_args.template, keys, parsed_args.config)


class DeleteDeployTemplate(cli.OneLineErrors, command.Command):
    _description = 'Delete deploy template(s).'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            'templates',
            metavar='<template>',
            nargs='+',
            help='Name(s) or UUID(s) of the deploy template(s) to delete.',
        )
        return parser

    def take_action(self, parsed_args):
        deleted, failures = _templates().delete(
            self.app.client_manager.deploy_config, parsed_args.templates)
        for template in deleted:
            self.app.stdout.write('Deleted deploy template %s\n' % template)
        if failures:
            raise exceptions.CommandError('\n'.join(failures))
