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

"""How the bench measures: wall and CPU time of whole commands, run
interleaved, and ``openstack`` runs with every HTTP request counted as it
is sent."""

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse

from bench import cloud as clouds

BIN = os.path.dirname(sys.executable)
# Run ``openstack`` with every HTTP request recorded as it is sent.
COUNT_SCRIPT = '''
import json, sys
import requests.adapters
sent = []
send = requests.adapters.HTTPAdapter.send
def counting_send(self, request, *args, **kwargs):
    sent.append([request.method, request.url])
    return send(self, request, *args, **kwargs)
requests.adapters.HTTPAdapter.send = counting_send
from openstackclient import shell
try:
    code = shell.main(sys.argv[2:])
finally:
    with open(sys.argv[1], 'w') as out:
        json.dump(sent, out)
sys.exit(code)
'''


def log(text):
    print(text, file=sys.stderr, flush=True)


def median(values):
    return statistics.median(values)


def medians(times):
    """The median wall and CPU of (wall, CPU) pairs."""
    return {'wall': median(took for took, _ in times),
            'cpu': median(cpu for _, cpu in times)}


def wall(argv, env, check=True):
    """Seconds one command took, start to exit."""
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    took = time.perf_counter() - start
    if check and done.returncode:
        raise SystemExit('%s failed: %s' % (' '.join(argv), done.stderr))
    return took


def wall_and_cpu(argv, env):
    """Wall and CPU seconds (user + system) one command took."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    took = wall(argv, env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return took, (after.ru_utime - before.ru_utime
                  + after.ru_stime - before.ru_stime)


def interleaved(runs, env, **commands):
    """Median wall time of each command, runs interleaved after one
    warm-up each (stevedore's entry point cache, the page cache)."""
    return {name: median(took for took, _ in found) for name, found in
            interleaved_times(runs, env, **commands).items()}


def interleaved_times(runs, env, **commands):
    """The wall and CPU seconds of every run of each command, as
    ``interleaved`` runs them."""
    times = {name: [] for name in commands}
    for argv in commands.values():
        wall(argv, env)
    for _ in range(runs):
        for name, argv in commands.items():
            times[name].append(wall_and_cpu(argv, env))
    return times


class Counter:
    """Runs ``openstack`` commands with their requests recorded."""

    def __init__(self, cloud, env):
        self.cloud = cloud
        self.env = env

    def run(self, *args, cloud=clouds.ADMIN, python=sys.executable):
        with tempfile.NamedTemporaryFile(suffix='.json') as record:
            start = time.perf_counter()
            # away from the checkout, whose package and egg-info ``-c``
            # would put on sys.path of a virtualenv without our plugin
            done = subprocess.run(
                [python, '-c', COUNT_SCRIPT, record.name,
                 '--os-cloud', cloud, *args],
                env=self.env, stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE, text=True,
                cwd=tempfile.gettempdir())
            took = time.perf_counter() - start
            sent = json.load(open(record.name))
        if done.returncode:
            raise SystemExit('openstack %s failed: %s'
                             % (' '.join(args), done.stderr))
        return self.classify(sent), took

    def classify(self, sent):
        """Requests per service; version discovery and tokens apart."""
        counts = {}
        for _method, url in sent:
            parts = urllib.parse.urlsplit(url)
            service = self.cloud.services.get(parts.netloc, parts.netloc)
            if service == 'identity':
                kind = 'keystone'
            elif parts.path.strip('/') in ('', 'v1', 'v2.1', 'v2'):
                kind = 'discovery'
            else:
                kind = service
            counts[kind] = counts.get(kind, 0) + 1
        counts['total'] = len(sent)
        # writes: to a service, not keystone's token requests
        counts['writes'] = sum(
            1 for method, url in sent if method not in ('GET', 'HEAD')
            and self.cloud.services.get(urllib.parse.urlsplit(
                url).netloc) != 'identity')
        return counts
