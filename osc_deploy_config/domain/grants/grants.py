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

The grant itself is recorded where only the operator writes: in each
serving template's ``extra`` (``GRANTED``: each project, with the digest
of the template's content it was granted: name, config, resource class
and steps), which ironic shows to a system role only.  A grant counts
only while the template still has that content (``granted_projects``):
a template changed behind the grant's back (ironic's own API) carries no
grant to its new steps, and ``set`` refuses to change a granted one.
A project's manager may create and change runbooks of its own, so a
runbook proves nothing: the operator's tools
trust a project's record of a toggle only for what the templates say was
granted (``granted``).  A runbook published for a grant says so in its
``extra`` (``EXTRA_GRANT``: the template's name, with the config's
annotation), and is found again by its name.  Before API 1.112 a runbook
ran on the nodes that carry a trait equal to its *name*, and names are
unique in the cloud: a runbook per project is then impossible, so grants
need 1.112.  Plain functions over the dicts of ironic's API.
"""

import collections
import hashlib
import json

from osc_lib import exceptions

from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.configs import step_safety
from osc_deploy_config.domain.configs import templates as dtemplates
from osc_deploy_config.domain.toggle import toggle_plan

# In a runbook's extra: the name of the template it grants.
EXTRA_GRANT = 'deploy_config_grant'
# In a template's extra: the projects it is granted to (the operator's).
GRANTED = 'deploy_config_granted'
# The keys of a template's extra that a grant is of, or records it.
CONTENT_KEYS = frozenset((deploy_config.EXTRA_TYPE, deploy_config.EXTRA_VALUE,
                          deploy_config.EXTRA_CLASS, GRANTED))
NAME_PREFIX = 'deploy-config.'
# ironic's runbook names: [A-Za-z0-9-._~], at most 255 characters
_MAX_NAME = 255

# What ``plan`` does to one runbook of a grant, or to one template's
# record of it.
CREATE, REPAIR, KEEP, DELETE = 'create', 'repair', 'keep', 'delete'
RECORD, UNRECORD = 'record', 'unrecord'
# One change of a grant: what to do, its config, the resource class its
# template serves (None: every kind), the runbook's (or the template's)
# name, what it should be (a runbook; for a template, its JSON patch;
# None: to delete), the one there (None: none), and why.
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
    whole (a grant lets a project run it on its running servers), or that
    has no step to run."""
    if template['name'] in deploy_config.standard_traits():
        raise exceptions.CommandError(
            'Deploy config %s cannot be granted: its template %s is named as '
            'a standard trait, which nodes may carry without being capable '
            '(rename it CUSTOM_...)' % (config, template['name']))
    steps = step_safety.enabled(template['steps'])
    if not steps:
        raise exceptions.CommandError(
            'Deploy config %s cannot be granted: its template %s has no '
            'enabled step (every priority is 0).' % (config,
                                                     template['name']))
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


def content_digest(template):
    """The digest of what a grant of the template lets a project run: its
    name (the trait), config, resource class and enabled steps, in an
    order of their own (ironic orders them by priority, not by list)."""
    extra = template.get('extra') or {}
    content = {
        'name': template['name'],
        'config': str(deploy_config.config_of(extra)),
        'resource_class': extra.get(deploy_config.EXTRA_CLASS),
        'steps': sorted(json.dumps(
            [s['interface'], s['step'], s.get('args') or {},
             int(s.get('priority') or 0)], sort_keys=True)
            for s in template.get('steps') or ()
            if int(s.get('priority') or 0))}
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode(
    )).hexdigest()[:16]


def recorded(template):
    """{project ID: the content digest it was granted} of the template's
    record (an earlier release's list of projects: no digest)."""
    found = (template.get('extra') or {}).get(GRANTED)
    if isinstance(found, list):
        return {p: None for p in found if isinstance(p, str)}
    if isinstance(found, dict):
        return {p: d for p, d in found.items() if isinstance(p, str)}
    return {}


def granted_projects(template):
    """The projects the operator granted the template to, as it is now:
    a grant of other content counts for nothing."""
    digest = content_digest(template)
    return sorted(p for p, d in recorded(template).items() if d == digest)


def stale_projects(template):
    """The projects whose recorded grant is of other content than the
    template's now (changed through ironic's own API, or recorded by an
    earlier release): nothing until ``set`` grants it again."""
    digest = content_digest(template)
    return sorted(p for p, d in recorded(template).items() if d != digest)


def record_patch(template, project_id, grant=True):
    """The JSON patch that records (``grant``: with the template's content
    digest) or drops the project in the template's grants; [] when
    nothing changes."""
    found = recorded(template)
    digest = content_digest(template)
    if grant and found.get(project_id) == digest or (
            not grant and project_id not in found):
        return []
    kept = dict(found)
    if grant:
        kept[project_id] = digest
    else:
        del kept[project_id]
    if not kept:
        return [{'op': 'remove', 'path': '/extra/%s' % GRANTED}]
    return [{'op': 'add', 'path': '/extra/%s' % GRANTED,
             'value': dict(sorted(kept.items()))}]


