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

from unittest import mock

from openstack.baremetal.v1 import _proxy as baremetal_proxy
from osc_lib import exceptions
import testtools

from osc_deploy_config import versions


def proxy(maximum):
    fake = mock.create_autospec(baremetal_proxy.Proxy, instance=True)
    fake.get_endpoint_data.return_value = mock.Mock(max_microversion=maximum)
    fake.get_endpoint.return_value = 'http://ironic.test/v1'
    return fake


class TestRequire(testtools.TestCase):
    def test_returns_the_highest_need(self):
        self.assertEqual('1.61', versions.require(
            proxy((1, 115)), 'deploy templates', 'node retirement'))

    def test_old_server_named_with_need_and_maximum(self):
        exc = self.assertRaises(exceptions.CommandError, versions.require,
                                proxy((1, 50)), 'deploy templates')
        self.assertEqual(
            'The baremetal service at http://ironic.test/v1 supports API '
            'version 1.50 at most; deploy templates need 1.55 or later',
            str(exc))

    def test_server_without_microversions(self):
        exc = self.assertRaises(exceptions.CommandError, versions.require,
                                proxy(None), 'node servicing')
        self.assertIn('1.0 (no microversions)', str(exc))
        self.assertIn('need 1.87', str(exc))

    def test_versions_compare_as_numbers(self):
        self.assertEqual((1, 100), versions.parse('1.100'))
        self.assertGreater(versions.parse('1.100'), versions.parse('1.99'))
