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

"""A virtual server's toggle: nova resizes it to a flavor equal to its own
but for the configs (an identical one, or one made with a derived name that
keeps the original's access), and the resize is followed to its end."""

from openstack import exceptions as sdk_exceptions
from osc_lib import exceptions

from osc_deploy_config.domain.configs import config_specs
from osc_deploy_config.domain.grants import grants
from osc_deploy_config.domain.toggle import toggle_plan
from osc_deploy_config.domain.toggle import toggle_states
from osc_deploy_config.use_cases.configs import set_templates
from osc_deploy_config.use_cases.toggle import outcomes

# What the finishing of an interrupted toggle does: wait for its resize,
# confirm it.
RESIZING, CONFIRM = 'resizing', 'confirm'


class Resize:
    name = 'resize'

    def __init__(self, toggle):
        self.toggle = toggle
        self.nova = toggle.nova
        self.say = toggle.say
        self.waits = toggle.waits

    def describe(self, prepared):
        if prepared.finishing == CONFIRM:
            return 'confirm its resize to flavor %s' % (
                prepared.server['flavor']['original_name'])
        plan = prepared.plan
        if prepared.finishing == RESIZING:
            return 'finish its resize to flavor %s' % target_name(plan)
        return 'resize to flavor %s%s' % (target_name(plan), (
            '' if plan.target_flavor else ' (to be created)'))

    def refuse_state(self, prepared):
        """ACTIVE, or in VERIFY_RESIZE on the target flavor (an interrupted
        toggle's resize, to confirm), or resizing under an interrupted
        toggle's lock (to wait for, then confirm)."""
        server = prepared.server
        if server.get('OS-EXT-STS:task_state') and prepared.claim and (
                prepared.claim.interrupted()):
            prepared.finishing = RESIZING
            return
        if (server['status'] == 'VERIFY_RESIZE' and not prepared.plan.changed
                and not server.get('OS-EXT-STS:task_state')):
            prepared.finishing = CONFIRM
            return
        toggle_states.refuse_server(server)

    def recheck(self, prepared):
        """A flavor is what it says: nothing to read back."""

    def refuse(self, prepared):
        """A project switches only to a flavor its grant opened to it; a
        flavor named like the one to create but different is an
        operator's: never reused or changed."""
        plan = prepared.plan
        if plan.target_flavor is None and not prepared.finishing:
            self.toggle.authority.refuse_new_flavor(prepared.server,
                                                    prepared.changed, plan)
        if plan.target_flavor is None and not toggle_plan.unfinished_flavor(
                plan, prepared.reading.flavors,
                toggle_plan.sizes_of(prepared.server['flavor'])):
            toggle_plan.refuse_taken_name(plan, prepared.reading.flavors)

    def carry_out(self, prepared):
        server = prepared.server
        if prepared.finishing == CONFIRM:
            return self.settle(prepared)
        if prepared.finishing == RESIZING:
            self.say('  finishing the resize of an interrupted toggle')
            flavor, request_id = {'name': target_name(prepared.plan)}, None
        else:
            flavor = self.target_flavor(prepared)
            request_id = self.request(server, flavor)
            if not self.toggle.wait:
                self.say('Resize to %s requested (%s); confirm it with '
                         'openstack server resize confirm %s'
                         % (flavor['name'], request_id, server['id']))
                return prepared.outcome(outcomes.REQUESTED)
        found = self.waits.resize(server)
        if request_id is None and found['status'] == 'ACTIVE':
            return self.after_interrupted(prepared, found, flavor)
        if found['status'] != 'VERIFY_RESIZE' or (
                found['flavor']['original_name'] != flavor['name']):
            raise exceptions.CommandError('Resize of server %s failed: %s' % (
                server['name'], resize_error(self.nova, found, request_id)))
        prepared.server = found
        return self.settle(prepared)

    def after_interrupted(self, prepared, found, flavor):
        """An interrupted toggle's resize that ended ACTIVE: on the target
        (confirmed meanwhile), or back where it was, to resize anew."""
        prepared.server, prepared.finishing = found, None
        if found['flavor']['original_name'] == flavor['name']:
            self.say('Server %s is ACTIVE on flavor %s.' % (found['name'],
                                                          flavor['name']))
            return prepared.outcome(outcomes.TOGGLED)
        return self.carry_out(prepared)

    def settle(self, prepared):
        """A resize awaiting confirmation: confirmed (``--auto-confirm``),
        or left to the user.  Toggled only once nova shows the server
        ACTIVE on the target flavor."""
        server = prepared.server
        flavor = server['flavor']['original_name']
        if not self.toggle.auto_confirm:
            self.say('Server %s runs with %s; its resize awaits '
                     'confirmation: openstack server resize confirm %s'
                     % (server['name'], outcomes.configs_text(
                         prepared.plan.target.values()), server['id']))
            return prepared.outcome(outcomes.AWAITING_CONFIRMATION)
        found = self.confirm(server)
        if found['status'] != 'ACTIVE' or (
                found['flavor']['original_name'] != flavor):
            raise exceptions.CommandError(
                'Nova ended the resize of server %s with it %s on flavor %s, '
                'not ACTIVE on %s%s. Nothing more was changed; see openstack '
                'server event list %s.' % (
                    server['name'], found['status'],
                    found['flavor']['original_name'], flavor, (
                        ': %s' % found['fault'].get('message')) if found.get(
                        'fault') else '', server['id']))
        self.say('Server %s is %s on flavor %s.' % (
            server['name'], found['status'], flavor))
        return prepared.outcome(outcomes.TOGGLED)

    def target_flavor(self, prepared):
        """The flavor to resize to: an identical one, ours left half-made
        by an interrupted toggle (finished), or a new one.  What a toggle
        derives is private, open to the server's project and to the
        projects granted the configs it switches to, never more."""
        plan, server = prepared.plan, prepared.server
        if plan.target_flavor:
            if toggle_plan.is_derived_private(plan.target_flavor) and (
                    self.toggle.authority.project_id is None):
                self.open_to(plan.target_flavor,
                             access(self.toggle, prepared))
            return plan.target_flavor
        listed = prepared.reading.flavors
        sizes = toggle_plan.sizes_of(server['flavor'])
        provide_sets(self.toggle, prepared)
        flavor = toggle_plan.unfinished_flavor(plan, listed, sizes)
        if flavor is None:
            flavor = self.create(plan, server, sizes, listed)
        if not toggle_plan.is_public(flavor):     # an earlier release's
            self.open_to(flavor, access(self.toggle, prepared))
        return self.nova.finish_flavor(flavor, plan.target_specs)

    def create(self, plan, server, sizes, listed):
        """The derived flavor, made (and added to ``listed``, which a
        rollout's toggles share), or found made by a concurrent toggle."""
        try:
            flavor = self.nova.create_flavor(
                plan.new_flavor_name, sizes, toggle_plan.derived_description(
                    server['flavor']['original_name']), public=False)
        except sdk_exceptions.ConflictException:
            flavor = toggle_plan.unfinished_flavor(plan, self.nova.flavors(),
                                                   sizes)
            if flavor is None:
                raise exceptions.CommandError(
                    'Flavor %s was created concurrently and differs from the '
                    'target: rerun' % plan.new_flavor_name) from None
        listed.append(flavor)
        return flavor

    def open_to(self, flavor, projects):
        """Open a private derived flavor to these projects (those an
        interrupted toggle did not add yet)."""
        have = set(self.nova.flavor_access(flavor['id']))
        for project in projects:
            if project not in have:
                self.nova.add_flavor_access(flavor['id'], project)

    def request(self, server, flavor):
        """Ask nova for the resize; its request ID."""
        try:
            return self.nova.resize(server['id'], flavor['id'])
        except sdk_exceptions.HttpException as exc:
            # a change under way: 409, or 500 for nova's own race
            # (UnexpectedTaskStateError)
            if exc.status_code != 409 and (exc.status_code or 0) < 500:
                raise
            raise toggle_states.Unavailable(
                'Nova refused to resize server %s: %s (another change under '
                'way?). Nothing was changed; rerun when it ends.' % (
                    server['name'], ' '.join(
                        str(exc.details or exc).split())),
                'busy') from None

    def confirm(self, server):
        """Confirm the resize and follow it to its end (the server then).
        A confirmation nova refuses (400, 409) may be another's under way,
        or nova's own (its confirmation window): that one is followed."""
        try:
            request_id = self.nova.confirm_resize(server['id'])
        except (sdk_exceptions.BadRequestException,
                sdk_exceptions.ConflictException):
            found = self.nova.find_server(server['id'])
            if found['status'] != 'VERIFY_RESIZE':
                return found
            request_id = next((a['request_id'] for a in
                               self.nova.instance_actions(server['id'])
                               if a['action'] == 'confirmResize'), None)
            if request_id is None:
                raise
        return self.waits.confirmation(server, request_id)


