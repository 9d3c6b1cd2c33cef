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

from osc_lib import exceptions

from osc_deploy_config.services import glance
from osc_deploy_config.v1 import owner_deploy_config as cmds
from tests.unit import fakes
from tests.unit.fakes import OFF_T
from tests.unit.fakes import ON_T


def annotation(value):
    return {'deploy_config_type': 'hyperthreading',
            'deploy_config_value': value}


class ImageCommandTest(fakes.TestCommand):
    def setUp(self):
        super().setUp()
        self.ironic.add_template(ON_T, extra=annotation('enabled'))
        self.ironic.add_template(OFF_T, extra=annotation('disabled'))
        self.image = self.glance.add_image('hpc', disk_format='raw')

    def rows(self, command, *args):
        columns, rows = self.run_command(command, list(args))
        return [dict(zip(columns, r, strict=True)) for r in rows]

    def patches(self):
        return [r for r in self.glance.requests if r[0] == 'PATCH']


class TestSetUnset(ImageCommandTest):
    def test_set_writes_config_and_template_trait_in_one_request(self):
        rows = self.rows(cmds.SetImageDeployConfig, 'hpc',
                         'hyperthreading=disabled')
        self.assertEqual('disabled',
                         self.image['deploy-config:hyperthreading'])
        self.assertEqual('required', self.image['trait:%s' % OFF_T])
        self.assertEqual(1, len(self.patches()))
        self.assertEqual({'set'}, {r['Action'] for r in rows})
        call = self.glance.proxy.request.call_args
        self.assertEqual(glance.JSON_PATCH,
                         call.kwargs['headers']['Content-Type'])

    def test_a_new_value_replaces_the_old_and_unset_removes_exactly(self):
        self.rows(cmds.SetImageDeployConfig, 'hpc', 'hyperthreading=enabled')
        self.rows(cmds.SetImageDeployConfig, self.image['id'],
                  'hyperthreading=disabled')
        self.assertNotIn('trait:%s' % ON_T, self.image)
        self.assertEqual('disabled',
                         self.image['deploy-config:hyperthreading'])
        self.image['trait:CUSTOM_OTHER'] = 'required'
        self.rows(cmds.UnsetImageDeployConfig, 'hpc', 'hyperthreading')
        self.assertEqual({'id', 'name', 'self', 'disk_format',
                          'trait:CUSTOM_OTHER'},
                         set(self.image))

    def test_dry_run_and_refusals_write_nothing(self):
        rows = self.rows(cmds.SetImageDeployConfig, '--dry-run', 'hpc',
                         'hyperthreading=disabled')
        self.assertEqual({'would set'}, {r['Action'] for r in rows})
        for command, args, message in (
                (cmds.SetImageDeployConfig, ['hpc', 'hyperthreading=maybe'],
                 'No deploy template realises hyperthreading=maybe'),
                (cmds.SetImageDeployConfig, ['hpc', 'hyperthreading=enabled',
                                             'hyperthreading=disabled'],
                 'Two values for the deploy config type hyperthreading'),
                (cmds.UnsetImageDeployConfig, ['hpc', 'hyperthreading'],
                 'The image has no deploy config of type hyperthreading'),
                (cmds.SetImageDeployConfig, ['nope', 'hyperthreading=on'],
                 'No image named nope')):
            exc = self.assertRaises(exceptions.CommandError, self.rows,
                                    command, *args)
            self.assertIn(message, str(exc))
        self.assertEqual([], self.patches())


class TestShowList(ImageCommandTest):
    def test_show_templates_traits_and_drift(self):
        self.image.update({'deploy-config:hyperthreading': 'disabled',
                           'trait:%s' % ON_T: 'required'})
        columns, data = self.run_command(cmds.ShowImageDeployConfig, ['hpc'])
        shown = dict(zip(columns, data, strict=True))
        self.assertEqual({'hyperthreading=disabled': OFF_T},
                         shown['templates'].machine_readable())
        self.assertEqual([
            'hyperthreading=disabled: trait:%s=required is missing (template '
            'renamed?)' % OFF_T,
            'trait:%s=required: its template has no deploy config on this '
            'image' % ON_T], shown['drift'].machine_readable())

    def test_list_in_one_request(self):
        self.glance.add_image('plain')
        self.image['deploy-config:hyperthreading'] = 'disabled'
        rows = self.rows(cmds.ListImageDeployConfig)
        self.assertEqual([('hpc', ['hyperthreading=disabled'])],
                         [(r['Name'], r['Deploy Configs'].machine_readable())
                          for r in rows])
        self.assertEqual(2, len(self.rows(cmds.ListImageDeployConfig,
                                          '--all')))
        self.assertEqual(2, len(self.glance.requests))
