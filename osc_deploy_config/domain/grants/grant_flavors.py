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

"""The derived flavors a grant opens to a project's virtual servers.

A virtual server switches config by a resize to a flavor equal to its own
but for the configs (``toggle_plan``); a project cannot create flavors, so
a grant makes them: from each flavor the project's virtual servers use now,
every flavor a chain of granted switches reaches, as the operator's toggle
would derive it (the same name, private, open to the project).  A flavor
that exists already is only opened to the project where it is private.  A
flavor whose own configs cannot go with a granted one (their templates run
the same step: ironic would fail the deploy) gets nothing for it, and is
said: its servers cannot switch to that config, by any toggle.  Plain
functions over the dicts of nova's API.
"""

import collections

from osc_lib import exceptions

from osc_deploy_config.domain.configs import config_specs
from osc_deploy_config.domain.toggle import toggle_plan

CREATE, FINISH, OPEN, SKIP = 'create', 'finish', 'open', 'skip'
# One derived flavor a grant gives: what to do, the config it switches
# to, its name, the flavor there (None: to create), the sizes and extra
# specs it must have, its description, whether the project needs access,
# and why.
Need = collections.namedtuple('Need', [
    'action', 'config', 'name', 'flavor', 'sizes', 'specs', 'description',
    'open', 'why'])


def derived_private(flavors):
    """The private flavors a toggle or a grant derived."""
    return [f for f in flavors if not toggle_plan.is_public(f) and (
        f.get('description') or '').startswith(toggle_plan.DERIVED_MARK)]


def configs_of(flavor):
    return config_specs.configs_of(flavor.get('extra_specs'))


def needed(servers, configs, templates, listed, access, project_id):
    """[Need] for the project's virtual ``servers`` to switch among the
    granted ``configs`` (``templates``: {Config: the template for every
    kind}; ``access``: {flavor ID: projects} of the private flavors)."""
    made, needs = [], {}
    for server in servers:
        lost = _lost(server, configs, listed, access, project_id)
        if lost:
            needs.update(lost)
            continue
        embedded = server['flavor']
        frontier = [(embedded['original_name'],
                     dict(embedded.get('extra_specs') or {}))]
        seen = set()
        while frontier:
            name, specs = frontier.pop()
            if frozenset(specs.items()) in seen:
                continue
            seen.add(frozenset(specs.items()))
            state = {'flavor': dict(embedded, original_name=name,
                                    extra_specs=specs)}
            for config in configs:
                if config not in templates:
                    continue        # no template for every kind
                try:
                    plan = toggle_plan.plan(state, [config], templates,
                                            listed + made)
                except exceptions.CommandError as exc:
                    needs.setdefault((name, str(config)), Need(
                        SKIP, config, name, None, None, None, None, False,
                        '%s; its servers cannot switch to it' % exc))
                    continue
                if not plan.changed:
                    continue
                need = _need(plan, config, embedded, listed, access,
                             project_id)
                if need.action == CREATE:
                    made.append(_as_listed(need))
                if need.action or need.open:
                    needs.setdefault(need.name, need)
                if need.action != SKIP:
                    frontier.append((need.name, plan.target_specs))
    return sorted(needs.values(), key=lambda n: (n.name, str(n.config)))


def _lost(server, configs, listed, access, project_id):
    """{key: Need} skipping every config, where the project may no
    longer use the private flavor the server's derivations start from."""
    lost = toggle_plan.lost_root(server, listed, access, project_id)
    return {(lost['name'], str(c)): Need(
        SKIP, c, lost['name'], None, None, None, None, False,
        'the project no longer has flavor %s: nothing derived from it is '
        'opened to it' % lost['name']) for c in configs} if lost else {}


def _need(plan, config, embedded, listed, access, project_id):
    """The Need of one switch's target flavor."""
    sizes = toggle_plan.sizes_of(embedded)
    target = plan.target_flavor
    if target is not None and not toggle_plan.is_public(target) and not (
            target.get('description') or '').startswith(
                toggle_plan.DERIVED_MARK):
        return Need(SKIP, config, target['name'], target, sizes,
                    plan.target_specs, None, False, 'a private flavor of '
                    'that name that a toggle or a grant did not derive: '
                    'never opened by a grant')
    if target is not None:
        private = not toggle_plan.is_public(target)
        return Need(None, config, target['name'], target, sizes,
                    plan.target_specs, None, private and project_id not in
                    access.get(target.get('id'), ()), 'open to the project')
    half = toggle_plan.unfinished_flavor(plan, listed, sizes)
    description = toggle_plan.derived_description(
        embedded['original_name'].split('+', 1)[0])
    if half is not None:
        return Need(FINISH, config, half['name'], half, sizes,
                    plan.target_specs, description, project_id not in
                    access.get(half['id'], ()), 'made half by an '
                    'interrupted run')
    return Need(CREATE, config, plan.new_flavor_name, None, sizes,
                plan.target_specs, description, True,
                'derived for the project\'s virtual servers')


def _as_listed(need):
    """A flavor to create, as a flavor listing would show it."""
    sizes = need.sizes
    return {'id': None, 'name': need.name, 'vcpus': sizes['vcpus'],
            'ram': sizes['ram'], 'disk': sizes['disk'],
            'OS-FLV-EXT-DATA:ephemeral': sizes['ephemeral'],
            'swap': sizes['swap'], 'description': need.description,
            'os-flavor-access:is_public': False,
            'extra_specs': dict(need.specs)}


def to_close(flavors, configs, access, project_id):
    """The derived private flavors open to the project that ask for one of
    ``configs`` (None: any), to close when they are withdrawn."""
    return [f for f in derived_private(flavors)
            if project_id in access.get(f['id'], ())
            and (configs is None or set(configs_of(f)) & set(configs))]
