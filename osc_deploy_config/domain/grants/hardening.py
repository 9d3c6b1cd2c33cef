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

"""The doors around a grant, and how ``project deploy-config check`` judges
each from a probe that changes nothing, open or closed.

The overrides that close them ship with the plugin
(``osc_deploy_config/hardening/``); each door names the line there that
closes it.  A probe is a request the service refuses before any write
where the door is closed, and fails after its policy check, still before
any write, where it is open:

* ``instance_info``: a JSON patch removing a key the node's
  ``instance_info`` does not have.  Ironic checks
  ``baremetal:node:update_instance_info`` (403) before it applies the
  patch, which then fails (400): nothing is written either way.
* an image property: an image create carrying the property, with the ID
  of an image that exists.  Glance checks the property protection (403)
  before it stores the image, which then fails as a duplicate (409).

Plain functions over plain data.
"""

import collections

from osc_deploy_config.domain.configs import step_safety
from osc_deploy_config.domain.grants import grants
from osc_deploy_config.domain.toggle import toggle_record

CLOSED = 'closed'
OPEN = 'open'
NOT_PROBED = 'not probed'

# A door: what it lets, the role whose token probes it, how, and the line
# of the shipped overrides that closes it.
Door = collections.namedtuple('Door', 'name role probe closed_by')

IRONIC_FILE = 'ironic-policy.yaml'
GLANCE_FILE = 'glance-property-protections.conf'
GLANCE_POLICY_FILE = 'glance-policy.yaml'
INSTANCE_INFO_RULE = 'baremetal:node:update_instance_info'
SERVICE_STEPS_RULE = 'baremetal:node:set_provision_state:service_steps'
CLEAN_STEPS_RULE = 'baremetal:node:set_provision_state:clean_steps'
RUNBOOK_CREATE_RULE = 'baremetal:runbook:create'
UNREGISTERED = 'has not been registered'
TRAIT_SECTION = '^trait:'
OURS_SECTION = '^deploy-config:'
# A trait and a config no template is named for: a probe of an open door
# asks for nothing that exists.
PROBE_TRAIT = 'trait:CUSTOM_DEPLOY_CONFIG_CHECK_PROBE'
PROBE_CONFIG = 'deploy-config:check-probe'

# The steps a project never runs by itself: BIOS, RAID, firmware, erase,
# Secure Boot and the BMC's own state.  Ironic 39 cannot refuse them to a
# project by a step rule ("baremetal:step:execute:<step>" in the policy
# file): it enforces those with oslo.policy's authorize(), which refuses a
# rule no code registered, so every request naming the step fails (HTTP
# 500), the operator's own and the grant's runbooks included.  What closes
# them is [api]disallow_deploy_steps and disallow_service_steps, for every
# caller: the steps no template uses (``disallowed_steps``).
ALWAYS_DISALLOWED = ('vendor.send_raw',)     # ironic's own default
# The steps of the plugin's BIOS and RAID profiles (``configs.steps``).
PROFILE_STEPS = ('bios.apply_configuration', 'raid.apply_configuration')
# A deploy's own steps, which no list may name.
_DEPLOYS = {('deploy', 'deploy'), ('deploy', 'write_image'),
            ('deploy', 'execute_bootc_install')}
GUARDED_STEPS = tuple(dict.fromkeys(
    ('bios.apply_configuration',) + tuple(
        '%s.%s' % step for step in sorted(
            set(step_safety.DESTROYS_DATA) | set(step_safety.RISKS_BOOT))
        if step not in _DEPLOYS) + (
        'firmware.update', 'management.update_firmware',
        'management.update_firmware_sum', 'management.flash_firmware_sum',
        'management.clear_job_queue', 'management.known_good_state',
        'management.reset_idrac')))

# Every provision probe carries a rescue password for a target that is not
# "rescue": ironic refuses that (400) after its policy checks and its state
# check, before any call to the conductor, whatever the node's state.
NOT_A_RESCUE = 'deploy-config-check-probe'
_PAST_POLICY = ('rescue_password',
                'can not be performed on node', 'maintenance mode',
                'is locked by host')
# Ironic 39 refuses a rebuild that names a runbook for the runbook's
# disable_ramdisk (False, never None: check_allow_disable_ramdisk), after
# the runbook's own checks and past the step rules it skipped.
_NO_RAMDISK_CHOICE = 'disable_ramdisk is supported only'
# Ironic's defect: a request that names a runbook skips the step rules
# for its deploy steps (api/controllers/v1/node.py, provision: the rules
# are checked "if not runbook"; _handle_runbook checks only the runbook's
# clean or service steps).
UPSTREAM_FIX = ("ironic 39: only its refusal of a rebuild's "
                "disable_ramdisk, which every runbook sets; the step rules "
                "are skipped (upstream fix: node.py provision() checks "
                "deploy_steps with validate_user_steps_policy whether or "
                "not a runbook is named)")

