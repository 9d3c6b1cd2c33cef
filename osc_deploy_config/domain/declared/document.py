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

"""The declared file: read (plain scalars as JSON reads them, each object
with the line and column it starts at), checked against the schema and
the rules that need only the file, and written in a stable order (keys in
a fixed order, names and lists sorted) so that a file kept in git shows
clean diffs.  The cloud's state is read into the same model
(``from_cloud``), so that ``export`` writes what ``apply`` reads back
unchanged.
"""

import collections
import json
import math
import re

from osc_lib import exceptions
import yaml

from osc_deploy_config.domain.configs import config_specs
from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.configs import steps as dsteps
from osc_deploy_config.domain.configs import templates as dtemplates
from osc_deploy_config.domain.declared import schema
from osc_deploy_config.domain.grants import grants

# One template of a config on every kind (``resource_class`` None) or on
# one kind (ironic's name of the class).  ``steps`` None: the vocabulary's
# (one template per kind, made from the nodes' BIOS registries).
Template = collections.namedtuple('Template', [
    'config', 'resource_class', 'name', 'steps', 'capability_traits'])
# The declared state.  ``templates``: {(Config, class or None): Template};
# ``flavors``, ``images``: {name: {type: value}}; ``projects``: {name:
# [TYPE=VALUE, sorted]}; ``marks``: {path: (line, column)} of the file.
Declared = collections.namedtuple('Declared', [
    'templates', 'flavors', 'images', 'projects', 'marks'])
SECTIONS = ('configs', 'flavors', 'images', 'projects')


def parse(text, filename):
    """The Declared of a file's text; FileError, with the line and column,
    at the first problem."""
    try:
        node = yaml.compose(text, Loader=_Loader)
        if node is None:
            raise schema.error(filename, (1, 1), 'empty: a declared state '
                               'starts with "version: %d"' % schema.VERSION)
        schema.check(node, filename)
        _bios_as_written(node)
        _refuse_infinite(node, filename)
        data = schema.value(node)
    except yaml.MarkedYAMLError as exc:
        # syntax, what the loader refuses (anchors, tags, depth) and a
        # merge key "<<", which it cannot construct: one line, at the place
        mark = exc.problem_mark or exc.context_mark
        if 'yaml.org,2002:merge' in str(exc.problem):
            exc.problem = 'merge keys ("<<") are not taken in a declared ' \
                'state: spell each object out'
        raise schema.error(filename, mark or (1, 1), 'YAML%s: %s' % (
            ' syntax' if isinstance(exc, (yaml.scanner.ScannerError,
                                          yaml.parser.ParserError)) else
            '', ' '.join((exc.problem or exc.context or str(
                exc)).split()))) from None
    except yaml.YAMLError as exc:
        raise schema.FileError('%s: YAML syntax: %s' % (
            filename, ' '.join(str(exc).split()))) from None
    marks = {}
    _marks(node, (), marks)
    reader = _Reader(filename, marks)
    declared = Declared(reader.templates(data.get('configs') or {}),
                        reader.asks('flavors', data),
                        reader.asks('images', data),
                        reader.grants(data.get('projects') or {}), marks)
    check_asks(declared, filename)
    return declared


def _refuse_infinite(node, filename):
    """A number too large for a float (``1e400``): JSON, which ironic
    reads, has no infinity."""
    pending = [node]
    while pending:
        node = pending.pop()
        if isinstance(node, yaml.MappingNode):
            pending += [v for pair in node.value for v in pair]
        elif isinstance(node, yaml.SequenceNode):
            pending += node.value
        elif node.tag == 'tag:yaml.org,2002:float' and not math.isfinite(
                float(node.value)):
            raise schema.error(filename, schema.node_mark(node),
                               'number %s is too large for JSON: quote it '
                               'if a string is meant' % node.value)


class _JsonResolver(yaml.resolver.BaseResolver):
    """Plain scalars read as JSON reads them (YAML 1.2's JSON schema):
    ironic takes JSON values, and YAML 1.1 would read ``010`` as 8,
    ``1:30`` as 90, ``Off`` as false and ``2024-01-01`` as a date (which
    no JSON holds).  Anything else is a string."""


_JsonResolver.add_implicit_resolver(
    'tag:yaml.org,2002:bool', re.compile(r'^(?:true|false)$'), list('tf'))
