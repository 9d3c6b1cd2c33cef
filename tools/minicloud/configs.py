"""Configuration files of the mini cloud's services, rendered from its layout.

Plain functions: each takes a ``Layout`` and returns file contents, so that
``minicloud`` writes them and nothing else needs to know the formats.
"""
import os
import textwrap
import uuid

PASSWORD = 'minicloud'  # noqa: S105  every user's password: test only
REGION = 'RegionOne'
# The BIOS names of the fake hardware, which the plugin's table leaves out.
VOCABULARY = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          'vocabulary.yaml')
DB_USER = 'minicloud'
FAKE_COMPUTE_HOST = 'fake-compute'
IRONIC_COMPUTE_HOST = 'ironic-compute'
IRONIC_POLICIES = ('secure', 'legacy')
# The emulated Redfish BMCs (bmc/): service -> (BIOS vendor, the node it
# serves).  One BMC per server, as in a data centre.
BMCS = {'bmc-dell': ('dell', 'bm-5'), 'bmc-hpe': ('hpe', 'bm-6')}
# seconds from a power request to its effect, and from power-on to the OS
# running: short, so that a BIOS step takes seconds
BMC_POWER_DELAY = 1.0
BMC_BOOT_DELAY = 1.0


def bmc_system_uuid(node):
    """The Redfish system of a node, the same in every mini cloud."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, 'minicloud:bmc:' + node))


class Layout:
    """Where everything of one mini cloud lives, and on which ports."""

    def __init__(self, home, ports):
        self.home = home
        self.ports = ports
        self.data = home + '/data'
        self.etc = home + '/etc'
        self.logs = home + '/logs'
        self.run = home + '/run'
        self.venv = home + '/venv'
        self.ironic_policy = 'secure'
        self.ironic_release = None   # None: the one in requirements.txt

    @property
    def ironic_venv(self):
        """An older ironic release lives in a virtualenv of its own."""
        if self.ironic_release:
            return '%s/venv-ironic-%s' % (self.home, self.ironic_release)
        return self.venv

    def url(self, service):
        return 'http://127.0.0.1:%d' % self.ports[service]

    @property
    def keystone(self):
        return self.url('keystone')

    def db(self, name):
        return 'mysql+pymysql://%s:%s@127.0.0.1:%d/%s?charset=utf8' % (
            DB_USER, PASSWORD, self.ports['mariadb'], name)

    @property
    def transport_url(self):
        return 'rabbit://guest:guest@127.0.0.1:%d/' % self.ports['rabbitmq']

    @property
    def redfish(self):
        """node -> (Redfish address, system ID) of its emulated BMC."""
        return {node: (self.url(service),
                       '/redfish/v1/Systems/' + bmc_system_uuid(node))
                for service, (_, node) in BMCS.items()}

    @property
    def endpoints(self):
        """The catalog: service type -> URL."""
        return {'compute': self.url('nova-api') + '/v2.1',
                'placement': self.url('placement'),
                'image': self.url('glance'),
                'baremetal': self.url('ironic'),
                'network': self.url('neutron-stub')}


def _dedent(text):
    return textwrap.dedent(text).lstrip()


def mariadb(lay):
    return _dedent(f"""
        [mysqld]
        datadir = {lay.data}/mysql
        socket = {lay.run}/mysqld.sock
        pid-file = {lay.run}/mysqld.pid
        port = {lay.ports['mariadb']}
        bind-address = 127.0.0.1
        user = root
        skip-name-resolve
        innodb_buffer_pool_size = 64M
        innodb_log_file_size = 32M
        innodb_flush_log_at_trx_commit = 2
        max_connections = 400
        character-set-server = utf8mb4
        collation-server = utf8mb4_general_ci
        log-error = {lay.logs}/mariadb.log
        """)


def rabbitmq_env(lay):
    """Environment of a private RabbitMQ node, with its own epmd port."""
    base = lay.data + '/rabbitmq'
    return {
        'HOME': base + '/home',
        'ERL_EPMD_PORT': str(lay.ports['epmd']),
        'RABBITMQ_NODENAME': 'minicloud@localhost',
        'RABBITMQ_NODE_IP_ADDRESS': '127.0.0.1',
        'RABBITMQ_NODE_PORT': str(lay.ports['rabbitmq']),
        'RABBITMQ_DIST_PORT': str(lay.ports['rabbitmq-dist']),
        'RABBITMQ_MNESIA_BASE': base + '/mnesia',
        'RABBITMQ_LOG_BASE': base + '/log',
        'RABBITMQ_PID_FILE': lay.run + '/rabbitmq-beam.pid',
        'RABBITMQ_ENABLED_PLUGINS_FILE': base + '/enabled_plugins',
        'RABBITMQ_CONFIG_FILE': base + '/rabbitmq',
        'RABBITMQ_ADVANCED_CONFIG_FILE': base + '/advanced.config',
        'RABBITMQ_CONF_ENV_FILE': base + '/rabbitmq-env.conf',
    }


def _authtoken(lay, user):
    """keystonemiddleware: how a service checks the tokens it receives."""
    return _dedent(f"""
        [keystone_authtoken]
        www_authenticate_uri = {lay.keystone}
        auth_url = {lay.keystone}
        auth_type = password
        username = {user}
        password = {PASSWORD}
        project_name = service
        user_domain_name = Default
        project_domain_name = Default
        region_name = {REGION}
        service_token_roles_required = True
        """)


def _service_auth(lay, section, user, system=False):
    """keystoneauth: how a service calls another one.  ``system``: with a
    system-scoped token (an older ironic's secure RBAC shows a service
    its nodes under the system scope only)."""
    scope = ('system_scope = all' if system else
             'project_name = service\nproject_domain_name = Default')
    return _dedent(f"""
        [{section}]
        auth_type = password
        auth_url = {lay.keystone}
        username = {user}
        password = {PASSWORD}
        user_domain_name = Default
        region_name = {REGION}
        """) + scope + '\n'



def keystone(lay):
    return _dedent(f"""
        [DEFAULT]
        log_file = {lay.logs}/keystone-app.log
        [database]
        connection = {lay.db('keystone')}
        [token]
        provider = fernet
        [fernet_tokens]
        key_repository = {lay.data}/keystone/fernet-keys
        [fernet_receipts]
        key_repository = {lay.data}/keystone/fernet-keys
        [credential]
        key_repository = {lay.data}/keystone/credential-keys
        [identity]
        # test only: cheap hashing, so a password check costs ms
        password_hash_rounds = 4
        [cache]
        # keystone's own cache, in its one process (devstack's is
        # memcached): without it, issuing a token costs 0.17 s and each
        # service's first validation of it 0.2-0.3 s; with it, 0.04 s
        # and 0.015 s
        enabled = true
        backend = dogpile.cache.memory
        """)


def placement(lay):
    return _dedent(f"""
        [DEFAULT]
        debug = True
        [api]
        auth_strategy = keystone
        [placement_database]
        connection = {lay.db('placement')}
        sync_on_startup = True
        """) + _authtoken(lay, 'placement')


def glance(lay, policy='secure'):
    """glance-api; ``policy='secure'`` installs the shipped property
    protections (``trait:`` and ``deploy-config:`` image properties are
    the operators'), 'legacy' leaves every property open, as glance's
    defaults do."""
    protections = '' if policy == 'legacy' else _dedent(f"""
        property_protection_file = {lay.etc}/glance/property-protections.conf
        property_protection_rule_format = policies
        """)
    rules = '' if policy == 'legacy' else _dedent(f"""
        [oslo_policy]
        policy_file = {lay.etc}/glance/hardened-policy.yaml
        """)
    return _dedent("""
        [DEFAULT]
        debug = True
        """) + protections + _dedent(f"""
        enabled_backends = fs:file
        image_cache_dir = {lay.data}/glance/cache
        [glance_store]
        default_backend = fs
        [fs]
        filesystem_store_datadir = {lay.data}/glance/images
        [os_glance_staging_store]
        filesystem_store_datadir = {lay.data}/glance/staging
        [os_glance_tasks_store]
        filesystem_store_datadir = {lay.data}/glance/tasks
        [database]
        connection = sqlite:///{lay.data}/glance/glance.sqlite
        [paste_deploy]
        config_file = {lay.etc}/glance/glance-api-paste.ini
        flavor = keystone
        [oslo_concurrency]
        lock_path = {lay.data}/locks
        """) + rules + _authtoken(lay, 'glance')


_IRONIC_INTERFACES = {
    # interface: (enabled, default)
    'bios': ('fake,fake-steps,redfish', 'fake'),
    'boot': ('fake', 'fake'),
    'console': ('fake', 'fake'),
    'deploy': ('fake', 'fake'),
    'firmware': ('fake', 'fake'),
    'inspect': ('fake', 'fake'),
    'management': ('fake,redfish,idrac-redfish', 'fake'),
    'network': ('noop', 'noop'),
    'power': ('fake,redfish', 'fake'),
    'raid': ('fake,fake-steps', 'fake'),
    'rescue': ('fake', 'fake'),
    'storage': ('fake,noop', 'fake'),
    'vendor': ('fake', 'fake'),
}


# The overrides the plugin ships for operators to install (ironic's policy,
# glance's property protections and the rule they name): the mini cloud
# runs them as they are, unless its policy is 'legacy'.
HARDENING = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), 'osc_deploy_config', 'hardening')
# file written in the cloud's etc -> the shipped file
HARDENING_FILES = {
    'ironic/hardened-policy.yaml': 'ironic-policy.yaml',
    'glance/property-protections.conf': 'glance-property-protections.conf',
    'glance/hardened-policy.yaml': 'glance-policy.yaml',
}


def hardening_file(name):
    """The text of one of the shipped hardening files."""
    with open(os.path.join(HARDENING, name)) as f:
        return f.read()


def ironic(lay, policy='secure'):
    """All-in-one ironic (API and conductor in one process, no RPC bus).

    Every interface's default is set explicitly: a default that is not
    enabled kills the worker silently while the port never opens.
    ``policy='legacy'`` turns the pre-RBAC rules back on, as older clouds
    run them: a project-scoped admin may then manage everything.
    """
    interfaces = ''.join(
        'enabled_%s_interfaces = %s\ndefault_%s_interface = %s\n'
        % (name, enabled, name, default)
        for name, (enabled, default) in sorted(_IRONIC_INTERFACES.items()))
    text = _dedent(f"""
        [DEFAULT]
        host = 127.0.0.1
        auth_strategy = keystone
        # nova's service user must see every node
        rbac_service_role_elevated_access = True
        rpc_transport = none
        debug = True
        log_file = {lay.logs}/ironic-app.log
        graceful_shutdown_timeout = 5
        enabled_hardware_types = fake-hardware
        """) + interfaces + _dedent(f"""
        [conductor]
        graceful_shutdown_timeout = 5
        [api]
        host_ip = 127.0.0.1
        port = {lay.ports['ironic']}
        [database]
        # MariaDB, as production runs it: SQLite answers concurrent writes
        # (trait changes on different nodes) with 'database is locked'
        connection = {lay.db('ironic')}
        [dhcp]
        dhcp_provider = none
        [service_catalog]
        # where the agent would call back: a BIOS step's reboot prepares
        # the agent's boot (fake here) with this URL
        endpoint_override = {lay.url('ironic')}
        [redfish]
        # how often a BIOS step that waits for its reboot checks the BMC
        # (ironic 35+; the emulated BMCs boot in about 2 s)
        firmware_update_status_interval = 2
        [oslo_concurrency]
        lock_path = {lay.data}/locks
        """)
    if policy != 'legacy':
        # the shipped disallow lists, in ironic's [api] section
        disallow = ''.join(line + '\n' for line in hardening_file(
            'ironic-api.conf').splitlines() if line.startswith('disallow_'))
        text = text.replace('[api]\n', '[api]\n' + disallow, 1)
    if policy == 'legacy':
        text += ('[oslo_policy]\nenforce_new_defaults = False\n'
                 'enforce_scope = False\n')
    else:
        text += ('[oslo_policy]\npolicy_file = %s/ironic/hardened-policy.yaml'
                 '\n' % lay.etc)
    return (text + _authtoken(lay, 'ironic')
            + _service_auth(lay, 'glance', 'ironic')
            + _service_auth(lay, 'nova', 'ironic'))


def _nova_common(lay):
    return (_authtoken(lay, 'nova')
            + _service_auth(lay, 'placement', 'placement')
            + _service_auth(lay, 'neutron', 'neutron')
            + _service_auth(lay, 'service_user', 'nova')
            + 'send_service_user_token = True\n'
            + _dedent(f"""
                [glance]
                region_name = {REGION}
                [oslo_concurrency]
                lock_path = {lay.data}/locks
                [compute]
                resource_provider_association_refresh = 20
                """))


def nova(lay):
    """nova-api, conductor and scheduler (the only ones with DB access)."""
    return _dedent(f"""
        [DEFAULT]
        debug = True
        state_path = {lay.data}/nova
        transport_url = {lay.transport_url}
        allow_resize_to_same_host = True
        [wsgi]
        api_paste_config = {lay.etc}/nova/api-paste.ini
        [api_database]
        connection = {lay.db('nova_api')}
        [database]
        connection = {lay.db('nova')}
        [conductor]
        workers = 1
        [scheduler]
        workers = 1
        """) + _nova_common(lay)


def nova_compute_fake(lay):
    """A compute of virtual instances (the fake driver, resizable in place)."""
    return _dedent(f"""
        [DEFAULT]
        debug = True
        host = {FAKE_COMPUTE_HOST}
        state_path = {lay.data}/nova-fake
        instances_path = {lay.data}/nova-fake/instances
        transport_url = {lay.transport_url}
        compute_driver = fake.FakeDriverWithoutFakeNodes
        allow_resize_to_same_host = True
        update_resources_interval = 10
        """) + _nova_common(lay)


def nova_compute_ironic(lay):
    """The compute that manages the ironic nodes."""
    return _dedent(f"""
        [DEFAULT]
        debug = True
        host = {IRONIC_COMPUTE_HOST}
        state_path = {lay.data}/nova-ironic
        instances_path = {lay.data}/nova-ironic/instances
        transport_url = {lay.transport_url}
        compute_driver = ironic.IronicDriver
        # how soon a node freed by ironic is schedulable again
        update_resources_interval = 5
        sync_power_state_interval = 10
        """) + _nova_common(lay) + _service_auth(
        lay, 'ironic', 'nova', system=bool(lay.ironic_release)) + (
        'api_retry_interval = 1\n')


def clouds_yaml(lay):
    """The clouds the tests and the demo use: the operator's (a project
    admin, and the same user on the system), demo's member and manager,
    and the manager of another project."""
    auth = f"""auth_url: {lay.keystone}/v3
      username: %s
      password: {PASSWORD}
      user_domain_name: Default"""
    project = """
      project_name: %s
      project_domain_name: Default"""
    common = f"""
    auth_type: password
    region_name: {REGION}
    identity_api_version: 3
    deploy_config_vocabulary: {VOCABULARY}
"""
    return ('clouds:\n'
            '  minicloud-admin:\n    auth:\n      '
            + auth % 'admin' + project % 'admin' + common
            + '  minicloud-system-admin:\n    auth:\n      '
            + auth % 'admin' + '\n      system_scope: all' + common
            + '  minicloud-demo:\n    auth:\n      '
            + auth % 'demo' + project % 'demo' + common
            + '  minicloud-demo-manager:\n    auth:\n      '
            + auth % 'demo-manager' + project % 'demo' + common
            + '  minicloud-other-manager:\n    auth:\n      '
            + auth % 'other-manager' + project % 'other' + common)
