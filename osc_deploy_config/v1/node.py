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

from osc_lib.command import command

from osc_deploy_config.v1 import cli

# How long sync waits for placement by default: nova's ironic compute
# copies node traits every 60 s by default, and a run may take as long.
WAIT_TIMEOUT = 300
# a real server's BIOS step takes a reboot or two: minutes
PREPARE_TIMEOUT = 1800


def _node_tags():
    from osc_deploy_config.use_cases.hardware import node_tags

    return node_tags


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
        return _node_tags().statuses(self.app.client_manager.deploy_config,
                                     parsed_args.node, parsed_args.config)


class SyncNodeDeployConfig(cli.OneLineErrors, cli.Progress, command.Lister):
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
        node_tags = _node_tags()
        return node_tags.SYNC_COLUMNS, node_tags.sync(
            self.app.client_manager.deploy_config, parsed_args.templates,
            parsed_args.dry_run, parsed_args.prune, not parsed_args.no_wait,
            parsed_args.wait_timeout, self.say)



class PrepareNodeDeployConfig(cli.OneLineErrors, cli.Progress,
                              command.Lister):
    _description = (
        "Set once the vendor BIOS profiles that the deploy configs of the "
        "nodes' kind need (such as HPE's WorkloadProfile=Custom, which "
        "unlocks turbo), by manual cleaning; then tag the nodes for what "
        "they can take")
    _epilog = """Ironic 36.0 and later refuse, before any write, a BIOS setting
that the node's profile locks, even when the same step sets the profile;
sync does not offer a config to such a node, and names this command where
it helps (not where ironic caches the setting read-only under the profile,
as a Dell's: it keeps it so, and prepare refuses that node).  An
available node is managed, cleaned (the ramdisk disabled) and provided
again; a manageable node is cleaned.  A node that runs a server gets its
profile through the toggle (openstack server resize --deploy-config).

Examples::

  openstack baremetal node deploy-config prepare bm-5 --dry-run
  openstack baremetal node deploy-config prepare bm-5 --clear-job-queue
  openstack baremetal node deploy-config prepare \\
      --resource-class baremetal-bronze --config turbo=disabled
"""

    def get_parser(self, prog_name):
        parser = cli.keep_epilog_lines(super().get_parser(prog_name))
        parser.add_argument('nodes', metavar='<node>', nargs='*',
                            help='Nodes to prepare (name or UUID).')
        parser.add_argument(
            '--resource-class', metavar='<class>',
            help='Prepare every node of this resource class instead.')
        parser.add_argument(
            '--config', metavar='<type=value>', action='append',
            default=[], dest='configs',
            help='Only for this deploy config (repeatable); default: every '
                 'config with a template for the node\'s kind.')
        parser.add_argument('--dry-run', action='store_true',
                            help='Show what each node needs, change '
                                 'nothing.')
        parser.add_argument(
            '--clear-job-queue', action='store_true',
            help='Delete the iDRAC\'s jobs first, in the same clean '
                 '(ironic\'s clear_job_queue step; idrac-redfish '
                 'management): a job an interrupted step left makes the '
                 'iDRAC refuse every later BIOS change (SYS011). A node '
                 'with nothing to set is cleaned for that alone.')
        parser.add_argument(
            '--no-wait', action='store_true',
            help='Return once ironic has the tags, without waiting for '
                 'placement to show them.')
        parser.add_argument(
            '--wait-timeout', metavar='<seconds>', type=int,
            default=PREPARE_TIMEOUT,
            help='Bound of each wait, for ironic (a clean reboots the node '
                 'once a profile) and then placement (default %d).'
                 % PREPARE_TIMEOUT)
        return parser

    # the error to raise once the rows are out (``run``)
    not_prepared = None

    def take_action(self, parsed_args):
        from osc_deploy_config.use_cases.hardware import node_prepare

        try:
            return node_prepare.prepare(
                self.app.client_manager.deploy_config, parsed_args.nodes,
                parsed_args.resource_class, parsed_args.configs,
                parsed_args.dry_run, not parsed_args.no_wait,
                parsed_args.wait_timeout, self.say,
                clear_queue=parsed_args.clear_job_queue)
        except node_prepare.NotPrepared as exc:
            self.not_prepared = exc
            return exc.rows

    def run(self, parsed_args):
        """The rows, then the exit status: 1 when a node was not
        prepared."""
        code = super().run(parsed_args)
        if self.not_prepared is not None:
            raise self.not_prepared
        return code

