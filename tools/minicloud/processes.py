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

"""The mini cloud's processes: who listens where, which ports are free,
a set-up command run to completion with its output in a log."""

import os
import socket
import subprocess
import urllib.error
import urllib.request


class Failure(Exception):
    """Something the operator must read; printed as one line."""


def log(msg):
    print(msg, flush=True)


def proc_start_time(pid):
    """Kernel start time of a live process, to tell it from a reused PID."""
    try:
        os.waitpid(pid, os.WNOHANG)     # reap it if it is our dead child
    except ChildProcessError:
        pass
    try:
        with open('/proc/%d/stat' % pid) as f:
            fields = f.read().rsplit(')', 1)[1].split()
    except (OSError, IndexError):
        return None
    return None if fields[0] in ('Z', 'X') else fields[19]


def listener_pids(port):
    """PIDs of the processes listening on a TCP port of this machine."""
    inodes = set()
    for table in ('/proc/net/tcp', '/proc/net/tcp6'):
        try:
            with open(table) as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if fields[3] == '0A' and int(fields[1].rsplit(':', 1)[1],
                                         16) == port:
                inodes.add('socket:[%s]' % fields[9])
    pids = set()
    if not inodes:
        return pids
    for pid in filter(str.isdigit, os.listdir('/proc')):
        try:
            fds = os.listdir('/proc/%s/fd' % pid)
            if any(os.readlink('/proc/%s/fd/%s' % (pid, fd)) in inodes
                   for fd in fds):
                pids.add(int(pid))
        except OSError:
            continue
    return pids


def free_ports(count):
    socks = []
    try:
        for _ in range(count):
            s = socket.socket()
            s.bind(('127.0.0.1', 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def http_answers(url):
    try:
        urllib.request.urlopen(url, timeout=2).close()  # noqa: S310
        return True
    except urllib.error.HTTPError:
        return True     # any HTTP answer means the server is serving
    except OSError:
        return False


def signal_group(pid, sig):
    try:
        os.killpg(pid, sig)
    except ProcessLookupError:
        pass


def remove_file(path):
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


def run_logged(lay, log_name, argv, env=None):
    """Run a set-up command to completion, its output in a log."""
    with open('%s/%s.log' % (lay.logs, log_name), 'ab') as out:
        done = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT,
                              stdin=subprocess.DEVNULL,
                              env=dict(os.environ, PYTHONWARNINGS='ignore',
                                       **(env or {})))
    if done.returncode:
        raise Failure('%s failed (exit %d); see %s/%s.log' % (
            ' '.join(argv[:3]), done.returncode, lay.logs, log_name))
