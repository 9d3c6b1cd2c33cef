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

"""The declared file's JSON Schema, published in the docs, and the check
of a composed YAML document against it that names the line and column of
the first problem.

The checker reads the subset of JSON Schema the schema uses (``type``,
``properties``, ``required``, ``additionalProperties``, ``propertyNames``,
``items``, ``const``, ``minLength``, ``not``/``anyOf`` of ``required``,
``dependentSchemas``): the schema published is the one enforced.
"""

import json
import re

from osc_lib import exceptions
import yaml

VERSION = 1

_WORD = '^[a-z0-9][a-z0-9_.-]*$'
_CONFIG = '^[a-z0-9][a-z0-9_.-]*=[a-z0-9][a-z0-9_.-]*$'
_SCALAR = {'type': ['string', 'integer', 'number', 'boolean']}
_STEP = {
    'type': 'object',
    'required': ['interface', 'step', 'args', 'priority'],
    'additionalProperties': False,
    'properties': {
        'interface': {'type': 'string'},
        'step': {'type': 'string'},
        'args': {'type': 'object'},
        'priority': {'type': 'integer'},
    },
}


_BIOS_OR_STEPS = {'anyOf': [{'required': ['bios']}, {'required': ['steps']}]}
_NAMED = {'minLength': 1}


def _template(per_class):
    """The schema of a config value's template (``per_class``: the one for
    every kind, which may have templates per resource class)."""
    properties = {
        'template': {'type': 'string', 'minLength': 1,
                     'description': 'The template\'s name, when not the '
                                    'one derived from its config; needs '
                                    'its bios or steps.'},
        'capability_traits': {
            'type': 'array', 'items': {'type': 'string'},
            'description': 'Traits a node needs; default: the type\'s.'},
        'bios': {'type': 'object', 'additionalProperties': _SCALAR,
                 'description': 'BIOS settings: NAME: VALUE.'},
        'steps': {'type': 'array', 'items': _STEP,
                  'description': 'Deploy steps, as ironic takes them.'},
    }
    found = {'type': 'object', 'additionalProperties': False,
             'properties': properties,
             'not': {'required': ['bios', 'steps']}}
    if per_class:
        properties['resource_classes'] = {
            'type': 'object',
            'propertyNames': {'pattern': '^[A-Za-z0-9_.-]{1,80}$'},
            'additionalProperties': _template(False),
            'description': 'A template of its own per resource class.'}
        # without bios or steps: the vocabulary's, named for each class
        found['dependentSchemas'] = {'template': _BIOS_OR_STEPS}
    else:
        found.update(_BIOS_OR_STEPS)
    return found


_ASKS = {'type': 'object', 'propertyNames': {'pattern': _WORD},
         'additionalProperties': {'type': 'string', 'pattern': _WORD},
         'description': 'TYPE: VALUE of each config asked for.'}

SCHEMA = {
    '$schema': 'https://json-schema.org/draft/2020-12/schema',
    '$id': 'https://opendev.org/openstack/osc-deploy-config/declared-v1',
    'title': 'osc-deploy-config declared state',
    'type': 'object',
    'required': ['version'],
    'additionalProperties': False,
    'properties': {
        'version': {'const': VERSION},
        'configs': {
            'type': 'object', 'propertyNames': {'pattern': _WORD},
            'additionalProperties': {
                'type': 'object', 'propertyNames': {'pattern': _WORD},
                'additionalProperties': _template(True)},
            'description': 'TYPE: {VALUE: its template}.'},
        'flavors': {'type': 'object', 'propertyNames': _NAMED,
                    'additionalProperties': _ASKS},
        'images': {'type': 'object', 'propertyNames': _NAMED,
                   'additionalProperties': _ASKS},
        'projects': {
            'type': 'object', 'propertyNames': _NAMED,
            'additionalProperties': {
                'type': 'array',
                'items': {'type': 'string', 'pattern': _CONFIG}},
            'description': 'Project name: the configs granted to it.'},
    },
}

