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

"""Bad input, command by command: each gets a non-zero exit, one clear line
on stderr, no traceback, and leaves the cloud exactly as it was."""

import json
import os
import re

import fixtures

from tests.functional import base

TEMPLATE = ('baremetal', 'deploy', 'template')
FLAVOR = ('flavor', 'deploy-config')
NODE = ('baremetal', 'node', 'deploy-config')
IMAGE = ('image', 'deploy-config')
HT_NODES = 'bm-0, bm-1, bm-3'     # the seed's capable nodes of kind a
FAKE_HT_NODES = HT_NODES + ', bm-4'     # and of kind b
EVERY_HT_NODE = FAKE_HT_NODES + ', bm-5, bm-6'  # and the Redfish nodes
TOO_LONG = 'a' * 300
CASES_PER_READ = 6


def step(**changes):
    good = {'interface': 'bios', 'step': 'apply_configuration',
            'args': {'settings': []}, 'priority': 150}
    good.update(changes)
    return json.dumps([{k: v for k, v in good.items() if v is not None}])


class TestBadInput(base.FunctionalTestCase):
    def setUp(self):
        super().setUp()
        self.config = 'fnbad=%s' % self.unique_name('v').replace('-', '')
        template = self.openstack(*TEMPLATE, 'create', '--config',
                                  self.config, '--no-requires-trait',
                                  '--bios-setting', 'FnToggle=On',
                                  cloud=base.SYSTEM_ADMIN)
        self.template = template['name']
        self.addCleanup(self.openstack, *TEMPLATE, 'delete', self.template,
                        parse=False, cloud=base.SYSTEM_ADMIN)
        # another type that sets the same BIOS setting otherwise: no set
        # can serve both
        self.clash = 'fnclash=%s' % self.unique_name('v').replace('-', '')
        clash = self.openstack(*TEMPLATE, 'create', '--config', self.clash,
                               '--no-requires-trait', '--bios-setting',
                               'FnToggle=Off', cloud=base.SYSTEM_ADMIN)
        self.addCleanup(self.openstack, *TEMPLATE, 'delete', clash['name'],
                        parse=False, cloud=base.SYSTEM_ADMIN)
        self.server = self.create_server(base.VIRTUAL_FLAVOR)['id']
        self.files = self.useFixture(fixtures.TempDir()).path
        # a profile a running server may not take: never granted
        self.raid = 'fnraid=%s' % self.unique_name('v').replace('-', '')
        raid = self.openstack(*TEMPLATE, 'create', '--config', self.raid,
                              '--no-requires-trait', '--raid-config',
                              self.file('raid1.json', json.dumps({
                                  'logical_disks': [{
                                      'size_gb': 'MAX', 'raid_level': '1',
                                      'is_root_volume': True}]}).encode()),
                              cloud=base.SYSTEM_ADMIN)
        self.addCleanup(self.openstack, *TEMPLATE, 'delete', raid['name'],
                        parse=False, cloud=base.SYSTEM_ADMIN)

    def file(self, name, content):
        path = os.path.join(self.files, name)
        with open(path, 'wb') as f:
            f.write(content)
        return path

    def cases(self):
        """(arguments, what stderr must say); all with the admin cloud."""
        latin1 = self.file('steps-latin1.yaml',
                           '- interface: bios\n  step: caf\xe9\n'.encode(
                               'latin-1'))
        bad_yaml = self.file('steps.yaml', b'- interface: [bios\n')
        raid_latin1 = self.file('raid.json', b'{"logical_disks": "\xff"}')
        raid_shape = self.file('raid2.json', b'{"disks": []}')
        t, srv = self.template, self.server
        return [
            # deploy template create
            ((*TEMPLATE, 'create'), 'name|--config'),
            ((*TEMPLATE, 'create', '--config', 'nonsense'),
             'expected TYPE=VALUE'),
            ((*TEMPLATE, 'create', '--config', 'Hyper=On'), 'lowercase'),
            ((*TEMPLATE, 'create', '--config', 'ht='), 'empty value'),
            ((*TEMPLATE, 'create', '--config', 'ht=' + TOO_LONG),
             'too long'),
            # "$" would match before a trailing newline: the whole text
            ((*TEMPLATE, 'create', '--config', 'fnbad=x\n',
              '--bios-setting', 'FnToggle=b'), 'lowercase'),
            ((*TEMPLATE, 'create', 'CUSTOM_FN_BAD\n', '--bios-setting',
              'FnToggle=b'), 'custom trait'),
            ((*TEMPLATE, 'create', '--config', 'fnbad=x', '--requires-trait',
              'CUSTOM_FN_X\n', '--bios-setting', 'FnToggle=b'),
             'Invalid trait'),
            ((*TEMPLATE, 'create', 'CUSTOM_FN_BAD', '--steps',
              step(priority='150\n')), 'priority'),
            ((*FLAVOR, 'set', base.VIRTUAL_FLAVOR, self.config + '\n'),
             'lowercase'),
            # two configs whose one BIOS step differs on a setting: no
            # set serves both (types in order: fnbad, then fnclash)
            ((*FLAVOR, 'set', base.VIRTUAL_FLAVOR, self.config, self.clash),
             'Deploy configs %s and %s set BIOS setting FnToggle to On and '
             'Off: no server can have both' % (self.config, self.clash)),
            ((*TEMPLATE, 'create', 'not-a-trait', '--steps', step()),
             'custom trait'),
            ((*TEMPLATE, 'create', 'CUSTOM_' + 'A' * 300, '--steps',
              step()), 'longer than 255'),
            ((*TEMPLATE, 'create', 'CUSTOM_FN_BAD', '--steps', '{not json'),
             'steps'),
            ((*TEMPLATE, 'create', 'CUSTOM_FN_BAD', '--steps',
              '[{"interface": "bios"'), 'steps'),
            ((*TEMPLATE, 'create', 'CUSTOM_FN_BAD', '--steps', '[]'),
             'step'),
            ((*TEMPLATE, 'create', 'CUSTOM_FN_BAD', '--steps',
              step(interface='cpu', step='x', args={}, priority=1)),
             'interface'),
            ((*TEMPLATE, 'create', 'fn_bad', '--bios-setting', 'FnToggle=b'),
             'custom trait'),
            ((*TEMPLATE, 'create', '--config', 'ht=on', '--requires-trait',
              'HW_NOPE', '--bios-setting', 'FnToggle=b'), 'Unknown trait'),
            ((*TEMPLATE, 'create', 'CUSTOM_FN_SECOND', '--config',
              self.config, '--bios-setting', 'FnToggle=b'),
             'already has a template'),
            ((*TEMPLATE, 'create', 'CUSTOM_FN_BAD', '--steps',
              step(interface='firmware-x')), 'interface'),
            ((*TEMPLATE, 'create', 'CUSTOM_FN_BAD', '--steps',
              step(priority='high')), 'priority'),
            ((*TEMPLATE, 'create', 'CUSTOM_FN_BAD', '--steps',
              step(priority=-1)), 'priority'),
            ((*TEMPLATE, 'create', 'CUSTOM_FN_BAD', '--steps',
              step(args=['x'])), 'args'),
            ((*TEMPLATE, 'create', 'CUSTOM_FN_BAD', '--steps',
              step(step=None)), 'step'),
            ((*TEMPLATE, 'create', 'CUSTOM_FN_BAD', '--steps',
              step(color='red')), 'color'),
            ((*TEMPLATE, 'create', 'CUSTOM_FN_BAD', '--steps',
              '/nonexistent/steps.yaml'), 'steps'),
            ((*TEMPLATE, 'create', 'CUSTOM_FN_BAD', '--steps', latin1),
             'UTF-8|utf-8|decode'),
            ((*TEMPLATE, 'create', 'CUSTOM_FN_BAD', '--steps', bad_yaml),
             'YAML|yaml|steps'),
            ((*TEMPLATE, 'create', '--config', 'fnbad=raid', '--raid-config',
              raid_latin1), 'UTF-8|utf-8|decode|RAID|raid'),
            ((*TEMPLATE, 'create', '--config', 'fnbad=raid', '--raid-config',
              raid_shape), 'logical_disks'),
            ((*TEMPLATE, 'create', '--config', 'fnbad=x', '--bios-setting',
              'NoEquals'), 'NAME=VALUE|expected'),
            ((*TEMPLATE, 'create', '--config', 'fnbad=x', '--bios-setting',
              'FnToggle=1', '--requires-trait', 'not_a_trait'), 'trait'),
            ((*TEMPLATE, 'create', '--config', 'fnbad=x', '--bios-setting',
              'FnToggle=1', '--requires-trait', 'HW_CPU_X86_AVX2',
              '--no-requires-trait'), 'not allowed with'),
            ((*TEMPLATE, 'create', '--config', 'fnbad=x', '--bios-setting',
              'FnToggle=1', '--extra', 'deploy_config_type=other'),
             'contradict|deploy_config_type'),
            ((*TEMPLATE, 'create', '--config', self.config, '--bios-setting',
              'FnToggle=1'),
             'Cannot create deploy template .* already exists'),
            ((*TEMPLATE, 'create', t, '--steps', step()),
             'Cannot create deploy template .* already exists'),
            # BIOS settings the capable nodes' BIOS registry refuses
            ((*TEMPLATE, 'create', '--config', 'fnbad=reg', '--requires-trait',
              'HW_CPU_HYPERTHREADING', '--bios-setting',
              'HyperThreding=Enabled'), 'BIOS registry refuses '
             'HyperThreding=Enabled on %s: no such setting' % EVERY_HT_NODE),
            ((*TEMPLATE, 'create', '--config', 'fnbad=reg', '--requires-trait',
              'HW_CPU_HYPERTHREADING', '--bios-setting',
              'HyperThreading=Maybe'), 'HyperThreading=Maybe on %s: allowed '
             'values are Enabled, Disabled' % HT_NODES),
            ((*TEMPLATE, 'create', '--config', 'fnbad=reg', '--requires-trait',
              'HW_CPU_HYPERTHREADING', '--bios-setting', 'SerialNumber=X'),
             'SerialNumber=X on %s: the setting is read-only'
             % FAKE_HT_NODES),
            ((*TEMPLATE, 'create', '--config', 'fnbad=reg', '--bios-setting',
              'BootDelay=99'), 'BootDelay=99 on bm-0, bm-1, bm-2, bm-3: '
             'the setting must be 0 to 60'),
            # a value a Redfish BMC's registry does not allow, behind the
            # profile that locks it: refused as it would be once prepared
            ((*TEMPLATE, 'create', '--config', 'fnbad=lock',
              '--resource-class', 'baremetal-copper', '--bios-setting',
              'ProcTurboMode=Maybe'), 'ProcTurboMode=Maybe on bm-5: allowed '
             'values are Enabled, Disabled'),
            ((*TEMPLATE, 'set', t, '--bios-setting', 'BootDelay=soon'),
             'BootDelay=soon .* Integer'),
            # show, list, set, unset, delete
            ((*TEMPLATE, 'show', 'CUSTOM_FN_NO_SUCH'), 'not found|No '),
            ((*TEMPLATE, 'show', '--config', 'fnbad=nosuch'),
             'No deploy template'),
            ((*TEMPLATE, 'list', '--sort', 'color'), 'sort|color'),
            ((*TEMPLATE, 'list', '--fields', 'color'), 'invalid choice'),
            ((*TEMPLATE, 'list', '--limit', '-5'), 'non-negative'),
            ((*TEMPLATE, 'list', '--limit', 'ten'), 'invalid int'),
            ((*TEMPLATE, 'set', 'CUSTOM_FN_NO_SUCH', '--name',
              'CUSTOM_FN_X'), 'not found|No '),
            ((*TEMPLATE, 'set', t, '--name', 'lowercase'), 'custom trait'),
            ((*TEMPLATE, 'set', t, '--extra', 'bad/key=1'), 'key'),
            ((*TEMPLATE, 'set', t, '--steps', step(priority='x')),
             'priority'),
            ((*TEMPLATE, 'unset', t, '--extra', 'bad/key'), 'key'),
            ((*TEMPLATE, 'delete', 'CUSTOM_FN_NO_SUCH'), 'No |not found|'
             'failed'),
            ((*TEMPLATE, 'delete'), 'required'),
            # node deploy-config
            ((*NODE, 'list', '--node', 'fn-no-such-node'), 'not found'),
            ((*NODE, 'list', '--config', 'BAD'), 'expected TYPE=VALUE'),
            ((*NODE, 'list', '--config', 'BAD=x'), 'lowercase'),
            ((*NODE, 'list', '--config', 'fnbad=nosuch'), 'No deploy'),
            ((*NODE, 'sync', 'CUSTOM_FN_NO_SUCH'), 'No deploy template'),
            ((*NODE, 'sync', '--bogus'), 'unrecognized'),
            ((*NODE, 'sync', '--prune', self.template), 'no template names'),
            ((*NODE, 'sync', '--wait-timeout', '-1'), 'non-negative'),
            ((*NODE, 'sync', '--wait-timeout', 'soon'), 'invalid int'),
            ((*NODE, 'prepare', 'bm-6', '--clear-job-queue'),
             "clear_job_queue step of the idrac-redfish management "
             "interface; bm-6 has redfish"),
            ((*NODE, 'prepare', '--wait-timeout', '-1', 'bm-6'),
             'non-negative'),
            (('server', 'deploy-config', 'show', 'fn-no-such-server'),
             'No server'),
            (('server', 'deploy-config', 'show'), 'required'),
            (('server', 'deploy-config', 'list', '--bogus'), 'unrecognized'),
            # flavor deploy-config
            ((*FLAVOR, 'set', 'fn-no-such-flavor', self.config),
             'No flavor'),
            ((*FLAVOR, 'set', base.VIRTUAL_FLAVOR, 'nodash'),
             'expected TYPE=VALUE'),
            ((*FLAVOR, 'set', base.VIRTUAL_FLAVOR, 'fnbad=nosuch'),
             'No deploy template'),
            ((*FLAVOR, 'set', base.VIRTUAL_FLAVOR, self.config,
              'fnbad=other'), 'Two values'),
            ((*FLAVOR, 'set', base.VIRTUAL_FLAVOR), 'required'),
            ((*FLAVOR, 'set', base.BAREMETAL_FLAVOR, 'Hyper=x'),
             'lowercase'),
            ((*FLAVOR, 'unset', base.VIRTUAL_FLAVOR, 'fnbad'),
             'nothing to unset'),
            ((*FLAVOR, 'unset', base.VIRTUAL_FLAVOR, 'Bad Type'),
             'lowercase'),
            ((*FLAVOR, 'show', 'fn-no-such-flavor'), 'No flavor'),
            ((*FLAVOR, 'list', '--config', 'x'), 'unrecognized'),
            # image deploy-config
            ((*IMAGE, 'set', 'fn-no-such-image', self.config), 'No image'),
            ((*IMAGE, 'set', base.IMAGE, 'nodash'), 'expected TYPE=VALUE'),
            ((*IMAGE, 'set', base.IMAGE, 'fnbad=nosuch'),
             'No deploy template'),
            ((*IMAGE, 'set', base.IMAGE, self.config, 'fnbad=other'),
             'Two values'),
            ((*IMAGE, 'set', base.IMAGE), 'required'),
            ((*IMAGE, 'unset', base.IMAGE, 'fnbad'), 'nothing to unset'),
            ((*IMAGE, 'unset', base.IMAGE, 'Bad Type'), 'lowercase'),
            ((*IMAGE, 'show', 'fn-no-such-image'), 'No image'),
            ((*IMAGE, 'list', '--config', 'x'), 'unrecognized'),
            # server resize --deploy-config
            (('server', 'resize', '--deploy-config', 'bad', srv),
             'expected TYPE=VALUE'),
            (('server', 'resize', '--deploy-config', self.config,
              'fn-no-such-server'), 'No server'),
            (('server', 'resize', '--deploy-config', self.config, '--flavor',
              base.VIRTUAL_FLAVOR, srv), 'not allowed with'),
            (('server', 'resize', '--deploy-config', 'fnbad=nosuch', srv),
             'No deploy template'),
            (('server', 'resize', '--deploy-config', self.config,
              '--deploy-config', 'fnbad=other', srv), 'Two values'),
            (('server', 'resize', '--dry-run', '--flavor',
              base.VIRTUAL_FLAVOR, srv), 'go with --deploy-config'),
            (('server', 'resize', '--allow-step', 'vendor.x', '--flavor',
              base.VIRTUAL_FLAVOR, srv), 'go with --deploy-config'),
            (('server', 'resize', '--deploy-config', self.config,
              '--allow-step', 'no_dot', srv), 'INTERFACE.STEP'),
            (('server', 'resize', '--deploy-config', self.config,
              '--wait-timeout', '-1', srv), 'non-negative --wait-timeout'),
            (('server', 'resize', '--deploy-config', self.config,
              '--wait-timeout', 'soon', srv), 'invalid int'),
            # server deploy-config set (the fleet rollout)
            (('server', 'deploy-config', 'set', srv), 'Give the configs'),
            (('server', 'deploy-config', 'set', srv, '--deploy-config',
              'bad'), 'expected TYPE=VALUE'),
            (('server', 'deploy-config', 'set', srv, '--deploy-config',
              self.config, '--deploy-config', 'fnbad=other'), 'Two values'),
            (('server', 'deploy-config', 'set', srv, '--deploy-config',
              'fnbad=nosuch'), 'No deploy template'),
            (('server', 'deploy-config', 'set', srv, '--deploy-config',
              self.config, '--max-unavailable', '0'), 'max-unavailable'),
            (('server', 'deploy-config', 'set', srv, '--deploy-config',
              self.config, '--max-failures', 'some'), 'invalid int'),
            (('server', 'deploy-config', 'set', 'fn-no-such-server',
              '--deploy-config', self.config), 'No server'),
            (('server', 'deploy-config', 'set', '--flavor',
              'fn-no-such-flavor', '--deploy-config', self.config),
             'No flavor'),
            (('server', 'deploy-config', 'set', '--flavor',
              base.VIRTUAL_FLAVOR), 'asks for no deploy config'),
            (('server', 'deploy-config', 'set', '--project', 'admin',
              '--all-projects', '--deploy-config', self.config),
             'not allowed with'),
            (('server', 'deploy-config', 'set', '--deploy-config',
              self.config), 'No server selected'),
            # project deploy-config (the operator's grants)
            (('project', 'deploy-config', 'set', 'fn-no-such-project',
              self.config), 'No project'),
            (('project', 'deploy-config', 'set', 'demo', 'nonsense'),
             'expected TYPE=VALUE'),
            (('project', 'deploy-config', 'set', 'demo', self.raid),
             'cannot be granted: .* raid.apply_configuration'),
            (('project', 'deploy-config', 'set', 'demo', 'fnbad=nosuch'),
             'No deploy template realises fnbad=nosuch on any kind'),
            (('project', 'deploy-config', 'unset', 'demo'),
             'Give the configs to withdraw, or --all'),
            (('project', 'deploy-config', 'show', 'fn-no-such-project'),
             'No project'),
            # the host lacks the template trait: refused before any change
            (('server', 'resize', '--deploy-config', self.config, srv),
             'cannot take'),
        ]

    def test_bad_input_changes_nothing(self):
        cases = self.cases()
        self.assertGreaterEqual(len({args for args, _ in cases}), 40)
        problems = []
        before = self.cloud_state()
        # the cloud is read after every few cases (a read costs as much as
        # a case): a change names the commands since the last read
        for first in range(0, len(cases), CASES_PER_READ):
            run = cases[first:first + CASES_PER_READ]
            for args, expected in run:
                problems += self.problems_of(args, expected)
            after = self.cloud_state()
            if after != before:
                problems.append('changed the cloud: one of %s' % '; '.join(
                    ' '.join(args) for args, _ in run))
                before = after
        self.assertEqual([], problems, '%d of %d cases failed'
                         % (len(problems), len(cases)))

    def problems_of(self, args, expected):
        """What is wrong with how the command takes the bad input."""
        done = self.openstack(*args, parse=False, fail_ok=True)
        lines = done.stderr.strip().splitlines()
        where = '%s -> exit %d: %r' % (' '.join(args), done.returncode,
                                       done.stderr)
        if done.returncode == 0:
            return ['accepted: ' + where]
        if len(lines) != 1 or 'Traceback' in done.stderr:
            return ['not one line: ' + where]
        if not re.search(expected, lines[0]):
            return ['unclear (wanted %r): %s' % (expected, where)]
        return []
