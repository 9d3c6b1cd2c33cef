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

"""``server resize --deploy-config``: the toggle, against the mini cloud."""

import os
import subprocess
import time

import fixtures

from osc_deploy_config.services import versions
from tests.functional import base
from tests.functional import test_deploy_template

BASH_COMPLETION = '/usr/share/bash-completion/bash_completion'


class ToggleTestCase(test_deploy_template.DeployConfigTestCase):
    def new_pair(self):
        """A config type with two values, each with its template."""
        config_type = self.unique_name('fn').replace('-', '')
        made = {}
        for value in ('on', 'off'):
            made[value] = self.openstack(
                'baremetal', 'deploy', 'template', 'create', '--config',
                '%s=%s' % (config_type, value), '--bios-setting',
                'FnToggle=%s' % value, '--requires-trait',
                'HW_CPU_HYPERTHREADING')
            self.addCleanup(self.forget_template, made[value]['name'])
        return config_type, made

    def flavors(self):
        return sorted(f['Name'] for f in self.openstack('flavor', 'list',
                                                        '--all'))

    def server_flavor(self, server_id):
        return self.openstack('server', 'show', server_id)['flavor']

    def toggle(self, server_id, config, *options, fail_ok=False):
        return self.openstack('server', 'resize', '--deploy-config', config,
                              *options, server_id, parse=False,
                              fail_ok=fail_ok)


class VirtualToggleTestCase(ToggleTestCase):
    """Toggles of servers on the fake compute, whose traits we set."""

    def setUp(self):
        super().setUp()
        self.placement = self.sdk(base.ADMIN).placement
        self.host = self.placement.get(
            '/resource_providers?name=fake-compute',
            microversion='1.39').json()['resource_providers'][0]['uuid']

    def tag_host(self, trait):
        """Give the fake compute's provider a trait (kept by nova)."""
        self.placement.put('/traits/%s' % trait, microversion='1.39')
        self.set_host_traits(lambda traits: traits | {trait})
        self.addCleanup(self.set_host_traits,
                        lambda traits: traits - {trait})

    def set_host_enabled(self, enabled, trait):
        """Enable or disable the fake compute's service, until nova has
        set its COMPUTE_STATUS_DISABLED trait on the host's provider to
        match; then ``trait`` on the host again: nova writes the traits
        from its own copy, which lacks the one the test gave the host."""
        self.openstack('compute', 'service', 'set',
                       '--enable' if enabled else '--disable',
                       'fake-compute', 'nova-compute', parse=False)
        path = '/resource_providers/%s/traits' % self.host
        self.wait_for('nova to mark fake-compute %s in placement' % (
            'enabled' if enabled else 'disabled'), lambda: enabled != (
            'COMPUTE_STATUS_DISABLED' in self.placement.get(
                path, microversion='1.39').json()['traits']))
        self.set_host_traits(lambda traits: traits | {trait})

    def set_host_traits(self, change):
        path = '/resource_providers/%s/traits' % self.host
        now = self.placement.get(path, microversion='1.39').json()
        self.placement.put(path, microversion='1.39', json={
            'resource_provider_generation':
                now['resource_provider_generation'],
            'traits': sorted(change(set(now['traits'])))})

    def server_to_toggle(self, value):
        """A config pair, the host tagged for ``value``, a server on the
        virtual flavor, and the name of the flavor a toggle to ``value``
        derives (deleted at clean-up)."""
        config_type, made = self.new_pair()
        self.tag_host(made[value]['name'])
        server = self.create_server(base.VIRTUAL_FLAVOR)
        target = '%s+%s=%s' % (base.VIRTUAL_FLAVOR, config_type, value)
        self.addCleanup(self.forget_flavors, target)
        return config_type, made, server, target



