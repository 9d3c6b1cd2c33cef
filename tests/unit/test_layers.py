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
code: each imports only the layers below it, and commands stay thin."""

import ast
import pathlib

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


class TestLayers(testtools.TestCase):
    def test_each_layer_imports_only_those_below(self):
        upward = []
        for name, tree in modules():
            for target in imported(tree):
                if not target.startswith('osc_deploy_config.'):
                    continue
                if target.count('.') == 1 and target[18:] in LAYERS:
                    target += '.x'      # "from osc_deploy_config import v1"
                if layer_of(target) > layer_of(name):
                    upward.append('%s imports %s' % (name, target))
        self.assertEqual([], upward)

    def test_the_domain_does_no_io(self):
        for name, tree in modules():
            if layer_of(name) == 0 and name != 'osc_deploy_config':
                sdk = [t for t in imported(tree) if t.split('.')[0] in (
                    'openstack', 'keystoneauth1', 'requests')]
                self.assertEqual([], sdk, name)


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