class GrantedTemplate(exceptions.CommandError):
    """A change of a template that projects are granted, refused."""


def refuse_granted_change(template, doing):
    """One line when the operator would change or delete a template that
    projects are granted (``doing``: what, in words): its grant would
    carry to other content; withdraw it first."""
    projects = sorted(recorded(template))
    if projects:
        raise GrantedTemplate(
            'Deploy template %s is granted to project%s %s: %s would change '
            'what the grant lets them run. Nothing was changed; withdraw it '
            'first (%s), then grant again.' % (
                template['name'], 's' if len(projects) > 1 else '',
                ', '.join(projects), doing, '; '.join(
                    'openstack project deploy-config unset %s %s' % (
                        p, deploy_config.config_of(template.get('extra')
                                                   or {}) or '--all')
                    for p in projects)))


def wanted(project_id, config, resource_class, template):
    """The runbook that grants ``template`` (for ``config``, on
    ``resource_class`` or every kind) to the project: its fields, and the
    traits ironic keeps apart."""
    extra = deploy_config.template_extra(config, [], resource_class)
    extra[EXTRA_GRANT] = template['name']
    return {'name': runbook_name(project_id, template['name']),
            'steps': runbook_steps(template), 'owner': project_id,
            'public': False, 'extra': extra, 'traits': [template['name']]}


def named_as_grant(runbook, project_id):
    """Whether a runbook is named and annotated as a grant to the project
    publishes it (what it holds, only the templates say)."""
    name = (runbook.get('extra') or {}).get(EXTRA_GRANT)
    return (name is not None and runbook.get('owner') == project_id
            and runbook['name'] == runbook_name(project_id, name))


def is_grant_of(runbook, project_id, templates_by_name):
    """Whether a runbook is one a standing grant to the project publishes:
    owned by it, named and annotated for a template
    (``templates_by_name``) that records the grant, and with exactly what
    that grant would publish (its steps and trait, private, the ramdisk
    kept): a runbook the project made under a grant's name is not."""
    name = (runbook.get('extra') or {}).get(EXTRA_GRANT)
    template = templates_by_name.get(name)
    if (template is None or not named_as_grant(runbook, project_id)
            or project_id not in granted_projects(template)):
        return False
    want = {'steps': runbook_steps(template), 'traits': [name],
            'extra': runbook.get('extra')}
    return not differences(want, runbook)


def granted_config(runbook):
    """The config a runbook says it grants, or None (not a grant's)."""
    extra = runbook.get('extra') or {}
    if EXTRA_GRANT not in extra:
        return None
    return deploy_config.config_of(extra)


def differences(want, found):
    """{field: how it differs} between a grant's runbook and what its
    template asks for ({} when it does not).  Steps are compared in the
    order ironic returns and runs them."""
    said = {}
    if _steps(found.get('steps')) != _steps(want['steps']) or any(
            int(s.get('order', -1)) != n
            for n, s in enumerate(found.get('steps') or ())):
        said['steps'] = 'its steps differ from template %s' % (
            want['traits'][0])
    if sorted(found.get('traits') or ()) != sorted(want['traits']):
        said['traits'] = 'its traits are %s, not %s' % (
            ', '.join(sorted(found.get('traits') or ())) or 'none',
            want['traits'][0])
    if found.get('public'):
        said['public'] = 'it is public'
    if found.get('disable_ramdisk'):
        said['disable_ramdisk'] = 'it disables the ramdisk'
    if (found.get('extra') or {}) != want['extra']:
        said['extra'] = 'its deploy config annotation differs'
    return said


def _steps(steps):
    return [(s['interface'], s['step'], json.dumps(
        s.get('args') or {}, sort_keys=True)) for s in steps or ()]


def plan(project_id, configs, known, runbooks):
    """[Change] that makes the project's grant of ``configs`` match their
    templates (``known``: ConfigTemplates; ``runbooks``: every runbook
    listed): each serving template records the grant, and a runbook the
    project owns publishes it.  Refuses, before any change, a config no
    template realises, one a running server may not take, and a runbook
    name another project took."""
    missing = [str(c) for c in configs if not known.realises(c)]
    if missing:
        raise exceptions.CommandError(
            'No deploy template realises %s on any kind of hardware: '
            'nothing to grant (openstack baremetal deploy template create '
            '--config ...)' % ', '.join(missing))
    by_name = {r['name']: r for r in runbooks}
    changes = []
    for config in configs:
        serving_ = serving(config, known)
        for _, template in serving_:
            refuse_ungrantable(config, template)
        for resource_class, template in serving_:
            changes += _record(config, resource_class, template, project_id)
            want = wanted(project_id, config, resource_class, template)
            found = by_name.pop(want['name'], None)
            if found is not None and found.get('owner') != project_id:
                changes.append(_delete(found, _squatted(found, project_id)))
                found = None
            changes.append(_change(config, resource_class, want, found))
        changes += [_delete(r, 'its template %s no longer serves %s' % (
            r['extra'][EXTRA_GRANT], config)) for r in sorted(
            by_name.values(), key=lambda r: r['name'])
            if r.get('owner') == project_id and granted_config(r) == config
            and r['name'].startswith(NAME_PREFIX + project_id + '.')]
    return changes


