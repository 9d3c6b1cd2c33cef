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

"""The SDK proxies our commands talk to, one per service."""


class Clients:
    """Per-service SDK proxies built from OSC's connection on first use."""

    def __init__(self, instance):
        self._instance = instance

    @property
    def connection(self):
        return self._instance.sdk_connection

    @property
    def compute(self):
        return self.connection.compute

    @property
    def placement(self):
        return self.connection.placement

    @property
    def baremetal(self):
        return self.connection.baremetal
