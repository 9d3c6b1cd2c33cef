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

"""What a bare-metal toggle applied, recorded on the node.

A bare-metal server keeps its flavor when a toggle services its node, so
what the node runs is recorded: what ``server deploy-config show`` reports,
what a rebuild applies again, what a rollout counts as done.

The operator's toggle records in the node's ``properties``, which ironic's
default policy lets only the node's operators change (a system member, or a
member of the node's owner project).  A project's toggle (``grants``) cannot
write there: it records in the node's ``extra``, which the node's lessee,
the server's project, may write; its record names the project.  Whatever a
project can write decides nothing by itself: its record counts only for the
configs granted to that project on that node (``applied(..., granted)``),
so a record a member forged makes the operator's rebuild or rollout apply
nothing the project could not have switched to itself.  The server's own
metadata decides nothing either.  An operator's toggle supersedes the
project's record of the same types.

Two keys in each place: a pending record is written before the servicing
(the configs, the instance, and the node's ``provision_updated_at`` then),
and replaced by the applied one (the instance and its toggled configs) once
the hardware was read back.  A rerun after an interruption finds the
pending record, and ironic's own record of the servicing decides whether
it ran (``servicing_outcome``).  A failed servicing's recovery marks the
pending record as recovering before it lifts ironic's maintenance
(``recovering_patch``): a rerun that finds the mark, or ironic's record of
our servicing failed, knows that no one has looked at the hardware yet.
Each record names its instance: a record of an earlier instance on the
node means nothing for the next.  Plain functions over ironic's node
dicts.
"""

import ast
import collections
import datetime

from osc_deploy_config.domain.configs import deploy_config

APPLIED = 'deploy_config_applied'
PENDING = 'deploy_config_pending'
# A project's record: in the node's extra, naming the project.
PROJECT_APPLIED = 'deploy_config_project_applied'
PROJECT_PENDING = 'deploy_config_project_pending'

# A toggle under way: its configs and when the node last changed
# provisioning before it ({type: Config}, a timestamp), and whether the
# recovery of its failed servicing began.
Pending = collections.namedtuple('Pending', ['configs', 'since',
                                             'recovering'],
                                 defaults=(False,))
RECOVERING = 'recovering'



def _configs(values):
    return {t: deploy_config.Config(t, str(v))
            for t, v in sorted((values or {}).items())}


def _of_instance(node, key, instance_uuid, field='properties'):
    """The record of the instance under ``key``, if it is one: a record
    of the wrong shape (a lessee writes extra) is none."""
    found = ((node or {}).get(field) or {}).get(key)
    if not isinstance(found, dict) or found.get(
            'instance_uuid') != instance_uuid:
        return None
    configs = found.get('configs')
    if not isinstance(configs, dict) or not all(
            isinstance(t, str) and isinstance(v, str)
            for t, v in configs.items()):
        return None
    if 'project_id' in found and not isinstance(found['project_id'], str):
        return None
    return found


def applied(node, instance_uuid, granted=None):
    """{type: Config} a toggle applied to the instance on the node: the
    operator's record, and over it the project's, which is newer (an
    operator's toggle drops the project's record of its types).  The
    project's counts only for the configs ``granted`` to it on that node
    (and, for the operator's readers, proven run: ``serviced_with``); a
    record that does not count changes nothing, the operator's own
    included."""
    found = _configs((_of_instance(node, APPLIED, instance_uuid) or {}).get(
        'configs'))
    project = _configs((_of_instance(
        node, PROJECT_APPLIED, instance_uuid, 'extra') or {}).get('configs'))
    for config_type, config in project.items():
        if config in (granted or ()):
            found[config_type] = config
    return found


def project_configs(node, instance_uuid):
    """{Config} the project's record of the instance names."""
    return set(_configs((_of_instance(
        node, PROJECT_APPLIED, instance_uuid, 'extra') or {}).get(
            'configs')).values())


def project_recorded(node, instance_uuid):
    """The project that recorded a toggle of the instance on the node, or
    None: whose grants decide whether its record counts."""
    found = _of_instance(node, PROJECT_APPLIED, instance_uuid, 'extra')
    return found.get('project_id') if found else None


def pending(node, instance_uuid, project=False):
    """The Pending toggle of the instance on the node (``project``: a
    project's, in extra), or None."""
    found = _of_instance(node, PROJECT_PENDING if project else PENDING,
                         instance_uuid, 'extra' if project else 'properties')
    if found is None:
        return None
    return Pending(_configs(found.get('configs')), found.get('since'),
                   found.get(RECOVERING) is True)


