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

"""``python tools/bench`` (``tools/tox -e bench``): the runner."""

import os
import sys

# tools/, not this directory: the sections import as bench.<section>, and
# none of their names hides a module of the same name
sys.path[0] = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from bench import run  # noqa: E402

run.main(sys.argv[1:])
