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

import io
import json
import os
import tempfile

from osc_lib import exceptions
import testtools

from osc_deploy_config.domain.configs import steps as dsteps

STEP = {'interface': 'bios', 'step': 'apply_configuration',
        'args': {'settings': []}, 'priority': 150}


def write(text):
    fd, path = tempfile.mkstemp()
    with os.fdopen(fd, 'w') as f:
        f.write(text)
    return path


class TestLoadSteps(testtools.TestCase):
    def test_json_string(self):
        self.assertEqual([STEP], dsteps.load_steps(json.dumps([STEP])))

    def test_yaml_file(self):
        path = write('- interface: bios\n  step: apply_configuration\n'
                     '  args: {settings: []}\n  priority: 150\n')
        self.addCleanup(os.remove, path)
        self.assertEqual([STEP], dsteps.load_steps(path))

    def test_stdin(self):
        self.assertEqual([STEP], dsteps.load_steps(
            '-', stdin=io.StringIO(json.dumps([STEP]))))

    def test_malformed_json_names_the_position(self):
        exc = self.assertRaises(exceptions.CommandError, dsteps.load_steps,
                                '[{"interface":')
        self.assertIn('Malformed deploy steps', str(exc))
        self.assertIn('line 1, column 15', str(exc))

    def test_missing_file(self):
        exc = self.assertRaises(exceptions.CommandError, dsteps.load_steps,
                                '/no/such/steps.yaml')
        self.assertIn('no such file', str(exc))

    def test_unreadable_file(self):
        path = write('')
        self.addCleanup(os.remove, path)
        with open(path, 'wb') as f:
            f.write(b'\xff\xfe[')
        exc = self.assertRaises(exceptions.CommandError, dsteps.load_steps,
                                path)
        self.assertIn('Cannot read deploy steps', str(exc))


class TestValidateSteps(testtools.TestCase):
    def refused(self, steps, why):
        exc = self.assertRaises(exceptions.CommandError,
                                dsteps.validate_steps, steps)
        self.assertIn(why, str(exc))

    def test_valid(self):
        self.assertEqual([STEP], dsteps.validate_steps([STEP]))

    def test_digit_string_priority_as_ironic(self):
        self.assertEqual(5, dsteps.validate_steps(
            [dict(STEP, priority='5')])[0]['priority'])

    def test_refusals(self):
        self.refused({}, 'must be a list')
        self.refused([], 'must not be empty')
        self.refused(['x'], 'must be an object')
        self.refused([dict(STEP, interface='cpu')], "unknown interface 'cpu'")
        self.refused([dict(STEP, priority=-1)], 'integer >= 0')
        self.refused([dict(STEP, priority=1.5)], 'integer >= 0')
        self.refused([dict(STEP, priority=True)], 'integer >= 0')
        self.refused([dict(STEP, priority='-1')], 'integer >= 0')
        self.refused([{k: v for k, v in STEP.items() if k != 'args'}],
                     'missing args')
        self.refused([dict(STEP, args=[])], '"args" must be an object')
        for name in ('', 3, 'a b', 'x\n', '\U00010000', '9lives'):
            self.refused([dict(STEP, step=name)], 'must name a step')
        self.refused([dict(STEP, order=1)], "unknown keys 'order'")
        self.refused([STEP, dict(STEP, priority=10)],
                     "duplicate step 'bios.apply_configuration'")


class TestProfiles(testtools.TestCase):
    def test_bios(self):
        step = dsteps.bios_step([dsteps.parse_bios_setting('HT=Off'),
                                 dsteps.parse_bios_setting('X=a=b')])
        self.assertEqual([{'name': 'HT', 'value': 'Off'},
                          {'name': 'X', 'value': 'a=b'}],
                         step['args']['settings'])
        self.assertEqual(150, step['priority'])
        self.assertEqual([step], dsteps.validate_steps([step]))

    def test_bios_setting_needs_a_value(self):
        for text in ('HT', '=Off'):
            exc = self.assertRaises(exceptions.CommandError,
                                    dsteps.parse_bios_setting, text)
            self.assertIn('Invalid BIOS setting %r: expected NAME=VALUE'
                          % text, str(exc))

    def test_raid(self):
        raid = {'logical_disks': [{'size_gb': 'MAX', 'raid_level': '1',
                                   'is_root_volume': True}]}
        path = write(json.dumps(raid))
        self.addCleanup(os.remove, path)
        step = dsteps.raid_step(dsteps.load_raid_config(path))
        self.assertEqual({'raid_config': raid}, step['args'])
        self.assertEqual('raid', step['interface'])

    def test_raid_refusals(self):
        self.assertIn('Cannot read', str(self.assertRaises(
            exceptions.CommandError, dsteps.load_raid_config, '/nope')))
        for text, why in (('{}', 'non-empty "logical_disks" list'),
                          ('{"logical_disks": []}', 'non-empty'),
                          ('[1]', 'must be an object'),
                          ('a: [b', 'Malformed RAID config')):
            path = write(text)
            self.addCleanup(os.remove, path)
            exc = self.assertRaises(exceptions.CommandError,
                                    dsteps.load_raid_config, path)
            self.assertIn(why, str(exc))
