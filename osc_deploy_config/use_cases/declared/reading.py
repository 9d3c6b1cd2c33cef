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

"""What ``export``, ``diff`` and ``apply`` read of the cloud: one listing
each of the deploy templates, the flavors, the images and the projects,
whatever their number of objects (each listing one request per page)."""

import collections

from osc_deploy_config.domain.declared import document
from osc_deploy_config.services import versions

# The extra key of a template written by ``apply`` whose nodes are not yet
# synced: a rerun after a kill finds it and syncs, then removes it.
SYNC_PENDING = 'deploy_config_sync_pending'

# What was read: the listings as dicts, and their Declared.
Cloud = collections.namedtuple('Cloud', [
    'templates', 'flavors', 'images', 'project_names', 'current'])


def read(clients):
    """The Cloud: four listings."""
    ironic = clients.ironic(versions.DEPLOY_TEMPLATES)
    templates = ironic.deploy_templates(detail=True, limit=0)
    flavors = clients.nova().flavors()
    images = list(clients.glance().images().values())
    project_names = clients.project_names()
    return Cloud(templates, flavors, images, project_names,
                 document.from_cloud(templates, flavors, images,
                                     project_names))


def export(clients):
    """The cloud's declared state, as the file's text."""
    return document.render(read(clients).current)


def sync_pending(cloud):
    """The names of the templates an interrupted apply left unsynced."""
    return sorted(t['name'] for t in cloud.templates
                  if (t.get('extra') or {}).get(SYNC_PENDING))