_TYPES = {
    'object': yaml.MappingNode,
    'array': yaml.SequenceNode,
}
_SCALAR_TAGS = {
    'string': ('tag:yaml.org,2002:str',),
    'integer': ('tag:yaml.org,2002:int',),
    'number': ('tag:yaml.org,2002:int', 'tag:yaml.org,2002:float'),
    'boolean': ('tag:yaml.org,2002:bool',),
}
_NAMES = {'object': 'a mapping', 'array': 'a list', 'string': 'a string',
          'integer': 'an integer', 'number': 'a number',
          'boolean': 'true or false'}


class FileError(exceptions.CommandError):
    """A problem of the declared file, at a line and column."""


def where(filename, mark):
    """``FILE:LINE:COLUMN`` of a YAML mark (``(line, column)`` from 1)."""
    line, column = mark if isinstance(mark, tuple) else (
        mark.line + 1, mark.column + 1)
    return '%s:%d:%d' % (filename, line, column)


def error(filename, mark, message):
    return FileError('%s: %s' % (where(filename, mark), message))


def node_mark(node):
    return node.start_mark.line + 1, node.start_mark.column + 1


def check(node, filename, schema=None, path='the file'):
    """Raise FileError, at the line and column, for the first place
    ``node`` (a composed YAML node) does not follow ``schema``."""
    schema = SCHEMA if schema is None else schema
    if 'const' in schema:
        found = value(node)
        # 1, not true or 1.0 (equal in Python)
        if found != schema['const'] or type(found) is not type(
                schema['const']):
            raise error(filename, node_mark(node), '%s must be %s, not %s'
                        % (path, json.dumps(schema['const']), _shown(node)))
        return
    kinds = schema.get('type')
    if kinds is not None:
        _check_type(node, filename, kinds, path)
    if isinstance(node, yaml.MappingNode):
        _check_mapping(node, filename, schema, path)
    elif isinstance(node, yaml.SequenceNode):
        for number, item in enumerate(node.value, 1):
            check(item, filename, schema.get('items', {}),
                  '%s item %d' % (path, number))
    elif 'pattern' in schema and not re.match(schema['pattern'],
                                              str(value(node))):
        raise error(filename, node_mark(node), '%s %r: expected %s' % (
            path, value(node), _pattern_words(schema['pattern'])))
    elif len(str(value(node))) < schema.get('minLength', 0):
        raise error(filename, node_mark(node), '%s is empty' % path)


def _check_type(node, filename, kinds, path):
    kinds = [kinds] if isinstance(kinds, str) else kinds
    for kind in kinds:
        if kind in _TYPES and isinstance(node, _TYPES[kind]):
            return
        if (kind in _SCALAR_TAGS and isinstance(node, yaml.ScalarNode)
                and node.tag in _SCALAR_TAGS[kind]):
            return
    hint = ''
    if 'string' in kinds and isinstance(node, yaml.ScalarNode) and \
            node.tag != 'tag:yaml.org,2002:null':
        hint = ' (YAML reads %s as %s: quote it, "%s")' % (
            node.value, _READ_AS.get(node.tag, 'another type'), node.value)
    raise error(filename, node_mark(node), 'wrong type: %s must be %s, '
                'not %s%s' % (path, ' or '.join(_NAMES[k] for k in kinds),
                              _found(node), hint))


_READ_AS = {'tag:yaml.org,2002:bool': 'a boolean',
            'tag:yaml.org,2002:int': 'a number',
            'tag:yaml.org,2002:float': 'a number',
            'tag:yaml.org,2002:null': 'null'}


