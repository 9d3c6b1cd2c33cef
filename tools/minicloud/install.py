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

"""What the mini cloud installs: Debian packages, and the services'
virtualenvs (rebuilt when their requirements change)."""

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import time

from processes import Failure
from processes import log
from processes import run_logged
from services import HERE
from services import MARIADBD
from services import RABBITMQ_BIN

# What the mini cloud runs, and what the functional tests use beside it
# (bash-completion: to complete with the script openstack complete writes).
DEBIAN_PACKAGES = {'mariadb-server': MARIADBD,
                   'rabbitmq-server': RABBITMQ_BIN + '/rabbitmq-server',
                   'bash-completion':
                       '/usr/share/bash-completion/bash_completion'}


def ensure_debian_packages():
    if all(os.path.exists(path) for path in DEBIAN_PACKAGES.values()):
        return
    if os.geteuid() != 0:
        raise Failure('minicloud needs the Debian packages %s: install them '
                      '(sudo apt-get install %s) or run as root'
                      % (', '.join(DEBIAN_PACKAGES),
                         ' '.join(DEBIAN_PACKAGES)))
    t0 = time.monotonic()
    env = dict(os.environ, DEBIAN_FRONTEND='noninteractive')
    for argv in (['apt-get', 'update', '-qq'],
                 ['apt-get', 'install', '-y', '-qq',
                  '--no-install-recommends', *DEBIAN_PACKAGES]):
        done = subprocess.run(argv, env=env, capture_output=True, text=True)
        if done.returncode:
            raise Failure('%s failed: %s' % (' '.join(argv), (
                done.stderr.strip().splitlines() or ['?'])[-1]))
    log('installed %s in %.1fs' % (' '.join(DEBIAN_PACKAGES),
                                   time.monotonic() - t0))


VENV_INPUTS = ('requirements.txt', 'fake_steps/pyproject.toml',
               'fake_steps/src/minicloud_fake_steps/__init__.py')
# Other ironic releases `up --ironic-release` runs instead of the pinned
# one (in a virtualenv of their own), with the pins their code needs on
# today's PyPI: ironic-lib 7 dropped the disk_utils 22.1 imports; sushy
# (not among ironic's own requirements) for the redfish interfaces the
# mini cloud enables, at that release's upper constraint.
PINNED = 'pinned'
IRONIC_RELEASES = {
    '22.1.0': ('ironic==22.1.0', 'ironic-lib==5.5.0', 'PyMySQL==1.2.4',
               'sushy==4.4.2'),
    # API 1.112, as 36.0: the redfish BIOS rules before 38.0 (not in CI);
    # keystoneauth1 5.17 registers a tls-ciphers option ironic 37 has too
    '37.0.0': ('ironic==37.0.0', 'sushy==5.14.0', 'keystoneauth1==5.16.0',
               'PyMySQL==1.2.4', 'sushy-oem-idrac==6.0.0'),
}


def _venv_fingerprint(extra=()):
    digest = hashlib.sha256(sys.version.encode())
    for name in VENV_INPUTS:
        with open(os.path.join(HERE, name), 'rb') as f:
            digest.update(name.encode() + b'\0' + f.read())
    for line in extra:
        digest.update(line.encode() + b'\0')
    return digest.hexdigest()


def _installed(venv, fingerprint):
    try:
        with open(venv + '/.minicloud-stamp') as f:
            return f.read() == fingerprint
    except OSError:
        return False


def venv_is_current(lay):
    """Whether the services' virtualenv holds what the checkout asks for
    (its requirements and the fake hardware): a running cloud whose
    virtualenv is not must restart to run the new code."""
    return _installed(lay.venv, _venv_fingerprint())


@contextlib.contextmanager
def _locked(path):
    """One minicloud at a time holds ``path``.lock: a virtualenv that
    ``prepare`` installs in the background is waited for, not built
    twice."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + '.lock', 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _install_venv(lay, venv, what, fingerprint, *requirements):
    """A virtualenv with these requirements, rebuilt when they change."""
    if _installed(venv, fingerprint):
        return
    with _locked(venv):
        if not _installed(venv, fingerprint):
            _build_venv(lay, venv, what, fingerprint, requirements)


def _build_venv(lay, venv, what, fingerprint, requirements):
    stamp = venv + '/.minicloud-stamp'
    t0 = time.monotonic()
    log('installing %s into %s (about a minute)' % (what, venv))
    shutil.rmtree(venv, ignore_errors=True)
    os.makedirs(lay.logs, exist_ok=True)
    pip = venv + '/bin/pip'
    run_logged(lay, 'pip', [sys.executable, '-m', 'venv', venv])
    run_logged(lay, 'pip', [pip, 'install', '-q', '-U', 'pip'])
    run_logged(lay, 'pip', [pip, 'install', '-q', *requirements,
                      HERE + '/fake_steps'])
    with open(stamp, 'w') as f:
        f.write(fingerprint)
    log('%s installed in %.1fs' % (what, time.monotonic() - t0))


def ensure_venv(lay):
    """The services' virtualenv; and an older ironic's, when asked."""
    _install_venv(lay, lay.venv, 'the services', _venv_fingerprint(), '-r',
                  HERE + '/requirements.txt')
    if lay.ironic_release:
        pins = IRONIC_RELEASES[lay.ironic_release]
        _install_venv(lay, lay.ironic_venv, 'ironic ' + lay.ironic_release,
                      _venv_fingerprint(pins), *pins)