class TestVirtualToggle(VirtualToggleTestCase):
    def test_toggle_through_the_scheduler(self):
        config_type, made = self.new_pair()
        server = self.create_server(base.VIRTUAL_FLAVOR)
        target = '%s+%s=on' % (base.VIRTUAL_FLAVOR, config_type)
        self.addCleanup(self.forget_flavors, target)

        before = self.flavors()
        refused = self.toggle(server['id'], '%s=on' % config_type,
                              '--auto-confirm', fail_ok=True)
        self.assertEqual(1, refused.returncode)
        self.assertIn('fake-compute lacks %s' % made['on']['name'],
                      refused.stderr)
        self.assertEqual(1, len(refused.stderr.splitlines()))
        self.assertEqual(before, self.flavors())
        self.assertEqual(base.VIRTUAL_FLAVOR,
                         self.server_flavor(server['id'])['original_name'])

        self.tag_host(made['on']['name'])
        dry = self.toggle(server['id'], '%s=on' % config_type, '--dry-run')
        self.assertIn('Dry run, nothing changed', dry)
        self.assertIn('would resize to flavor %s (to be created)' % target,
                      dry)
        self.assertEqual(before, self.flavors())

        done = self.toggle(server['id'], '%s=on' % config_type,
                           '--auto-confirm')
        self.assertIn('is ACTIVE on flavor %s' % target, done)
        flavor = self.server_flavor(server['id'])
        self.assertEqual(target, flavor['original_name'])
        self.assertEqual({'deploy-config:%s' % config_type: 'on',
                          'trait:%s' % made['on']['name']: 'required'},
                         flavor['extra_specs'])
        again = self.toggle(server['id'], '%s=on' % config_type)
        self.assertIn('already runs with %s=on' % config_type, again)

    def test_no_valid_host_is_an_error_and_a_rerun_completes(self):
        config_type, made, server, target = self.server_to_toggle('off')
        # Our check passes; nova's scheduler then finds no enabled host.
        self.addCleanup(self.openstack, 'compute', 'service', 'set',
                        '--enable', 'fake-compute', 'nova-compute',
                        parse=False)
        self.set_host_enabled(False, made['off']['name'])

        failed = self.toggle(server['id'], '%s=off' % config_type, '--wait',
                             fail_ok=True)

        self.assertEqual(1, failed.returncode)
        self.assertIn('No valid host', failed.stderr)
        self.assertEqual(base.VIRTUAL_FLAVOR,
                         self.server_flavor(server['id'])['original_name'])
        self.set_host_enabled(True, made['off']['name'])
        self.wait_for('fake-compute enabled and up', lambda: [
            s for s in self.openstack('compute', 'service', 'list')
            if s['Host'] == 'fake-compute' and s['Status'] == 'enabled'
            and s['State'] == 'up'])
        self.toggle(server['id'], '%s=off' % config_type, '--auto-confirm')
        self.assertEqual(target,
                         self.server_flavor(server['id'])['original_name'])
        self.assertEqual(1, self.flavors().count(target))


