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

"""A declared file checked against the cloud, and its changes: what
``diff`` shows and ``apply`` makes.

Every check runs before the first write, each one-line error at the line
and column of the object in the file: the file's own rules
(``domain.declared.document``), then the flavors, images and projects it
names (each must exist, under one name), a flavor's configs served on its
hardware without a shared step, a running server's flavor and image
without conflict (the boot pre-flight), a granted template left as it was
granted, what ``--prune`` may delete, and each new or changed template's
BIOS settings against the capable nodes' registries (``deploy_templates``'
own check).
"""

import collections
import json

from osc_lib import exceptions

from osc_deploy_config.domain.configs import config_specs
from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.configs import templates as dtemplates
from osc_deploy_config.domain.declared import changes as dchanges
from osc_deploy_config.domain.declared import document
from osc_deploy_config.domain.declared import schema
from osc_deploy_config.domain.hardware import bios_vocabulary
from osc_deploy_config.domain.servers import preflight
from osc_deploy_config.services import versions
from osc_deploy_config.use_cases import deploy_templates
from osc_deploy_config.use_cases import hardware_kinds
from osc_deploy_config.use_cases.declared import reading

# A checked file and what makes the cloud equal to it.  ``servers``: the
# running servers (read only when a flavor's or image's asks change, or a
# template is pruned), for the pre-flight, the prune and the rollout.
Plan = collections.namedtuple('Plan', [
    'declared', 'cloud', 'changes', 'filename', 'servers'])


def load(path):
    """The file's text; one line when it cannot be read."""
    try:
        with open(path, encoding='utf-8') as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise exceptions.CommandError('Cannot read %s: %s' % (path, exc)
                                      ) from None


def plan(clients, path, prune=False):
    """The Plan of the file at ``path`` (``-``: nothing else), checked."""
    declared = document.parse(load(path), path)
    cloud = reading.read(clients)
    at = _Places(path, declared.marks)
    _check_owners(declared, cloud, at)
    found = dchanges.diff(declared, cloud.current, prune)
    with at(_template_path(found, 'name')):
        dchanges.refuse_renames(found)
    for kind, key, fields in dchanges.objects(found):
        if kind == dchanges.TEMPLATE:
            with at(_path_of(key)):
                dchanges.refuse_granted_changes(
                    fields, {t['name']: t for t in cloud.templates},
                    declared)
    servers = []
    if any(c.kind in (dchanges.FLAVOR, dchanges.IMAGE) or (
            c.action == dchanges.DELETE and c.kind == dchanges.TEMPLATE)
           for c in found):
        servers = clients.nova(versions.SERVER_FLAVOR_DETAILS).servers(
            all_projects=True)
        _preflight(declared, cloud, servers, found, at)
    dchanges.refuse_pruning_asked(found, declared, cloud.current, servers)
    _check_hardware(clients, declared, found, at)
    return Plan(declared, cloud, found, path, servers)


class _Places:
    """``at(path)``: a context that puts a CommandError at the place of
    ``path`` in the file."""

    def __init__(self, filename, marks):
        self.filename, self.marks = filename, marks

    def __call__(self, path):
        return _At(self, path)

    def fail(self, path, message):
        raise schema.error(self.filename, self.marks.get(path, (1, 1)),
                           message)


class _At:
    def __init__(self, places, path):
        self.places, self.path = places, path

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, traceback):
        if isinstance(exc, exceptions.CommandError) and not isinstance(
                exc, schema.FileError):
            self.places.fail(self.path, str(exc))
        return False


def _path_of(key):
    config, rc = key
    path = ('configs', config.type, config.value)
    return path + ('resource_classes', rc) if rc else path


def _template_path(found, field):
    for change in found:
        if change.kind == dchanges.TEMPLATE and change.field == field and \
                change.action == dchanges.UPDATE:
            return _path_of(change.key) + ('template',)
    return ()


