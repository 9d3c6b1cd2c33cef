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

"""One server's toggle: its plan, the target specs, the flavor to resize
to and the service steps (``toggle_plan``); the states it starts from,
holds and waits through (``toggle_states``); what a bare-metal toggle
applied, recorded on the node, and whether an interrupted servicing ran
(``toggle_record``).

May import: ``configs``.
"""
