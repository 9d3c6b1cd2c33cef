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

"""Section 1: what our plugin costs every ``openstack`` run: the load of
its entry points against python-ironicclient's, and ``openstack
complete`` with and without it (also ``--only complete``, no cloud)."""

import hashlib
import json
import os
import subprocess
import sys
import tempfile

from bench import measure

# Run in a fresh interpreter: what loading one distribution's OSC entry
# points costs after the modules every ``openstack`` run has imported.
LOAD_SCRIPT = '''
import importlib.metadata, json, sys, time
import openstackclient.shell, osc_lib.command.command, osc_lib.utils
eps = [ep for ep in importlib.metadata.distribution(sys.argv[1]).entry_points
       if ep.group.startswith('openstack.')]
start = time.perf_counter()
for ep in eps:
    ep.load()
print(json.dumps([time.perf_counter() - start, len(eps)]))
'''


def plugin_load(runs, env):
    """Median in-process ``EntryPoint.load`` time of our OSC entry points
    and of python-ironicclient's."""
    times = {'osc-deploy-config': [], 'python-ironicclient': []}
    counts = {}
    for _ in range(runs):
        for dist in times:
            done = subprocess.run([sys.executable, '-c', LOAD_SCRIPT, dist],
                                  env=env, capture_output=True, text=True,
                                  check=True)
            seconds, counts[dist] = json.loads(done.stdout)
            times[dist].append(seconds)
    return {dist: {'ms': measure.median(t) * 1000,
                   'entry_points': counts[dist]}
            for dist, t in times.items()}


def completion(runs, env, without):
    """``openstack complete`` with our plugin and in the virtualenv with the
    same packages but ours, ``runs`` pairs: the median wall and CPU time of
    each, and the median ratio within a pair, which the load of a shared
    machine moves less.  Needs no cloud."""
    found = measure.interleaved_times(
        runs, env, **{'with': [measure.BIN + '/openstack', 'complete'],
                      'without': [without + '/bin/openstack', 'complete']})
    ratios = [(wall / their_wall, cpu / their_cpu)
              for (wall, cpu), (their_wall, their_cpu)
              in zip(found['with'], found['without'], strict=True)]
    return {'runs': runs, 'with': measure.medians(found['with']),
            'without': measure.medians(found['without']),
            'pair_ratio': measure.medians(ratios)}


def venv_without_plugin(workdir):
    """A virtualenv with exactly this one's packages but ours (pip and
    setuptools too: cliff reads every distribution's files when it names a
    command's plugin, and pip's count)."""
    frozen = subprocess.run(
        [sys.executable, '-m', 'pip', 'freeze', '--all',
         '--exclude-editable'],
        capture_output=True, text=True, check=True).stdout
    frozen = ''.join(line + '\n' for line in frozen.splitlines()
                     if not line.lower().startswith('osc-deploy-config'))
    digest = hashlib.sha256(frozen.encode()).hexdigest()[:12]
    venv = os.path.join(workdir, 'without-plugin-' + digest)
    if not os.path.exists(os.path.join(venv, 'ready')):
        measure.log('creating %s (once)' % venv)
        subprocess.run([sys.executable, '-m', 'venv', '--clear', venv],
                       check=True)
        with tempfile.NamedTemporaryFile('w', suffix='.txt') as reqs:
            reqs.write(frozen)
            reqs.flush()
            done = subprocess.run(
                [venv + '/bin/pip', 'install', '-q',
                 '--disable-pip-version-check', '-r', reqs.name],
                capture_output=True, text=True)
            if done.returncode:
                raise SystemExit('installing %s failed:\n%s'
                                 % (venv, done.stdout + done.stderr))
        open(os.path.join(venv, 'ready'), 'w').close()
    return venv
