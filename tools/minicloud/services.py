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

"""The services of the mini cloud: how each starts, is ready, stops, and
the order they start in."""

import os
import signal
import subprocess
import time

import configs
from processes import Failure
from processes import http_answers
from processes import log
from processes import proc_start_time
from processes import remove_file
from processes import run_logged
from processes import signal_group

HERE = os.path.dirname(os.path.abspath(__file__))
MARIADBD = '/usr/sbin/mariadbd'
RABBITMQ_BIN = '/usr/lib/rabbitmq/bin'
DATABASES = ('keystone', 'nova_api', 'nova_cell0', 'nova', 'placement',
             'ironic')
START_TIMEOUT = 180


class Service:
    """One process of the mini cloud, started in its own session."""

    def __init__(self, name, argv, env=None, port=None, ready_log=None,
                 ready_check=None, prepare=None, after=None, log_name=None):
        self.name = name
        self.argv = argv            # Layout -> list
        self.env = env or (lambda lay: {})
        self.port = port            # name in Layout.ports, if it serves HTTP
        self.ready_log = ready_log  # text its log shows once it is ready
        self.ready_check = ready_check
        self.prepare = prepare      # Layout -> None, before the first start
        self.after = after          # Layout -> None, after the first start
        self.log_name = log_name or name

    def pid_file(self, lay):
        return '%s/%s.pid' % (lay.run, self.name)

    def log_file(self, lay):
        return '%s/%s.log' % (lay.logs, self.log_name)

    def pid(self, lay):
        """The PID if our process still runs, else None."""
        try:
            with open(self.pid_file(lay)) as f:
                pid, started = f.read().split()
        except (OSError, ValueError):
            return None
        return int(pid) if proc_start_time(int(pid)) == started else None

    def launch(self, lay):
        env = dict(os.environ, PYTHONWARNINGS='ignore',
                   PYTHONPATH=HERE + '/wsgi', **self.env(lay))
        env.pop('OS_CLOUD', None)
        with open(self.log_file(lay), 'ab') as out:
            proc = subprocess.Popen(self.argv(lay), stdout=out,
                                    stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, env=env,
                                    start_new_session=True)
        with open(self.pid_file(lay), 'w') as f:
            f.write('%d %s' % (proc.pid, proc_start_time(proc.pid)))
        return proc

    def wait_ready(self, lay, proc, log_offset, timeout=START_TIMEOUT):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise Failure('%s exited with %s while starting; see %s'
                              % (self.name, proc.returncode,
                                 self.log_file(lay)))
            if self._ready(lay, log_offset):
                return
            time.sleep(0.1)
        raise Failure('%s not ready after %ds; see %s'
                      % (self.name, timeout, self.log_file(lay)))

    def _ready(self, lay, log_offset):
        if self.ready_check:
            return self.ready_check(lay)
        if self.ready_log:
            with open(self.log_file(lay), errors='replace') as f:
                f.seek(log_offset)
                text = f.read()
            return any(line in text for line in self.ready_log)
        return http_answers(lay.url(self.port))

    def start(self, lay):
        """Start and wait until it serves; returns the seconds it took."""
        t0 = time.monotonic()
        offset = (os.path.getsize(self.log_file(lay))
                  if os.path.exists(self.log_file(lay)) else 0)
        proc = self.launch(lay)
        self.wait_ready(lay, proc, offset)
        return time.monotonic() - t0

    def stop(self, lay, timeout=30):
        """Stop it and wait; False if it was not running."""
        return self.stop_begin(lay) and self.stop_wait(lay, timeout)

    def stop_begin(self, lay):
        """Ask it to stop (SIGTERM to its whole session); False if not up."""
        pid = self.pid(lay)
        if pid is None:
            remove_file(self.pid_file(lay))
            return False
        signal_group(pid, signal.SIGTERM)
        return True

    def stop_wait(self, lay, timeout=30):
        pid = self.pid(lay)
        deadline = time.monotonic() + timeout
        while self.pid(lay) and time.monotonic() < deadline:
            time.sleep(0.1)
        if self.pid(lay):
            log('  %s did not stop in %ds: killed' % (self.name, timeout))
            signal_group(pid, signal.SIGKILL)
            while self.pid(lay):
                time.sleep(0.1)
        remove_file(self.pid_file(lay))
        return True


