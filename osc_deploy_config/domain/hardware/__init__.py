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

"""The hardware: what a template's steps leave on a node, and whether the
node shows it (``effects``); its BIOS: the vendor profiles that lock
settings and the custom value that unlocks them (``bios_profiles``), a
template's settings against a node's registry (``bios_registry``), the
attribute that means a config on each vendor's and CPU's hardware and an
operator's vocabulary file (``bios_vocabulary``), the profiles set once
ahead of the configs (``bios_prepare``); each of ironic's Redfish BIOS
rules at its release (``ironic_releases``); what a BMC's refusal means
and what ends it (``bmc_faults``); which nodes can take which
template, the trait changes ``sync`` makes, and the nodes a flavor's
configs find (``tagging``).

May import: ``configs``.
"""
