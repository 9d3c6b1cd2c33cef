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

"""Section 2b: ``deploy-config diff`` and a no-op ``deploy-config apply``
of the cloud's own export, at each size of the bench's objects (N
templates and N flavors asking for them): their requests depend on the
listings' pages, not on N, and the no-op apply writes nothing."""

import os
import subprocess
import tempfile

from bench import cloud as clouds
from bench import measure
from bench import objects


def requests(counter):
    """{command: its request counts} of export, diff and a no-op apply of
    the cloud exported now (``writes``: requests other than GET)."""
    with tempfile.TemporaryDirectory() as scratch:
        path = os.path.join(scratch, 'declared.yaml')
        with open(path, 'w') as out:
            subprocess.run([measure.BIN + '/openstack', '--os-cloud',
                            clouds.ADMIN, 'deploy-config', 'export'],
                           env=counter.env, stdout=out, check=True)
        return {
            'deploy-config export': counter.run('deploy-config',
                                                'export')[0],
            'deploy-config diff': counter.run('deploy-config', 'diff', '-f',
                                              path)[0],
            'deploy-config apply (no-op)': counter.run(
                'deploy-config', 'apply', '-f', path)[0],
        }


APPLY_TYPE = 'benchapply'
APPLY_CAPABLE = 'CUSTOM_BENCH_APPLY_CAPABLE'


def apply_over_nodes(cloud, counter, nodes):
    """The requests of an ``apply`` that changes one BIOS template whose
    capability trait ``nodes`` bench nodes carry (each read for its BIOS
    registry), once it exists: the cost that grew with nodes x templates
    (planning's check, the write's own, the sync: one read each).  The
    nodes are enrolled fake-hardware ones, which placement does not
    know: the sync tags them and waits for no copy."""
    objects.grow_nodes(cloud, nodes)
    clouds.parallel(lambda n: cloud.ironic_call(
        'PUT', '/nodes/%s/traits/%s' % (n, APPLY_CAPABLE)),
        ['bench-%04d' % i for i in range(1, nodes + 1)])
    with tempfile.TemporaryDirectory() as scratch:
        paths = []
        for value in ('A', 'B'):
            paths.append(os.path.join(scratch, '%s.yaml' % value))
            with open(paths[-1], 'w') as out:
                out.write(
                    'version: 1\nconfigs:\n  %s:\n    set:\n      '
                    'capability_traits: [%s]\n      bios: {BenchSetting: '
                    '%s}\n' % (APPLY_TYPE, APPLY_CAPABLE, value))
        counter.run('deploy-config', 'apply', '-f', paths[0])
        try:
            return {'deploy-config apply (one BIOS template changed, %d '
                    'capable nodes)' % nodes: counter.run(
                        'deploy-config', 'apply', '-f', paths[1])[0]}
        finally:
            cloud.ironic_call('DELETE', '/deploy_templates/%s' % (
                'CUSTOM_DEPLOY_CONFIG_%s_SET' % APPLY_TYPE.upper()),
                ok=(204, 404))
