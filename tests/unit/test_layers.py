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

"""The layers of doc/source/contributor/architecture.rst, read from the
code: each imports only the layers below it, no module imports itself
through others, the domain's rooms import only the rooms their docstrings
allow, and commands stay thin."""

import ast
import pathlib
import re

import testtools

PACKAGE = pathlib.Path(__file__).parents[2] / 'osc_deploy_config'
# Layer of each package below osc_deploy_config; plugin.py, which OSC
# loads, is at the top (it builds Clients).
LAYERS = {'domain': 0, 'services': 1, 'use_cases': 2, 'v1': 3, 'plugin': 3}
# The size of a function, a class, and what a command or hook does itself.
LIMITS = {'function': 45, 'class': 200, 'take_action': 25, 'before': 25}


def layer_of(module):
    """osc_deploy_config.services.nova -> 1"""
    parts = module.split('.')[1:]
    if not parts:
        return 0
    return LAYERS[parts[0]]


def modules():
    for path in sorted(PACKAGE.rglob('*.py')):
        relative = path.relative_to(PACKAGE.parent).with_suffix('')
        name = '.'.join(relative.parts)
        if name.endswith('.__init__'):
            name = name[:-len('.__init__')]
        yield name, ast.parse(path.read_text(encoding='utf-8'))


def imported(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                yield '%s.%s' % (node.module, alias.name)
        elif isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)


def import_graph(sources):
    """{module: the package's modules it imports}, from (name, tree)
    pairs.  Every import counts, in a function too: a lazy import hides a
    circle, it does not end it.  ``from a.b import c`` names the module
    ``a.b.c`` when there is one, else ``a.b`` (c is a name in it)."""
    trees = dict(sources)
    graph = {}
    for name, tree in trees.items():
        graph[name] = set()
        for target in imported(tree):
            while target not in trees and '.' in target:
                target = target.rsplit('.', 1)[0]
            if target in trees and target != name:
                graph[name].add(target)
    return graph


def upward(graph):
    """'a imports b' for each import from a lower layer up to a higher."""
    return sorted('%s imports %s' % (name, target)
                  for name, targets in graph.items() for target in targets
                  if layer_of(target) > layer_of(name))


def reachable(graph, start):
    """The modules that ``start`` imports, directly or through others."""
    seen, todo = set(), [start]
    while todo:
        for target in graph.get(todo.pop(), ()):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def circles(graph):
    """Each set of modules that import each other in a loop, sorted."""
    reach = {name: reachable(graph, name) for name in graph}
    return sorted({tuple(sorted(m for m in reach[name] if name in reach[m]))
                   for name in graph if name in reach[name]})


def room_of(module, rooms):
    """osc_deploy_config.domain.hardware.tagging -> 'hardware'; None for a
    module that is in no room of domain/."""
    parts = module.split('.')
    if len(parts) > 2 and parts[1] == 'domain' and parts[2] in rooms:
        return parts[2]
    return None


def allowed_rooms(docstring):
    """The rooms a room's docstring lets it import: the ``names`` in its
    'May import:' paragraph (none: 'May import: no other room.'); None
    when it does not say."""
    found = re.search(r'^May import:(.*(?:\n.+)*)', docstring or '', re.M)
    return set(re.findall(r'``(\w+)``', found.group(1))) if found else None


def room_breaches(graph, allowed):
    """'a (room) imports b (room)' for each import between two rooms of
    domain/ that the importer's docstring does not allow (``allowed``:
    {room: the rooms it may import})."""
    breaches = []
    for name, targets in sorted(graph.items()):
        mine = room_of(name, allowed)
        for target in sorted(targets):
            theirs = room_of(target, allowed)
            if mine and theirs and theirs not in (mine, *allowed[mine]):
                breaches.append('%s (%s) imports %s (%s)' % (
                    name, mine, target, theirs))
    return breaches


def domain_rooms(sources):
    """{room: the rooms its docstring allows (None: it does not say)} of
    the packages in domain/ that hold modules."""
    trees = dict(sources)
    rooms = {name.split('.')[2] for name in trees
             if name.startswith('osc_deploy_config.domain.')
             and name.count('.') > 2}
    return {room: allowed_rooms(ast.get_docstring(
        trees.get('osc_deploy_config.domain.' + room, ast.Module([], []))))
        for room in rooms}


