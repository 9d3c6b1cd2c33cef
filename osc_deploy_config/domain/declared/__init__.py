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

"""The declared state: one YAML file of the configs offered, their
templates per hardware kind, the flavors' and images' asks and the
projects' grants (``document``: read with each object's line and column,
checked against the published JSON Schema, written in a stable order);
what makes the cloud equal to it (``changes``: the field-level difference,
what ``--prune`` may delete and what it refuses, the servers a rollout
brings in line).

May import: ``configs``, ``grants``.
"""
