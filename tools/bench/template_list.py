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

"""Section 3: ``baremetal deploy template list`` against
python-ironicclient's."""

from bench import cloud as clouds
from bench import measure


def template_list_vs_ironicclient(runs, env, without):
    """Wall time of listing every template: ours; ironicclient's
    standalone CLI; and ironicclient's own command under ``openstack``
    where our plugin is not installed.  Each also with ``--help`` (its
    start-up alone)."""
    args = ('--os-cloud', clouds.SYSTEM, 'baremetal', 'deploy', 'template',
            'list')
    ours = [measure.BIN + '/openstack', *args]
    theirs = [measure.BIN + '/baremetal', *args[:2], *args[3:]]
    theirs_in_osc = [without + '/bin/openstack', *args]
    return measure.interleaved(runs, env, ours=ours, ironicclient=theirs,
                       ironicclient_osc=theirs_in_osc,
                       ours_startup=ours + ['--help'],
                       ironicclient_startup=theirs + ['--help'],
                       ironicclient_osc_startup=theirs_in_osc + ['--help'])
