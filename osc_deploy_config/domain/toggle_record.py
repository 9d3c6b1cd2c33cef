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

"""What a bare-metal toggle applied, recorded on the node where only the
operator writes.

A bare-metal server keeps its flavor when a toggle services its node, so
what the node runs is recorded: what ``server deploy-config show`` reports,
what a rebuild applies again, what a rollout counts as done.  It lives in
the node's ``properties``, which ironic's default policy lets only the
node's operators change (a system member, or a member of the node's owner
project): the server's own project, the node's lessee, may read it, and may
write the node's ``extra`` and the server's metadata, so neither of those
can decide what runs on the hardware.

Two keys: ``deploy_config_pending`` is written before the servicing
(the configs, the instance, and the node's ``provision_updated_at`` then),
and replaced by ``deploy_config_applied`` (the instance and its toggled
configs) once the hardware was read back.  A rerun after an interruption
finds the pending record: a node whose provisioning changed since was
serviced, and is not serviced again.  Each record names its instance: a
record of an earlier instance on the node means nothing for the next.
Plain functions over ironic's node dicts.
"""

import collections
import datetime

from osc_deploy_config.domain import deploy_config

APPLIED = 'deploy_config_applied'
PENDING = 'deploy_config_pending'

# A toggle under way: its configs and when the node last changed
# provisioning before it ({type: Config}, a timestamp).
Pending = collections.namedtuple('Pending', ['configs', 'since'])


def _configs(values):
    return {t: deploy_config.Config(t, str(v))
            for t, v in sorted((values or {}).items())}


def _of_instance(node, key, instance_uuid):
    found = ((node or {}).get('properties') or {}).get(key)
    if isinstance(found, dict) and found.get('instance_uuid') == \
            instance_uuid:
        return found
    return None


def applied(node, instance_uuid):
    """{type: Config} a toggle applied to the instance on the node."""
    found = _of_instance(node, APPLIED, instance_uuid)
    return _configs(found and found.get('configs'))


def pending(node, instance_uuid):
    """The Pending toggle of the instance on the node, or None."""
    found = _of_instance(node, PENDING, instance_uuid)
    if found is None:
        return None
    return Pending(_configs(found.get('configs')), found.get('since'))


def serviced_since(node, under_way):
    """Whether ironic changed the node's provisioning since the pending
    record was written (something began): no proof of a servicing."""
    return node.get('provision_updated_at') != under_way.since


# How the servicings ironic recorded since a pending record ended.
SERVICED, SERVICE_FAILED = 'serviced', 'failed'


def servicing_outcome(history, since):
    """SERVICED, SERVICE_FAILED, or None (none recorded) from the node's
    history (API 1.78, in detail, newest first): the last servicing that
    ended strictly after ``since`` (the node's ``provision_updated_at``
    when the pending record was written).  Ironic writes
    ``servicing_end`` when a servicing ends (an error when a step failed),
    and a ``servicing`` error when it fails before its steps."""
    after = _when(since)
    for entry in history:
        if after is not None and _when(entry.get('created_at')) <= after:
            break
        kind = entry.get('event_type')
        failed = (entry.get('severity') or '').upper() == 'ERROR'
        if kind == 'servicing_end':
            return SERVICE_FAILED if failed else SERVICED
        if kind == 'servicing' and failed:
            return SERVICE_FAILED
    return None


def _when(stamp):
    if not stamp:
        return None
    when = datetime.datetime.fromisoformat(str(stamp).replace('Z', '+00:00'))
    return when if when.tzinfo else when.replace(tzinfo=datetime.timezone.utc)


def pending_patch(node, instance_uuid, configs):
    """The JSON patch that writes the pending record of ``configs``."""
    return [{'op': 'add', 'path': '/properties/%s' % PENDING, 'value': {
        'instance_uuid': instance_uuid,
        'configs': {c.type: c.value for c in configs},
        'since': node.get('provision_updated_at')}}]


def complete_patch(node, instance_uuid, configs):
    """The JSON patch that records ``configs`` as applied (over what the
    record has of the instance) and drops the pending record."""
    merged = {t: c.value for t, c in applied(node, instance_uuid).items()}
    merged.update((c.type, c.value) for c in configs)
    return [{'op': 'add', 'path': '/properties/%s' % APPLIED, 'value': {
        'instance_uuid': instance_uuid, 'configs': merged}}] + drop_pending(
        node)


def drop_pending(node):
    """The JSON patch that drops a pending record, if the node has one."""
    if PENDING in ((node or {}).get('properties') or {}):
        return [{'op': 'remove', 'path': '/properties/%s' % PENDING}]
    return []


def forget_patch(node, instance_uuid, config_types):
    """The JSON patch that drops these types from what the record says
    the instance runs (nothing when it names none of them)."""
    kept = {t: c.value for t, c in applied(node, instance_uuid).items()}
    if not set(config_types) & set(kept):
        return []
    for config_type in config_types:
        kept.pop(config_type, None)
    if not kept:
        return [{'op': 'remove', 'path': '/properties/%s' % APPLIED}]
    return [{'op': 'add', 'path': '/properties/%s' % APPLIED, 'value': {
        'instance_uuid': instance_uuid, 'configs': kept}}]