def recovering_patch(node, instance_uuid, project=False):
    """The JSON patch that marks the pending record of the instance (a
    project's) as recovering: its servicing failed, and the recovery that
    lifts ironic's maintenance begins.  Nothing without one."""
    field, key = ('extra', PROJECT_PENDING) if project else (
        'properties', PENDING)
    found = _of_instance(node, key, instance_uuid, field)
    if found is None:
        return []
    return [{'op': 'add', 'path': '/%s/%s' % (field, key),
             'value': dict(found, **{RECOVERING: True})}]


def serviced_since(node, under_way):
    """Whether ironic changed the node's provisioning since the pending
    record was written (something began): no proof of a servicing."""
    return node.get('provision_updated_at') != under_way.since


# How the servicings ironic recorded since a pending record ended: ours
# ran to its end, failed, or the one that ended ran other steps.
SERVICED, SERVICE_FAILED, OTHER_STEPS = 'serviced', 'failed', 'other steps'
# what ironic writes for a secret in the steps of its history
MASKED = '***'


def servicing_outcome(history, since, steps):
    """SERVICED, SERVICE_FAILED, OTHER_STEPS or None (not known) from the
    node's history (API 1.78, in detail, newest first): the last servicing
    that ended strictly after ``since`` (the node's
    ``provision_updated_at`` when the pending record was written; without
    it, no entry proves anything).  Ironic writes a ``servicing_start``
    that lists the steps, then a ``servicing_end`` (an error when a step
    failed), and a ``servicing`` error when it fails before its steps; the
    servicing is ours only if its start lists ``steps``, and an end whose
    start is not shown (past the page, or in an earlier second) is not
    known."""
    after = _when(since)
    if after is None:
        return None
    ended = None
    for entry in history:
        if _when(entry.get('created_at')) <= after:
            break
        kind = entry.get('event_type')
        failed = (entry.get('severity') or '').upper() == 'ERROR'
        if ended is None:
            if kind == 'servicing_end':
                ended = SERVICE_FAILED if failed else SERVICED
            elif kind == 'servicing' and failed:
                return SERVICE_FAILED
        elif kind == 'servicing_start':
            listed = started_steps(entry.get('event') or '')
            if listed is None:
                return None
            return ended if all(any(same_step(ours, theirs)
                                    for theirs in listed)
                                for ours in steps) else OTHER_STEPS
    return None


def last_serviced(history, since, candidates):
    """The config whose steps the node's last servicing of their type ran
    to its end strictly after ``since`` (the instance's creation), or None
    (none ran, the last failed, its end is not shown yet, or a deployment
    came after it).  ``history``: API 1.78, in detail, newest first;
    ``candidates``: {Config: its steps}, every config of one type on the
    node's hardware.  What proves a project's record of a toggle, which
    its members could write by hand: the last switch of that type, if
    nothing redeployed the node since; an earlier one no longer counts,
    nor does it while the last one's end is not in the history (ironic
    may show the node active before it writes the end)."""
    ended = None
    for entry in history:
        if not after(entry.get('created_at'), since):
            break
        kind = entry.get('event_type') or ''
        if kind.startswith('deployment') and ended is None:
            return None
        if kind == 'servicing_end':
            ended = (entry.get('severity') or '').upper() != 'ERROR'
        elif kind == 'servicing_start':
            listed = started_steps(entry.get('event') or '')
            if listed is None:
                return None     # steps not shown: it may be of the type
            ran = [c for c, steps in candidates.items() if all(
                any(same_step(ours, theirs) for theirs in listed)
                for ours in steps)]
            if ran:
                # its end not shown (None): under way, or not written yet
                return ran[0] if ended and len(ran) == 1 else None
            ended = None
    return None


def after(stamp, since):
    """Whether a time ironic wrote is strictly after ``since`` (None:
    nothing is)."""
    when, limit = _when(stamp), _when(since)
    return when is not None and limit is not None and when > limit


def at_or_after(stamp, since):
    """Whether a time ironic wrote is ``since`` or later (None: nothing
    is): ironic and nova write whole seconds, and a deploy may start in
    the second nova created its instance."""
    when, limit = _when(stamp), _when(since)
    return when is not None and limit is not None and when >= limit


