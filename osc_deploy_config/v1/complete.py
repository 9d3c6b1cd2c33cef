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

"""``openstack complete`` with the options command hooks add.

cliff's ``complete`` builds each command without its name, so command hooks
(such as ``server resize --deploy-config``) never load and their options are
missing from shell completion.  This subclass builds each command as cliff
does when it runs one.
"""

import inspect

from cliff import complete


class CompleteCommand(complete.CompleteCommand):
    auth_required = False

    def get_actions(self, command):
        factory, name, _ = self.app.command_manager.find_command(command)
        kwargs = {}
        if 'cmd_name' in inspect.getfullargspec(factory.__init__).args:
            kwargs['cmd_name'] = name
        cmd = factory(self.app, None, **kwargs)
        full_name = name if self.app.interactive_mode else ' '.join(
            [self.app.NAME, name])
        return cmd.get_parser(full_name)._get_optional_actions()