_INSTANCE_INFO_LINE = '%s "%s"' % (IRONIC_FILE, INSTANCE_INFO_RULE)
DOORS = tuple(
    Door(name, role, probe, closed_by) for role in ('manager', 'member')
    for name, probe, closed_by in (
        ("node's instance_info (templates, boot mode)", 'instance_info',
         _INSTANCE_INFO_LINE),
        ('image property trait:', PROBE_TRAIT,
         '%s [%s]' % (GLANCE_FILE, TRAIT_SECTION)),
        ('image property deploy-config:', PROBE_CONFIG,
         '%s [%s]' % (GLANCE_FILE, OURS_SECTION)),
        ("image property through nova (image metadata, snapshot)",
         'nova_proxy', '%s "deploy_config_operator" (no service token)'
         % GLANCE_POLICY_FILE),
        ('raw deploy steps (rebuild --deploy-steps)', 'deploy_steps',
         'ironic.conf [api]disallow_deploy_steps, for the steps no '
         'template uses (openstack deploy-config hardening show)'),
        ('raw service steps', 'service_steps',
         '%s "%s"' % (IRONIC_FILE, SERVICE_STEPS_RULE)),
        ('raw clean steps (a lease that outlives the instance)',
         'clean_steps', '%s "%s"' % (IRONIC_FILE, CLEAN_STEPS_RULE)),
        ('a runbook of its own', 'runbook_create',
         '%s "%s"' % (IRONIC_FILE, RUNBOOK_CREATE_RULE)),
        ('rebuild naming a runbook, with deploy steps', 'runbook_rebuild',
         UPSTREAM_FIX)))
LESSEE_DOOR = Door("node's lessee is not the server's project", 'operator',
                   'lessee', "the node's lessee (ironic sets the "
                   "instance's project at deploy)")
OWNER_DOOR = Door("node with an owner, the project's or its servers'",
                  'operator', 'owner', 'nothing: self-service refuses the '
                  "nodes a project owns; another's owner is the operator's "
                  'choice')
RUNBOOK_DOOR = Door('runbook the project may run, not a grant', 'operator',
                    'runbooks', 'openstack baremetal runbook delete')
HISTORY_DOOR = Door("steps no template explains, in a node's history",
                    'operator', 'history', 'seen, not prevented: ironic '
                    'records every deploy and servicing with its steps')
# The events whose steps a project could have chosen: a rebuild's deploy
# steps, a servicing's; a deploy template's and a grant's runbook's steps
# are a template's, and the driver's own carry no arguments.
_FLOWS = ('deployment_start', 'deployment_end', 'servicing_start',
          'servicing_end')

# What each service answers a probe with, where the door is open: the
# failure after its policy check.
_OPEN_STATUS = {'instance_info': (400,), 'runbook_create': (400,),
                'deploy_steps': (400, 409), 'service_steps': (400, 409),
                'clean_steps': (400, 409)}
_GLANCE_OPEN_STATUS = (409,)
_IMAGE_PROPERTIES = ('trait:', 'deploy-config:')
_RESERVED = 'is reserved'


def verdict(door, status, text=''):
    """(state, detail) of a door from the HTTP status its probe got (and
    the error's text, for the probes whose refusal must be the door's: an
    image property glance calls reserved, not another policy)."""
    if status == 403 and door.probe.startswith(_IMAGE_PROPERTIES) and (
            _RESERVED not in text):
        return NOT_PROBED, 'refused, but not by the property protection ' \
            '(HTTP 403: %s)' % text[:120]
    if status == 403:
        return CLOSED, 'refused (HTTP 403)'
    if door.probe == 'runbook_rebuild':
        if status == 400 and _PAST_POLICY[0] in text:
            return OPEN, 'allowed: the probe passed the step rules with ' \
                'a runbook named (HTTP 400 after them, nothing written)'
        if status == 400 and _NO_RAMDISK_CHOICE in text:
            return CLOSED, 'refused (HTTP 400), but only because ironic ' \
                'refuses a rebuild the runbook\'s disable_ramdisk (every ' \
                'runbook has one), after skipping the step rules'
        return NOT_PROBED, 'unexpected answer HTTP %d%s' % (
            status, ': %s' % text[:120] if text else '')
    provision = door.probe in ('deploy_steps', 'service_steps',
                               'clean_steps')
    if status in _OPEN_STATUS.get(door.probe, _GLANCE_OPEN_STATUS) and (
            not provision or any(m in text for m in _PAST_POLICY)):
        return OPEN, 'allowed: the probe reached the write (HTTP %d, ' \
                     'nothing written)' % status
    return NOT_PROBED, 'unexpected answer HTTP %d' % status


