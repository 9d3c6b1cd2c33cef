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

"""A rollout: many servers toggled to deploy configs, within an
availability budget, every server's outcome reported.

``reading`` reads what deciding about every selected server takes, in
pages, not per server; ``planning`` plans each server through the
one-server toggle's own checks; ``drive`` starts the toggles as the
availability ``budget``, read from the cloud each time, has room, each in
a ``worker`` that always reports its Result; ``polls`` makes the
servicings' polls aimed at their ends the budget's reads; ``rollout``
holds it together and makes a row of every server, whatever happens.
"""
