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
from osc_lib import utils
from osc_lib.command import command

from osc_deploy_config.v1 import cli

LOG = logging.getLogger(__name__)
# python-ironicclient's fields (templates.FIELDS): the choices of --fields
# must be known before the domain modules are imported.
_FIELDS = ('uuid', 'name', 'steps', 'extra', 'created_at', 'updated_at')
_CONFIG_FIELDS = ('config', 'capability_traits')
_STEPS_HELP = (
    "The deploy steps. May be the path to a YAML file containing the deploy "
    "steps; OR '-', with the deploy steps being read from standard input; OR "
    "a JSON string. The value should be a list of deploy-step dictionaries; "
    "each dictionary should have keys 'interface', 'step', 'args' and "
    "'priority'."
)


def _ironic(app):
    from osc_deploy_config import ironic
    from osc_deploy_config import versions

    clients = app.client_manager.deploy_config
    return clients, ironic.Ironic(clients.baremetal, versions.DEPLOY_TEMPLATES)


def _check_bios_registry(clients, steps, extra):
    """Refuse, in one line, BIOS settings of ``steps`` that the BIOS
    registry of a node capable of the template (by ``extra``) refuses; warn
    about the capable nodes whose BIOS reports no registry, and when the
    nodes cannot be read."""
    import concurrent.futures

    from openstack import exceptions as sdk_exceptions

    from osc_deploy_config import bios_registry
    from osc_deploy_config import effects
    from osc_deploy_config import ironic
    from osc_deploy_config import tagging
    from osc_deploy_config import versions

    wanted = effects.bios_settings(steps)
    if not wanted:
        return
    api = ironic.Ironic(clients.baremetal, versions.DEPLOY_TEMPLATES,
                        versions.NODE_TRAITS, versions.NODE_RETIREMENT)
    try:
        capable = [n for n in api.nodes(('uuid', 'name', 'traits',
                                         'retired'))
                   if tagging.capable(n, {'extra': extra})]
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            registries = dict(zip(
                [tagging.node_label(n) for n in capable],
                pool.map(api.bios_registry, [n['uuid'] for n in capable]),
                strict=True))
    except (exceptions.CommandError, sdk_exceptions.HttpException) as exc:
        LOG.warning('BIOS settings not checked against the nodes\' BIOS '
                    'registry: %s', getattr(exc, 'details', None) or exc)
        return
    without = sorted(n for n, entries in registries.items()
                     if not bios_registry.has_registry(entries))
    if without:
        LOG.warning('BIOS settings not checked on %s: no BIOS registry '
                    'reported', ', '.join(without))
    found = bios_registry.problems(wanted, {
        n: entries for n, entries in registries.items()
        if n not in without})
    if found:
        raise exceptions.CommandError(bios_registry.describe(found))


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


def _check_config_options(parsed_args):
    """--requires-trait and --no-requires-trait go with a config."""
    from osc_deploy_config import deploy_config

    if parsed_args.requires_traits:
        deploy_config.validate_traits(parsed_args.requires_traits)
    if parsed_args.config:
        return deploy_config.parse_config(parsed_args.config)
    return None


