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

"""The pre-flight of ``server create``: before nova is asked, refuse a
flavor and image whose deploy configs conflict, and (when placement can be
read) a config no node can take now; each in one line, nothing created.

It never blocks a boot it cannot judge: whatever it cannot read (ironic's
templates, placement: a plain project member) it leaves unchecked,
silently; a boot from a volume, or a flavor whose request nova translates
(numbered groups, dedicated CPUs), skips the placement check.  A boot that
asks for no deploy config costs the reads of its flavor and its image, which
OSC then does not make (``services.handover``): by name, one request each
where nova filters flavors by name (2.102), and the version discovery OSC
makes for the boot anyway.
"""

import logging

from osc_lib import exceptions

from osc_deploy_config.domain.configs import config_specs
from osc_deploy_config.domain.configs import templates as dtemplates
from osc_deploy_config.domain.servers import preflight
from osc_deploy_config.services import ironic as ironic_api
from osc_deploy_config.services import versions

LOG = logging.getLogger(__name__)
# How many of the scheduler's candidates the pre-flight reads the BIOS of.
PREFLIGHT_NODES = 8


def check(clients, flavor_ref, image_ref, from_volume=False):
    """Refuse (CommandError) a boot of this flavor and image that cannot
    deploy; otherwise (the flavor, the image or {}, what else was read), or
    None when the flavor cannot be read (nothing judged)."""
    read = _read(clients, flavor_ref, image_ref)
    if read is None:
        return None
    flavor, image, known = read
    by_config = known.for_class(config_specs.resource_class_of(
        flavor.get('extra_specs')))
    also = ['templates'] if by_config else []
    found = preflight.asked(flavor, image, by_config, known.sets)
    preflight.refuse_doubled_types(found)
    conflict = preflight.step_conflict(found, by_config, known.sets)
    if conflict:
        raise exceptions.CommandError(preflight.describe_step_conflict(
            found, conflict, _instead(clients, found, conflict, flavor)))
    resources, required, forbidden = config_specs.placement_request(
        flavor, image)
    if (found and preflight.asks_templates(required)
            and preflight.judged(flavor) and not from_volume):
        candidates = _candidates(clients, resources, required, forbidden)
        also.append('placement')
        if candidates is not None:
            preflight.refuse_unschedulable(found, candidates)
            _refuse_refused_steps(clients, found, by_config, candidates)
    return flavor, image, also


def _refuse_refused_steps(clients, found, by_config, candidates):
    """Refuse a boot whose templates set a BIOS setting that ironic would
    refuse on every node the scheduler could choose (read-only, a value
    its registry does not allow: a deploy that would fail); warn where
    only some would.  Only where ironic's BIOS caches can be read."""
    wanted = preflight.bios_settings(found, by_config)
    if not wanted:
        return
    judged = sorted(candidates)[:PREFLIGHT_NODES]
    try:
        api = clients.ironic(versions.NODE_BIOS_REGISTRY)
        api.require()
        registries = api.bios_registries(judged)
        same_step_unlocks = not api.release().validates
    except Exception as exc:    # noqa: BLE001 - never block a boot
        LOG.debug('deploy-config pre-flight without BIOS caches: %s', exc)
        return
    refusing = preflight.refused_steps(wanted, registries, same_step_unlocks)
    if refusing and len(refusing) == len(candidates):
        # only where every candidate was judged
        raise exceptions.CommandError(preflight.describe_refused(
            found, refusing))
    for node, reason in sorted(refusing.items()):
        LOG.warning('Node %s would fail this deploy: %s; run openstack '
                    'baremetal node deploy-config sync', node, reason)


def _instead(clients, found, conflict, flavor):
    """What to do instead of a boot whose templates share a step, in
    words: a flavor that asks for all of them (one listing of the flavors,
    on this refusal only)."""
    try:
        flavors = clients.nova().flavors()
    except Exception as exc:    # noqa: BLE001 - the refusal stands
        LOG.debug('deploy-config pre-flight: flavors not listed: %s', exc)
        flavors = []
    return preflight.instead(found, conflict, flavors, flavor)


def _read(clients, flavor_ref, image_ref):
    """(flavor, image properties, templates.ConfigTemplates), or None when
    the flavor cannot be read; no templates when ironic hides them."""
    try:
        nova = clients.nova()
        maximum = nova.maximum()
        flavor = nova.flavor(flavor_ref, by_name_filter=bool(
            maximum and maximum >= versions.parse(
                versions.NEEDS[versions.FLAVORS_BY_NAME][1])))
        image = clients.glance().find_image(image_ref) if image_ref else {}
    except Exception as exc:    # noqa: BLE001 - never block a boot
        LOG.debug('deploy-config pre-flight skipped: %s', exc)
        return None
    if not any(k.startswith(('deploy-config:', 'trait:'))
               for k in list(flavor.get('extra_specs') or {}) + list(image)):
        return flavor, image, dtemplates.ConfigTemplates()
    try:
        known = clients.ironic().config_templates(
            fields=ironic_api.TEMPLATE_STEP_FIELDS)
    except Exception as exc:    # noqa: BLE001 - never block a boot
        LOG.debug('deploy-config pre-flight without templates: %s', exc)
        known = dtemplates.ConfigTemplates()
    return flavor, image, known


def _candidates(clients, resources, required, forbidden):
    try:
        return clients.placement().schedulable(resources, required,
                                               forbidden)
    except Exception as exc:    # noqa: BLE001 - never block a boot
        LOG.debug('deploy-config pre-flight without placement: %s', exc)
        return None
