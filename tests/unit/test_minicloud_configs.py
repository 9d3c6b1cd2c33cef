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

"""The mini cloud's configuration files (tools/minicloud/configs.py)."""

import configparser
import os
import sys

import testtools
import yaml

sys.path.insert(
    0,
    os.path.join(
        os.path.dirname(__file__), '..', '..', 'tools', 'minicloud'
    ),
)
import configs  # noqa: E402

PORTS = {'mariadb': 1001, 'rabbitmq': 1002, 'rabbitmq-dist': 1003,
         'epmd': 1004, 'keystone': 1005, 'nova-api': 1006,
         'placement': 1007, 'glance': 1008, 'neutron-stub': 1009,
         'ironic': 1010}


def parse(text):
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(text)
    return parser


class TestGlanceConfig(testtools.TestCase):
    layout = configs.Layout('/mc', PORTS)

    def test_secure_installs_the_shipped_property_protections(self):
        conf = parse(configs.glance(self.layout, 'secure'))
        self.assertEqual('/mc/etc/glance/property-protections.conf',
                         conf['DEFAULT']['property_protection_file'])
        self.assertEqual('policies',
                         conf['DEFAULT']['property_protection_rule_format'])
        self.assertEqual('/mc/etc/glance/hardened-policy.yaml',
                         conf['oslo_policy']['policy_file'])
        self.assertEqual(
            {'glance/property-protections.conf',
             'glance/hardened-policy.yaml'},
            {p for p in configs.HARDENING_FILES if p.startswith('glance/')})

    def test_legacy_leaves_every_property_open(self):
        conf = parse(configs.glance(self.layout, 'legacy'))
        self.assertNotIn('property_protection_file', conf['DEFAULT'])
        self.assertFalse(conf.has_section('oslo_policy'))


class TestIronicConfig(testtools.TestCase):
    layout = configs.Layout('/mc', PORTS)

    def test_every_default_interface_is_enabled(self):
        # A default that is not enabled kills ironic's worker silently.
        conf = parse(configs.ironic(self.layout))['DEFAULT']
        defaults = {k[len('default_'):-len('_interface')]: v
                    for k, v in conf.items() if k.startswith('default_')}
        self.assertEqual(13, len(defaults))
        for interface, default in defaults.items():
            enabled = conf['enabled_%s_interfaces' % interface].split(',')
            self.assertIn(default, enabled, interface)

    def test_test_only_steps_interfaces_are_enabled(self):
        conf = parse(configs.ironic(self.layout))['DEFAULT']
        self.assertIn('fake-steps', conf['enabled_bios_interfaces'])
        self.assertIn('fake-steps', conf['enabled_raid_interfaces'])

    def test_secure_policy_keeps_ironic_defaults_but_the_hardening(self):
        conf = parse(configs.ironic(self.layout, 'secure'))['oslo_policy']
        self.assertEqual('/mc/etc/ironic/hardened-policy.yaml',
                         conf['policy_file'])
        self.assertNotIn('enforce_new_defaults', conf)
        self.assertEqual('ironic-policy.yaml', configs.HARDENING_FILES[
            'ironic/hardened-policy.yaml'])
        rules = yaml.safe_load(configs.hardening_file('ironic-policy.yaml'))
        self.assertEqual({
            'baremetal:node:update_instance_info',
            'baremetal:node:set_boot_mode', 'baremetal:node:set_secure_boot',
            'baremetal:node:set_provision_state:service_steps',
            'baremetal:node:set_provision_state:clean_steps',
            'baremetal:runbook:create', 'baremetal:runbook:update',
            'baremetal:runbook:delete', 'service_role'}, set(rules))
        self.assertIn('project_domain_id:default', rules.pop('service_role'))
        # the node's owner keeps its raw clean steps
        self.assertIn('project_id:%(node.owner)s', rules.pop(
            'baremetal:node:set_provision_state:clean_steps'))
        for rule in rules.values():
            self.assertNotIn('project_id', rule)
            self.assertIn('system_scope:all', rule)
            # nova writes instance_info with its service user
            self.assertIn('rule:service_role', rule)

    def test_secure_policy_runs_the_shipped_disallow_lists(self):
        shipped = configparser.ConfigParser()
        shipped.read_string(configs.hardening_file('ironic-api.conf'))
        api = parse(configs.ironic(self.layout, 'secure'))['api']
        for option in ('disallow_deploy_steps', 'disallow_service_steps'):
            self.assertEqual(shipped['api'][option], api[option])
        self.assertNotIn('disallow_deploy_steps', parse(configs.ironic(
            self.layout, 'legacy'))['api'])

    def test_legacy_policy_turns_off_new_defaults_and_scope(self):
        conf = parse(configs.ironic(self.layout, 'legacy'))['oslo_policy']
        self.assertEqual('False', conf['enforce_new_defaults'])
        self.assertEqual('False', conf['enforce_scope'])

    def test_listens_on_its_own_port(self):
        conf = parse(configs.ironic(self.layout))
        self.assertEqual('1010', conf['api']['port'])


class TestCloudsYaml(testtools.TestCase):
    def test_the_clouds_with_their_scopes(self):
        clouds = yaml.safe_load(
            configs.clouds_yaml(configs.Layout('/mc', PORTS))
        )['clouds']
        self.assertEqual(
            {'minicloud-admin', 'minicloud-system-admin', 'minicloud-demo',
             'minicloud-demo-manager', 'minicloud-other-manager'},
            set(clouds),
        )
        self.assertEqual('admin',
                         clouds['minicloud-admin']['auth']['project_name'])
        system = clouds['minicloud-system-admin']['auth']
        self.assertEqual('all', system['system_scope'])
        self.assertNotIn('project_name', system)
        self.assertEqual('demo', clouds['minicloud-demo']['auth']['username'])
        self.assertEqual(
            [('demo-manager', 'demo'), ('other-manager', 'other')],
            [(clouds[c]['auth']['username'], clouds[c]['auth'][
                'project_name']) for c in ('minicloud-demo-manager',
                                           'minicloud-other-manager')])
        for cloud in clouds.values():
            self.assertEqual('http://127.0.0.1:1005/v3',
                             cloud['auth']['auth_url'])


class TestNovaConfig(testtools.TestCase):
    def test_computes_have_no_database_credentials(self):
        layout = configs.Layout('/mc', PORTS)
        for text in (configs.nova_compute_fake(layout),
                     configs.nova_compute_ironic(layout)):
            conf = parse(text)
            self.assertFalse(conf.has_section('database'))
            self.assertFalse(conf.has_section('api_database'))

    def test_fake_compute_resizes_in_place(self):
        conf = parse(configs.nova_compute_fake(configs.Layout('/mc', PORTS)))
        self.assertEqual('True', conf['DEFAULT']['allow_resize_to_same_host'])
        self.assertEqual('fake.FakeDriverWithoutFakeNodes',
                         conf['DEFAULT']['compute_driver'])


class TestIronicRelease(testtools.TestCase):
    def test_older_release_in_a_virtualenv_of_its_own(self):
        layout = configs.Layout('/mc', {})
        self.assertEqual('/mc/venv', layout.ironic_venv)
        layout.ironic_release = '22.1.0'
        self.assertEqual('/mc/venv-ironic-22.1.0', layout.ironic_venv)
        # on MariaDB: SQLite refuses concurrent writes
        self.assertEqual(
            'mysql+pymysql://minicloud:minicloud@127.0.0.1:1001/ironic'
            '?charset=utf8', parse(configs.ironic(configs.Layout(
                '/mc', PORTS)))['database']['connection'])