class CreateDeployTemplate(cli.OneLineErrors, command.ShowOne):
    _description = 'Create a new deploy template'
    _epilog = """Examples::

  openstack baremetal deploy template create \\
      --config hyperthreading=disabled --bios-setting HyperThreading=Disabled
  openstack baremetal deploy template create --config disks=raid1 \\
      --raid-config raid1.yaml --no-requires-trait
  openstack baremetal deploy template create CUSTOM_MINE --steps steps.yaml
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
        return parser

    def take_action(self, parsed_args):
        from openstack import exceptions as sdk_exceptions

        from osc_deploy_config import templates

        config = _check_config_options(parsed_args)
        if config is None and (parsed_args.requires_traits
                               or parsed_args.no_requires_trait):
            raise exceptions.CommandError(
                '--requires-trait and --no-requires-trait need --config')
        name = templates.template_name(parsed_args.name, config)
        body = templates.create_body(
            name, templates.build_steps(
                parsed_args.steps, parsed_args.bios_settings,
                parsed_args.raid_config, self.app.stdin),
            templates.parse_extra(parsed_args.extra), config,
            config and templates.capability_traits_for(
                config, parsed_args.requires_traits,
                parsed_args.no_requires_trait),
            parsed_args.uuid)

        clients, ironic = _ironic(self.app)
        with clients.ironic_errors('create deploy templates'):
            if config:
                templates.refuse_second_template(
                    ironic.config_templates(), config, name)
            _check_bios_registry(clients, body['steps'], body.get('extra'))
            try:
                created = ironic.create_deploy_template(body)
            except sdk_exceptions.ConflictException as exc:
                raise exceptions.CommandError(
                    'Cannot create deploy template %s: %s'
                    % (name, exc.details or exc)) from None
        columns = templates.FIELDS + (
            templates.CONFIG_FIELDS if config else ())
        created = templates.with_config_fields(created)
        return columns, templates.row(created, columns)


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
        return parser

    def take_action(self, parsed_args):
        from osc_deploy_config import deploy_config
        from osc_deploy_config import templates

        if bool(parsed_args.template) == bool(parsed_args.config):
            raise exceptions.CommandError(
                'Give either a template or --config TYPE=VALUE')
        fields = list(itertools.chain.from_iterable(parsed_args.fields))
        clients, ironic = _ironic(self.app)
        with clients.ironic_errors('show deploy templates'):
            if parsed_args.config:
                config = deploy_config.parse_config(parsed_args.config)
                found = ironic.config_templates(fields=None).get(config)
                if found is None:
                    raise exceptions.CommandError(
                        'No deploy template realises the deploy config %s'
                        % config)
                found = templates.with_config_fields(found)
                found.pop('links', None)
                if fields:
                    found = {k: found[k] for k in fields}
                return tuple(found), tuple(found.values())
            template = _get(ironic, parsed_args.template, fields or None)
        template.pop('links', None)
        template = dict(sorted(template.items()))
        return tuple(template), tuple(template.values())


def _get(ironic, ident, fields=None):
    from openstack import exceptions as sdk_exceptions

    try:
        return ironic.deploy_template(ident, fields)
    except sdk_exceptions.NotFoundException:
        raise exceptions.CommandError(
            'Deploy template %s not found' % ident) from None


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
            choices=_FIELDS + _CONFIG_FIELDS,
            help="One or more deploy template fields. Only these fields "
                 "will be fetched from the server. Can not be used when "
                 "'--long' is specified. config and capability_traits come "
                 "from extra.",
        )
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
        return parser

    def take_action(self, parsed_args):
        from osc_deploy_config import deploy_config
        from osc_deploy_config import templates

        if parsed_args.limit is not None and parsed_args.limit < 0:
            raise exceptions.CommandError(
                'Expected non-negative --limit, got %s' % parsed_args.limit)
        config = config_type = None
        if parsed_args.config:
            config = deploy_config.parse_config(parsed_args.config)
        if parsed_args.config_type:
            config_type = deploy_config.parse_config_type(
                parsed_args.config_type)
        columns, fields = templates.list_columns(
            parsed_args.detail,
            list(itertools.chain.from_iterable(parsed_args.fields)),
            filtering=bool(config or config_type))

        clients, ironic = _ironic(self.app)
        with clients.ironic_errors('list deploy templates'):
            found = ironic.deploy_templates(
                detail=parsed_args.detail, fields=fields,
                limit=parsed_args.limit, marker=parsed_args.marker)
        found = [templates.with_config_fields(t) for t in found]
        if config_type:
            found = [t for t in found
                     if (t['config'] or '').split('=')[0] == config_type]
        if config:
            found = [t for t in found if t['config'] == str(config)]
        found = utils.sort_items(found, parsed_args.sort)
        return columns, (templates.row(t, columns) for t in found)


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
        from osc_deploy_config import deploy_config
        from osc_deploy_config import templates

        config = _check_config_options(parsed_args)
        if parsed_args.name:
            deploy_config.validate_template_name(parsed_args.name)
        steps = templates.build_steps(
            parsed_args.steps, parsed_args.bios_settings,
            parsed_args.raid_config, self.app.stdin)
        extra = templates.parse_extra(parsed_args.extra)
        for key in extra:
            templates.extra_path(key)
        annotating = bool(config or parsed_args.requires_traits
                          or parsed_args.no_requires_trait)
        if not (parsed_args.name or steps or extra or annotating):
            LOG.warning('Please specify what to set.')
            return

        clients, ironic = _ironic(self.app)
        with clients.ironic_errors('update deploy templates'):
            current = _get(ironic, parsed_args.template)
            if annotating:
                config, traits = templates.annotation_for_set(
                    current, config, parsed_args.requires_traits,
                    parsed_args.no_requires_trait)
                extra = templates.annotate(extra, config, traits)
                templates.refuse_second_template(
                    ironic.config_templates(), config, current['name'])
            if steps or annotating:
                _check_bios_registry(
                    clients, steps or current['steps'],
                    dict(current.get('extra') or {}, **extra))
            ironic.patch_deploy_template(current['uuid'], templates.set_patch(
                parsed_args.name, steps, extra))


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
        from osc_deploy_config import templates

        keys = parsed_args.extra or []
        for key in keys:
            templates.extra_path(key)
        if not keys and not parsed_args.config:
            LOG.warning('Please specify what to unset.')
            return
        clients, ironic = _ironic(self.app)
        with clients.ironic_errors('update deploy templates'):
            current = _get(ironic, parsed_args.template)
            patch = templates.unset_patch(current, keys, parsed_args.config)
            ironic.patch_deploy_template(current['uuid'], patch)


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
        from openstack import exceptions as sdk_exceptions

        clients, ironic = _ironic(self.app)
        failures = []
        with clients.ironic_errors('delete deploy templates'):
            for template in parsed_args.templates:
                try:
                    ironic.delete_deploy_template(template)
                except sdk_exceptions.NotFoundException:
                    failures.append('Failed to delete deploy template %s: '
                                    'not found' % template)
                    continue
                except sdk_exceptions.HttpException as exc:
                    failures.append('Failed to delete deploy template %s: %s'
                                    % (template, exc.details or exc))
                    continue
                self.app.stdout.write('Deleted deploy template %s\n'
                                      % template)
        if failures:
            raise exceptions.CommandError('\n'.join(failures))