class BaremetalToggleTestCase(ToggleTestCase):
    """Toggles of servers on ironic nodes."""

    def setUp(self):
        super().setUp()
        self.servicing = versions.parse(self.ironic_max) >= (1, 87)

    def deployed(self):
        """A server deployed on a node with config <type>=on."""
        for node in self.free_nodes('bm-0', 'bm-1'):
            self.wait_schedulable(node)     # an earlier server has left
        config_type, made = self.new_pair()
        self.openstack('baremetal', 'node', 'deploy-config', 'sync',
                       *[t['name'] for t in made.values()])
        flavor = self.create_baremetal_flavor()
        self.openstack('flavor', 'deploy-config', 'set', flavor,
                       '%s=on' % config_type)
        # sync returned once placement showed the tags
        server = self.create_server(flavor)
        node = self.node(self.server_details(server['id'])[
            'OS-EXT-SRV-ATTR:hypervisor_hostname'])['name']
        self.assertEqual('on', self.bios(node)['FnToggle'])
        return config_type, server, node

    def recorded(self, node, server):
        """What the node's record says a toggle applied to the server."""
        record = self.node(node)['properties'].get(
            'deploy_config_applied') or {}
        if record.get('instance_uuid') != server['id']:
            return {}
        return record['configs']

    def configs_shown(self, server_id):
        """server deploy-config show: (type, wanted, source, actual, in
        effect) per row; each reading says when ironic made it."""
        shown = self.openstack('server', 'deploy-config', 'show', server_id)
        for row in shown:
            self.assertRegex(row['Read At'] or '',
                             r'^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$', row)
        return [(r['Type'], r['Wanted'], r['Source'], r['Actual'],
                 r['In Effect']) for r in shown]

    def rebuild(self, server_id, *options):
        """openstack server rebuild --image tiny --wait, as a user types
        it (no microversion option); it must succeed."""
        done = self.openstack('server', 'rebuild', '--image', base.IMAGE,
                              '--wait', *options, server_id, parse=False,
                              fail_ok=True)
        self.assertEqual(0, done.returncode, done.stderr)
        return done

    def service_behind_its_back(self, node, name, value):
        """Set a BIOS setting by servicing the node through ironic."""
        ironic = self.sdk(base.SYSTEM_ADMIN).baremetal
        done = ironic.put(
            '/nodes/%s/states/provision' % self.node(node)['uuid'],
            json={'target': 'service', 'service_steps': [{
                'interface': 'bios', 'step': 'apply_configuration',
                'args': {'settings': [{'name': name, 'value': value}]}}]},
            microversion='1.87')
        self.assertEqual(202, done.status_code, done.text)
        self.wait_for('%s serviced with %s=%s' % (node, name, value),
                      lambda: self.bios(node).get(name) == value
                      and self.node(node)['provision_state'] == 'active')

    def project_admin_without_system_role(self):
        """A clouds.yaml whose cloud project-only is an admin of project
        admin with no role on the system; the user is deleted at clean-up."""
        import secrets

        import yaml

        user, password = self.unique_name('fn-proj'), secrets.token_hex(12)
        self.openstack('user', 'create', '--domain', 'Default', '--password',
                       password, user)
        self.addCleanup(self.openstack, 'user', 'delete', user, parse=False)
        self.openstack('role', 'add', '--user', user, '--project', 'admin',
                       'admin', parse=False)
        with open(self.clouds_yaml) as f:
            auth = yaml.safe_load(f)['clouds'][base.ADMIN]['auth']
        return self.clouds_with('project-only', base.ADMIN, auth=dict(
            auth, username=user, password=password))



