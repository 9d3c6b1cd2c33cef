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


def one_line_errors(parser):
    def error(message):
        parser.exit(2, '%s: error: %s (see --help)\n' % (parser.prog,
                                                         message))

    parser.error = error
    return parser