def instance_info_probe(key):
    """The JSON patch that probes ``instance_info`` and writes nothing:
    the removal of a key the node's ``instance_info`` does not have."""
    return [{'op': 'remove', 'path': '/instance_info/%s' % key}]


def image_probe(image_id, door):
    """The body of the image create that probes ``door``'s property and
    stores nothing: the ID of an image that exists."""
    return {'id': image_id, door.probe: 'required'}


def _step(step_id):
    interface, step = step_id.split('.', 1)
    return {'interface': interface, 'step': step, 'args': {},
            'priority': 0}


def deploy_steps_probe(step_id):
    """The provision request that probes one step rule with a deploy
    step, and writes nothing (``NOT_A_RESCUE``)."""
    return {'target': 'active', 'deploy_steps': [_step(step_id)],
            'rescue_password': NOT_A_RESCUE}


def service_steps_probe():
    """The request that probes the service-steps rule with a step no rule
    names, and writes nothing."""
    step = _step('deploy.deploy_config_check_probe')
    del step['priority']
    return {'target': 'clean', 'service_steps': [step],
            'rescue_password': NOT_A_RESCUE}


def clean_steps_probe():
    """The request that probes the clean-steps rule with a step no rule
    names, and writes nothing."""
    body = service_steps_probe()
    body['clean_steps'] = body.pop('service_steps')
    return body


def runbook_rebuild_probe(runbook):
    """The rebuild that names a runbook and a guarded deploy step: ironic
    39 checks no step rule on it, and it writes nothing."""
    return {'target': 'rebuild', 'runbook': runbook,
            'deploy_steps': [_step(GUARDED_STEPS[0])],
            'rescue_password': NOT_A_RESCUE}


def steps_row(door, answers, used=None):
    """(state, detail) of the raw deploy steps door from {step: (status,
    text)} of each guarded step's probe.  A step the policy lets through
    is open where a template uses it (``used``: the steps of the cloud's
    templates; None where they could not be read), since no
    disallow_deploy_steps may list it without refusing the template too;
    otherwise that list, which ironic checks only as it deploys, past any
    probe that writes nothing, decides: not probed."""
    passed, refused, broken, unknown = [], [], [], []
    for step, (status, text) in sorted(answers.items()):
        if status == 500 and UNREGISTERED in text:
            broken.append(step)
            continue
        state = verdict(door, status, text)[0]
        {OPEN: passed, CLOSED: refused}.get(state, unknown).append(step)
    opened = [s for s in passed if used is not None and s in used]
    said = []
    if opened:
        said.append('allowed by the policy, and used by a template, so no '
                    'disallow list may refuse it: %s' % ', '.join(opened))
    rest = [s for s in passed if s not in opened]
    if rest:
        said.append('allowed by the policy; closed only where ironic\'s '
                    '[api]disallow_deploy_steps lists it (not probed: '
                    'ironic reads it as it deploys): %s' % ', '.join(rest))
    if broken:
        said.append('a step rule in ironic\'s policy file, which this ironic '
                    'cannot enforce (HTTP 500 for every caller, the '
                    'operator\'s own too): %s' % ', '.join(broken))
    if unknown:
        said.append('unexpected answers: %s' % ', '.join(unknown))
    if refused:
        said.append('refused (HTTP 403): %s' % (
            ', '.join(refused) if said else 'each of the %d guarded steps'
            % len(refused)))
    state = OPEN if opened else NOT_PROBED if (rest or broken or unknown) \
        else CLOSED
    return state, '; '.join(said)


def used_steps(templates):
    """The steps ('interface.step') these deploy templates use, and those
    the BIOS and RAID profiles make (a template made later may): what no
    disallow list may name."""
    return set(PROFILE_STEPS) | {step_safety.step_name(step)
                                 for t in templates
                                 for step in t.get('steps') or ()}


