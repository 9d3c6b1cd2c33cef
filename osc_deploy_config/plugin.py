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
    """Two global options: the operator's vocabulary file, and the
    timeouts of our requests (versions are negotiated per call).  OSC hands
    them, as any ``--os-*`` option, to the cloud's configuration, where
    clouds.yaml may set them instead (``deploy_config_vocabulary``,
    ``deploy_config_request_seconds``)."""
    import os

    parser.add_argument(
        '--os-deploy-config-vocabulary',
        metavar='<file>',
        default=os.environ.get('OS_DEPLOY_CONFIG_VOCABULARY'),
        help='A YAML file of BIOS names for hardware the built-in '
             'vocabulary does not know, by config type (Env: '
             'OS_DEPLOY_CONFIG_VOCABULARY; clouds.yaml: '
             'deploy_config_vocabulary)')
    parser.add_argument(
        '--os-deploy-config-request-seconds',
        metavar='<read>|<connect,read>',
        default=os.environ.get('OS_DEPLOY_CONFIG_REQUEST_SECONDS'),
        help='How long each request of the deploy-config commands waits '
             'for a service to accept it and to answer it, in seconds '
             '(default 10,60; one number: the read, connecting within 10). '
             'A request past it ends the command, or a rollout\'s toggle, '
             'in one line that names the service (Env: '
             'OS_DEPLOY_CONFIG_REQUEST_SECONDS; clouds.yaml: '
             'deploy_config_request_seconds)')
    return parser