def _key_error(key_node, filename, path):
    """The error of a key YAML reads as no string (a JSON object's keys
    are strings), with the quotes that make it one."""
    if isinstance(key_node, yaml.ScalarNode) and key_node.value:
        return error(filename, node_mark(key_node), 'key %s of %s is read '
                     'by YAML as %s: quote it ("%s")' % (
                         key_node.value, path, _READ_AS[key_node.tag],
                         key_node.value))
    return error(filename, node_mark(key_node), 'wrong type: a key of %s '
                 'must be a string, not %s' % (path, _found(key_node)))


def _check_mapping(node, filename, schema, path):
    properties = schema.get('properties', {})
    extra = schema.get('additionalProperties', True)
    seen = {}
    for key_node, value_node in node.value:
        key = value(key_node)
        if not isinstance(key, str):
            raise _key_error(key_node, filename, path)
        if key in seen:
            raise error(filename, node_mark(key_node),
                        'duplicate name %r in %s (first at line %d)'
                        % (key, path, seen[key]))
        seen[key] = key_node.start_mark.line + 1
        pattern = schema.get('propertyNames', {}).get('pattern')
        if pattern and not re.match(pattern, key):
            raise error(filename, node_mark(key_node), '%s %r: expected %s'
                        % (path, key, _pattern_words(pattern)))
        if len(key) < schema.get('propertyNames', {}).get('minLength', 0):
            raise error(filename, node_mark(key_node),
                        'an empty name in %s' % path)
        sub = properties.get(key, extra)
        if sub is False:
            raise error(filename, node_mark(key_node),
                        'unknown key %r in %s (expected %s)' % (
                            key, path, ', '.join(properties) or 'none'))
        check(value_node, filename, sub if isinstance(sub, dict) else {},
              '%s of %s' % (key, path) if path != 'the file' else key)
    missing = [k for k in schema.get('required', ()) if k not in seen]
    if missing:
        raise error(filename, node_mark(node), '%s lacks %s' % (
            path, ', '.join(missing)))
    _check_together(node, filename, schema, path, seen)


def _check_together(node, filename, schema, path, seen):
    """``not`` of ``required`` (keys not given together), ``anyOf`` of
    ``required`` (one of them given) and ``dependentSchemas`` of such an
    ``anyOf`` (with this key, one of them given)."""
    both = schema.get('not', {}).get('required', ())
    if both and all(k in seen for k in both):
        raise error(filename, _key_mark(node, both[-1]), 'give %s, not '
                    'both, in %s' % (' or '.join(both), path))
    for key, sub in [(None, schema)] + sorted(
            schema.get('dependentSchemas', {}).items()):
        either = [r['required'][0] for r in sub.get('anyOf', ())]
        if (key is None or key in seen) and either and not any(
                k in seen for k in either):
            raise error(filename, _key_mark(node, key) if key else
                        node_mark(node), '%s %s' % (
                            path, ('lacks %s' if key is None else
                                   '%s needs %%s' % key) % ' or '.join(
                                       either)))


def _key_mark(node, key):
    return next(node_mark(k) for k, _ in node.value if value(k) == key)


def _pattern_words(pattern):
    if pattern == _CONFIG:
        return 'TYPE=VALUE, lowercase letters, digits, "_", "." and "-"'
    if pattern == _WORD:
        return 'lowercase letters, digits, "_", "." and "-"'
    return 'to match %s' % pattern


def _found(node):
    if isinstance(node, yaml.MappingNode):
        return 'a mapping'
    if isinstance(node, yaml.SequenceNode):
        return 'a list'
    if node.tag == 'tag:yaml.org,2002:null':
        return 'empty'
    return '%r' % node.value


def _shown(node):
    """A node as JSON spells its value (a string in quotes), or as
    ``_found`` describes it."""
    if isinstance(node, yaml.ScalarNode) and \
            node.tag != 'tag:yaml.org,2002:null':
        return json.dumps(value(node))
    return _found(node)


def value(node):
    """The Python value of a node (a scalar's, after YAML's resolution)."""
    return yaml.constructor.SafeConstructor().construct_object(node,
                                                               deep=True)
