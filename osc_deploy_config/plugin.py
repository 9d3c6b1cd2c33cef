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

"""The OpenStackClient plugin module of osc-deploy-config.

OSC imports this module on every ``openstack`` run, so it imports nothing:
the clients are built on first use, by the commands that need them.
"""

# Required by the OSC plugin interface.  There is no deploy-config service:
# the version only names the command group (openstack.deploy_config.v1), and
# every service call negotiates its own microversion.
API_NAME = 'deploy_config'
API_VERSION_OPTION = 'os_deploy_config_api_version'
API_VERSIONS = ('1',)
DEFAULT_API_VERSION = '1'


def make_client(instance):
    """The per-service connections our commands use, from OSC's session."""
    from osc_deploy_config.services import clients

    return clients.Clients(instance)


def build_option_parser(parser):
    """No global options of our own: versions are negotiated per call."""
    return parser