def _check_owners(declared, cloud, at):
    """Each flavor, image and project the file names exists, once; a
    flavor's configs are served on its hardware, without a shared step."""
    named = {}
    for section, listed in (('flavors', cloud.flavors),
                            ('images', cloud.images)):
        for owner in listed:
            named.setdefault((section, owner.get('name')), []).append(owner)
    for name in cloud.project_names.values():
        named.setdefault(('projects', name), []).append(name)
    for section in ('flavors', 'images', 'projects'):
        for name in getattr(declared, section):
            found = named.get((section, name), [])
            if len(found) != 1:
                at.fail((section, name), '%s %s %s' % (
                    section[:-1], name, 'does not exist' if not found else
                    'is the name of %d of them: a declared state names each '
                    'once (rename one)' % len(found)))
    for name, asks in declared.flavors.items():
        flavor = named['flavors', name][0]
        served = _served(declared, config_specs.resource_class_of(
            flavor.get('extra_specs')))
        configs = [deploy_config.Config(t, v) for t, v in asks.items()]
        with at(('flavors', name)):
            config_specs.refuse_unserved(configs, _known(declared),
                                         'flavor %s' % name,
                                         config_specs.resource_class_of(
                                             flavor.get('extra_specs')))
            config_specs.refuse_step_conflicts(configs, served)


def _known(declared):
    """The declared templates as ConfigTemplates (those the vocabulary
    makes: an empty template per kind will do for what is served)."""
    return dtemplates.by_config([document.as_dict(t) if t.steps is not None
                                 else dict(document.as_dict(t), steps=[])
                                 for t in declared.templates.values()])


def _served(declared, placement_class):
    return _known(declared).for_class(placement_class)


def _preflight(declared, cloud, servers, found, at):
    """A running server's flavor and image, as the file leaves them, must
    not ask for two values of one type or share a step (ironic would fail
    its rebuild): the boot pre-flight's rule."""
    changed = {(c.kind, c.name) for c in found}
    images = {i['id']: i.get('name') for i in cloud.images}
    for server in servers:
        flavor = (server.get('flavor') or {}).get('original_name')
        image = images.get((server.get('image') or {}).get('id'))
        if (dchanges.FLAVOR, flavor) not in changed and \
                (dchanges.IMAGE, image) not in changed:
            continue
        flavor_asks = declared.flavors.get(flavor, cloud.current.flavors.get(
            flavor, {}))
        image_asks = declared.images.get(image, cloud.current.images.get(
            image, {}))
        asked = [preflight.Asked(deploy_config.Config(t, v), '%s %s' % (
            kind, name)) for kind, name, asks in (
                ('flavor', flavor, flavor_asks), ('image', image, image_asks))
            for t, v in sorted(asks.items())]
        place = ('flavors', flavor) if (dchanges.FLAVOR, flavor) in \
            changed else ('images', image)
        with at(place):
            try:
                preflight.refuse_conflicts(asked, _served(
                    declared, config_specs.resource_class_of(
                        (server.get('flavor') or {}).get('extra_specs'))))
            except exceptions.CommandError as exc:
                raise exceptions.CommandError('%s (server %s runs both)' % (
                    exc, server['name'])) from None


def _check_hardware(clients, declared, found, at):
    """Each template to create or change, as its single command checks
    it: BIOS settings against the capable nodes' registries; a config of
    the vocabulary without steps, by the vocabulary."""
    names = None
    for kind, key, fields in dchanges.objects(found):
        if kind != dchanges.TEMPLATE or fields[0].action == dchanges.DELETE:
            continue
        want = declared.templates[key]
        with at(_path_of(key)):
            if want.steps is None:
                names = names or hardware_kinds.vocabulary(clients)
                if not bios_vocabulary.knows(want.config, names):
                    raise exceptions.CommandError(
                        'unknown config value %s: the vocabulary has no '
                        'settings for it; give its bios or steps'
                        % want.config)
                deploy_templates.create(clients, template_input(want),
                                        dry_run=True)
                continue
            deploy_templates.check_bios_registry(
                clients, want.steps, deploy_config.template_extra(
                    want.config, want.capability_traits,
                    want.resource_class))


def template_input(want, steps_changed=True, creating=True):
    """The ``templates.TemplateInput`` of a declared template, as the
    single command's options would give it, marked pending a sync."""
    steps = want.steps is not None and steps_changed
    return dtemplates.TemplateInput(
        name=want.name if creating else None, uuid=None,
        steps=json.dumps(want.steps) if steps else None,
        bios_settings=None, raid_config=None,
        extra=['%s=true' % reading.SYNC_PENDING],
        config=str(want.config),
        requires_traits=list(want.capability_traits or ()),
        no_requires_trait=want.capability_traits == [],
        stdin=None, resource_class=want.resource_class)