_JsonResolver.add_implicit_resolver(
    'tag:yaml.org,2002:int', re.compile(r'^-?(?:0|[1-9][0-9]*)$'),
    list('-0123456789'))
_JsonResolver.add_implicit_resolver(
    'tag:yaml.org,2002:float', re.compile(
        r'^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?$'),
    list('-0123456789'))
# Beyond JSON's "null": the empty value (``key:``), so that the schema
# still says "not empty" of it, and "~", which every YAML reader takes for
# null: read as the string "~", it would reach ironic as a value its
# writer did not mean.
_JsonResolver.add_implicit_resolver(
    'tag:yaml.org,2002:null', re.compile(r'^(?:null|~|)$'), ['n', '~', ''])
# "<<" stays YAML's merge key, refused with its hint: a YAML 1.1 reader
# would merge it.
_JsonResolver.add_implicit_resolver(
    'tag:yaml.org,2002:merge', re.compile(r'^<<$'), ['<'])

# The deepest a list or mapping nests; a declared state's steps nest a
# few levels, and far deeper ones would exhaust Python's stack.
DEEPEST = 64
# The explicit tags taken: a string's, a list's, a mapping's.  JSON's
# other values are written plain: ``!!int 010`` would be 8 again, ``!!int
# x`` no YAML error, and ``!!timestamp`` no JSON value.
_TAGS_TAKEN = {None} | {'tag:yaml.org,2002:%s' % kind for kind in (
    'str', 'seq', 'map')}


class _Loader(_JsonResolver, yaml.SafeLoader):
    """SafeLoader reading JSON's values, without anchors and aliases (a
    declared state spells each object out, and a few aliases must not
    expand into millions) and nested at most DEEPEST deep."""

    def __init__(self, stream):
        super().__init__(stream)
        self.depth = 0

    def compose_node(self, parent, index):
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent) or getattr(
                event, 'anchor', None):
            self.refuse(event, 'anchors and aliases ("&", "*") are not '
                        'taken in a declared state: spell each object out')
        if getattr(event, 'tag', None) not in _TAGS_TAKEN:
            self.refuse(event, 'tag %s is not taken in a declared state: '
                        'write numbers, true, false and null plain, and '
                        'quote a string' % event.tag.replace(
                            'tag:yaml.org,2002:', '!!'))
        if self.depth == DEEPEST:
            self.refuse(event, 'nested too deep: a declared state nests '
                        'lists and mappings at most %d deep' % DEEPEST)
        self.depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1

    def refuse(self, event, problem):
        raise yaml.composer.ComposerError(None, None, problem,
                                          event.start_mark)


def _bios_as_written(node):
    """BIOS values as written: ironic takes strings, and YAML would read
    ``true`` as a boolean and ``0`` as a number."""
    for config_values in _children(node, 'configs'):
        for body in _children(config_values):
            for template in [body] + list(_children(
                    _child(body, 'resource_classes'))):
                for setting in _children(_child(template, 'bios'), pairs=True):
                    if isinstance(setting[1], yaml.ScalarNode):
                        setting[1].tag = 'tag:yaml.org,2002:str'


def _child(node, key):
    if isinstance(node, yaml.MappingNode):
        for key_node, value in node.value:
            if key_node.value == key:
                return value
    return None


def _children(node, key=None, pairs=False):
    """The values of a mapping node (of its ``key`` child)."""
    node = _child(node, key) if key else node
    if not isinstance(node, yaml.MappingNode):
        return []
    return node.value if pairs else [v for _, v in node.value]


def _marks(node, path, marks):
    """{path: (line, column)} of each key and list item under ``node``."""
    marks.setdefault(path, schema.node_mark(node))
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            marks[path + (key.value,)] = schema.node_mark(key)
            _marks(value, path + (key.value,), marks)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            if isinstance(item, yaml.ScalarNode):
                marks[path + (item.value,)] = schema.node_mark(item)


