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

"""Configs and templates: what a deploy config is (``deploy_config``:
``TYPE=VALUE``, template names, capability traits, the ``extra``
annotation of a template); the deploy steps a template runs, read and
checked as ironic will (``steps``), and what each does to a running server
(``step_safety``); deploy templates as dicts, and which template realises
a config on which hardware (``templates``); the specs of a config's
owners, a flavor's extra specs or an image's properties: what they ask
for, what ``set`` writes and ``unset`` removes, their drift, and the
scheduler's placement request (``config_specs``).

May import: no other room.
"""