def synthetic(sources):
    """The import graph of made-up modules: {name: source}."""
    return import_graph((name, ast.parse(source))
                        for name, source in sources.items())


class TestLayers(testtools.TestCase):
    def test_each_layer_imports_only_those_below(self):
        self.assertEqual([], upward(import_graph(modules())))

    def test_an_import_up_a_layer_is_found(self):
        graph = synthetic({
            'osc_deploy_config.domain.a': 'import osc_deploy_config.v1.b',
            'osc_deploy_config.v1.b': 'from osc_deploy_config import v1',
            'osc_deploy_config.v1': ''})
        self.assertEqual(['osc_deploy_config.domain.a imports '
                          'osc_deploy_config.v1.b'], upward(graph))

    def test_no_module_imports_itself_through_others(self):
        self.assertEqual([], circles(import_graph(modules())))

    def test_a_circle_is_found_even_through_a_lazy_import(self):
        graph = synthetic({
            'osc_deploy_config.d.a': 'from osc_deploy_config.d import b',
            'osc_deploy_config.d.b': 'from osc_deploy_config.d.c import f',
            'osc_deploy_config.d.c': 'def f():\n'
                                     '    from osc_deploy_config.d import a',
            'osc_deploy_config.d.e': 'from osc_deploy_config.d import a'})
        self.assertEqual([('osc_deploy_config.d.a', 'osc_deploy_config.d.b',
                           'osc_deploy_config.d.c')], circles(graph))

    def test_the_domain_does_no_io(self):
        for name, tree in modules():
            if layer_of(name) == 0 and name != 'osc_deploy_config':
                sdk = [t for t in imported(tree) if t.split('.')[0] in (
                    'openstack', 'keystoneauth1', 'requests')]
                self.assertEqual([], sdk, name)


class TestRooms(testtools.TestCase):
    """domain/ in rooms (doc/source/contributor/architecture.rst): each
    room's docstring says which rooms it may import."""

    def test_each_room_says_what_it_may_import(self):
        rooms = domain_rooms(modules())
        self.assertIn('configs', rooms)
        self.assertEqual([], [r for r, may in rooms.items() if may is None])
        self.assertEqual([], sorted(set().union(*rooms.values()) - set(
            rooms)))

    def test_rooms_import_only_the_rooms_they_allow(self):
        sources = list(modules())
        self.assertEqual([], room_breaches(import_graph(sources),
                                           domain_rooms(sources)))

    def test_the_rooms_allowed_make_no_circle(self):
        rooms = domain_rooms(modules())
        self.assertEqual([], circles({room: may or set()
                                      for room, may in rooms.items()}))

    def test_every_domain_module_is_in_a_room(self):
        sources = list(modules())
        rooms = domain_rooms(sources)
        flat = [name for name, _ in sources
                if name.startswith('osc_deploy_config.domain.')
                and room_of(name, rooms) is None]
        self.assertEqual([], flat)

    def test_an_import_from_a_room_not_allowed_is_found(self):
        graph = synthetic({
            'osc_deploy_config.domain.low.a':
                'from osc_deploy_config.domain.high import c',
            'osc_deploy_config.domain.high.b':
                'from osc_deploy_config.domain.low.a import x',
            'osc_deploy_config.domain.high.c': ''})
        self.assertEqual(
            ['osc_deploy_config.domain.low.a (low) imports '
             'osc_deploy_config.domain.high.c (high)'],
            room_breaches(graph, {'low': set(), 'high': {'low'}}))

    def test_a_room_reads_its_allowed_rooms_from_its_docstring(self):
        self.assertEqual({'configs', 'toggle'}, allowed_rooms(
            'A room.\n\nMay import: ``configs``,\n``toggle``.\n\nMore.'))
        self.assertEqual(set(), allowed_rooms('May import: no other room.'))
        self.assertIsNone(allowed_rooms('A room that does not say.'))


class TestShape(testtools.TestCase):
    def test_functions_classes_and_commands_stay_small(self):
        too_long = []
        for name, tree in modules():
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef):
                    kind = 'class'
                elif isinstance(node, ast.FunctionDef):
                    kind = node.name if node.name in LIMITS else 'function'
                else:
                    continue
                size = node.end_lineno - node.lineno + 1
                if size > LIMITS[kind]:
                    too_long.append('%s.%s: %d lines (at most %d)' % (
                        name, node.name, size, LIMITS[kind]))
        self.assertEqual([], too_long)
