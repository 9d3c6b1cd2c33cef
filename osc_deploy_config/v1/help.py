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
    """An argument error in one line, like every other error of ours,
    instead of argparse's usage block (a mixin for command classes)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        return one_line_errors(parser)


def one_line_errors(parser):
    def error(message):
        parser.exit(2, '%s: error: %s (see --help)\n' % (parser.prog,
                                                         message))

    parser.error = error
    return parser
