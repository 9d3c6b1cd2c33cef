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

"""Benchmarks of osc-deploy-config on the mini cloud: a report, not a test.

Every figure is a ratio of two measurements of the same run: our plugin
against python-ironicclient, or our command against the floor of the API
calls it must make.  Requests are counted at the HTTP layer (every request
``requests`` sends), not estimated.  The report is written as markdown and
JSON (``--output``, default ``.bench/``) with the machine and versions.

    tools/tox -e bench [-- --sizes 1,100,1000 --sync-nodes 500]
    tools/tox -e bench -- --only complete    # no mini cloud
    tools/tox -e bench -- --only fleet --fleet-servers 20

The bench creates its objects (``bench-*`` nodes and flavors,
``CUSTOM_DEPLOY_CONFIG_BENCH*`` templates) and deletes them afterwards,
also those a crashed run left.  nova's ironic compute is stopped until the
sync benchmark, so that it does not turn a thousand enrolled nodes into
resource providers while the others measure; the sync benchmark starts it
with only its nodes left, and waits for placement as ``sync`` does.

A module per section of the report: ``load`` (1, and ``--only
complete``), ``per_command`` (2), ``template_list`` (3), ``sync`` (4),
``server_list`` (5), ``hooks`` (6), ``fleet`` (7), ``redfish`` (``--only
redfish``); over ``cloud`` (API access), ``measure`` (timing and
counting requests) and ``objects`` (what the sections make and clean up).
``run`` runs them and ``report`` writes the markdown from the JSON.
"""

import os
import sys

# the mini cloud's own helpers (``waiting``)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), 'minicloud'))
