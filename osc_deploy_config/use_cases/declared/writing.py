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

"""``apply``: make a Plan's changes through the single commands' own use
cases, in dependency order:

1. every grant the file withdraws, also of a project that gets new ones
   (a granted template changes or goes only once its grant is
   withdrawn);
2. templates created and changed (``deploy_templates``), each marked
   pending a sync in the same request;
3. node sync (``node_tags.sync``), which returns once placement, the
   scheduler's view, shows the tags; then the marks are removed;
4. flavors' and images' asks, each in one change with the traits of the
   templates serving them now (``owner_configs.set_exact``), also of a
   flavor or image whose serving template this apply changed;
5. grants made (``project_grants``);
6. with ``--prune``, the templates the file dropped (``deploy_templates
   .delete``: their runbooks and node traits first).

Each object is written whole in one request (a template's POST or PATCH
carries its steps and annotation together), so no template is ever half
written.  A rerun after a kill plans again from the cloud: what was
written is equal to the file and is not written again, and a template
still marked pending makes the rerun sync.  Two applies at once: each
checks a template, right before changing it, against what it planned
from; one that finds it changed, or created meanwhile as something else,
stops in one line (a template created meanwhile as the file has it is
taken as done).
"""

import logging

from osc_lib import exceptions

from osc_deploy_config.domain.configs import config_sets
from osc_deploy_config.domain.configs import config_specs
from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.declared import changes as dchanges
from osc_deploy_config.domain.declared import document
from osc_deploy_config.domain.toggle import toggle_plan
from osc_deploy_config.services import ironic as ironic_api
from osc_deploy_config.use_cases.configs import deploy_templates
from osc_deploy_config.use_cases.configs import owner_configs
from osc_deploy_config.use_cases.configs import set_templates
from osc_deploy_config.use_cases.declared import planning
from osc_deploy_config.use_cases.declared import reading
from osc_deploy_config.use_cases.grants import project_grants
from osc_deploy_config.use_cases.hardware import node_tags

LOG = logging.getLogger(__name__)
DONE = {dchanges.CREATE: 'created', dchanges.UPDATE: 'updated',
        dchanges.DELETE: 'deleted'}


