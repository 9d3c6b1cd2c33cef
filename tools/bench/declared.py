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
