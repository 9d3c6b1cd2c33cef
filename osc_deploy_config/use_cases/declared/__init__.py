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

"""Configs as code: ``openstack deploy-config export | diff | apply``.

``reading`` reads what this plugin manages, in pages, never per object,
into the declared model; ``planning`` checks a file against the cloud and
makes its changes (what ``diff`` shows); ``writing`` makes them through the
single commands' own use cases, in dependency order, and lists the servers
a rollout brings in line.
"""