def started_steps(event):
    """The steps a ``servicing_start`` event lists (ironic writes them as
    Python literals, secrets masked), or None when its text says none."""
    _, found, listed = event.partition('steps=')
    try:
        steps = ast.literal_eval(listed.strip()) if found else None
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    if not isinstance(steps, list) or not all(
            isinstance(s, dict) for s in steps):
        return None
    return steps


def same_step(ours, theirs):
    """One of our steps, as ironic listed it: the same interface, step and
    arguments (an argument ironic masked matches any)."""
    if (ours['interface'], ours['step']) != (theirs.get('interface'),
                                             theirs.get('step')):
        return False
    mine, shown = ours.get('args') or {}, theirs.get('args') or {}
    return set(mine) == set(shown) and all(
        shown[k] == MASKED or shown[k] == mine[k] for k in mine)


def _when(stamp):
    if not stamp:
        return None
    when = datetime.datetime.fromisoformat(str(stamp).replace('Z', '+00:00'))
    return when if when.tzinfo else when.replace(tzinfo=datetime.timezone.utc)


def pending_patch(node, instance_uuid, configs, project_id=None):
    """The JSON patch that writes the pending record of ``configs`` (a
    project's, in extra, with ``project_id``)."""
    record = {'instance_uuid': instance_uuid,
              'configs': {c.type: c.value for c in configs},
              'since': node.get('provision_updated_at')}
    if project_id:
        record['project_id'] = project_id
        return [{'op': 'add', 'path': '/extra/%s' % PROJECT_PENDING,
                 'value': record}]
    return [{'op': 'add', 'path': '/properties/%s' % PENDING,
             'value': record}]


def complete_patch(node, instance_uuid, configs, project_id=None):
    """The JSON patch that records ``configs`` as applied (over what the
    record has of the instance) and drops the pending record.  The
    operator's supersedes the project's record of the same types."""
    if project_id:
        found = _of_instance(node, PROJECT_APPLIED, instance_uuid, 'extra')
        merged = dict((found or {}).get('configs') or {})
        merged.update((c.type, c.value) for c in configs)
        return [{'op': 'add', 'path': '/extra/%s' % PROJECT_APPLIED,
                 'value': {'instance_uuid': instance_uuid, 'configs': merged,
                           'project_id': project_id}}] + drop_pending(
            node, project=True)
    merged = {t: c.value for t, c in applied(node, instance_uuid).items()}
    merged.update((c.type, c.value) for c in configs)
    return [{'op': 'add', 'path': '/properties/%s' % APPLIED, 'value': {
        'instance_uuid': instance_uuid, 'configs': merged}}] + drop_pending(
        node) + _drop_project_types(node, instance_uuid,
                                    [c.type for c in configs])


def drop_pending(node, project=False):
    """The JSON patch that drops a pending record (a project's), if the
    node has one."""
    field, key = ('extra', PROJECT_PENDING) if project else (
        'properties', PENDING)
    if key in ((node or {}).get(field) or {}):
        return [{'op': 'remove', 'path': '/%s/%s' % (field, key)}]
    return []


def _drop_project_types(node, instance_uuid, config_types):
    """The JSON patch that drops these types from the project's record."""
    found = _of_instance(node, PROJECT_APPLIED, instance_uuid, 'extra')
    if not found or not set(config_types) & set(found.get('configs') or ()):
        return []
    kept = {t: v for t, v in found['configs'].items()
            if t not in config_types}
    if not kept:
        return [{'op': 'remove', 'path': '/extra/%s' % PROJECT_APPLIED}]
    return [{'op': 'add', 'path': '/extra/%s' % PROJECT_APPLIED,
             'value': dict(found, configs=kept)}]


def forget_patch(node, instance_uuid, config_types):
    """The JSON patch that drops these types from what the records say
    the instance runs (nothing when they name none of them)."""
    kept = {t: c.value for t, c in applied(node, instance_uuid).items()}
    patch = _drop_project_types(node, instance_uuid, config_types)
    if not set(config_types) & set(kept):
        return patch
    for config_type in config_types:
        kept.pop(config_type, None)
    if not kept:
        return [{'op': 'remove', 'path': '/properties/%s' % APPLIED}] + patch
    return [{'op': 'add', 'path': '/properties/%s' % APPLIED, 'value': {
        'instance_uuid': instance_uuid, 'configs': kept}}] + patch
