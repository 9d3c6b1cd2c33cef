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

"""A bare-metal toggle's BIOS steps against ironic's cache of the node's
BIOS, before any write: a setting ironic would refuse is named, and one
that only a vendor profile locks gets the profile first.

Ironic refuses two steps of one name in a deploy template or a runbook,
not in raw service steps, and from 36.0 refuses a locked setting even
beside the profile that unlocks it.  So the operator's toggle sends the
profile in a step of its own, before the template's; a project's toggle
runs runbooks, and cannot: its node must be prepared first.
"""

from osc_lib import exceptions

from osc_deploy_config.domain.hardware import bios_prepare
from osc_deploy_config.domain.hardware import bios_profiles
from osc_deploy_config.domain.hardware import bios_registry
from osc_deploy_config.domain.hardware import effects
from osc_deploy_config.domain.hardware import ironic_releases
from osc_deploy_config.services import ironic as ironic_api
from osc_deploy_config.services import versions
from osc_deploy_config.use_cases.toggle import outcomes


def read(ironic, node):
    """The node's BIOS settings, in detail (with the registry ironic
    caches) where ironic has it (1.74)."""
    try:
        ironic.require_feature(versions.NODE_BIOS_REGISTRY)
    except exceptions.CommandError:
        return ironic.bios(node)
    return ironic.bios_registry(node)


def poll_fields(project):
    """What a servicing's polls read of the node: the operator's also
    what a BIOS step waits for (a project's token may not read it)."""
    return ironic_api.POLL_FIELDS + (
        () if project else ('driver_internal_info',))


def vouched(servicing, prepared):
    """Whether sync vouched for the node: it carries every changed
    config's template trait, which sync gives a node only once ironic's
    cache shows it can take the template.  A rollout reads no node alone,
    and trusts that."""
    traits = set(prepared.reading.node.get('traits') or ())
    return not servicing.toggle.fresh_reading and all(
        prepared.reading.templates_by_config[c]['name'] in traits
        for c in prepared.changed)


def checked_steps(servicing, prepared):
    """The steps of a new servicing, checked before any write."""
    refuse(servicing, prepared)
    return servicing.steps(prepared)


def refuse(servicing, prepared):
    """Refuse, in one line, a setting ironic would refuse on the node; set
    ``prepared.unlocking`` to the profile steps the operator's toggle
    sends first.  Once a toggle."""
    if (prepared.bios_checked or prepared.finishing
            or vouched(servicing, prepared)):
        # an interrupted toggle's servicing is finished, not checked anew
        return
    prepared.bios_checked = True
    wanted = effects.bios_settings(servicing.steps(prepared))
    registry = servicing.hardware(prepared, detail=True)[2]
    if wanted:
        refuse_stall(servicing, prepared, registry)
    if not (wanted and registry and bios_registry.has_registry(registry)):
        return
    label = outcomes.label(prepared.reading.node)
    configs = outcomes.configs_text(prepared.changed)
    refuse_cached_read_only(servicing, prepared, wanted, registry)
    # ironic skips a step of the values the node has: no profile first
    needs = bios_prepare.pending(
        bios_profiles.prerequisites(wanted, registry) or [], registry
    ) if bios_prepare.pending(wanted.items(), registry) else []
    if needs and servicing.project:
        raise exceptions.CommandError(
            'Server %s cannot take %s: its node %s\'s BIOS profile locks it '
            '(%s needed first), which a project\'s runbook cannot set. '
            'Nothing was changed; the operator\'s toggle of this server sets '
            'it (or the operator prepares the node).' % (
                prepared.server['name'], configs, label,
                bios_prepare.settings_text(needs)))
    found = bios_registry.problems(
        dict(needs, **wanted), {label: registry}, same_step_unlocks=bool(
            needs) or not servicing.ironic.release().validates)
    if found:
        raise exceptions.CommandError(
            'Server %s cannot take %s: ironic would refuse it on node %s: '
            '%s. Nothing was changed.' % (
                prepared.server['name'], configs, label, '; '.join(
                    '%s (%s)' % (p.setting, p.reason) for p in found)))
    if needs:
        prepared.unlocking = bios_prepare.clean_steps(needs)
        servicing.say('  node %s: %s first (%s)' % (
            label, bios_prepare.settings_text(needs),
            bios_prepare.governs(needs) or 'its vendor profile'))


def refuse_stall(servicing, prepared, registry):
    """One line where the node's ironic would never end the BIOS step
    (``ironic_releases.stall``), naming the release that does."""
    stalls = ironic_releases.stall(servicing.ironic.release(),
                                   prepared.reading.node, registry)
    if stalls:
        raise exceptions.CommandError(
            'Server %s cannot take %s on node %s: %s. Nothing was changed.'
            % (prepared.server['name'], outcomes.configs_text(
                prepared.changed), outcomes.label(prepared.reading.node),
               stalls))


def refuse_cached_read_only(servicing, prepared, wanted, registry):
    """Ironic 36 and later refuse a setting their cache holds read-only
    before any write, whatever step comes first (a profile step unlocks
    it at the BMC, not in that cache): one line, naming why the cache
    holds it so."""
    if not servicing.ironic.release().validates:
        return
    by_name = {e['name']: e for e in registry}
    cached = sorted(n for n in wanted
                    if (by_name.get(n) or {}).get('read_only'))
    if not cached:
        return
    stale = bios_profiles.stale_read_only(wanted, registry)
    locked = bios_profiles.locks_now(registry)
    profiles = ['%s=%s' % locked[n] for n in cached if n in locked]
    why = bios_profiles.describe_stale(stale) if stale else (
        'its profile locks it (%s), and ironic keeps it read-only after a '
        'profile step too: it writes a setting\'s read_only again only when '
        'its value changes' % ', '.join(profiles) if profiles
        else 'the BIOS reports it read-only')
    raise exceptions.CommandError(
        'Server %s cannot take %s: ironic caches %s read-only on node %s and '
        'refuses it before any write; %s. Nothing was changed.' % (
            prepared.server['name'], outcomes.configs_text(prepared.changed),
            ', '.join(cached), outcomes.label(prepared.reading.node), why))
