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

"""The decisions: plain functions over the plain data the APIs return (and
namedtuples and dataclasses of our own).  No I/O and no SDK: every module
here is tested without mocks, and the layers above read, call these, and
write.

In rooms, by what a rule is about, as ``use_cases/`` is cut: ``configs``
(configs, templates, steps, a flavor's or an image's specs) at the ground;
``hardware`` (BIOS, tagging) and ``toggle`` (one server's) on it;
``servers`` (what a server runs, its boot, its rebuild); ``fleet`` (a
rollout) and ``grants`` (a project's) on top.  Each room's docstring says
which others it may import (``tests/unit/test_layers.py`` keeps it so).
"""