def _record(config, resource_class, template, project_id):
    patch = record_patch(template, project_id)
    return [Change(RECORD, config, resource_class, template['name'], patch,
                   template, 'the operator\'s grant, in the template')
            ] if patch else []


def _squatted(runbook, project_id):
    """Why a runbook that has the name of the project's grant, owned by
    another, is deleted: the name is the grant's, and the grant's name
    space is the operator's."""
    return ('its name is the grant\'s to project %s, but %s made it' % (
        project_id, 'project %s' % runbook['owner']
        if runbook.get('owner') else 'the system'))


def _delete(runbook, why):
    return Change(DELETE, granted_config(runbook), (runbook.get('extra') or {}
                                                    ).get(
        deploy_config.EXTRA_CLASS), runbook['name'], None, runbook, why)


def _change(config, resource_class, want, found):
    if found is None:
        return Change(CREATE, config, resource_class, want['name'], want,
                      None, 'no runbook yet')
    drift = differences(want, found)
    if drift:
        return Change(REPAIR, config, resource_class, want['name'], want,
                      found, '; '.join(drift.values()))
    return Change(KEEP, config, resource_class, want['name'], want, found,
                  '')


def withdraw(project_id, configs, known, runbooks):
    """[Change] withdrawing ``configs`` (None: every config) from the
    project: its runbooks deleted first (the project stops), then the
    templates' records of the grant.  A runbook goes whatever its
    annotation says (the project's managers may change it): every one the
    project owns under the grant's name prefix, or, for some configs only,
    those of their templates' names or traits, or annotated so."""
    names = {t['name'] for config in configs or () for _, t in serving(
        config, known)}
    changes = [_delete(r, 'withdrawn') for r in sorted(
        runbooks, key=lambda r: r['name'])
        if r.get('owner') == project_id
        and r['name'].startswith(NAME_PREFIX + project_id + '.')
        and (configs is None or granted_config(r) in configs
             or set(r.get('traits') or ()) & names
             or r['name'] in {runbook_name(project_id, n) for n in names})]
    for template in known.every():
        config = deploy_config.config_of(template['extra'])
        patch = record_patch(template, project_id, grant=False)
        if patch and (configs is None or config in configs):
            changes.append(Change(UNRECORD, config, (
                template['extra'] or {}).get(deploy_config.EXTRA_CLASS),
                template['name'], patch, template, 'withdrawn'))
    return changes


def by_project(known):
    """{project ID: [the configs the templates record as granted to it]},
    the operator's record of every grant (stale ones included)."""
    found = {}
    for template in known.every():
        for project_id in recorded(template):
            config = deploy_config.config_of(template['extra'])
            found.setdefault(project_id, [])
            if config not in found[project_id]:
                found[project_id].append(config)
    return found


def as_templates(runbooks, project_id):
    """The ConfigTemplates a project's grants make, as the project sees
    them (it cannot read the templates): each runbook it owns published
    for a grant, as the template it grants (its name, steps and
    annotation), with the runbook to service through (``runbook``).  What
    a project's toggle plans and reads back with; a runbook the project
    made itself fools nobody but the project."""
    listed = []
    for runbook in runbooks:
        if granted_config(runbook) is None or runbook.get(
                'owner') != project_id:
            continue
        extra = {k: v for k, v in runbook['extra'].items()
                 if k != EXTRA_GRANT}
        steps = runbook.get('steps') or ()
        listed.append({
            'uuid': runbook['uuid'], 'name': runbook['extra'][EXTRA_GRANT],
            'extra': extra, 'runbook': runbook['uuid'], 'steps': [
                {'interface': s['interface'], 'step': s['step'],
                 'args': s.get('args') or {}, 'priority': len(steps) - n}
                for n, s in enumerate(steps)]})
    return dtemplates.by_config(listed)


def granted(project_id, templates_by_config):
    """The configs the operator granted the project on one server's
    hardware (``templates_by_config``: {Config: the template serving it
    there}), from the templates' records: what a project's record of a
    toggle counts for."""
    return {config for config, template in templates_by_config.items()
            if project_id in granted_projects(template)}


def runnable(runbooks, nodes, project_id):
    """The runbooks ironic lets the project run on a node it leases or
    owns, by ironic's own rule: ``baremetal:runbook:use`` (a runbook it
    owns, run by its manager) and one trait in common with the node (API
    1.112), or, at an older microversion the caller may choose, the
    runbook's name among the node's traits.  [(runbook, [node names])],
    by name."""
    ours = [n for n in nodes if project_id in (n.get('lessee'),
                                                n.get('owner'))]
    found = []
    for runbook in sorted(runbooks, key=lambda r: r['name']):
        if runbook.get('owner') != project_id:
            continue
        traits = set(runbook.get('traits') or ()) | {runbook['name']}
        on = sorted(n.get('name') or n['uuid'] for n in ours
                    if traits & set(n.get('traits') or ()))
        if on:
            found.append((runbook, on))
    return found