class _Reader:
    """Reads the sections, each rule's error at its object's place."""

    def __init__(self, filename, marks):
        self.filename, self.marks = filename, marks

    def at(self, path):
        """A context that puts a CommandError at ``path``'s place."""
        return _At(self, path)

    def fail(self, path, message):
        raise schema.error(self.filename, self.marks.get(path, (1, 1)),
                           message)

    def templates(self, configs):
        found, names, kinds = {}, {}, {}
        for config_type, values in sorted(configs.items()):
            for value, body in sorted(values.items()):
                path = ('configs', config_type, value)
                with self.at(path):
                    config = deploy_config.parse_config('%s=%s' % (
                        config_type, value))
                if not set(body) & {'bios', 'steps', 'resource_classes'}:
                    self.vocabulary(path, body)
                    found[config, None] = Template(config, None, None, None,
                                                   None)
                    continue
                if set(body) & {'bios', 'steps'}:
                    found[config, None] = self.template(config, None, body,
                                                        path, names)
                for rc, sub in sorted((body.get('resource_classes')
                                       or {}).items()):
                    sub_path = path + ('resource_classes', rc)
                    with self.at(sub_path):
                        deploy_config.validate_resource_class(rc)
                    kind = deploy_config.placement_class(rc)
                    if kind in kinds.setdefault(config, {}):
                        self.fail(sub_path, 'resource classes %s and %s are '
                                  'one kind in placement (%s): one template '
                                  'per config and kind' % (
                                      kinds[config][kind], rc, kind))
                    kinds[config][kind] = rc
                    if not set(sub) & {'bios', 'steps'}:
                        self.fail(sub_path, 'the template of %s for %s has '
                                  'no bios or steps' % (config, rc))
                    found[config, rc] = self.template(config, rc, sub,
                                                      sub_path, names)
        return found

    def vocabulary(self, path, body):
        if 'template' in body:
            self.fail(path + ('template',), 'a template name needs its '
                      'bios or steps (without them, the vocabulary makes '
                      'a template per resource class, named for it)')

    def template(self, config, rc, body, path, names):
        if 'bios' in body and 'steps' in body:
            self.fail(path + ('steps',), 'give bios or steps, not both')
        with self.at(path + ('steps',) if 'steps' in body else
                     path + ('bios',)):
            steps = dsteps.validate_steps(body['steps']) if 'steps' in body \
                else [dsteps.bios_step(sorted(body['bios'].items()))]
        with self.at(path + ('capability_traits',)):
            traits = sorted(deploy_config.validate_traits(
                body['capability_traits'])) if 'capability_traits' in body \
                else deploy_config.default_capability_traits(config.type)
        with self.at(path + ('template',) if 'template' in body else path):
            name = deploy_config.validate_template_name(
                body.get('template') or deploy_config.template_trait(
                    config, rc))
            deploy_config.refuse_standard_name(name)
        if name in names:
            self.fail(path + ('template',) if 'template' in body else path,
                      'duplicate name: template %s is also %s\'s' % (
                          name, names[name]))
        names[name] = config
        return Template(config, rc, name, sort_steps(steps), traits)

    def asks(self, section, data):
        found = {}
        for name, asks in sorted((data.get(section) or {}).items()):
            found[name] = {}
            for config_type, value in sorted(asks.items()):
                with self.at((section, name, config_type)):
                    config = deploy_config.parse_config('%s=%s' % (
                        config_type, value))
                found[name][config.type] = config.value
        return found

    def grants(self, projects):
        found = {}
        for name, configs in sorted(projects.items()):
            seen = []
            for text in configs:
                with self.at(('projects', name, text)):
                    config = deploy_config.parse_config(text)
                if str(config) in seen:
                    self.fail(('projects', name, text), 'duplicate name: '
                              '%s is granted twice to %s' % (config, name))
                seen.append(str(config))
            found[name] = sorted(seen)
        return found


class _At:
    def __init__(self, reader, path):
        self.reader, self.path = reader, path

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, traceback):
        if isinstance(exc, exceptions.CommandError) and not isinstance(
                exc, schema.FileError):
            self.reader.fail(self.path, str(exc))
        return False


def check_asks(declared, filename):
    """The rules over several sections: every ask names a config the file
    declares; an image asks only for a config served on every kind; a
    flavor's configs share no step; a grant's templates may run on a
    running server."""
    reader = _Reader(filename, declared.marks)
    offered = {c for c, _ in declared.templates}
    for section in ('flavors', 'images'):
        for name, asks in getattr(declared, section).items():
            configs = [deploy_config.Config(t, v) for t, v in asks.items()]
            for config in configs:
                path = (section, name, config.type)
                if config not in offered:
                    reader.fail(path, 'unknown config value %s: the file '
                                'declares no such config (configs: %s)' % (
                                    config, _listed(offered)))
                if section == 'images' and config not in every_kind(
                        declared.templates):
                    # the vocabulary's ({}) is a template per class too
                    reader.fail(path, '%s is served per resource class, '
                                'and an image cannot know the kind it lands '
                                'on: ask for it in the flavors' % config)
            with reader.at((section, name)):
                config_specs.refuse_clashes(
                    configs, every_kind(declared.templates))
    for name, texts in declared.projects.items():
        for text in texts:
            config = deploy_config.parse_config(text)
            if config not in offered:
                reader.fail(('projects', name, text), 'unknown config value '
                            '%s: the file declares no such config' % config)
            for (asked, _rc), template in declared.templates.items():
                if asked == config and template.steps is not None:
                    with reader.at(('projects', name, text)):
                        grants.refuse_ungrantable(config, as_dict(template))


