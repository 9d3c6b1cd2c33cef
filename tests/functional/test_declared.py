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

"""``openstack deploy-config export | diff | apply`` on the mini cloud.

Cheap by design: the templates ask for a capability trait no node has, so
the sync they start tags nothing and waits for no placement copy; the
flavors are virtual ones; no server boots.
"""

import json
import os

import fixtures
import yaml

from tests.functional import base
from tests.functional import faults

WRITES = ('POST', 'PATCH', 'PUT', 'DELETE')


class TestDeclared(base.FunctionalTestCase):

    def setUp(self):
        super().setUp()
        self.dir = self.useFixture(fixtures.TempDir()).path
        self.type = self.unique_name('fn').replace('-', '')
        self.flavor = self.unique_name('fn-declared')
        self.create_flavor(self.flavor, 1, 64, 1)
        self.addCleanup(self.clean_up)

    def clean_up(self):
        # a lock a killed apply left (and only one: these run one by one)
        self.openstack('baremetal', 'deploy', 'template', 'delete',
                       'CUSTOM_OSC_DEPLOY_CONFIG_APPLY_LOCK', parse=False,
                       fail_ok=True)
        for value in ('a', 'b'):
            self.openstack('baremetal', 'deploy', 'template', 'delete',
                           'CUSTOM_DEPLOY_CONFIG_%s_%s' % (
                               self.type.upper(), value.upper()),
                           parse=False, fail_ok=True)

    def file(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, 'w') as f:
            f.write(text)
        return path

    def declared(self, a='Enabled', with_b=True, flavor_asks='a'):
        values = {'a': {'capability_traits': ['CUSTOM_NO_NODE_HAS_THIS'],
                        'bios': {'LogicalProc': a}}}
        if with_b:
            values['b'] = {'capability_traits': ['CUSTOM_NO_NODE_HAS_THIS'],
                           'bios': {'LogicalProc': 'Disabled'}}
        return json.dumps({
            'version': 1, 'configs': {self.type: values},
            'flavors': {self.flavor: {self.type: flavor_asks}
                        if flavor_asks else {}}})

    def overrides(self, **proxies):
        """``<service>_endpoint_override`` of each service's proxy, with
        its catalog URL's path."""
        return {'%s_endpoint_override' % service: proxy.url + self.endpoint(
            service)[len(self.endpoint_root(service)):]
            for service, proxy in proxies.items()}

    def cli(self, *args, clouds_yaml=None, cloud=base.ADMIN, stdin=''):
        return self.openstack('deploy-config', *args, parse=False,
                              fail_ok=True, clouds_yaml=clouds_yaml,
                              cloud=cloud, stdin=stdin)

    def test_export_apply_edit_diff_prune(self):
        """~5 s: the file applied, the cloud exported and applied to
        itself with no write, one edit diffed and applied, a prune made
        and one refused."""
        path = self.file('mine.yaml', self.declared())
        self.assertEqual(0, self.cli('apply', '-f', path).returncode)
        exported = self.file('cloud.yaml', self.cli('export').stdout)
        self.assertEqual(0, self.cli('diff', '-f', exported).returncode)
        # no write to ironic, nova (flavors) or glance (images)
        with faults.FaultProxy(self.endpoint_root('baremetal')) as ironic, \
                faults.FaultProxy(self.endpoint_root('compute')) as nova, \
                faults.FaultProxy(self.endpoint_root('image')) as glance:
            clouds = self.through_proxy(ironic, 'baremetal', like=base.ADMIN,
                                        **self.overrides(compute=nova,
                                                         image=glance))
            done = self.cli('apply', '-f', exported, '--prune',
                            clouds_yaml=clouds, cloud='faulty')
            self.assertEqual((0, ''), (done.returncode, done.stdout.strip()))
            # but the lock's create and delete
            self.assertEqual(['POST /v1/deploy_templates', 'DELETE /v1/'
                              'deploy_templates/'], [
                '%s %s' % (m, p[:len('/v1/deploy_templates/') if
                                m == 'DELETE' else None])
                for m, p, _ in ironic.seen if m in WRITES])
            self.assertEqual({'nova': 0, 'glance': 0}, {
                name: sum(proxy.count(m) for m in WRITES) for name, proxy in
                (('nova', nova), ('glance', glance))})
            self.assertGreater(nova.count('GET') * glance.count('GET'), 0)

        edited = self.file('edited.yaml', self.declared(a='Disabled'))
        done = self.cli('diff', '-f', edited, '--format', 'json')
        self.assertEqual(1, done.returncode, done.stderr)
        self.assertEqual([('template', 'CUSTOM_DEPLOY_CONFIG_%s_A'
                           % self.type.upper(), 'update', 'steps')],
                         [(r['Kind'], r['Name'], r['Action'], r['Field'])
                          for r in json.loads(done.stdout)])
        self.assertEqual(0, self.cli('apply', '-f', edited).returncode)
        self.assertEqual(0, self.cli('diff', '-f', edited).returncode)

        # b dropped while the flavor (not listed) still asks for it
        other = self.unique_name('fn-declared')
        self.create_flavor(other, 1, 64, 1)
        self.openstack('flavor', 'deploy-config', 'set', other,
                       '%s=b' % self.type, parse=False)
        # the cloud as it is (other templates of the shared cloud kept),
        # b dropped, and the other flavor not listed
        now = yaml.safe_load(self.cli('export').stdout)
        del now['configs'][self.type]['b']
        now['flavors'].pop(other)
        dropped = self.file('dropped.yaml', json.dumps(now))
        done = self.cli('apply', '-f', dropped, '--prune')
        self.assertEqual(1, done.returncode)
        self.assertIn('Not pruning template CUSTOM_DEPLOY_CONFIG_%s_B: '
                      'flavor %s still asks for' % (self.type.upper(), other),
                      done.stderr)
        self.assertEqual(1, len(done.stderr.strip().splitlines()))
        self.openstack('flavor', 'deploy-config', 'unset', other, self.type,
                       parse=False)
        done = self.cli('apply', '-f', dropped, '--prune')
        self.assertEqual(0, done.returncode, done.stderr)
        self.assertIn('delete', done.stdout)
        self.assertEqual(0, self.cli('diff', '-f', dropped, '--prune')
                         .returncode)

    def test_export_then_diff_is_empty_beside_objects_of_the_same_name(self):
        """~8 s: a public image asking for a config beside a private one of
        its name, a granted project beside one of its name in another
        domain, a toggle's private flavor and a flavor asking for a config
        whose template went: export, then diff, is empty; apply writes to
        the objects the names mean."""
        image = self.unique_name('fn-declared')
        public, private = (self.openstack('image', 'create', visibility,
                                          image)['id']
                           for visibility in ('--public', '--private'))
        for made in (public, private):
            self.addCleanup(self.openstack, 'image', 'delete', made,
                            parse=False)
        demo = self.openstack('project', 'show', 'demo')['id']
        text = json.loads(self.declared())
        text['projects'] = {'demo': ['%s=a' % self.type]}
        self.addCleanup(self.openstack, 'project', 'deploy-config', 'unset',
                        demo, '--all', parse=False, fail_ok=True)
        self.assertEqual(0, self.cli('apply', '-f', '-', stdin=json.dumps(
            text)).returncode)
        self.openstack('image', 'deploy-config', 'set', public,
                       '%s=a' % self.type)
        domain = self.openstack('domain', 'create', self.unique_name('fn'))
        self.addCleanup(self.openstack, 'domain', 'delete', domain['id'],
                        parse=False)
        self.addCleanup(self.openstack, 'domain', 'set', '--disable',
                        domain['id'], parse=False)
        other = self.openstack('project', 'create', '--domain',
                               domain['id'], 'demo')
        self.addCleanup(self.openstack, 'project', 'delete', other['id'],
                        parse=False)
        gone = self.unique_name('fn-declared')
        self.create_flavor(gone, 1, 64, 1)
        self.openstack('flavor', 'set', gone, '--property',
                       'deploy-config:%s=gone' % self.type, parse=False)

        exported = self.cli('export', '-o', 'json')
        self.assertIn('Left out: flavor %s, which asks for %s=gone' % (
            gone, self.type), exported.stderr)
        declared = json.loads(exported.stdout)
        self.assertNotIn(gone, declared['flavors'])
        self.assertEqual(0, self.cli('diff', '-f', '-', stdin=exported.stdout
                                     ).returncode)
        declared['images'][image] = {self.type: 'b'}
        self.assertEqual(0, self.cli('apply', '-f', '-', stdin=json.dumps(
            declared)).returncode)
        asked = {i['ID']: i['Deploy Configs'] for i in self.openstack(
            'image', 'deploy-config', 'list', '--all') if i['Name'] == image}
        self.assertEqual(['%s=b' % self.type], asked.pop(public))
        self.assertEqual([[]], list(asked.values()))

    def test_bad_files_give_one_line_and_change_nothing(self):
        """~5 s: eight bad files, each refused at its line and column."""
        before = self.cli('export').stdout
        good = self.declared()
        bad = {
            'syntax': ('version: 1\nflavors: {a: [\n', ':3:1: YAML syntax'),
            'unknown key': ('version: 1\nservers: {}\n',
                            ":2:1: unknown key 'servers'"),
            'wrong type': ('version: 1\nflavors: []\n', ':2:10: wrong type'),
            'unknown value': (good.replace('"%s": "a"' % self.type,
                                           '"%s": "zz"' % self.type),
                              'unknown config value'),
            # every node capable: their BIOS registries judge the setting
            'no such setting': (good.replace(
                '"CUSTOM_NO_NODE_HAS_THIS"', '').replace(
                'LogicalProc', 'NoSuchSetting'), 'NoSuchSetting'),
            'raid in a grant': (
                'version: 1\nconfigs:\n  %s:\n    r:\n      steps:\n'
                '      - {interface: raid, step: apply_configuration, '
                'priority: 150, args: {raid_config: {}}}\n'
                'projects:\n  demo: [%s=r]\n' % (self.type, self.type),
                ':8:10: Deploy config %s=r cannot be granted' % self.type),
            'no such flavor': (good.replace(self.flavor, 'no-such-flavor'),
                               'flavor no-such-flavor does not exist'),
            'duplicate': ('version: 1\nflavors: {}\nflavors: {}\n',
                          ":3:1: duplicate name 'flavors'"),
        }
        for what, (text, words) in bad.items():
            path = self.file('bad.yaml', text)
            done = self.cli('apply', '-f', path)
            self.assertNotEqual(0, done.returncode, what)
            self.assertEqual(1, len(done.stderr.strip().splitlines()),
                             '%s: %s' % (what, done.stderr))
            self.assertIn(path + ':', done.stderr, what)
            if words:
                self.assertIn(words, done.stderr, what)
            self.assertEqual(2, self.cli('diff', '-f', path).returncode,
                             what)
        self.assertEqual(before, self.cli('export').stdout)
        # a second file, and a prune of every template
        twice = self.cli('apply', '-f', path, '-f', path)
        self.assertEqual((2, 1), (twice.returncode, len(
            twice.stderr.splitlines())), twice.stderr)
        self.assertIn('-f is given twice', twice.stderr)
        self.assertEqual(0, self.cli('apply', '-f', '-', stdin=good)
                         .returncode)
        before = self.cli('export').stdout
        emptied = self.cli('apply', '-f', '-', '--prune', stdin='version: 1')
        self.assertEqual(1, emptied.returncode, emptied.stderr)
        self.assertRegex(emptied.stderr, r'^--prune would delete every '
                         r'template of this plugin \(.*\): refused without '
                         r'--prune-all \(a file emptied by mistake\?\)\n$')
        self.assertEqual(before, self.cli('export').stdout)

    def test_one_apply_at_a_time_then_killed_and_rerun(self):
        """~6 s: an apply holds the lock while ironic holds its second
        template's create (the lock's is its first); another apply started
        meanwhile stops in one line, naming the holder; the first is
        killed; a rerun is refused until --break-lock, then ends equal to
        the first file, each template made once."""
        path = self.file('mine.yaml', self.declared())
        theirs = self.file('theirs.yaml', self.declared(a='Disabled'))
        argv, env = self.openstack_argv('deploy-config', 'apply', '-f', path,
                                        cloud='faulty', parse=False)
        posts, meanwhile = [], []

        def fault(method, url, body):
            if method == 'POST' and url.endswith('/deploy_templates'):
                posts.append(body)
                if len(posts) == 3:
                    return faults.HANG
            return None

        def held():
            if len(posts) == 3 and not meanwhile:
                meanwhile.append(self.cli('apply', '-f', theirs))
            return bool(meanwhile)

        with faults.FaultProxy(self.endpoint_root('baremetal'),
                               fault) as ironic:
            env['OS_CLIENT_CONFIG_FILE'] = self.through_proxy(
                ironic, 'baremetal', like=base.ADMIN)
            self.killed_when(argv, env, held)
        self.assertIn(b'CUSTOM_OSC_DEPLOY_CONFIG_APPLY_LOCK', posts[0])
        stopped = meanwhile[0]
        self.assertEqual(1, stopped.returncode, stopped.stderr)
        self.assertRegex(stopped.stderr, r'^Another apply holds the lock '
                         r'\(taken by \S+ in \S+, on .*, pid \d+ since '
                         r'\S+Z, \d+ s ago\): wait for it to end; if it was '
                         r'killed, rerun with --break-lock\n$')
        self.assertEqual(1, self.cli('diff', '-f', path).returncode)
        self.assertEqual(1, self.cli('apply', '-f', path).returncode)
        done = self.cli('apply', '-f', path, '--break-lock')
        self.assertEqual(0, done.returncode, done.stderr)
        self.assertIn('Breaking the lock (taken by ', done.stderr)
        self.assertNotIn('_A', ' '.join(
            r for r in done.stdout.splitlines() if 'create' in r))
        self.assertEqual(0, self.cli('diff', '-f', path).returncode)

    def test_diff_exits_2_on_a_wrong_password(self):
        """~1 s: keystone refuses the password: exit 2 (an error, not the
        1 of drift), in one line."""
        with open(self.clouds_yaml) as f:
            auth = yaml.safe_load(f)['clouds'][base.ADMIN]['auth']
        clouds = self.clouds_with('wrong-password', base.ADMIN, auth=dict(
            auth, password='not-' + auth['password']))
        done = self.cli('diff', '-f', self.file('mine.yaml', self.declared()),
                        clouds_yaml=clouds, cloud='wrong-password')
        self.assertEqual(2, done.returncode, done.stderr)
        self.assertEqual(1, len(done.stderr.splitlines()), done.stderr)
        self.assertIn('(HTTP 401)', done.stderr)
        self.assertNotIn('Traceback', done.stderr)