def venv_bin(lay, name):
    return '%s/bin/%s' % (lay.venv, name)


def _ironic_bin(lay, name):
    return '%s/bin/%s' % (lay.ironic_venv, name)


def _gunicorn(app, port, name):
    def argv(lay):
        return [venv_bin(lay, 'gunicorn'), '--bind',
                '127.0.0.1:%d' % lay.ports[port], '--workers', '1',
                '--threads', '4', '--no-control-socket',
                # longer than clients keep idle connections, so that a
                # client never reuses one the server is closing
                '--keep-alive', '75',
                # as long a request line as neutron's and nova's own servers
                # take (nova asks neutron for the ports of 100 servers in
                # one URL); gunicorn's default is 4094
                '--limit-request-line', '16384', '--name',
                'minicloud-' + name, app]
    return argv


def _mariadb_prepare(lay):
    run_logged(lay, 'mariadb-install', [
        'mariadb-install-db', '--defaults-file=%s/my.cnf' % lay.etc,
        '--auth-root-authentication-method=normal'])


def mariadb_client(lay, *args):
    return subprocess.run(['mariadb', '--socket=%s/mysqld.sock' % lay.run,
                           '-uroot', *args], capture_output=True, text=True)


def _mariadb_ready(lay):
    return mariadb_client(lay, '-e', 'SELECT 1').returncode == 0


def _mariadb_after(lay):
    sql = ''.join('CREATE DATABASE IF NOT EXISTS %s; ' % db
                  for db in DATABASES)
    user = "'%s'@'127.0.0.1'" % configs.DB_USER
    sql += ("CREATE USER IF NOT EXISTS %s IDENTIFIED BY '%s'; "
            'GRANT ALL PRIVILEGES ON *.* TO %s;'
            % (user, configs.PASSWORD, user))
    done = mariadb_client(lay, '-e', sql)
    if done.returncode:
        raise Failure('creating the databases failed: %s'
                      % done.stderr.strip())


def _keystone_prepare(lay):
    manage = [venv_bin(lay, 'keystone-manage'), '--config-file',
              lay.etc + '/keystone/keystone.conf']
    for args in (['db_sync'],
                 ['fernet_setup', '--keystone-user', 'root',
                  '--keystone-group', 'root'],
                 ['credential_setup', '--keystone-user', 'root',
                  '--keystone-group', 'root'],
                 ['bootstrap', '--bootstrap-password', configs.PASSWORD,
                  '--bootstrap-username', 'admin',
                  '--bootstrap-project-name', 'admin',
                  '--bootstrap-role-name', 'admin',
                  '--bootstrap-service-name', 'keystone',
                  '--bootstrap-region-id', configs.REGION,
                  '--bootstrap-admin-url', lay.keystone + '/v3',
                  '--bootstrap-internal-url', lay.keystone + '/v3',
                  '--bootstrap-public-url', lay.keystone + '/v3']):
        run_logged(lay, 'keystone-manage', manage + args)


def _keystone_after(lay):
    run_logged(lay, 'seed', [
        venv_bin(lay, 'python'), HERE + '/seed.py', 'keystone', lay.keystone,
        configs.PASSWORD, configs.REGION,
        *('%s=%s' % item for item in lay.endpoints.items())])


def nova_manage(lay):
    return [venv_bin(lay, 'nova-manage'), '--config-file',
            lay.etc + '/nova/nova.conf']


def nova_db_bootstrap(lay):
    manage = nova_manage(lay)
    for args in (['api_db', 'sync'],
                 ['cell_v2', 'map_cell0', '--database_connection',
                  lay.db('nova_cell0')],
                 ['db', 'sync'],
                 ['cell_v2', 'create_cell', '--name', 'cell1']):
        run_logged(lay, 'nova-manage', manage + args)


def _nova_service(name, binary, conf, ready_log):
    return Service(name, lambda lay: [venv_bin(lay, binary), '--config-file',
                                      '%s/nova/%s' % (lay.etc, conf)],
                   ready_log=ready_log)