def _listed(configs):
    return ', '.join(sorted(str(c) for c in configs)) or 'none'


def every_kind(templates):
    """{Config: template dict} of the templates for every kind."""
    return {c: as_dict(t) for (c, rc), t in templates.items()
            if rc is None and t.steps is not None}


def as_dict(template):
    """A declared template as the dict ironic's listing gives."""
    return {'name': template.name, 'steps': template.steps,
            'extra': deploy_config.template_extra(
                template.config, template.capability_traits,
                template.resource_class)}


def sort_steps(steps):
    """Steps in a stable order: by priority (highest first), interface and
    step name (ironic orders them by priority; two with one priority are
    refused across templates only when they are the same step)."""
    return sorted(steps, key=lambda s: (-s['priority'], s['interface'],
                                        s['step']))


# ------------------------------------------------------------ the cloud


def from_cloud(templates, flavors, images, project_names):
    """The Declared of what the cloud holds that this plugin manages: the
    annotated templates, the flavors' and images' asks (``flavors``,
    ``images``: dicts as listed, with ``extra_specs`` or properties), and
    the templates' record of grants (``project_names``: {ID: name})."""
    found = {}
    for template in templates:
        extra = template.get('extra') or {}
        config = deploy_config.config_of(extra)
        if config is None or extra.get(dtemplates.DELETING):
            continue    # not this plugin's, or on its way out
        rc = extra.get(deploy_config.EXTRA_CLASS) or None
        if (config, rc) in found:
            raise exceptions.CommandError(
                'Templates %s and %s both serve %s%s: one template per '
                'config and kind; delete one (openstack baremetal deploy '
                'template delete)' % (found[config, rc].name,
                                      template['name'], config,
                                      ' on %s' % rc if rc else ''))
        found[config, rc] = Template(
            config, rc, template['name'], sort_steps(template['steps']),
            deploy_config.capability_traits_of(extra))
    return Declared(found, _owners(flavors, 'extra_specs', 'flavor'),
                    _owners(images, None, 'image'),
                    _granted(templates, project_names), {})


def _owners(listed, key, kind):
    found = {}
    for owner in listed:
        asks = {c.type: c.value for c in config_specs.configs_of(
            owner.get(key) if key else owner)}
        if not asks:
            continue
        name = owner.get('name')
        if not name or name in found:
            raise exceptions.CommandError(
                'More than one %s asking for configs is named %s: a '
                'declared state names each once (rename one)' % (
                    kind, name or '(no name)'))
        found[name] = asks
    return found


def _granted(templates, project_names):
    """{project name: [TYPE=VALUE]} of the grants that count: those
    recorded with the template's content now (a stale record grants
    nothing until ``set`` grants it again), to projects keystone knows
    (a file names no IDs)."""
    found = {}
    for template in dtemplates.by_config(templates).every():
        config = str(deploy_config.config_of(template['extra']))
        for project_id in grants.granted_projects(template):
            if project_id in project_names:
                found.setdefault(project_names[project_id], set()).add(
                    config)
    return {name: sorted(configs) for name, configs in found.items()}


def unnamed_grants(templates, project_names):
    """The project IDs the templates record grants for that keystone no
    longer knows, sorted."""
    return sorted({p for t in templates for p in grants.recorded(t)
                   if p not in project_names})


def refuse_doubled_project_names(templates, project_names, names=None):
    """One line when two granted projects share a name (two domains; of
    ``names`` only, when given): a file names projects by name only."""
    ids = {}
    for template in templates:
        for project_id in grants.granted_projects(template):
            if project_id in project_names:
                ids.setdefault(project_names[project_id], set()).add(
                    project_id)
    for name, found in sorted(ids.items()):
        if len(found) > 1 and (names is None or name in names):
            raise exceptions.CommandError(
                'Project name %s is granted configs in %d projects (%s, in '
                'two domains): a declared state names projects by name '
                'only; rename one of them' % (name, len(found),
                                              ', '.join(sorted(found))))


