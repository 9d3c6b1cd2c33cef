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
# How long sync waits for placement by default: nova's ironic compute
# copies node traits every 60 s by default, and a run may take as long.
WAIT_TIMEOUT = 300


def _load(app):
    """The config templates, the names of every template, and every node:
    two listings, nothing more."""
    from osc_deploy_config import ironic
    from osc_deploy_config import tagging
    from osc_deploy_config import templates
    from osc_deploy_config import versions

    clients = app.client_manager.deploy_config
    api = ironic.Ironic(clients.baremetal, versions.DEPLOY_TEMPLATES,
                        versions.NODE_TRAITS, versions.NODE_RETIREMENT)
    with clients.ironic_errors('list deploy templates and nodes'):
        every = api.deploy_templates(fields=['uuid', 'name', 'extra'],
                                     limit=0)
        nodes = api.nodes(tagging.NODE_FIELDS)
    clients.warn_if_nodes_hidden(nodes)
    annotated = sorted(templates.by_config(every).values(),
                       key=lambda t: t['name'])
    return clients, api, annotated, {t['name'] for t in every}, nodes


def _placement_view(clients, nodes):
    """{provider UUID: traits} of the providers placement has free for the
    nodes' resource classes (one request per class); None, with a warning,
    when placement cannot be read."""
    from openstack import exceptions as sdk_exceptions

    from osc_deploy_config import placement
    from osc_deploy_config import tagging

    classes = {tagging.resource_class(n) for n in nodes} - {None}
    try:
        view = placement.Placement(clients.placement).free_providers(classes)
    except (exceptions.CommandError, sdk_exceptions.HttpException) as exc:
        LOG.warning('Schedulable is unknown: placement could not be read '
                    '(%s)', getattr(exc, 'details', None) or exc)
        return None
    return view


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
        _, _, templates, _, nodes = _load(self.app)
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
                   'In Use', 'Maintenance', 'Provision State',
                   'Schedulable')
        view = _placement_view(self.app.client_manager.deploy_config, nodes)
        return columns, [tuple(s) for s in tagging.statuses(
            nodes, templates, view)]


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
        parser.add_argument(
            '--prune', action='store_true',
            help='Also remove the traits of deleted templates (named '
                 'CUSTOM_DEPLOY_CONFIG_*) from the nodes, except where the '
                 'node\'s instance was deployed with them; without it, they '
                 'are reported as stale. Not with template names.')
        parser.add_argument(
            '--no-wait', action='store_true',
            help='Return once ironic has the tags. By default sync waits '
                 'until placement, which the scheduler reads, shows them: '
                 'nova\'s ironic compute copies node traits there on its '
                 'periodic task.')
        parser.add_argument(
            '--wait-timeout', metavar='<seconds>', type=int,
            default=WAIT_TIMEOUT,
            help='How long to wait for placement (default %d); then fail '
                 'naming the changes it does not show.' % WAIT_TIMEOUT)
        return parser

    def take_action(self, parsed_args):
        from openstack import exceptions as sdk_exceptions

        from osc_deploy_config import converge
        from osc_deploy_config import placement
        from osc_deploy_config import tagging

        if parsed_args.prune and parsed_args.templates:
            raise exceptions.CommandError(
                '--prune removes the traits of deleted templates from every '
                'node: give it no template names')
        if parsed_args.wait_timeout < 0:
            raise exceptions.CommandError(
                'Expected non-negative --wait-timeout, got %d'
                % parsed_args.wait_timeout)

        clients, api, templates, names, nodes = _load(self.app)
        changes = tagging.plan_sync(
            nodes, _select_templates(templates, parsed_args.templates))
        if not parsed_args.templates:
            changes += tagging.plan_prune(nodes, names, parsed_args.prune)
        rows, failures, written = [], [], []
        for change in changes:
            action = change.action
            if action in (tagging.KEEP, tagging.STALE):
                pass
            elif parsed_args.dry_run:
                action = 'would %s' % action
            else:
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
                    written.append(change)
                    action = 'added' if action == tagging.ADD else 'removed'
            rows.append((change.node, change.template, action,
                         change.reason))
        if failures:
            for failure in failures:
                LOG.error('Failed to %s', failure)
            writes = sum(1 for c in changes
                         if c.action in (tagging.ADD, tagging.REMOVE))
            raise exceptions.CommandError(
                '%d of %d trait changes failed; rerun to retry'
                % (len(failures), writes))
        if written and not parsed_args.no_wait:
            try:
                converge.wait_for_placement(
                    placement.Placement(clients.placement), written,
                    parsed_args.wait_timeout, self.say)
            except sdk_exceptions.ForbiddenException:
                # e.g. a system-scoped token: placement wants a project
                LOG.warning('Placement refused these credentials (403): '
                            'sync cannot tell when the scheduler sees the '
                            'tags; a project-scoped admin can (openstack '
                            'baremetal node deploy-config list, column '
                            'Schedulable).')
        return ('Node', 'Template', 'Action', 'Reason'), rows

    def say(self, text):
        """Progress: on stderr, never in the command's output."""
        self.app.stderr.write(text + '\n')
        self.app.stderr.flush()
