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

"""Images that ask for deploy configs, the pre-flight of ``server create``,
and the BIOS registry, against the mini cloud."""

import json

import fixtures
import yaml

from tests.functional import base
from tests.functional import test_deploy_template


class ImageTestCase(test_deploy_template.DeployConfigTestCase):
    def ht_template(self, value):
        """The template of hyperthreading=<value>, setting HyperThreading
        (a kept demo cloud has it already)."""
        config = 'hyperthreading=%s' % value
        found = self.openstack('baremetal', 'deploy', 'template', 'show',
                               '--config', config, fail_ok=True)
        if found.returncode == 0:
            return self.openstack('baremetal', 'deploy', 'template', 'show',
                                  '--config', config)
        template = self.openstack(
            'baremetal', 'deploy', 'template', 'create', '--config', config,
            '--bios-setting', 'HyperThreading=%s' % value.title())
        self.addCleanup(self.forget_template, template['name'])
        return template

    def create_image(self):
        """A public image with a few bytes; deleted at clean-up."""
        path = self.useFixture(fixtures.TempDir()).path + '/disk.raw'
        with open(path, 'wb') as disk:
            disk.write(b'\0' * 1024)
        name = self.unique_name('fn-img')
        self.openstack('image', 'create', '--disk-format', 'raw',
                       '--container-format', 'bare', '--public', '--file',
                       path, name)
        self.addCleanup(self.openstack, 'image', 'delete', name,
                        parse=False)
        return name


class TestImageDeployConfig(ImageTestCase):
    def test_an_image_config_deploys_with_the_plain_flavor(self):
        for node in self.free_nodes('bm-0', 'bm-1'):
            self.wait_schedulable(node)
        # a value of this test's own: only this deploy can set it
        off = self.new_config()[1]
        value = off['config'].split('=')[1]
        self.openstack('baremetal', 'node', 'deploy-config', 'sync',
                       off['name'])
        image = self.create_image()
        changed = self.openstack('image', 'deploy-config', 'set', image,
                                 off['config'])
        self.assertEqual(
            {('set', 'deploy-config:hyperthreading', value),
             ('set', 'trait:%s' % off['name'], 'required')},
            {(r['Action'], r['Property'], r['Value']) for r in changed})
        properties = self.openstack('image', 'show', image)['properties']
        self.assertEqual('required', properties['trait:%s' % off['name']])
        self.assertNotIn('trait:HW_CPU_HYPERTHREADING', properties)
        listed = {r['Name']: r['Deploy Configs'] for r in self.openstack(
            'image', 'deploy-config', 'list')}
        self.assertEqual([off['config']], listed[image])
        self.assertNotIn(base.IMAGE, listed)
        self.assertEqual([], {r['Name']: r['Deploy Configs'] for r in
                              self.openstack('image', 'deploy-config',
                                             'list', '--all')}[base.IMAGE])

        server = self.create_server(base.BAREMETAL_FLAVOR, image=image,
                                    cli=True)

        node = self.node(self.server_details(server['id'])[
            'OS-EXT-SRV-ATTR:hypervisor_hostname'])
        self.assertIn(node['name'], ('bm-0', 'bm-1'))
        self.assertEqual([off['name']], node['instance_info']['traits'])
        self.assertEqual(value, self.bios(node['name'])['FnToggle'])
        self.assertEqual(
            [('hyperthreading', value, 'image', 'FnToggle=%s' % value,
              'yes')],
            [(r['Type'], r['Wanted'], r['Source'], r['Actual'],
              r['In Effect']) for r in self.openstack(
                'server', 'deploy-config', 'show', server['id'])])

        self.check_prune_keeps_what_the_server_was_deployed_with(
            image, server, off, value)

        self.openstack('image', 'deploy-config', 'unset', image,
                       'hyperthreading')
        self.assertEqual({k: v for k, v in properties.items()
                          if k not in ('deploy-config:hyperthreading',
                                       'trait:%s' % off['name'])},
                         {k: v for k, v in self.openstack(
                             'image', 'show', image)['properties'].items()
                          if k in properties})

    def check_prune_keeps_what_the_server_was_deployed_with(
            self, image, server, off, value):
        """Configs as code, two applies: the first moves the image to
        another config, its server not rolled out; the second, with
        --prune, drops the first config, which no image asks for any more:
        refused, the server named (ironic deployed it with that template,
        whatever its image asks for now).  A rerun with nothing to change
        still lists the server to roll out."""
        other = self.new_config()[1]
        exported = yaml.safe_load(self.openstack(
            'deploy-config', 'export', parse=False))
        exported['images'][image] = {'hyperthreading': other['config']
                                     .split('=')[1]}
        outdated = '  %s (image %s: %s)' % (server['name'], image,
                                             other['config'])

        def apply(*options):
            return self.openstack('deploy-config', 'apply', '-f', '-',
                                  *options, parse=False, fail_ok=True,
                                  stdin=json.dumps(exported))

        moved = apply()
        self.assertEqual(0, moved.returncode, moved.stderr)
        self.assertIn(outdated, moved.stderr)
        del exported['configs']['hyperthreading'][value]
        done = apply('--prune')
        self.assertEqual(1, done.returncode, done.stderr)
        self.assertTrue(done.stderr.startswith(
            'Not pruning template %s: server %s was deployed with it' % (
                off['name'], server['name'])), done.stderr)
        self.assertEqual(1, len(done.stderr.strip().splitlines()))
        self.openstack('baremetal', 'deploy', 'template', 'show', off['name'])
        again = apply()
        self.assertEqual(0, again.returncode, again.stderr)
        self.assertIn(outdated, again.stderr)

    def test_a_flavor_and_image_that_conflict_are_refused_before_boot(self):
        self.ht_template('enabled')
        self.ht_template('disabled')
        flavor = self.create_baremetal_flavor()
        self.openstack('flavor', 'deploy-config', 'set', flavor,
                       'hyperthreading=enabled')
        image = self.create_image()
        self.openstack('image', 'deploy-config', 'set', image,
                       'hyperthreading=disabled')
        self.assertEqual(['hyperthreading=disabled'], self.openstack(
            'image', 'deploy-config', 'show', image)['deploy_configs'])
        servers = self.openstack('server', 'list', '--all-projects')

        done = self.openstack('server', 'create', '--flavor', flavor,
                              '--image', image, '--nic', 'none',
                              self.unique_name('fn'), fail_ok=True)

        self.assertNotEqual(0, done.returncode)
        self.assertEqual([
            'Deploy config conflict: flavor %s asks for hyperthreading='
            'enabled, image %s for hyperthreading=disabled; ironic would run '
            'both templates and fail the deploy. Nothing was created.'
            % (flavor, image)], done.stderr.splitlines())
        self.assertEqual(servers, self.openstack('server', 'list',
                                                 '--all-projects'))


class TestBiosRegistry(ImageTestCase):
    def test_a_setting_the_registry_allows_is_accepted(self):
        config = 'fnreg=%s' % self.unique_name('v').replace('-', '')
        done = self.openstack(
            'baremetal', 'deploy', 'template', 'create', '--config', config,
            '--requires-trait', 'HW_CPU_HYPERTHREADING', '--bios-setting',
            'HyperThreading=Disabled', '--resource-class', 'baremetal-gold',
            fail_ok=True)
        self.addCleanup(self.forget_template,
                        'CUSTOM_DEPLOY_CONFIG_%s_FOR_BAREMETAL_GOLD'
                        % config.replace('=', '_').upper())
        self.assertEqual(0, done.returncode, done.stderr)
        self.assertEqual('', done.stderr,
                         'every capable node of the class has a registry '
                         'with the setting')
