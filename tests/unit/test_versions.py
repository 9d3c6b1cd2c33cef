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

from keystoneauth1 import discover
from osc_lib import exceptions
import testtools

from osc_deploy_config.services import versions
from tests.unit import fakes


class TestNeed(testtools.TestCase):
    def test_highest_of_the_calls(self):
        self.assertEqual('1.61', versions.need('deploy templates',
                                               'node retirement'))
        self.assertEqual('2.61', versions.need(
            'flavor extra specs in listings', 'server flavor details'))

    def test_versions_compare_as_numbers(self):
        self.assertEqual((1, 100), versions.parse('1.100'))
        self.assertGreater(versions.parse('1.100'), versions.parse('1.99'))


class TestCheckSupported(testtools.TestCase):
    def endpoint(self, maximum):
        return discover.EndpointData(catalog_url='http://nova.test/v2.1',
                                     service_url='http://nova.test/v2.1',
                                     max_microversion=maximum)

    def test_a_range_that_ends_below_the_need_is_refused(self):
        exc = self.assertRaises(
            exceptions.CommandError, versions.check_supported,
            self.endpoint((2, 60)), 'flavor extra specs in listings')
        self.assertEqual(
            'The compute service at http://nova.test supports API version '
            '2.60 at most; flavor extra specs in listings need 2.61 or '
            'later', str(exc))

    def test_a_range_that_covers_it_or_none_passes(self):
        for maximum in ((2, 61), (2, 100), None):
            self.assertIsNone(versions.check_supported(
                self.endpoint(maximum), 'flavor extra specs in listings'))
        self.assertIsNone(versions.check_supported(
            None, 'flavor extra specs in listings'))


class TestCheckResponse(testtools.TestCase):
    def test_accepted(self):
        self.assertIsNone(versions.check_response(
            fakes.response(200, {}), 'deploy templates'))

    def test_ironic_refusal_names_its_maximum(self):
        refused = fakes.error(406, 'Version 1.55 was requested ...')
        refused.headers['X-OpenStack-Ironic-API-Maximum-Version'] = '1.50'
        exc = self.assertRaises(exceptions.CommandError,
                                versions.check_response, refused,
                                'deploy templates')
        self.assertEqual(
            'The baremetal service at http://ironic.test supports API '
            'version 1.50 at most; deploy templates need 1.55 or later',
            str(exc))

    def test_other_406_left_to_the_caller(self):
        # ironic refuses a field unknown at the requested version with 406
        refused = fakes.error(406, 'Field(s) "retired" are not valid')
        refused.headers['X-OpenStack-Ironic-API-Maximum-Version'] = '1.115'
        self.assertIsNone(versions.check_response(refused,
                                                  'deploy templates'))

    def test_nova_refusal_maximum_from_the_message(self):
        refused = fakes.response(406, {'computeFault': {
            'code': 406, 'message': 'Version 2.61 is not supported by the '
            'API. Minimum is 2.1 and maximum is 2.60.'}},
            url='http://nova.test/v2.1/flavors/detail')
        exc = self.assertRaises(exceptions.CommandError,
                                versions.check_response, refused,
                                'flavor extra specs in listings')
        self.assertIn('compute service at http://nova.test supports API '
                      'version 2.60 at most', str(exc))
