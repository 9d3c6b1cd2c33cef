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
import logging

from osc_deploy_config.domain.configs import config_specs
from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.configs import templates as dtemplates
from osc_deploy_config.domain.declared import document
from osc_deploy_config.domain.grants import grant_flavors
from osc_deploy_config.domain.grants import grants
from osc_deploy_config.services import versions

LOG = logging.getLogger(__name__)

# The extra key of a template written by ``apply`` whose nodes are not yet
# synced: a rerun after a kill finds it and syncs, then removes it.
SYNC_PENDING = 'deploy_config_sync_pending'

# What was read: the listings as dicts, their Declared, and what each
# name a file may give means (``names``).
Cloud = collections.namedtuple('Cloud', [
    'templates', 'flavors', 'images', 'project_names', 'current', 'named'])


def read(clients):
    """The Cloud: four listings."""
    ironic = clients.ironic(versions.DEPLOY_TEMPLATES)
    templates = ironic.deploy_templates(detail=True, limit=0)
    flavors = clients.nova().flavors()
    images = list(clients.glance().images().values())
    project_names = clients.project_names()
    unnamed = document.unnamed_grants(templates, project_names)
    if unnamed:
        LOG.warning(
            'Left out: the grants recorded for project(s) keystone no '
            'longer knows, %s (withdraw them: openstack project '
            'deploy-config unset %s --all)', ', '.join(unnamed), unnamed[0])
    return cloud_of(templates, flavors, images, project_names)


def cloud_of(templates, flavors, images, project_names):
    """The Cloud of the four listings."""
    return Cloud(templates, flavors, images, project_names,
                 document.from_cloud(templates, flavors, images,
                                     project_names),
                 names(templates, flavors, images, project_names))


def names(templates, flavors, images, project_names):
    """{(section, name): [flavor, image or project (its ID and name)]}:
    what a name in a declared state means, as ``export`` wrote it: of
    the objects bearing that name, those this plugin's state speaks of
    (asking for configs; granted some, as export counts grants), else every
    one."""
    found = {}
    for section, listed in (('flavors', flavors), ('images', images)):
        for owner in listed:
            found.setdefault((section, owner.get('name')), []).append(owner)
    for project_id, name in project_names.items():
        found.setdefault(('projects', name), []).append(
            {'id': project_id, 'name': name})
    granted = {p for t in templates for p in grants.granted_projects(t)}
    return {key: [o for o in owners if speaks_of(key[0], o, granted)]
            or owners for key, owners in found.items()}


def speaks_of(section, owner, granted):
    """Whether this plugin's state speaks of the object: it asks for
    configs (a project: it is among ``granted``)."""
    if section == 'projects':
        return owner['id'] in granted
    return bool(config_specs.configs_of(
        owner.get('extra_specs') if section == 'flavors' else owner))


def export(clients, output='yaml'):
    """The cloud's declared state, as the file's text (``output``: yaml or
    json): it names no IDs (grants of projects keystone no longer knows
    are left out, with a warning; a name granted in two domains is
    refused), and ``diff`` of it is empty (``exportable``)."""
    cloud = read(clients)
    document.refuse_doubled_project_names(cloud.templates,
                                          cloud.project_names)
    return document.render(exportable(cloud), output)


def exportable(cloud):
    """The cloud's Declared without what a file cannot hold: the private
    flavors the toggles and grants derived (they follow the servers, and
    a file would drift after every toggle), and the flavors and images
    asking for a config no template serves on their kind any more (each
    with a warning: no file could declare them)."""
    current = cloud.current
    derived = {f['name'] for f in grant_flavors.derived_private(
        cloud.flavors)}
    known = dtemplates.by_config(
        t for t in cloud.templates
        if not (t.get('extra') or {}).get(dtemplates.DELETING))
    # the class of the flavor a name's asks come from (document._owners)
    kinds = {f['name']: config_specs.resource_class_of(f.get('extra_specs'))
             for f in cloud.flavors if f.get('name') and
             config_specs.configs_of(f.get('extra_specs'))}
    flavors, images = {}, {}
    for section, kept, served in (
            ('flavors', flavors, lambda n: known.for_class(kinds.get(n))),
            ('images', images, lambda n: known.for_class(None))):
        for name, asks in getattr(current, section).items():
            if name in derived:
                continue
            unserved = sorted(str(deploy_config.Config(t, v)) for t, v in
                              asks.items() if deploy_config.Config(t, v)
                              not in served(name))
            if unserved:
                LOG.warning('Left out: %s %s, which asks for %s, which no '
                            'template serves (openstack %s deploy-config '
                            'unset %s %s)', section[:-1], name,
                            ', '.join(unserved), section[:-1], name,
                            ' '.join(c.split('=')[0] for c in unserved))
                continue
            kept[name] = asks
    return current._replace(flavors=flavors, images=images)


def sync_pending(cloud):
    """The names of the templates an interrupted apply left unsynced."""
    return sorted(t['name'] for t in cloud.templates
                  if (t.get('extra') or {}).get(SYNC_PENDING))
