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

"""Failures in one line: keystoneauth's fallback warnings go to --debug."""

import logging

import fixtures
import testtools

from osc_deploy_config.v1 import cli


def keep_filters(test, *names):
    for name in names:
        logger = logging.getLogger(name)
        test.addCleanup(setattr, logger, 'filters', list(logger.filters))


class TestKeystoneauthWarnings(testtools.TestCase):
    def test_discovery_fallback_and_retries_are_debug_only(self):
        shown = self.useFixture(fixtures.FakeLogger(
            level=logging.WARNING, format='%(levelname)s %(message)s'))
        keep_filters(self, 'keystoneauth.discover', 'keystoneauth.session')
        cli.demote_keystoneauth_warnings()
        cli.demote_keystoneauth_warnings()   # once is enough
        discover = logging.getLogger('keystoneauth.discover')
        self.assertEqual(1, len(discover.filters))
        discover.warning('Failed to contact the endpoint at %s for '
                         'discovery.', 'http://ironic.test')
        logging.getLogger('keystoneauth.session').warning(
            'Retriable status code %s. Retrying in 0.5s.', 503)
        logging.getLogger('openstack').warning('other news')
        self.assertEqual('WARNING other news\n', shown.output)
