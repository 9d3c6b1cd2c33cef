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

"""What our commands print for help and for argument errors."""

import logging
import re
import threading

# What ``--allow-step`` names: a deploy step, as ironic's schema has it.
_STEP_NAME = re.compile(r'[a-z_]+\.[A-Za-z0-9_]+')


def keep_epilog_lines(parser):
    """Let the parser print a multi-line epilog (examples) as written."""

    class KeepLines(parser.formatter_class):
        def _fill_text(self, text, width, indent):
            if '\n' not in text:
                return super()._fill_text(text, width, indent)
            return ''.join(indent + line
                           for line in text.splitlines(keepends=True))

    parser.formatter_class = KeepLines
    return parser


class Progress:
    """Progress lines (a mixin for command classes): on stderr, never in
    the command's output, one whole line at a time from any thread."""

    _said = threading.Lock()

    def say(self, text):
        with self._said:
            self.app.stderr.write(text + '\n')
            self.app.stderr.flush()


class RolloutTable:
    """A rollout's table (a mixin for command classes): ``take_action``
    holds Ctrl-C as the rollout takes it (``hold_interrupts``) until the
    table's last line, and a Ctrl-C while the table prints waits for its
    end (the exit status says it).  ``rollout_printed``: the rollout (or
    ``signals.Current``) whose table is printed, or None."""

    def rollout_printed(self):
        return None

    def hold_interrupts(self, rollout):
        """From now to the table's last line, Ctrl-C as ``rollout`` takes
        it (``signals.interrupts``)."""
        from osc_deploy_config.use_cases.fleet import signals

        self._interrupts.enter_context(signals.interrupts(rollout))

    def produce_output(self, parsed_args, column_names, data):
        rollout = self.rollout_printed()
        if rollout is None:
            return super().produce_output(parsed_args, column_names, data)
        from osc_deploy_config.use_cases.fleet import signals

        with signals.shielded(rollout, final=True):
            return super().produce_output(parsed_args, column_names, data)

    def run(self, parsed_args):
        import contextlib

        with contextlib.ExitStack() as self._interrupts:
            return super().run(parsed_args)


class OneLineErrors:
    """A failure in one line (a mixin for command classes): an argument
    error instead of argparse's usage block, and a service that cannot be
    reached without keystoneauth's warnings before the error."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        demote_keystoneauth_warnings()
        return one_line_errors(parser)


# keystoneauth warns when version discovery fails, then falls back to the
# URL it has, and before every retry of a request: a request that then
# succeeds is no news, and a service that stays down gets our own line.
_DEMOTED_LOGGERS = ('keystoneauth.discover',
                    'keystoneauth.identity.generic.base',
                    'keystoneauth.session')


class _WarningToDebug(logging.Filter):
    def filter(self, record):
        if record.levelno == logging.WARNING:
            if not logging.getLogger().isEnabledFor(logging.DEBUG):
                return False
            record.levelno, record.levelname = logging.DEBUG, 'DEBUG'
        return True


def demote_keystoneauth_warnings():
    """Show keystoneauth's discovery fallback and retry warnings with
    --debug only."""
    for name in _DEMOTED_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, _WarningToDebug) for f in logger.filters):
            logger.addFilter(_WarningToDebug())


def add_toggle_options(parser, whole_command=False):
    """The options of every toggle: the one server's (``server resize
    --deploy-config``) and a rollout's (``whole_command``: its timeout
    bounds the command)."""
    parser.add_argument(
        '--allow-step', metavar='<interface.step>', action='append',
        dest='allowed_steps', default=[],
        help='With --deploy-config, on bare metal: run this step on the '
             'running server although osc-deploy-config does not know it to '
             'be safe there (repeat for several). A step known to destroy '
             'data is never run.')
    parser.add_argument(
        '--wait-timeout', metavar='<seconds>', type=int, default=None,
        help='End the whole command within this many seconds: no server '
             'starts after it, the waits of those in flight end, and every '
             'row is printed (default: no bound; each toggle\'s waits end '
             'after 1800 s). What still runs goes on; a rerun finishes it.'
        if whole_command else
        'With --deploy-config: give up waiting after this many seconds '
        'in all (default 1800); what still runs goes on, and a rerun '
        'finishes it.')
    parser.add_argument(
        '--retry-failed', action='store_true',
        help='%sOn bare metal: service again a node whose earlier servicing '
             'by a toggle failed, once its hardware is checked. Without '
             'it, such a node (ironic\'s history shows the failure, or its '
             'recovery was interrupted) is held in maintenance and '
             'refused.' % ('' if whole_command else 'With --deploy-config: '))
    return parser


def toggle_options(parsed_args):
    """The keyword arguments of a toggle from those options; refuses a
    negative timeout and a step name that is no ``interface.step``."""
    from osc_lib import exceptions

    timeout = parsed_args.wait_timeout
    if timeout is not None and timeout < 0:
        raise exceptions.CommandError(
            'Expected non-negative --wait-timeout, got %d' % timeout)
    for step in parsed_args.allowed_steps:
        if not _STEP_NAME.fullmatch(step):
            raise exceptions.CommandError(
                'Invalid --allow-step %r: expected INTERFACE.STEP, as in '
                'vendor.my_step' % step)
    options = {'allowed_steps': parsed_args.allowed_steps,
               'retry_failed': parsed_args.retry_failed}
    if timeout is not None:
        options['wait_seconds'] = timeout
    return options


def command_line():
    """The command line this process runs, to say how to rerun it."""
    import shlex
    import sys

    return 'openstack ' + ' '.join(shlex.quote(a) for a in sys.argv[1:])


def one_line_errors(parser):
    def error(message):
        parser.exit(2, '%s: error: %s (see --help)\n' % (parser.prog,
                                                         message))

    parser.error = error
    return parser
