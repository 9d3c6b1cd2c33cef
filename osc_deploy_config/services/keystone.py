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

"""Short-lived users of a project, over the SDK's identity proxy: the
operator's ``project deploy-config check`` probes the cloud with a token
of each role it asks about, then removes them."""

import secrets

PREFIX = 'deploy-config-check-'


class ProbeUser:
    """A user with one role in one project, made for a check; ``remove``
    deletes it (idempotently)."""

    def __init__(self, identity, project, role):
        self.identity = identity
        self.project = project
        self.role = role
        self.password = secrets.token_urlsafe(24)
        self.user = None

    def create(self):
        role = self.identity.find_role(self.role, ignore_missing=False)
        self.user = self.identity.create_user(
            name=PREFIX + '%s-%s' % (self.role, secrets.token_hex(4)),
            password=self.password, domain_id=self.project.domain_id,
            description='osc-deploy-config check: removed when it ends')
        self.identity.assign_project_role_to_user(self.project, self.user,
                                                  role)
        return self

    def remove(self):
        if self.user is not None:
            self.identity.delete_user(self.user, ignore_missing=True)
            self.user = None

    def connect(self, conn):
        """A connection with this user's project-scoped token, with
        ``conn``'s settings (endpoints, region, TLS)."""
        import openstack

        cfg = conn.config.config
        auth = {'auth_url': cfg['auth']['auth_url'], 'user_id': self.user.id,
                'password': self.password, 'project_id': self.project.id}
        options = {k: v for k, v in cfg.items()
                   if k not in ('auth', 'auth_type', 'name', 'cloud',
                                'profile')}
        return openstack.connect(load_yaml_config=False, load_envvars=False,
                                 auth_type='password', auth=auth, **options)
