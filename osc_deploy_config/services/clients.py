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

"""The SDK proxies our commands talk to, each with the scope it needs.

nova's flavor and server admin APIs want a project-scoped admin, while
ironic's default secure RBAC gives deploy templates and the full node list
only to a system-scoped token.  From one cloud entry, ironic gets a
system-scoped session when the user has a role on the system, and the
project-scoped one otherwise (older clouds, with ironic's legacy policy,
accept that).
"""

import contextlib
import logging

LOG = logging.getLogger(__name__)

_PROJECT_SCOPE_KEYS = (
    'project_id', 'project_name', 'project_domain_id', 'project_domain_name',
    'domain_id', 'domain_name', 'tenant_id', 'tenant_name',
)
# Auth methods that can be rescoped to the system with the same secret.
_RESCOPABLE_AUTH = ('password', 'v3password', 'token', 'v3token')


def system_scoped(conn, timeouts=None):
    """A system-scoped connection from ``conn``'s credentials, or None
    when they cannot have one (no role on the system, or an auth method
    bound to a project such as application credentials).  Its session's
    requests (the token's, the version discovery's) wait no longer than
    ``timeouts``' read."""
    from keystoneauth1 import exceptions as ksa_exceptions
    import openstack
    from openstack import exceptions as sdk_exceptions

    from osc_deploy_config.services import rest

    cfg = conn.config.config
    auth = dict(cfg.get('auth') or {})
    if auth.get('system_scope'):
        return conn
    if cfg.get('auth_type', 'password') not in _RESCOPABLE_AUTH:
        return None
    for key in _PROJECT_SCOPE_KEYS:
        auth.pop(key, None)
    auth['system_scope'] = 'all'
    options = {k: v for k, v in cfg.items()
               if k not in ('auth', 'name', 'cloud', 'profile')}
    if timeouts is not None:
        options['api_timeout'] = timeouts.read
    system = openstack.connect(load_yaml_config=False, load_envvars=False,
                               auth=auth, **options)
    # Share the version discovery already done (of keystone), as the SDK's
    # own Connection.connect_as does: one request less.
    system.config._discovery_cache = conn.session._discovery_cache
    try:
        # within a request's bound, keystone named, as a token's renewal
        rest.issued(system.authorize, system, 'POST', rest.request_bounds(
            timeouts or rest.DEFAULT_TIMEOUTS, 'identity', 'POST', '/'))
    except (ksa_exceptions.Unauthorized, ksa_exceptions.Forbidden,
            sdk_exceptions.SDKException) as exc:
        LOG.debug('no system-scoped token for these credentials: %s', exc)
        return None
    return system


def bound_session(conn, timeouts):
    """Give the connection's session a timeout where it has none (no
    ``api_timeout`` in clouds.yaml): what our wrappers do not send
    themselves (a token, a version discovery) is bounded too."""
    session = conn.session
    if getattr(session, 'timeout', None) is None:
        session.timeout = timeouts.read


def proxy_of(conn, service_type, timeouts):
    """The SDK's proxy of a service, built on first use with the
    service's version discovery, within a read's whole bound
    (``rest.whole_answer``), its token renewed first as a request's:
    keystone or the service down or silent gets one line."""
    from keystoneauth1 import exceptions as ksa_exceptions
    from openstack import exceptions as sdk_exceptions
    from osc_lib import exceptions as osc_exceptions

    from osc_deploy_config.services import rest

    bounds, bounded_by = rest.request_bounds(timeouts, service_type, 'GET',
                                             '/')
    rest.renew_token(conn, 'GET', bounds, bounded_by)
    seconds = rest.whole_bound('GET', bounds)
    try:
        done, proxy = rest.within(seconds + rest.SLACK_SECONDS, lambda: (
            getattr(conn, service_type)))
    except sdk_exceptions.NotSupported:
        raise rest.unreachable(service_type, endpoint_of(conn, service_type),
                               'its version discovery failed') from None
    except ksa_exceptions.ConnectTimeout as exc:
        # keystoneauth's renewal on the way, or the discovery's read
        service = rest.named(conn, service_type, str(exc))
        raise rest.timed_out(service, *(
            ('POST', '/auth/tokens') if service == 'identity' else
            ('GET', '/')), str(exc), rest.timed_out_at(exc), bounds,
            bounded_by) from None
    except ksa_exceptions.ConnectionError as exc:
        raise rest.unreachable(rest.named(conn, service_type, str(exc)),
                               str(exc), rest.reason_of(exc)) from None
    if not done:
        raise osc_exceptions.CommandError(
            'The %s at %s did not answer its version discovery within %s s '
            '(%s)' % (rest.service_name(service_type), rest.root_url(
                endpoint_of(conn, service_type)) or 'its catalog endpoint',
                      rest.seconds_text(seconds), bounded_by))
    return proxy