def target_name(plan):
    """The name of the flavor a plan resizes to."""
    return (plan.target_flavor or {}).get('name') or plan.new_flavor_name


def resize_error(nova, server, request_id):
    """Why nova gave up: the failed event of our resize action (nova
    answers 202, then puts the server back with no fault), or the
    server's state."""
    if server['status'] == 'ERROR':
        return 'the server is in ERROR: %s' % (
            (server.get('fault') or {}).get('message') or 'no fault')
    action = nova.instance_action(server['id'], request_id) \
        if request_id else {}
    return toggle_states.failed_event(action) or (
        'the server is %s on flavor %s' % (
            server['status'], server['flavor']['original_name']))


def access(toggle, prepared):
    """The projects a flavor a toggle derives is open to: the server's,
    and those granted the configs it switches to (on every kind: a
    template per resource class grants no virtual server) that may use
    the original."""
    every_kind = toggle.authority.templates(toggle.ironic).for_class(None)
    original = toggle_plan.root_flavor(prepared.server,
                                       prepared.reading.flavors)
    return toggle_plan.derived_access(
        prepared.server, [grants.granted_projects(every_kind[c])
                          if c in every_kind else []
                          for c in prepared.changed],
        original, original and not toggle_plan.is_public(original)
        and toggle.nova.flavor_access(original['id']))


def provide_sets(toggle, prepared):
    """The sets the derived flavor asks for, made before it asks: an
    operator's toggle (a project's flavors come from its grant)."""
    if toggle.authority.project_id:
        return
    for line in set_templates.make(
            toggle.ironic, toggle.authority.templates(toggle.ironic),
            config_specs.needed_sets(prepared.plan.target.values(),
                                     prepared.reading.templates_by_config)):
        toggle.say('  ' + line)