class TestBaremetalToggle(BaremetalToggleTestCase):
    def test_without_servicing_the_toggle_says_so(self):
        if self.servicing:
            self.skipTest('ironic %s has servicing' % self.ironic_max)
        config_type, server, node = self.deployed()
        refused = self.toggle(server['id'], '%s=off' % config_type,
                              fail_ok=True)
        self.assertEqual(1, refused.returncode)
        self.assertEqual(
            ['The baremetal service at %s supports API version %s at most; '
             'node servicing need 1.87 or later' % (
                 self.endpoint_root('baremetal'), self.ironic_max)],
            refused.stderr.splitlines())
        self.assertEqual('on', self.bios(node)['FnToggle'])
        self.assertEqual('active', self.node(node)['provision_state'])

    def test_service_in_place_then_refused_in_maintenance(self):
        if not self.servicing:
            self.skipTest('ironic %s has no servicing (API 1.87)'
                          % self.ironic_max)
        config_type, server, node = self.deployed()
        self.assertEqual([(config_type, 'on', 'flavor', 'FnToggle=on',
                           'yes')], self.configs_shown(server['id']))

        # a project admin without a role on the system: never taken for a
        # virtual server; one line says which role is missing, and nothing
        # changes (ironic's secure RBAC refuses it the listing here; where
        # it only hides the node, nova's hypervisor says bare metal)
        refused = self.openstack(
            'server', 'resize', '--deploy-config', '%s=off' % config_type,
            server['id'], cloud='project-only', parse=False, fail_ok=True,
            clouds_yaml=self.project_admin_without_system_role())
        self.assertEqual(1, refused.returncode)
        self.assertEqual(1, len(refused.stderr.splitlines()), refused.stderr)
        self.assertIn('(openstack role add --system all --user USER admin)',
                      refused.stderr)
        self.assertEqual('on', self.bios(node)['FnToggle'])

        toggled_from = time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())
        done = self.toggle(server['id'], '%s=off' % config_type)

        self.assertIn('node %s serviced' % node, done)
        self.assertEqual('off', self.bios(node)['FnToggle'])
        # the reading is the one the servicing made
        (read_at,) = [r['Read At'] for r in self.openstack(
            'server', 'deploy-config', 'show', server['id'])]
        self.assertGreaterEqual(read_at, toggled_from)
        self.assertEqual('active', self.node(node)['provision_state'])
        self.assertEqual({config_type: 'off'}, self.recorded(node, server))
        details = self.server_details(server['id'])
        self.assertEqual(('ACTIVE', False, {}), (
            details['status'], details['locked'], details['metadata']))
        self.assertIn('already runs', self.toggle(
            server['id'], '%s=off' % config_type))
        self.assertEqual([(config_type, 'off', 'toggle', 'FnToggle=off',
                           'yes')], self.configs_shown(server['id']))
        listed = self.openstack('server', 'deploy-config', 'list',
                                '--all-projects', '--long')
        self.assertIn({'Server': server['name'], 'Type': config_type,
                       'Wanted': 'off', 'Source': 'toggle',
                       'Template': '', 'Actual': 'FnToggle=off',
                       'In Effect': 'yes', 'Read At': read_at},
                      [dict(r, Template='') for r in listed])
        plain = self.openstack('server', 'deploy-config', 'list',
                               '--all-projects')
        self.assertIn({'Server': server['name'], 'Type': config_type,
                       'Wanted': 'off', 'Source': 'toggle'},
                      [{k: r[k] for k in r if k != 'Template'}
                       for r in plain])

        # a BIOS that ignores its settings: ironic says the servicing
        # succeeded, the toggle reads the node back and says otherwise
        with self.bios_that(node, 'ignores_steps'):
            ignored = self.toggle(server['id'], '%s=on' % config_type,
                                  fail_ok=True)
        self.assertEqual(1, ignored.returncode)
        self.assertEqual(
            ['Servicing node %s finished, but the hardware does not show '
             '%s=on: BIOS FnToggle=on (the node has off). Nothing was '
             'recorded; rerun to retry once the node takes the settings.'
             % (node, config_type)], ignored.stderr.splitlines())
        self.assertEqual('off', self.bios(node)['FnToggle'])
        self.assertEqual({config_type: 'off'}, self.recorded(node, server))

        # hardware that fails the step: ironic fails the servicing, the
        # toggle aborts it and the node is back in active, as it was
        self.addCleanup(self.openstack, 'baremetal', 'node', 'maintenance',
                        'unset', node, parse=False, cloud=base.SYSTEM_ADMIN,
                        fail_ok=True)
        with self.bios_that(node, 'fails_steps', 'fan failure'):
            failed = self.toggle(server['id'], '%s=on' % config_type,
                                 fail_ok=True)
        self.assertEqual(1, failed.returncode)
        (line,) = failed.stderr.splitlines()
        self.assertRegex(line, (
            r'^Servicing node %s failed: .*fan failure.*\. Ironic returned '
            r'the node to active and server %s runs on: its hardware shows '
            r'FnToggle=off \(as ironic read it at %s\); the node is held in '
            r'maintenance until its hardware is checked \(openstack '
            r'baremetal node maintenance unset %s\)\. Nothing was '
            r'recorded; fix the cause, then rerun\.$') % (node, server['name'],
                                   r'\d{4}-\d\d-\d\dT[\d:]{8}Z', node))
        shown = self.node(node)
        self.assertEqual(('active', True, 'off'), (
            shown['provision_state'], shown['maintenance'],
            self.bios(node)['FnToggle']))
        self.openstack('baremetal', 'node', 'maintenance', 'unset', node,
                       parse=False, cloud=base.SYSTEM_ADMIN)
        self.assertEqual(('ACTIVE', {config_type: 'off'}), (
            self.server_details(server['id'])['status'],
            self.recorded(node, server)))

        # a plain rebuild, at OSC's own compute microversion (from 2.93
        # nova's ironic driver refuses it: the hook sends it at 2.92), and
        # the toggle survives: applied again, read back
        self.rebuild(server['id'])
        self.assertEqual(('ACTIVE', 'off'), (
            self.server_details(server['id'])['status'],
            self.bios(node)['FnToggle']))
        self.assertEqual([(config_type, 'off', 'toggle', 'FnToggle=off',
                           'yes')], self.configs_shown(server['id']))
        # ... or, asked for, the flavor's config
        self.rebuild(server['id'], '--deploy-config-from-flavor')
        self.assertEqual('on', self.bios(node)['FnToggle'])
        self.assertEqual([(config_type, 'on', 'flavor', 'FnToggle=on',
                           'yes')], self.configs_shown(server['id']))
        self.assertEqual({}, self.recorded(node, server))

        # the BIOS changed behind the plugin's back: show reads it
        self.service_behind_its_back(node, 'FnToggle', 'other')
        self.assertEqual([(config_type, 'on', 'flavor', 'FnToggle=other',
                           'no')], self.configs_shown(server['id']))

        self.openstack('baremetal', 'node', 'maintenance', 'set', node,
                       parse=False, cloud=base.SYSTEM_ADMIN)
        self.addCleanup(self.openstack, 'baremetal', 'node', 'maintenance',
                        'unset', node, parse=False, cloud=base.SYSTEM_ADMIN)
        refused = self.toggle(server['id'], '%s=on' % config_type,
                              fail_ok=True)
        self.assertEqual(1, refused.returncode)
        self.assertIn('runs on node %s, which is in maintenance' % node,
                      refused.stderr)
        self.assertEqual('other', self.bios(node)['FnToggle'])