def endpoint_of(conn, service_type):
    """A service's endpoint in the catalog, without discovery ('' where
    it cannot be told)."""
    try:
        return conn.session.get_endpoint(
            service_type=service_type, skip_discovery=True,
            interface=conn.config.get_interface(service_type),
            region_name=conn.config.get_region_name(service_type)) or ''
    except Exception:   # noqa: BLE001 - only for the message
        return ''


class Clients:
    """Ready service wrappers, each on a proxy built on first use with the
    scope its service wants: ``ironic(*features)``, ``nova()``,
    ``placement()``, ``glance()``.  Commands and hooks get one from OSC
    (``client_manager.deploy_config``) and hand it to a use case."""

    def __init__(self, instance):
        self._instance = instance
        self._baremetal = None
        self._timeouts = None
        self.baremetal_scope = None
        # {node: its detailed BIOS settings}, kept while a command that
        # changes no BIOS reads them more than once (registries_remembered)
        self.registries = None

    @property
    def connection(self):
        conn = self._instance.sdk_connection
        bound_session(conn, self.timeouts)
        return conn

    def setting(self, name):
        """A setting of the cloud's configuration (clouds.yaml, or the
        ``--os-*`` option or ``OS_*`` variable of that name), or None."""
        read = getattr(self._instance, 'get_configuration', None)
        return read().get(name) if read else None

    @property
    def timeouts(self):
        """rest.Timeouts of every request: the cloud's
        ``deploy_config_request_seconds``, or the default."""
        from osc_deploy_config.services import rest

        if self._timeouts is None:
            self._timeouts = rest.parse_timeouts(
                self.setting(rest.TIMEOUTS_SETTING))
        return self._timeouts

    def _bounded(self, api):
        api.timeouts = self.timeouts
        return api

    @contextlib.contextmanager
    def registries_remembered(self):
        """Meanwhile, each node's BIOS registry is read once (by the APIs
        made meanwhile): for what changes no BIOS setting and reads the
        registries for several templates (``apply`` before its rollout)."""
        if self.registries is not None:
            yield       # within an outer one
            return
        self.registries = {}
        try:
            yield
        finally:
            self.registries = None

    def nova(self, *features):
        """Nova at the version flavor listings with extra specs need, or
        more for these features."""
        from osc_deploy_config.services import nova

        return self._bounded(nova.Nova(proxy_of(self.connection, 'compute',
                                                self.timeouts),
                                       *features))

    def placement(self):
        from osc_deploy_config.services import placement

        return self._bounded(placement.Placement(
            proxy_of(self.connection, 'placement',
                     self.timeouts)))

    def glance(self):
        from osc_deploy_config.services import glance

        return self._bounded(glance.Glance(proxy_of(self.connection,
                                                    'image', self.timeouts)))

    def roles(self):
        """The role names the credentials' token carries (keystone's
        implied roles included: admin implies manager, member, reader).
        Read from the token OSC holds: no request."""
        access = self.token()
        return set(access.role_names or ()) if access else set()

    def is_admin(self):
        """Whether the token has the admin role: what nova's admin API, a
        toggle's lock and a node's servicing by the operator take."""
        return 'admin' in self.roles()

    def own_project_name(self):
        """The name of the project the token is scoped to (no request)."""
        access = self.token()
        return access.project_name if access else None

    def token(self):
        """The token the session holds (keystoneauth's AccessInfo), as it
        is: a renewal due is the next request's (``rest.renew_token``,
        bounded), never made here; got where there is none yet; None where
        it cannot be."""
        conn = self.connection
        auth = conn.session.auth
        try:
            return getattr(auth, 'auth_ref', None) or auth.get_access(
                conn.session)
        except Exception as exc:    # noqa: BLE001 - then not known
            LOG.debug('no token read: %s', exc)
            return None

    def own_project(self):
        """The ID of the project the token is scoped to (no request)."""
        return self.connection.current_project_id

    def project_id(self, name_or_id, domain=None):
        """A project's ID, by its ID, or by its name within ``domain``
        (name or ID; any domain when not given): one line when there is
        none, or when the name (or the ID and a name) fits several."""
        from openstack import exceptions as sdk_exceptions
        from osc_lib import exceptions

        identity = self.connection.identity
        domain_id = None
        if domain:
            try:
                domain_id = identity.find_domain(
                    domain, ignore_missing=False).id
            except sdk_exceptions.ResourceNotFound:
                raise exceptions.CommandError(
                    'No domain with a name or ID of %s' % domain) from None
        by_id = None
        try:
            by_id = identity.get_project(name_or_id)
        except sdk_exceptions.NotFoundException:
            pass
        query = {'name': name_or_id}
        if domain_id:
            query['domain_id'] = domain_id
        try:
            found = {p.id: p for p in identity.projects(**query)}
        except sdk_exceptions.ForbiddenException:
            found = {}          # a project's own token: by ID only
        if by_id is not None and (
                domain_id is None or by_id.domain_id == domain_id):
            found.setdefault(by_id.id, by_id)
        if len(found) == 1:
            return next(iter(found))
        if not found:
            raise exceptions.CommandError('No project with a name or ID of '
                                          '%s%s' % (name_or_id, ' in domain %s'
                                                    % domain if domain
                                                    else ''))
        raise exceptions.CommandError(
            'Project %s is ambiguous: %s. Give its ID, or its name with '
            '--project-domain.' % (name_or_id, '; '.join(
                '%s (%s, domain %s)' % (p.id, p.name, p.domain_id)
                for p in sorted(found.values(), key=lambda p: p.id))))

    def project_names(self):
        """{project ID: name} of every project (keystone)."""
        return {p.id: p.name for p in self.connection.identity.projects()}

    def ironic(self, *features):
        """Ironic at the version these features need (deploy templates by
        default), system-scoped when the credentials allow it."""
        from osc_deploy_config.services import ironic
        from osc_deploy_config.services import versions

        proxy = self._baremetal_proxy()
        api = ironic.Ironic(proxy, *(features or (
            versions.DEPLOY_TEMPLATES,)), scope=self.baremetal_scope)
        api.registries = self.registries
        return self._bounded(api)

    def _baremetal_proxy(self):
        if self._baremetal is None:
            conn = self.connection
            system = system_scoped(conn, self.timeouts)
            self.baremetal_scope = 'system' if system else 'project'
            # python-ironicclient pins the SDK to its own latest version
            # (--os-baremetal-api-version), and the SDK then refuses to
            # build the proxy of an older ironic: our calls negotiate
            # their own versions.
            (system or conn).config.config['baremetal_api_version'] = '1'
            self._baremetal = proxy_of(system or conn, 'baremetal',
                                        self.timeouts)
        return self._baremetal


class ConnectionClients(Clients):
    """``Clients`` over a connection of their own, not OSC's (the
    short-lived users of ``project deploy-config check``)."""

    def __init__(self, conn):
        super().__init__(None)
        self._conn = conn

    @property
    def connection(self):
        return self._conn

    def setting(self, name):
        return self._conn.config.config.get(name)
