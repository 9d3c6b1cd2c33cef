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

"""Examples in ``--help``: cliff reflows an epilog into one paragraph."""


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
