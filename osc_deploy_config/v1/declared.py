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

"""Configs as code: ``openstack deploy-config export | diff | apply``,
over one YAML file of the declared state (see doc/source/user/declared)."""

import argparse

from osc_lib import exceptions
from osc_lib.command import command

from osc_deploy_config.v1 import cli


class _OneFile(argparse.Action):
    """``-f`` given once: a second one is refused (its objects would not
    be merged, and with ``--prune`` what only the first declares would
    go)."""

    def __call__(self, parser, namespace, values, option_string=None):
        if getattr(namespace, self.dest, None) is not None:
            parser.error('%s is given twice (%s, %s): give one file, the '
                         'whole declared state' % (
                             option_string, getattr(namespace, self.dest),
                             values))
        setattr(namespace, self.dest, values)


def _file_option(parser, required=True):
    """``-f FILE`` (as ``kubectl``; ``-`` reads standard input), taking
    ``-f`` from cliff's ``--format``, which keeps its long form."""
    taken = parser._option_string_actions.pop('-f', None)
    if taken is not None:
        taken.option_strings.remove('-f')
    parser.add_argument('-f', '--file', metavar='<file>', dest='file',
                        required=required, action=_OneFile,
                        help='The declared state (YAML; see the format in '
                             'the user guide); - reads it from standard '
                             'input. Given once.')
    parser.add_argument('--prune', action='store_true',
                        help='Also delete the templates and withdraw the '
                             'grants of this plugin that the file no longer '
                             'lists (flavors and images the file does not '
                             'list are left alone).')
    parser.add_argument('--prune-all', action='store_true',
                        help='With --prune: allow it to delete every '
                             'template or withdraw every grant of this '
                             'plugin (refused otherwise, as a file emptied '
                             'by mistake).')
    return parser


def _pruning(parsed_args):
    """(prune, prune_all) of the options, refused apart."""
    if parsed_args.prune_all and not parsed_args.prune:
        raise exceptions.CommandError('--prune-all goes with --prune')
    return parsed_args.prune, parsed_args.prune_all


def _refuse_apart(parsed_args):
    """apply's options that do not go together, or out of range: refused
    before any read."""
    for option in ('rollout', 'break_lock'):
        if getattr(parsed_args, option) and parsed_args.dry_run:
            raise exceptions.CommandError(
                '--%s and --dry-run: give one of them (a dry run takes no '
                'lock and rolls nothing out)' % option.replace('_', '-'))
    if parsed_args.max_unavailable < 1 or parsed_args.max_failures < 0:
        # refused before any write, not once the rollout starts
        raise exceptions.CommandError(
            'Expected --max-unavailable of 1 or more and --max-failures of 0 '
            'or more, got %d and %d' % (parsed_args.max_unavailable,
                                        parsed_args.max_failures))


class ExportDeclared(cli.OneLineErrors, command.Command):
    _description = (
        'Write the cloud\'s declared state: the configs this plugin\'s '
        'templates offer (per resource class where a kind has its own), '
        'the configs each flavor and image asks for, and each project\'s '
        'grants; names only, keys in a fixed order, lists sorted.')
    _epilog = """Examples::

  openstack deploy-config export > deploy-config.yaml
  openstack deploy-config export -f deploy-config.yaml
  openstack deploy-config export -o json
"""

    def get_parser(self, prog_name):
        parser = cli.keep_epilog_lines(super().get_parser(prog_name))
        parser.add_argument('-f', '--file', metavar='<file>',
                            help='Write it to this file (default: standard '
                                 'output).')
        parser.add_argument('-o', '--output', choices=('yaml', 'json'),
                            default='yaml',
                            help='yaml (default) or json, which the other '
                                 'commands read as well (JSON is YAML).')
        return parser

    def take_action(self, parsed_args):
        from osc_deploy_config.use_cases.declared import reading

        text = reading.export(self.app.client_manager.deploy_config,
                              parsed_args.output)
        if not parsed_args.file:
            self.app.stdout.write(text)
            return
        try:
            with open(parsed_args.file, 'w', encoding='utf-8') as f:
                f.write(text)
        except OSError as exc:
            raise exceptions.CommandError('Cannot write %s: %s' % (
                parsed_args.file, exc)) from None