def _bmc(service):
    """An emulated Redfish BMC (bmc/launcher.py) for one node."""
    vendor, node = configs.BMCS[service]

    def argv(lay):
        return [venv_bin(lay, 'python'), HERE + '/bmc/launcher.py',
                '--port', str(lay.ports[service]),
                '--state-dir', '%s/bmc/%s' % (lay.data, node),
                '--vendor', vendor,
                '--system', '%s=%s' % (node, configs.bmc_system_uuid(node)),
                '--power-delay', str(configs.BMC_POWER_DELAY),
                '--boot-delay', str(configs.BMC_BOOT_DELAY)]
    return Service(service, argv, port=service,
                   ready_check=lambda lay: http_answers(
                       lay.url(service) + '/redfish/v1/'))


SERVICES = [
    Service('mariadb',
            lambda lay: [MARIADBD, '--defaults-file=%s/my.cnf' % lay.etc],
            ready_check=_mariadb_ready, prepare=_mariadb_prepare,
            after=_mariadb_after),
    Service('rabbitmq', lambda lay: [RABBITMQ_BIN + '/rabbitmq-server'],
            env=configs.rabbitmq_env,
            ready_log=['Starting broker... completed',
                       'Server startup complete']),
    Service('keystone', _gunicorn('keystone_app:application', 'keystone',
                                  'keystone'),
            env=lambda lay: {'OS_KEYSTONE_CONFIG_DIR': lay.etc + '/keystone'},
            port='keystone', prepare=_keystone_prepare,
            after=_keystone_after),
    Service('neutron-stub', _gunicorn('neutron_stub:application',
                                      'neutron-stub', 'neutron-stub'),
            port='neutron-stub'),
    Service('placement', _gunicorn('placement.wsgi.api:application',
                                   'placement', 'placement'),
            env=lambda lay: {
                'OS_PLACEMENT_CONFIG_DIR': lay.etc + '/placement'},
            port='placement'),
    Service('glance', _gunicorn('glance.wsgi.api:application', 'glance',
                                'glance'),
            env=lambda lay: {'OS_GLANCE_CONFIG_DIR': lay.etc + '/glance'},
            port='glance',
            prepare=lambda lay: run_logged(lay, 'glance-manage', [
                venv_bin(lay, 'glance-manage'), '--config-file',
                lay.etc + '/glance/glance-api.conf', 'db_sync'])),
    Service('ironic',
            lambda lay: [_ironic_bin(lay, 'ironic'), '--config-file',
                         lay.etc + '/ironic/ironic.conf'],
            port='ironic',
            prepare=lambda lay: run_logged(lay, 'ironic-dbsync', [
                _ironic_bin(lay, 'ironic-dbsync'), '--config-file',
                lay.etc + '/ironic/ironic.conf', 'create_schema'])),
    *(_bmc(service) for service in configs.BMCS),
    _nova_service('nova-conductor', 'nova-conductor', 'nova.conf',
                  ['Starting conductor node']),
    _nova_service('nova-scheduler', 'nova-scheduler', 'nova.conf',
                  ['Starting scheduler node']),
    Service('nova-api', _gunicorn('nova_api_app:application', 'nova-api',
                                  'nova-api'),
            env=lambda lay: {'OS_NOVA_CONFIG_DIR': lay.etc + '/nova'},
            port='nova-api'),
    _nova_service('nova-compute', 'nova-compute', 'nova-compute-fake.conf',
                  ['Compute_service record updated',
                   'Starting compute node']),
    _nova_service('nova-compute-ironic', 'nova-compute',
                  'nova-compute-ironic.conf',
                  ['Compute_service record updated',
                   'Starting compute node']),
]
BY_NAME = {s.name: s for s in SERVICES}
# Started together, group after group; each group needs the ones before.
START_GROUPS = [['mariadb'],
                ['rabbitmq', 'keystone'],
                ['neutron-stub', 'placement', 'glance', 'ironic',
                 *configs.BMCS],
                ['nova-conductor', 'nova-scheduler', 'nova-api'],
                ['nova-compute', 'nova-compute-ironic']]
# nova's databases are prepared beside the groups after MariaDB's, and must
# be ready before the first group of nova services.
FIRST_NOVA_GROUP = 3
