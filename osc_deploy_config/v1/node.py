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

"""``openstack baremetal node deploy-config list|sync``: which nodes can
take which config, and the template traits that tell the scheduler."""

import logging

from osc_lib import exceptions
from osc_lib.command import command

from osc_deploy_config.v1 import cli

LOG = logging.getLogger(__name__)


def _load(app):
    """The config templates and every node: two listings, nothing more."""
    from osc_deploy_config import ironic
    from osc_deploy_config import tagging
    from osc_deploy_config import versions

    clients = app.client_manager.deploy_config
    api = ironic.Ironic(clients.baremetal, versions.DEPLOY_TEMPLATES,
                        versions.NODE_TRAITS, versions.NODE_RETIREMENT)
    with clients.ironic_errors('list deploy templates and nodes'):
        templates = sorted(api.config_templates().values(),
                           key=lambda t: t['name'])
        nodes = api.nodes(tagging.NODE_FIELDS)
    clients.warn_if_nodes_hidden(nodes)
    return clients, api, templates, nodes


def _select_templates(templates, names):
    """The templates named (by name or UUID); all when none is named."""
    if not names:
        return templates
    known = {t['name']: t for t in templates}
    known.update((t['uuid'], t) for t in templates)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise exceptions.CommandError(
            'No deploy template with a deploy config named %s'
            % ', '.join(unknown))
    return list({known[n]['uuid']: known[n] for n in names}.values())


class ListNodeDeployConfig(cli.OneLineErrors, command.Lister):
    _description = ('List which nodes can take which deploy config '
                    '(capable), and which carry its template trait (tagged)')

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('--node', metavar='<node>',
                            help='Only this node (name or UUID).')
        parser.add_argument('--config', metavar='<type=value>',
                            help='Only the template of this deploy config.')
        return parser

    def take_action(self, parsed_args):
        from osc_deploy_config import deploy_config
        from osc_deploy_config import tagging

        config = deploy_config.parse_config(parsed_args.config) \
            if parsed_args.config else None
        _, _, templates, nodes = _load(self.app)
        if config:
            templates = [t for t in templates
                         if deploy_config.config_of(t['extra']) == config]
            if not templates:
                raise exceptions.CommandError(
                    'No deploy template realises the deploy config %s'
                    % config)
        if parsed_args.node:
            nodes = [n for n in nodes
                     if parsed_args.node in (n['uuid'], n.get('name'))]
            if not nodes:
                raise exceptions.CommandError(
                    'Node %s not found' % parsed_args.node)
        columns = ('Node', 'Template', 'Config', 'Capable', 'Tagged',
                   'In Use', 'Maintenance', 'Provision State')
        return columns, [tuple(s) for s in tagging.statuses(nodes,
                                                            templates)]


class SyncNodeDeployConfig(cli.OneLineErrors, command.Lister):
    _description = (
        'Tag every node capable of a deploy config with its template trait, '
        'and untag the nodes no longer capable (unless their instance uses '
        'it)')
    _epilog = """Examples::

  openstack baremetal node deploy-config sync --dry-run
  openstack baremetal node deploy-config sync \\
      CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_DISABLED
"""

    def get_parser(self, prog_name):
        parser = cli.keep_epilog_lines(super().get_parser(prog_name))
        parser.add_argument(
            'templates', metavar='<template>', nargs='*',
            help='Only these deploy templates (name or UUID); default: '
                 'every template with a deploy config.')
        parser.add_argument('--dry-run', action='store_true',
                            help='Show the changes, make none.')
        return parser

    def take_action(self, parsed_args):
        from openstack import exceptions as sdk_exceptions

        from osc_deploy_config import tagging

        clients, api, templates, nodes = _load(self.app)
        templates = _select_templates(templates, parsed_args.templates)
        changes = tagging.plan_sync(nodes, templates)
        rows, failures = [], []
        for change in changes:
            action = change.action
            if parsed_args.dry_run and action != tagging.KEEP:
                action = 'would %s' % action
            elif action != tagging.KEEP:
                write = (api.add_node_trait if action == tagging.ADD
                         else api.remove_node_trait)
                try:
                    with clients.ironic_errors('change node traits'):
                        write(change.node_uuid, change.template)
                except sdk_exceptions.HttpException as exc:
                    failures.append('%s %s on %s: %s' % (
                        action, change.template, change.node,
                        exc.details or exc))
                    action = 'failed to %s' % action
                else:
                    action = 'added' if action == tagging.ADD else 'removed'
            rows.append((change.node, change.template, action,
                         change.reason))
        if failures:
            for failure in failures:
                LOG.error('Failed to %s', failure)
            writes = sum(1 for c in changes if c.action != tagging.KEEP)
            raise exceptions.CommandError(
                '%d of %d trait changes failed; rerun to retry'
                % (len(failures), writes))
        return ('Node', 'Template', 'Action', 'Reason'), rows