class DiffDeclared(cli.OneLineErrors, cli.Progress, command.Lister):
    _description = (
        'What apply would change to make the cloud equal to the file: a '
        'row per object and field, create, update or delete, with the '
        'value before and after. Exit status 0: nothing to change; 1: '
        'changes; 2 or more: an error (as kubectl diff).')
    _epilog = """Examples::

  openstack deploy-config diff -f deploy-config.yaml
  openstack deploy-config diff -f deploy-config.yaml --prune --format json
  openstack deploy-config diff -f deploy-config.yaml -o unified
"""

    # Authenticated by run (_authenticate), where a failure exits 2: the
    # shell's own authentication, before run, exits 1 (cliff's
    # App.run_subcommand).
    auth_required = False

    def get_parser(self, prog_name):
        parser = _file_option(cli.keep_epilog_lines(
            super().get_parser(prog_name)))
        parser.add_argument(
            '-o', '--output', choices=('rows', 'unified'), default='rows',
            help='rows (default: a row per change, in --format) or unified: '
                 'a unified diff of the cloud\'s export against the file, '
                 'over the objects the file speaks of (what apply derives, '
                 'sets, node tags, runbooks, is in the rows only).')
        return parser

    def take_action(self, parsed_args):
        from osc_deploy_config.domain.declared import changes
        from osc_deploy_config.use_cases.declared import planning

        plan = planning.plan(self.app.client_manager.deploy_config,
                             parsed_args.file, *_pruning(parsed_args))
        self.changed = bool(plan.changes)
        if not plan.changes:
            self.say('No changes: the cloud is equal to %s'
                     % parsed_args.file)
        if parsed_args.output == 'unified':
            text = changes.unified(plan.declared, plan.cloud.current,
                                   parsed_args.prune, plan.filename)
            self.app.stdout.write(text)
            if plan.changes and not text:
                self.say('%d change(s) that apply derives, not in the file '
                         '(sets, node tags, runbooks, required traits): '
                         'diff without -o unified shows them'
                         % len(plan.changes))
        return changes.COLUMNS, changes.rows(plan.changes)

    def produce_output(self, parsed_args, column_names, data):
        """The rows, unless the unified diff was written instead."""
        if parsed_args.output == 'unified':
            return 0
        return super().produce_output(parsed_args, column_names, data)

    def run(self, parsed_args):
        """Exit 0 (no change), 1 (changes) or 2 (an error)."""
        self.changed = False
        try:
            self._authenticate()
            super().run(parsed_args)
        except Exception as exc:    # noqa: BLE001 - exit 2, as kubectl
            # the traceback too with --debug, as cliff shows it
            debug = getattr(getattr(self.app, 'options', None), 'debug',
                            False)
            # in one line (each missing auth setting has a line of its own)
            self.app.LOG.error('; '.join(str(exc).splitlines()),
                               exc_info=bool(debug))
            return 2
        return 1 if self.changed else 0

    def _authenticate(self):
        """Authenticate as the shell does before a command that needs it:
        its hook (osc-lib's prepare_to_run_command) checks the cloud's
        settings, loads the auth plugin and gets the token."""
        self.auth_required = True
        self.app.prepare_to_run_command(self)


class ApplyDeclared(cli.OneLineErrors, cli.Progress, cli.RolloutTable,
                    command.Lister):
    _description = (
        'Make the cloud equal to the file, in dependency order (templates, '
        'node sync until the scheduler sees the tags, flavors and images, '
        'grants; with --prune the dropped templates last), through the same '
        'checks as the single commands, all made before the first write. '
        'Lists the running servers whose flavor or image now asks for other '
        'configs, with the rollout that brings them in line (--rollout runs '
        'it). Safe to rerun: what is already as the file says is not '
        'written again.')
    _epilog = """Examples::

  openstack deploy-config apply -f deploy-config.yaml --dry-run
  openstack deploy-config apply -f deploy-config.yaml --prune
  openstack deploy-config apply -f deploy-config.yaml --rollout \\
      --max-unavailable 2
"""

    def get_parser(self, prog_name):
        parser = _file_option(cli.keep_epilog_lines(
            super().get_parser(prog_name)))
        parser.add_argument('--dry-run', action='store_true',
                            help='Check everything and say what would be '
                                 'written; write nothing.')
        parser.add_argument(
            '--break-lock', action='store_true',
            help='Take the lock that one apply at a time holds even where '
                 'another holds it: only when that one was killed (its '
                 'holder and age are in the refusal).')
        parser.add_argument(
            '--rollout', action='store_true',
            help='Then roll the outdated servers out, as openstack server '
                 'deploy-config set does; its table is the output, and '
                 'its exit status the command\'s.')
        parser.add_argument(
            '--max-unavailable', metavar='<count>', type=int, default=1,
            help='With --rollout: at most this many servers down at once, '
                 'those already down included (default 1).')
        parser.add_argument(
            '--max-failures', metavar='<count>', type=int, default=0,
            help='With --rollout: after more failures than this, no new '
                 'server starts (default 0).')
        cli.add_toggle_options(parser, whole_command=True)
        return parser

    def take_action(self, parsed_args):
        from osc_deploy_config.use_cases.declared import applying

        _refuse_apart(parsed_args)
        self.applied = applying.Applied(
            self.app.client_manager.deploy_config, self.say,
            parsed_args.rollout, parsed_args.max_unavailable,
            parsed_args.max_failures, **cli.toggle_options(parsed_args))
        if parsed_args.rollout:     # Ctrl-C as the rollouts take it
            self.hold_interrupts(self.applied.current)
        return self.applied.apply(parsed_args.file, *_pruning(parsed_args),
                                  dry_run=parsed_args.dry_run,
                                  break_lock=parsed_args.break_lock)

    def rollout_printed(self):
        """With --rollout, the rollouts' table."""
        if self.applied is None or not self.applied.rollouts:
            return None
        return self.applied.current

    def run(self, parsed_args):
        """With --rollout, the rollout's exit status: 130 after Ctrl-C, 1
        unless every outdated server got there."""
        self.applied = None
        code = super().run(parsed_args)
        if self.applied is not None and self.applied.failed_rollout():
            raise exceptions.CommandError(self.applied.failed_rollout())
        return code