class TestCompletion(base.FunctionalTestCase):
    def complete(self, script, line):
        words = line.split(' ')
        done = subprocess.run(['bash', '-c', (
            'source %s; source %s; COMP_WORDS=(%s); COMP_CWORD=%d; '
            'COMP_LINE="%s"; COMP_POINT=${#COMP_LINE}; _openstack; '
            'echo "${COMPREPLY[*]}"') % (
                BASH_COMPLETION, script,
                ' '.join('"%s"' % w for w in words), len(words) - 1, line)],
            capture_output=True, text=True, check=True)
        return done.stdout.split()

    def test_bash_completes_hook_options_and_plugin_commands(self):
        self.assertTrue(os.path.exists(BASH_COMPLETION),
                        'install the Debian package bash-completion')
        script = os.path.join(self.useFixture(fixtures.TempDir()).path,
                              'osc.bash')
        with open(script, 'w') as f:
            # a real process: what an installed openstack writes
            f.write(self.openstack('complete', parse=False, process=True))
        self.assertEqual(['--deploy-config'], self.complete(
            script, 'openstack server resize --dep'))
        self.assertEqual(['--auto-confirm', '--allow-step'], self.complete(
            script, 'openstack server resize --a'))
        self.assertEqual(['--deploy-config-from-flavor'], self.complete(
            script, 'openstack server rebuild --deploy'))
        self.assertEqual(['list', 'set', 'show', 'unset'], self.complete(
            script, 'openstack flavor deploy-config '))
        self.assertEqual(['list', 'prepare', 'sync'], self.complete(
            script, 'openstack baremetal node deploy-config '))
        self.assertIn('--bios-setting', self.complete(
            script, 'openstack baremetal deploy template create --'))