# ------------------------------------------------------------ writing


def render(declared, output='yaml'):
    """The file's text (``output``: yaml, or json, which is YAML too):
    version first, then each section in a fixed order, names and lists
    sorted, and a string any YAML reader would take for another type
    quoted."""
    configs = {}
    for (config, rc), template in sorted(
            declared.templates.items(),
            key=lambda item: (item[0][0].type, item[0][0].value,
                              item[0][1] or '')):
        value = configs.setdefault(config.type, {}).setdefault(
            config.value, {})
        if rc is None:
            value.update(_body(template))
        else:
            value.setdefault('resource_classes', {})[rc] = _body(template)
    for values in configs.values():
        for body in values.values():
            if 'resource_classes' in body:
                body['resource_classes'] = body.pop('resource_classes')
    data = {'version': schema.VERSION, 'configs': configs,
            'flavors': _sorted(declared.flavors),
            'images': _sorted(declared.images),
            'projects': {n: sorted(c) for n, c in sorted(
                declared.projects.items())}}
    if output == 'json':
        return json.dumps(data, indent=2, ensure_ascii=False) + '\n'
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False,
                     default_flow_style=False, allow_unicode=True)


class _Dumper(yaml.SafeDumper):
    """SafeDumper quoting each string that a YAML reader, of 1.1 or of
    1.2's core or JSON schema, would read as another type."""


# What YAML 1.2's core schema reads as no string (JSON's schema reads a
# part of it), and YAML 1.1's "y" and "n", which PyYAML's reading of 1.1
# leaves out: SafeDumper's resolver quotes the rest of YAML 1.1's.
_NOT_A_STRING = re.compile(r'''^(?:null|Null|NULL|~
    |true|True|TRUE|false|False|FALSE|y|Y|n|N
    |[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+
    |[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?
    |[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$''', re.X)


def _quoted_when_read_otherwise(dumper, text):
    """A string, plain unless a YAML reader would take it for another
    type (the emitter picks double quotes where single ones cannot
    hold it)."""
    return dumper.represent_scalar(
        'tag:yaml.org,2002:str', text,
        style="'" if _NOT_A_STRING.match(text) else None)


_Dumper.add_representer(str, _quoted_when_read_otherwise)


def _sorted(owners):
    return {name: dict(sorted(asks.items()))
            for name, asks in sorted(owners.items())}


def _body(template):
    """A template's entry: its name when not the derived one, its
    capability traits when not its type's, its BIOS settings or steps."""
    if template.steps is None:
        return {}
    body = {}
    if template.name != deploy_config.template_trait(
            template.config, template.resource_class):
        body['template'] = template.name
    if template.capability_traits != deploy_config.default_capability_traits(
            template.config.type):
        body['capability_traits'] = list(template.capability_traits)
    settings = bios_settings(template.steps)
    if settings is not None:
        body['bios'] = settings
    else:
        body['steps'] = [{k: _keys_sorted(s[k]) for k in dsteps.STEP_KEYS}
                         for s in template.steps]
    return body


def _keys_sorted(value):
    """A step's value with its mappings' keys sorted, at every depth
    (ironic keeps args as given: a file in git would change with it)."""
    if isinstance(value, dict):
        return {k: _keys_sorted(v) for k, v in sorted(value.items())}
    if isinstance(value, list):
        return [_keys_sorted(v) for v in value]
    return value


def bios_settings(steps):
    """{name: value} when the steps are one BIOS profile as ``bios:``
    writes it (sorted, the default priority), else None."""
    if len(steps) != 1 or set(steps[0]['args']) != {'settings'}:
        return None
    settings = steps[0]['args']['settings']
    if not isinstance(settings, list) or not all(
            isinstance(s, dict) and set(s) == {'name', 'value'}
            for s in settings):
        return None
    found = {s['name']: s['value'] for s in settings}
    if not all(isinstance(v, str) for v in found.values()):
        return None     # bios: reads its values as strings: kept as steps
    if len(found) != len(settings) or steps[0] != dsteps.bios_step(
            sorted(found.items())):
        return None
    return dict(sorted(found.items()))