def disallowed_steps(templates):
    """The steps ironic's [api]disallow_deploy_steps and
    disallow_service_steps should list on a cloud with these deploy
    templates: the guarded steps none of them uses (a listed step is
    refused to the templates as well, as they deploy), nor the BIOS and
    RAID profiles make (so that a template made later still deploys), and
    ironic's own default.  (list, the guarded steps kept)."""
    used = used_steps(templates)
    kept = [s for s in GUARDED_STEPS if s in used]
    return list(ALWAYS_DISALLOWED) + [s for s in GUARDED_STEPS
                                      if s not in used], kept


# Nova's own default for non_inheritable_image_properties, which the
# option replaces.
NOVA_NON_INHERITABLE = ('cache_in_nova', 'bittorrent')


def non_inheritable(images):
    """Nova's [DEFAULT]non_inheritable_image_properties on a cloud with
    these images (glance's dicts): its default and every trait: and
    deploy-config: property an image carries.  A snapshot inherits its
    server's image properties, and glance refuses a snapshot with them
    under the hardening (nova's service token is not the operator's)."""
    keys = sorted({k for image in images for k in image
                   if k.startswith(('trait:', 'deploy-config:'))})
    return list(NOVA_NON_INHERITABLE) + keys


def lessee_findings(project_id, servers, nodes):
    """Nodes whose lessee is not the project of the server they run, seen
    from ``project_id``: its servers on a node leased to another project,
    and nodes leased to it that run a server not its own.  ``servers``:
    the project's servers (nova's dicts); ``nodes``: ironic's, with
    ``instance_uuid`` and ``lessee``.  A list of (node name, why)."""
    own = {s['id']: s for s in servers}
    found = []
    for node in nodes:
        instance = node.get('instance_uuid')
        if not instance:
            continue
        name = node.get('name') or node['uuid']
        lessee = node.get('lessee')
        if instance in own and lessee != project_id:
            found.append((name, 'runs server %s of the project, leased to '
                          '%s' % (own[instance].get('name') or instance,
                                  lessee or 'no project')))
        elif instance not in own and lessee == project_id:
            found.append((name, 'leased to the project, runs server %s of '
                          'another' % instance))
    return sorted(found)


def lessee_rows(project_id, servers, nodes, hidden=None):
    """The report's rows of the lessee door: one per node found, or one
    saying the door is closed.  ``hidden``: why ``nodes`` may not be every
    node (a project-scoped token sees only its own project's), so that
    their absence proves nothing; None where they are."""
    findings = lessee_findings(project_id, servers, nodes)
    door = LESSEE_DOOR
    if not findings and hidden:
        return [row(door, NOT_PROBED, hidden)]
    if not findings:
        own = {s['id'] for s in servers}
        on_nodes = sum(1 for n in nodes if n.get('instance_uuid') in own)
        return [row(door, CLOSED, 'read: %d node(s) run the project\'s '
                    'servers, each leased to it' % on_nodes)]
    return [row(door, OPEN, '%s: %s' % found) for found in findings]


def owner_rows(project_id, servers, nodes, hidden=None):
    """The rows of the owner door: one per node the project owns, or that
    runs one of its servers and has an owner (at ironic's defaults an
    owner's managers may run raw clean steps on it once it is free, set
    its RAID target, and write its properties, where the operator's
    record lives, and its traits), or one saying there is none."""
    own = {s['id'] for s in servers}
    found = sorted((n.get('name') or n['uuid'], n['owner']) for n in nodes
                   if n.get('owner') and (n['owner'] == project_id
                                          or n.get('instance_uuid') in own))
    if not found and hidden:
        return [row(OWNER_DOOR, NOT_PROBED, hidden)]
    if not found:
        return [row(OWNER_DOOR, CLOSED, 'read: no node of the project\'s '
                    'has an owner, of the %d nodes' % len(nodes))]
    return [row(OWNER_DOOR, OPEN, '%s: owned by %s, whose managers may '
                'clean it with raw steps once free, set its RAID target and '
                'write its properties and traits%s' % (
                    name, 'the project' if owner == project_id else
                    'project %s' % owner, '; the project\'s toggles there '
                    'are refused' if owner == project_id else ''))
            for name, owner in found]