class Apply:
    """Writes a Plan; ``say``: progress lines (stderr)."""

    def __init__(self, clients, say, wait_timeout=600):
        self.clients, self.say = clients, say
        self.wait_timeout = wait_timeout
        self.written = []       # the objects written: (kind, name)

    def run(self, plan):
        """Make the changes; the rows of what was written."""
        objects = dchanges.objects(plan.changes)
        projects = [o for o in objects if o[0] == dchanges.PROJECT]
        made = [o for o in objects if o[0] == dchanges.TEMPLATE
                and o[2][0].action != dchanges.DELETE]
        deleted = [o for o in objects if o[0] == dchanges.TEMPLATE
                   and o[2][0].action == dchanges.DELETE]
        owners = [o for o in objects if o[0] in (dchanges.FLAVOR,
                                                  dchanges.IMAGE)]
        sets = [o for o in objects if o[0] == dchanges.SET]
        for _kind, key, fields in projects:
            self.grants(plan, key, fields, withdrawing=True)
        interrupted = [f[0].name for _, _, f in deleted
                       if f[0].before == dchanges.INTERRUPTED]
        if interrupted:     # first: a template made may take its config
            self.delete(interrupted)
        current = {t['name']: t for t in plan.cloud.templates}
        pending = set(reading.sync_pending(plan.cloud))
        for _kind, key, fields in made:
            pending.update(self.template(plan.declared.templates[key],
                                         fields, current))
        pending = sorted(pending)
        if pending:
            self.sync(pending)
        self.sets(plan, [key for _, key, f in sets
                         if f[0].action != dchanges.DELETE],
                  {(kind, key) for kind, key, _ in owners})
        self.owners(plan, [(kind, key) for kind, key, _ in owners])
        for _kind, key, fields in projects:
            self.grants(plan, key, fields, withdrawing=False)
        pruned = [f[0].name for _, _, f in deleted
                  if f[0].before != dchanges.INTERRUPTED]
        gone = [f[0].name for _, _, f in sets
                if f[0].action == dchanges.DELETE]
        for names in (pruned, gone):
            if names:
                self.delete(names)
        if pruned:      # the templates of their configs left: re-tagged
            self.sync([], plan.cloud.templates, pruned)
        return [(c.kind, c.name, DONE.get(c.action, c.action), c.field,
                 dchanges.shown(c.before), dchanges.shown(c.after))
                for c in plan.changes]

    def template(self, want, fields, current):
        """Create or change one template through ``deploy_templates``;
        checked first against what the plan read (another apply).  The
        names of the templates written, each marked pending a sync."""
        creating = fields[0].action == dchanges.CREATE
        name = fields[0].name
        self.say('%s template %s' % ('Creating' if creating else 'Updating',
                                     name))
        if creating:
            try:
                made = deploy_templates.create(self.clients,
                                               planning.template_input(want))
            except exceptions.CommandError:
                if want.name is None or not self.made_meanwhile(want):
                    raise
                self.say('Template %s was created meanwhile as the file has '
                         'it (another apply?)' % name)
                return [name]
            # the vocabulary's: a template per class, named for it
            return made['created'] if want.steps is None else [name]
        ironic = self.clients.ironic()
        now = deploy_templates.find(ironic, name)
        if _content(now) != _content(current[name]):
            raise exceptions.CommandError(
                'Template %s changed since this apply read it (another '
                'apply?): it was not written; run diff again' % name)
        deploy_templates.update(self.clients, name, planning.template_input(
            want, steps_changed=any(f.field == 'steps' for f in fields),
            creating=False))
        return [name]

    def made_meanwhile(self, want):
        """Whether a template equal to the declared one exists now."""
        try:
            now = deploy_templates.find(self.clients.ironic(), want.name)
        except exceptions.CommandError:
            return False
        found = document.from_cloud([now], [], [], {}).templates.get(
            (want.config, want.resource_class))
        return found is not None and found._replace(name=want.name) == want

    def sync(self, pending, known=None, gone=()):
        """Tag the nodes as ``sync`` does, until placement shows it, for
        the templates written (``pending``) and the others of their
        configs, or of the configs of those deleted (``gone``, as ``known``
        listed them); then the templates are no longer pending."""
        listed = self.clients.ironic().deploy_templates(
            fields=['uuid', 'name', 'extra'], limit=0)
        names = [n for n in planning.siblings(
            listed + list(known or ()), set(pending) | set(gone))
            if n in {t['name'] for t in listed}]
        if not names:
            return
        self.say('Syncing the nodes\' tags (%s)' % ', '.join(names))
        node_tags.sync(self.clients, names, False, False, True,
                       self.wait_timeout, self.say)
        for name in pending:
            try:
                deploy_templates.unset(self.clients, name,
                                       [reading.SYNC_PENDING])
            except exceptions.CommandError:
                LOG.debug('%s carries no sync mark (the vocabulary made '
                          'it)', name)

    def sets(self, plan, keys, written):
        """Make, or build again, the sets' templates the flavors and
        images ask for (``keys``: (configs, placement class) of the plan's
        rows), and tag the nodes that can take those and every set the
        owners to write (``written``: (kind, name)) ask for, once, before
        any of them asks: a rerun after a kill tags what it made."""
        if not (keys or written):
            return
        ironic = self.clients.ironic()
        known = ironic.config_templates(
            fields=ironic_api.TEMPLATE_WRITE_FIELDS)
        servings = {}
        for configs, placement_class in keys:
            served = known.for_class(placement_class)
            members = {c: served[c] for c in configs}
            name = config_sets.set_name(members)
            servings[name] = config_sets.Serving(name, members)
        for kind, name, configs, served in dchanges.asked_after(
                planning.owners_of(plan.cloud), plan.declared,
                plan.cloud.current, known):
            if (kind, name) in written and all(c in served for c in configs):
                servings.update((s.name, s) for s in config_specs.needed_sets(
                    configs, served))
        if not servings:
            return
        for line in set_templates.make(ironic, known, servings.values()):
            self.say(line)
        node_tags.sync(self.clients, sorted(servings), False, False, True,
                       self.wait_timeout, self.say)

    def owners(self, plan, owners):
        """The flavors' and images' asks (``owners``: (kind, name)), each
        written to the one its name means (``Cloud.named``)."""
        for kind, name in owners:
            section = 'flavors' if kind == dchanges.FLAVOR else 'images'
            self.owner(kind, name, planning.owner_id(plan.cloud, kind, name),
                       getattr(plan.declared, section).get(name, getattr(
                           plan.cloud.current, section).get(name, {})))

    def owner(self, kind, name, ident, asks):
        """A flavor's or an image's asks (``asks``: {type: value}), in one
        change with the traits of the templates serving them now, as
        ``deploy-config set|unset`` make them (``ident``: the one the
        name means, ``Cloud.named``)."""
        self.say('Updating %s %s' % (kind, name))
        owner_configs.set_exact(self.clients, kind, ident, [
            deploy_config.Config(t, v) for t, v in sorted(asks.items())],
            provide=False)     # the sets were made first (``sets``)

    def grants(self, plan, project, fields, withdrawing):
        """A project's grants withdrawn (``withdrawing``: step 1, before
        any template is written) or made (step 5), as ``project
        deploy-config unset|set`` make them (to the project the name
        means, ``Cloud.named``)."""
        configs = [f.field for f in fields
                   if (f.after is None) == withdrawing]
        if not configs:
            return
        self.say('%s project %s: %s' % (
            'Withdrawing from' if withdrawing else 'Granting to', project,
            ', '.join(configs)))
        ident = planning.owner_id(plan.cloud, dchanges.PROJECT, project)
        if withdrawing:
            project_grants.withdraw(self.clients, ident, configs)
        else:
            project_grants.grant(self.clients, ident, configs)

    def delete(self, names):
        """The templates the file dropped, as ``deploy template delete``
        deletes them."""
        self.say('Deleting template(s) %s' % ', '.join(names))
        _, failures = deploy_templates.delete(self.clients, names,
                                              refuse_deployed=True)
        if failures:
            raise exceptions.CommandError('; '.join(failures))


def _content(template):
    """What a template holds that a declared state decides."""
    extra = template.get('extra') or {}
    return (template['name'], document.sort_steps(template['steps']),
            deploy_config.config_of(extra),
            deploy_config.capability_traits_of(extra),
            extra.get(deploy_config.EXTRA_CLASS))


def outdated(plan):
    """The running servers a rollout brings in line: of the flavors (a
    server's own, or the one a toggle derived its flavor from:
    ``toggle_plan.root_flavor``) and images the file's names mean
    (``Cloud.named``)."""
    chosen = {key: owners[0]['id'] for key, owners in
              plan.cloud.named.items() if len(owners) == 1}
    flavors = {i: name for (section, name), i in chosen.items()
               if section == 'flavors'}
    roots = {s['id']: toggle_plan.root_flavor(s, plan.cloud.flavors)
             for s in plan.servers}
    return dchanges.outdated_servers(
        plan.servers, plan.declared,
        {i: name for (section, name), i in chosen.items()
         if section == 'images'}, plan.runs,
        {server: flavors[root['id']] for server, root in roots.items()
         if root is not None and root['id'] in flavors})
