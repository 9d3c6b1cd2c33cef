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

"""Grants: the deploy configs the operator lets a project switch its own
servers to, published as ironic runbooks the project owns.

Ironic's default policy already lets a project service its own node
within bounds: at deploy, ironic makes the instance's project the node's
*lessee*; a lessee's manager may change the node's provision state; a
project's manager may use a runbook the project owns; a runbook (API 1.112)
runs on a node only if the node carries one of its traits.  So a grant of
a config to a project is, for each template that serves the config (one
for every kind of hardware, or one per resource class), a runbook owned by
the project, not public, with the template's steps a running server may
take, and the template's trait: ironic then lets the project's managers
run exactly those steps, and only on the nodes tagged capable
(``tagging``).  A config whose template has a step a running server may
not take (``step_safety``: RAID, erase, a BIOS reset) is never granted.

A runbook is a grant when its ``extra`` says so (``EXTRA_GRANT``: the
template's name, with the config's annotation).  Before API 1.112 a
runbook ran on the nodes that carry a trait equal to its *name*, and names
are unique in the cloud: a runbook per project is then impossible, so
grants need 1.112.  Plain functions over the dicts of ironic's API.
"""

import collections
import hashlib

from osc_lib import exceptions

from osc_deploy_config.domain import deploy_config
from osc_deploy_config.domain import step_safety
from osc_deploy_config.domain import templates as dtemplates
from osc_deploy_config.domain import toggle_plan

# In a runbook's extra: the name of the template it grants.
EXTRA_GRANT = 'deploy_config_grant'
NAME_PREFIX = 'deploy-config.'
# ironic's runbook names: [A-Za-z0-9-._~], at most 255 characters
_MAX_NAME = 255

# What ``plan`` does to one runbook of a grant.
CREATE, REPAIR, KEEP, DELETE = 'create', 'repair', 'keep', 'delete'
# One runbook of a grant: what to do, its config, the resource class its
# template serves (None: every kind), its name, the runbook as it should
# be (None: to delete), the one there (None: none), and why.
Change = collections.namedtuple('Change', [
    'action', 'config', 'resource_class', 'name', 'wanted', 'found', 'why'])


def runbook_name(project_id, template_name):
    """The name of the runbook that grants a template to a project,
    unique in the cloud."""
    name = '%s%s.%s' % (NAME_PREFIX, project_id, template_name)
    if len(name) <= _MAX_NAME:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:12]
    return '%s.%s' % (name[:_MAX_NAME - 13], digest)


def runbook_steps(template):
    """A template's enabled steps as a runbook's, in the order a toggle
    runs them."""
    return [dict(step, order=number) for number, step in enumerate(
        toggle_plan.service_steps(template))]


def refuse_ungrantable(config, template):
    """One line for a config whose template a running server may not take
    whole: a grant lets a project run it on its running servers."""
    steps = step_safety.enabled(template['steps'])
    risky = [step_safety.risk(s) for s in steps
             if not step_safety.grantable([s])]
    if risky:
        raise exceptions.CommandError(
            'Deploy config %s cannot be granted: its template %s runs %s, '
            'which a running server may not take (%s). A project may switch '
            'only to what a running server can take; this config applies at '
            'deploy only.' % (
                config, template['name'], ', '.join(r.step for r in risky),
                '; '.join(dict.fromkeys(r.at_risk or r.kind for r in risky))))


def serving(config, known):
    """The templates that serve a config (``known``: ConfigTemplates):
    [(their resource class, as ironic names it, or None, template)]."""
    found = [(None, known[config])] if config in known else []
    found += [(t['extra'][deploy_config.EXTRA_CLASS], t) for _, t in sorted(
        known.per_class.get(config, {}).items())]
    return found


def wanted(project_id, config, resource_class, template):
    """The runbook that grants ``template`` (for ``config``, on
    ``resource_class`` or every kind) to the project: its fields, and the
    traits ironic keeps apart."""
    extra = deploy_config.template_extra(config, [], resource_class)
    extra[EXTRA_GRANT] = template['name']
    return {'name': runbook_name(project_id, template['name']),
            'steps': runbook_steps(template), 'owner': project_id,
            'public': False, 'extra': extra, 'traits': [template['name']]}


def granted_config(runbook):
    """The config a runbook grants, or None (not a grant)."""
    extra = runbook.get('extra') or {}
    if EXTRA_GRANT not in extra:
        return None
    return deploy_config.config_of(extra)