def runbook_rows(project_id, runbooks, nodes, templates, hidden=None):
    """The rows of the runbook door: one per runbook ironic lets the
    project run on its nodes that is not one of its standing grant's
    (made by the project, left over, or under a grant's name, whatever its
    traits), or one saying there is none.  ``templates``: the cloud's
    deploy templates, which say what a grant publishes (None: not read);
    ``hidden``: why the runbooks or the nodes read may not be all."""
    by_name = {t['name']: t for t in templates or ()}
    runnable = grants.runnable(runbooks, nodes, project_id)
    found = [(r, on) for r, on in runnable
             if not grants.is_grant_of(r, project_id, by_name)]
    rows = []
    for runbook, on in found:
        unsure = templates is None and grants.named_as_grant(runbook,
                                                             project_id)
        said = 'read: %s runs on %s (its traits: %s)' % (
            runbook['name'], ', '.join(on),
            ', '.join(sorted(runbook.get('traits') or ())) or 'none')
        if unsure:
            said += ("; named as a grant's: whether it holds what the "
                     "grant publishes, only the templates say")
        rows.append(row(RUNBOOK_DOOR, NOT_PROBED if unsure else OPEN, said))
    if rows or hidden:
        return rows or [row(RUNBOOK_DOOR, NOT_PROBED, hidden)]
    return [row(RUNBOOK_DOOR, CLOSED, 'read: the project may run %d '
                'runbook(s) on its nodes, each its grant\'s' % len(runnable))]


def shows_deploy(history, since):
    """Whether a node's history (newest first) reaches back to the
    instance's own deploy after ``since``: where it does not (history off,
    ``record_step_flows_in_history`` off, or purged), nothing read proves
    that nothing ran."""
    return any(e.get('event_type') == 'deployment_start'
               and toggle_record.started_steps(e.get('event') or '')
               is not None for e in history
               if toggle_record.at_or_after(e.get('created_at'), since))


def entitled(templates, project_id, instance_traits):
    """The templates whose steps may run on an instance: those its traits
    name (nova's, at deploy and rebuild) and those granted to the
    project (its toggles)."""
    named = set(instance_traits or ())
    return [t for t in templates if t['name'] in named
            or project_id in grants.granted_projects(t)]


def unexplained_steps(history, since, templates):
    """The steps a node's history (API 1.78, in detail, newest first)
    shows at a deploy or a servicing after ``since`` (the instance's
    creation) that none of ``templates`` has and the driver did not list
    itself: [(when, who, 'interface.step', args)], newest first, ``who``
    the user ironic recorded.  Whoever asked: ironic may record another
    request's user (seen on an ironic that runs its API and conductor in
    one process: a lessee manager's rebuild recorded as nova's service
    user), so no user is left out.  The end of a deploy lists the in-band
    steps its start could not; a flow whose steps cannot be read is one
    of them."""
    known = [s for t in templates for s in t.get('steps') or ()]
    found = {}
    for entry in history:
        if not toggle_record.at_or_after(entry.get('created_at'), since):
            break
        user = entry.get('user')
        if entry.get('event_type') not in _FLOWS:
            continue
        listed = toggle_record.started_steps(entry.get('event') or '')
        for step in [{'interface': '(steps', 'step': 'unreadable)'}] \
                if listed is None else listed:
            if ('argsinfo' in step and 'args' not in step) or any(
                    toggle_record.same_step(k, step) for k in known):
                continue        # the driver's own listing, or a template's
            name = step_safety.step_name(step)
            key = (name, repr(step.get('args')))
            if key not in found or not found[key][1]:
                found[key] = (entry['created_at'], user, name,
                              step.get('args') or {})
    return list(found.values())


def history_rows(findings, unread, hidden=None):
    """The rows of the history door from {node name: unexplained_steps}
    of the nodes read, and the nodes whose history does not reach their
    instance's deploy (``unread``); or why none could be read."""
    if hidden:
        return [row(HISTORY_DOOR, NOT_PROBED, hidden)]
    rows = [row(HISTORY_DOOR, OPEN, '%s: %s at %s by user %s, args %s' % (
        node, step, when, user or 'unknown', args))
        for node, seen in sorted(findings.items())
        for when, user, step, args in seen]
    rows += [row(HISTORY_DOOR, NOT_PROBED, "%s: its history does not show "
                 "its instance's deploy (node history or step records off, "
                 "or purged): nothing there proves nothing ran" % node)
             for node in unread]
    return rows or [row(HISTORY_DOOR, CLOSED, "read: no deploy or service "
                        "step outside the templates its instance and its "
                        "grants name, in the history of %d node(s) since "
                        "their instances' creation" % len(findings))]


def row(door, state, detail):
    """One row of the report (``COLUMNS``)."""
    return (door.name, door.role, state, door.closed_by, detail)


COLUMNS = ('Door', 'Who', 'State', 'Closed By', 'Detail')
SETTINGS_COLUMNS = ('File', 'Section', 'Option', 'Value', 'Why')