def differences(want, found):
    """How a grant's runbook differs from what its template asks for, in
    words ([] when it does not)."""
    said = []
    if _steps(found.get('steps')) != _steps(want['steps']):
        said.append('its steps differ from template %s'
                    % want['traits'][0])
    if sorted(found.get('traits') or ()) != sorted(want['traits']):
        said.append('its traits are %s, not %s' % (
            ', '.join(sorted(found.get('traits') or ())) or 'none',
            want['traits'][0]))
    if found.get('public') or found.get('owner') != want['owner']:
        said.append('it is public or owned by another project')
    if (found.get('extra') or {}) != want['extra']:
        said.append('its deploy config annotation differs')
    return said


def _steps(steps):
    return sorted((int(s['order']), s['interface'], s['step'],
                   repr(sorted((s.get('args') or {}).items())))
                  for s in steps or ())


def plan(project_id, configs, known, runbooks):
    """[Change] that makes the project's grant of ``configs`` match their
    templates (``known``: ConfigTemplates; ``runbooks``: the project's).
    Refuses a config no template realises, and one a running server may
    not take."""
    missing = [str(c) for c in configs if not known.realises(c)]
    if missing:
        raise exceptions.CommandError(
            'No deploy template realises %s on any kind of hardware: '
            'nothing to grant (openstack baremetal deploy template create '
            '--config ...)' % ', '.join(missing))
    changes = []
    for config in configs:
        mine = {r['name']: r for r in runbooks
                if r.get('owner') == project_id
                and granted_config(r) == config}
        for resource_class, template in serving(config, known):
            refuse_ungrantable(config, template)
            want = wanted(project_id, config, resource_class, template)
            found = mine.pop(want['name'], None)
            changes.append(_change(config, resource_class, want, found))
        changes += [Change(DELETE, config, (r.get('extra') or {}).get(
            deploy_config.EXTRA_CLASS), name, None, r,
            'its template %s no longer serves %s' % (
                r['extra'][EXTRA_GRANT], config))
            for name, r in sorted(mine.items())]
    return changes


def _change(config, resource_class, want, found):
    if found is None:
        return Change(CREATE, config, resource_class, want['name'], want,
                      None, 'no runbook yet')
    drift = differences(want, found)
    if drift:
        return Change(REPAIR, config, resource_class, want['name'], want,
                      found, '; '.join(drift))
    return Change(KEEP, config, resource_class, want['name'], want, found,
                  '')


def withdraw(project_id, configs, runbooks):
    """[Change] deleting the project's grant runbooks of ``configs``
    (None: of every config)."""
    return [Change(DELETE, granted_config(r), (r.get('extra') or {}).get(
        deploy_config.EXTRA_CLASS), r['name'], None, r, 'withdrawn')
        for r in sorted(runbooks, key=lambda r: r['name'])
        if r.get('owner') == project_id and granted_config(r)
        and (configs is None or granted_config(r) in configs)]


def by_project(runbooks):
    """{project ID: [the runbooks it owns that are grants]}."""
    found = {}
    for runbook in runbooks:
        if granted_config(runbook) and runbook.get('owner'):
            found.setdefault(runbook['owner'], []).append(runbook)
    return found


def as_templates(runbooks):
    """The ConfigTemplates a project's grants make: each runbook as the
    template it grants (its name, steps and annotation), with the runbook
    to service through (``runbook``).  What a project's toggle plans and
    reads back with, as an operator's does with the templates."""
    listed = []
    for runbook in runbooks:
        if granted_config(runbook) is None:
            continue
        extra = {k: v for k, v in runbook['extra'].items()
                 if k != EXTRA_GRANT}
        steps = sorted(runbook.get('steps') or (),
                       key=lambda s: int(s['order']))
        listed.append({
            'uuid': runbook['uuid'], 'name': runbook['extra'][EXTRA_GRANT],
            'extra': extra, 'runbook': runbook['uuid'], 'steps': [
                {'interface': s['interface'], 'step': s['step'],
                 'args': s.get('args') or {}, 'priority': len(steps) - n}
                for n, s in enumerate(steps)]})
    return dtemplates.by_config(listed)


def granted(runbooks, templates_by_config):
    """The configs the runbooks grant on one server's hardware
    (``templates_by_config``: {Config: the template serving it there}):
    those whose runbook grants that very template."""
    return {granted_config(r) for r in runbooks
            if granted_config(r) in templates_by_config
            and templates_by_config[granted_config(r)]['name']
            == r['extra'][EXTRA_GRANT]}
