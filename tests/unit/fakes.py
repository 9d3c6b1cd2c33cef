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

"""In-memory ironic, nova and placement behind autospec'd SDK proxies.

Only the SDK boundary is faked: our commands, clients and domain code run
for real, and every request they make is recorded in ``requests``.
"""

import copy
import io
import json
import re
import subprocess
import threading
from unittest import mock
import urllib.parse
import uuid

import fixtures
from keystoneauth1 import discover
from keystoneauth1 import exceptions as ksa_exceptions
from keystoneauth1 import session
from openstack import connection
from openstack import exceptions as sdk_exceptions
from openstack.baremetal.v1 import _proxy as baremetal_proxy
from openstack.compute.v2 import _proxy as compute_proxy
from openstack.identity.v3 import _proxy as identity_proxy
from openstack.image.v2 import _proxy as image_proxy
from openstack.placement.v1 import _proxy as placement_proxy
from osc_lib.test import base
import requests

from osc_deploy_config.domain.configs import deploy_config
from osc_deploy_config.domain.configs import steps
from osc_deploy_config.domain.grants import grants
from osc_deploy_config.services import clients
from osc_deploy_config.services import versions

URL = 'http://ironic.test/v1'
# The configs, traits and specs the unit tests share.
HT = 'HW_CPU_HYPERTHREADING'
ON = deploy_config.Config('hyperthreading', 'enabled')
OFF = deploy_config.Config('hyperthreading', 'disabled')
ON_T = 'CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_ENABLED'
OFF_T = 'CUSTOM_DEPLOY_CONFIG_HYPERTHREADING_DISABLED'
GOLD = {'resources:CUSTOM_BAREMETAL_GOLD': '1'}
# When the fake ironic first read every BIOS setting, and when a servicing
# changed one.
READ_AT = '2026-11-30T12:00:00+00:00'
SERVICED_AT = '2026-12-01T09:30:00+00:00'


def gone_pid():
    """The process ID of a process that has ended (a killed toggle's)."""
    process = subprocess.Popen(['true'])
    process.wait()
    return process.pid


def holder(host, pid):
    """The holder a lock reason of another process names."""
    from osc_deploy_config.domain.toggle import toggle_states

    return toggle_states.Holder(host, pid, '', '', '')


def mine(pid):
    """The holder a lock of this host's, with another PID, names (a
    killed toggle's, with a gone PID)."""
    from osc_deploy_config.use_cases.toggle import claim

    return claim.me('dead')._replace(pid=pid)


def response(status, body=None, url=URL):
    resp = requests.Response()
    resp.status_code = status
    resp.url = url
    resp.reason = {200: 'OK', 201: 'Created', 204: 'No Content',
                   400: 'Bad Request', 403: 'Forbidden', 404: 'Not Found',
                   406: 'Not Acceptable', 409: 'Conflict'}.get(status, '')
    if body is not None:
        resp._content = json.dumps(body).encode()
        resp.headers['Content-Type'] = 'application/json'
    else:
        resp._content = b''
    return resp


def error(status, message):
    return response(status, {'error_message': json.dumps(
        {'faultstring': message, 'debuginfo': None})})


# What our code and OSC's commands around our hooks call of each SDK
# proxy: autospec'd alone, with their signatures (the whole of a proxy, a
# few hundred methods, costs 0.1-0.6 s a test); any other name is refused.
PROXY_SURFACE = ('request', 'get_endpoint_data')


def proxy_double(proxy_class, surface=PROXY_SURFACE):
    """An autospec of ``surface`` of an SDK proxy class."""
    return mock.create_autospec(type(proxy_class.__name__, (), {
        name: getattr(proxy_class, name) for name in surface}),
        instance=True)


class FakeService:
    """Records requests; tells its version range as the SDK's discovery
    does (``discovered``), and refuses versions above its maximum with
    406."""

    url = URL

    # one request at a time, as the services' own locks keep their data
    lock = threading.RLock()

    def __init__(self, proxy_class, max_version, page_size,
                 surface=PROXY_SURFACE):
        self.requests = []
        # called after each request (method, path): a test's sampler
        self.after_request = None
        self.max_version = max_version
        self.page_size = page_size
        # False: as behind an endpoint override without a version document
        self.discovered = True
        self.proxy = proxy_double(proxy_class, surface)
        self.proxy.request.side_effect = self.handle
        self.proxy.get_endpoint_data.side_effect = self.endpoint_data

    def endpoint_data(self):
        return discover.EndpointData(
            catalog_url=self.url, service_url=self.url,
            max_microversion=self.max_version if self.discovered else None)

    @property
    def writes(self):
        return [(m, p) for m, p, _ in self.requests if m != 'GET']

    def handle(self, path, method, microversion=None, raise_exc=None,
               json=None, **kwargs):
        with self.lock:
            self.requests.append((method, path, microversion))
            if versions.parse(microversion) > self.max_version:
                return self.refuse_version(microversion)
            parts = urllib.parse.urlsplit(path)
            query = dict(urllib.parse.parse_qsl(parts.query))
            segments = [urllib.parse.unquote(s)
                        for s in parts.path.strip('/').split('/')]
            answer = self.route(method, segments, query, json, microversion)
        if self.after_request:
            self.after_request(method, path)
        return answer


class FakeIronic(FakeService):
    """The REST routes our commands use, over dicts."""

    def __init__(self, max_version=(1, 115), page_size=1000):
        super().__init__(baremetal_proxy.Proxy, max_version, page_size)
        self.templates = {}
        self.nodes = {}
        self.stamps = 0
        self.forbidden = False
        self.locked_nodes = set()   # their trait writes get 409
        # servicing: the BIOS settings of bios steps land in node['bios'],
        # unless the node's BIOS ignores them or servicing fails
        self.bios_ignores_steps = False
        self.service_error = None
        self.failing_nodes = set()       # names whose servicing fails
        # {node name: HTTP status} its service requests get
        self.service_http_errors = {}
        # how many reads of a node a servicing lasts (0: done at once)
        self.servicing_reads = 0
        self.abort_unsupported = False   # an ironic before 32.0
        self.aborts_hang = False         # an abort that never ends
        # reads for which an abort's worker still holds the node's lock
        # after it shows active (maintenance refused with 409 meanwhile)
        self.abort_lock_reads = 0
        self.provision_requests = []     # (node name, target)
        self.patches = []                # (node name, JSON patch)
        self.serviced = []               # (node name, steps): done
        # {node UUID: {setting: registry fields}} (?detail=True)
        self.bios_registries = {}
        # (node name, body) of each provision request taken
        self.provision_bodies = []
        # {node UUID: [history events]}, oldest first, as ironic 39
        # records servicing (False: an ironic that records none)
        self.history = {}
        self.records_history = True
        # a project-scoped token: its project ID and roles, as ironic's
        # default policy judges them (None: a system-scoped token)
        self.project = None
        self.project_roles = set()
        # ironic's default policy: a lessee's manager writes instance_info
        # (False: the shipped hardening's override refuses it)
        self.instance_info_open = False
        # the hardening's other rules: raw service and clean steps and
        # runbooks of a project's own refused to projects (True: ironic's
        # defaults)
        self.steps_open = False
        self.runbook_create_open = False
        # {'interface.step': 'refuse' or 'unregistered'}: a step rule in
        # the policy file, as a fixed ironic enforces it, or as ironic 39
        # (a 500 for every caller); none by default
        self.step_rules = {}
        # ironic 39: a request that names a runbook skips the step rules,
        # and a rebuild that names one is refused for the runbook's
        # disable_ramdisk (False: an ironic that lets it through)
        self.runbook_skips_step_rules = True
        self.rebuild_refuses_runbooks = True
        self.runbooks = {}
        self.cleaned = []       # (node name, clean steps, disable_ramdisk)
        self.provide_fails = set()      # their automated cleaning fails
        self.provide_hangs = False
        # nodes whose disk has nothing to boot: a BIOS-only clean (which
        # ironic runs without the ramdisk) waits for an OS for ever
        self.blank_disks = set()
        self.clean_http_errors = {}     # {name: the status a clean gets}
        # {setting: (profile, value)}: the setting is read-only in a
        # node's registry unless its profile has that value (as a Dell's)
        self.locked_by = {}

    # ------------------------------------------------------------ data

    def stamp(self):
        """A new provision_updated_at: each change of state a later one."""
        self.stamps += 1
        return '2026-12-01T10:%02d:%02d+00:00' % divmod(self.stamps, 60)

    def set_state(self, node, state, target=None, **more):
        """A provision state change, as ironic records it."""
        node.update(provision_state=state, target_provision_state=target,
                    provision_updated_at=self.stamp(), **more)

    def record(self, node, event_type, error=False, event=None):
        """A node history event, as ironic writes it (the time of the
        node's latest state change)."""
        if self.records_history:
            self.history.setdefault(node['uuid'], []).append({
                'uuid': str(uuid.uuid4()), 'event_type': event_type,
                'severity': 'ERROR' if error else 'INFO',
                'event': event or event_type, 'created_at':
                    node['provision_updated_at']})

    def record_start(self, node, steps):
        """The history event that starts a servicing, as ironic writes it:
        its steps as Python dicts."""
        self.record(node, 'servicing_start',
                    event='Starting servicing with steps=%s' % (
                        [dict(s, priority=0) for s in steps],))

    def add_template(self, name, steps=None, extra=None):
        template = {
            'uuid': str(uuid.uuid4()), 'name': name,
            'steps': steps or [{'interface': 'bios',
                                'step': 'apply_configuration',
                                'args': {}, 'priority': 150}],
            'extra': extra or {}, 'created_at': '2026-11-29T00:00:00+00:00',
            'updated_at': None,
            'links': [{'href': URL + '/deploy_templates/x', 'rel': 'self'}],
        }
        self.templates[template['uuid']] = template
        return template

    def add_node(self, name, traits=(), maintenance=False, retired=False,
                 instance_uuid=None, instance_traits=(),
                 resource_class='baremetal-gold', bios_interface='redfish'):
        node = {
            'uuid': str(uuid.uuid4()), 'name': name, 'traits': list(traits),
            'maintenance': maintenance, 'retired': retired,
            'provision_state': 'active' if instance_uuid else 'available',
            'target_provision_state': None, 'last_error': None,
            'instance_uuid': instance_uuid,
            'instance_info': ({'traits': list(instance_traits)}
                              if instance_uuid else {}),
            'maintenance_reason': None, 'fault': None, 'reservation': None,
            'reservation_reads': 0,
            'extra': {}, 'properties': {}, 'bios_at': {},
            # what a verified node's cache holds at least
            'bios': {'SerialNumber': 'FAKE-' + name},
            'resource_class': resource_class, 'owner': None, 'lessee': None,
            'bios_interface': bios_interface,
            'management_interface': 'redfish',
            'raid_config': {}, 'provision_updated_at': self.stamp(),
            'driver_internal_info': {},
        }
        self.nodes[node['uuid']] = node
        return node

    def add_bios_template(self, config, *settings):
        """The template of ``config`` (named as ``--config`` names it, any
        node capable) setting these BIOS settings ((name, value) each)."""
        return self.add_template(
            deploy_config.template_trait(config),
            steps=[steps.bios_step(settings)],
            extra=deploy_config.template_extra(config, []))

    def add_hyperthreading_templates(self):
        """hyperthreading=enabled and =disabled, each setting the BIOS's
        HyperThreading, for nodes with HW_CPU_HYPERTHREADING."""
        for config, name in ((ON, ON_T), (OFF, OFF_T)):
            self.add_template(name, steps=[steps.bios_step(
                [('HyperThreading', config.value.title())])],
                extra=deploy_config.template_extra(config, [HT]))

    # ------------------------------------------------------------ routes

    def refuse_version(self, microversion):
        resp = error(406, 'Version %s was requested but the minor version '
                     'is not supported by this service. The supported '
                     'version range is: [1.1, %d.%d].'
                     % ((microversion,) + self.max_version))
        resp.headers['X-OpenStack-Ironic-API-Maximum-Version'] = (
            '%d.%d' % self.max_version)
        return resp

    def route(self, method, segments, query, json, microversion):
        if self.forbidden:
            return error(403, 'Access was denied to this resource.')
        if self.project and segments[0] == 'deploy_templates':
            return error(403, 'RBAC policy on baremetal:deploy_template:get '
                         'requires a system scope')
        if segments[0] == 'runbooks':
            if versions.parse(microversion) < (1, 92):
                return error(404, 'The resource could not be found.')
            return self._runbooks(method, segments[1:], query, json)
        if segments[0] == 'deploy_templates':
            return self._templates(method, segments[1:], query, json)
        if segments[0] == 'nodes':
            if ('retired' in query.get('fields', '')
                    and versions.parse(microversion) < (1, 61)):
                resp = error(406, 'Field(s) "retired" are not valid')
                resp.headers['X-OpenStack-Ironic-API-Maximum-Version'] = (
                    '%d.%d' % self.max_version)
                return resp
            return self._nodes(method, segments[1:], query, json)
        return error(404, 'no route %s' % '/'.join(segments))

    def _find_template(self, ident):
        for template in self.templates.values():
            if ident in (template['uuid'], template['name']):
                return template
        return None

    def _view(self, template, fields=None, detail=True):
        view = copy.deepcopy(template)
        if fields:
            view = {k: view[k] for k in fields}
        elif not detail:
            view = {k: view[k] for k in ('uuid', 'name', 'links')}
        return view

    def _templates(self, method, rest, query, body):
        fields = query['fields'].split(',') if 'fields' in query else None
        if method == 'GET' and not rest:
            ordered = sorted(self.templates.values(), key=lambda t: t['uuid'])
            if 'marker' in query:
                ordered = [t for t in ordered if t['uuid'] > query['marker']]
            size = min(int(query.get('limit', self.page_size)),
                       self.page_size)
            page = {'deploy_templates': [
                self._view(t, fields, query.get('detail') == 'True')
                for t in ordered[:size]]}
            if len(ordered) > size:
                # as ironic's: the query's fields and detail carry over
                carried = ''.join('%s=%s&' % (key, query[key])
                                  for key in ('fields', 'detail')
                                  if key in query)
                page['next'] = '%s/deploy_templates?%slimit=%d&marker=%s' % (
                    URL, carried, size, ordered[size - 1]['uuid'])
            return response(200, page)
        if method == 'POST':
            if self._find_template(body['name']):
                return error(409, 'A deploy template with name %s already '
                             'exists.' % body['name'])
            template = self.add_template(body['name'], body['steps'],
                                         body.get('extra'))
            if body.get('uuid'):
                del self.templates[template['uuid']]
                template['uuid'] = body['uuid']
                self.templates[template['uuid']] = template
            return response(201, self._view(template))
        template = self._find_template(rest[0])
        if template is None:
            return error(404, 'Deploy template %s could not be found.'
                         % rest[0])
        if method == 'GET':
            return response(200, self._view(template, fields))
        if method == 'DELETE':
            del self.templates[template['uuid']]
            return response(204)
        if method == 'PATCH':
            for op in body:
                path = op['path'].strip('/').split('/', 1)
                if path[0] == 'extra' and len(path) == 2:
                    target = template['extra']
                    key = path[1].replace('~1', '/').replace('~0', '~')
                else:
                    target, key = template, path[0]
                if op['op'] == 'remove':
                    if key not in target:
                        return error(400, "can't remove non-existent "
                                     'object %s' % key)
                    del target[key]
                else:
                    target[key] = op['value']
            template['updated_at'] = '2026-11-29T01:00:00+00:00'
            return response(200, self._view(template))
        return error(405, method)

    def leased(self, node):
        """Whether the token may see the node: a system scope, or its
        project's owner or lessee."""
        return self.project is None or self.project in (node['owner'],
                                                         node['lessee'])

    def _nodes(self, method, rest, query, body):
        fields = query['fields'].split(',') if 'fields' in query else None
        if method == 'GET' and not rest:
            for node in self.nodes.values():    # a read of each, in time
                if 'service_reads_left' in node and self.leased(node):
                    self._servicing_goes_on(node)
            return response(200, {'nodes': [
                {k: copy.deepcopy(n[k]) for k in fields}
                for n in self.nodes.values() if self.leased(n)
                and query.get('instance_uuid') in (None, n['instance_uuid'])
                and query.get('provision_state') in (
                    None, n['provision_state'])]})
        node = self.nodes.get(rest[0])
        if node is None or not self.leased(node):
            return error(404, 'Node %s could not be found.' % rest[0])
        refused = self._lessee_refuses(method, rest, body)
        if refused is not None:
            return refused
        if len(rest) == 1:
            self._servicing_goes_on(node)
            self._worker_goes_on(node)
            if method == 'PATCH':
                self.patches.append((node['name'], body))
                for op in body:
                    field, key = op['path'].strip('/').split('/', 1)
                    if op['op'] == 'remove' and key not in node[field]:
                        return error(400, "Couldn't apply patch '%s'. "
                                     "Reason: can't remove a non-existent "
                                     "object '%s'" % (op, key))
                    if op['op'] == 'remove':
                        del node[field][key]
                    else:
                        node[field][key] = copy.deepcopy(op['value'])
            return response(200, {k: copy.deepcopy(node[k])
                                  for k in fields or node})
        if rest[1:] == ['states', 'provision']:
            return self._service(node, body)
        if rest[1:] == ['maintenance']:
            if node['reservation']:
                return error(409, 'Node %s is locked by host %s, please '
                             'retry after the current operation is '
                             'completed.' % (node['uuid'],
                                             node['reservation']))
            # as ironic: the fault of a failed step stays until the node
            # leaves maintenance
            node.update(maintenance=method == 'PUT', maintenance_reason=(
                body or {}).get('reason'))
            if method == 'DELETE':
                node['fault'] = None
            return response(202)
        if rest[1:] == ['history']:
            return response(200, {'history': list(reversed(
                self.history.get(node['uuid'], [])))})
        if rest[1:] == ['bios']:
            registry = self.bios_registries.get(node['uuid'], {}) \
                if query.get('detail') == 'True' else {}
            return response(200, {'bios': [
                dict(registry.get(name, {}), name=name, value=value,
                     created_at=READ_AT,
                     updated_at=node['bios_at'].get(name))
                for name, value in sorted(node['bios'].items())]})
        trait = rest[2]
        if node['uuid'] in self.locked_nodes:
            return error(409, 'Node %s is locked by host conductor-1, '
                         'please retry after the current operation is '
                         'completed.' % node['uuid'])
        if method == 'PUT':
            if trait not in node['traits']:
                node['traits'].append(trait)
            return response(204)
        if trait not in node['traits']:
            return error(404, 'trait %s not on node' % trait)
        node['traits'].remove(trait)
        return response(204)


    def _lessee_refuses(self, method, rest, body):
        """ironic's default policy for a node's lessee: its reader reads
        the node and its BIOS, not its history; its member writes extra,
        not properties; its manager changes its provision state and
        maintenance."""
        if self.project is None:
            return None
        manager = bool({'manager', 'admin'} & self.project_roles)
        if rest[1:] == ['history']:
            return error(403, 'Access was denied to this resource.')
        writable = ('/extra/', '/instance_info/') if (
            manager and self.instance_info_open) else ('/extra/',)
        if method == 'PATCH' and any(not op['path'].startswith(writable)
                                     for op in body):
            return error(403, 'Access was denied to this resource.')
        if rest[1:2] in (['states'], ['maintenance']) and not manager:
            return error(403, 'Access was denied to this resource.')
        return None

    def _runbooks(self, method, rest, query, body):
        """The runbook routes (1.92; traits 1.112), a project's own."""
        if method == 'GET':
            if query.get('project') not in (None, 'true', 'false'):
                # as ironic 39 validates it: a boolean
                return error(400, "Invalid project: Unrecognized value "
                             "'%s'" % query['project'])
            return response(200, {'runbooks': [
                copy.deepcopy(r) for r in self.runbooks.values()
                if self.project in (None, r['owner']) or r['public']]})
        if method == 'POST':
            if self.project and not self.runbook_create_open:
                return error(403, 'RBAC policy on baremetal:runbook:create '
                             'denied')
            if 'name' not in body:
                return error(400, "'name' is a required property")
            if 'traits' in body:
                return error(400, "Additional properties are not allowed "
                                  "('traits' was unexpected)")
            if any(r['name'] == body['name'] for r in self.runbooks.values()):
                return error(409, 'A runbook with name %s already exists.'
                             % body['name'])
            runbook = dict(body, uuid=str(uuid.uuid4()), traits=[])
            self.runbooks[runbook['uuid']] = runbook
            return response(201, copy.deepcopy(runbook))
        runbook = self.runbooks.get(rest[0])
        if runbook is None:
            return error(404, 'Runbook %s could not be found.' % rest[0])
        if method == 'DELETE':
            del self.runbooks[rest[0]]
            return response(204)
        if rest[1:] == ['traits']:
            runbook['traits'] = list(body['traits'])
            return response(204)
        for op in body:
            runbook[op['path'].strip('/')] = copy.deepcopy(op['value'])
        return response(200, copy.deepcopy(runbook))

    def _runbook_steps(self, node, body):
        """The service steps of a runbook, as ironic checks it: usable by
        the token, and on a node that carries one of its traits; or an
        error response."""
        runbook = self.runbooks.get(body['runbook'])
        if runbook is None or (self.project and (
                runbook['owner'] != self.project
                or not {'manager', 'admin'} & self.project_roles)):
            return error(403, 'Access was denied to this resource.')
        if not set(runbook['traits']) & set(node['traits']):
            return error(400, 'This runbook has not been approved for use '
                         'on this node %s.' % node['uuid'])
        return [{'interface': s['interface'], 'step': s['step'],
                 'args': s.get('args') or {}} for s in sorted(
            runbook['steps'], key=lambda s: int(s['order']))]

    def _probe_answer(self, node, body):
        """Ironic's answer, in its order, to a provision request carrying
        a rescue password for another target (the check's probes): its
        policy, the step rules, then a 400 before the conductor."""
        checked = (body.get('deploy_steps') or []) + (
            body.get('service_steps') or []) + (body.get('clean_steps') or [])
        if body.get('runbook'):
            refused = self._runbook_steps(node, body)
            if isinstance(refused, requests.Response):
                return refused
            if self.runbook_skips_step_rules:
                checked = []
        elif self.project and any(
                body.get(kind) and not self.steps_open for kind in (
                    'service_steps', 'clean_steps')):
            return error(403, 'RBAC policy on baremetal:node:'
                         'set_provision_state:*_steps denied')
        for step in checked:
            step_id = '%s.%s' % (step['interface'], step['step'])
            rule = self.step_rules.get(step_id)
            if rule == 'unregistered':
                return error(500, 'Policy baremetal:step:execute:%s has not '
                             'been registered' % step_id)
            if rule == 'refuse' and self.project:
                return error(403, 'insufficient privileges to execute step')
        if (body.get('runbook') and body['target'] == 'rebuild'
                and self.rebuild_refuses_runbooks):
            return error(400, 'disable_ramdisk is supported only with '
                         'manual cleaning or servicing')
        return error(400, '"rescue_password" is only valid when setting '
                     'target provision state to rescue')

    def _service(self, node, body):
        if 'rescue_password' in body and body['target'] != 'rescue':
            return self._probe_answer(node, body)
        if body.get('runbook'):
            steps = self._runbook_steps(node, body)
            if isinstance(steps, requests.Response):
                return steps
            body = {'target': body['target'], 'service_steps': steps}
        allowed = {'service': ('active', 'service failed'),
                   'abort': () if self.abort_unsupported else (
                       'service failed',),
                   'manage': ('available', 'manageable', 'clean failed'),
                   'clean': ('manageable',), 'provide': ('manageable',)}
        if node['provision_state'] not in allowed.get(body['target'], ()):
            return error(400, 'The requested action "%s" can not be '
                         'performed on node "%s" while it is in state "%s".'
                         % (body['target'], node['uuid'],
                            node['provision_state']))
        if body['target'] == 'abort' and node['maintenance']:
            return error(400, 'Can not abort service on node "%s" while it '
                         'is in maintenance mode.' % node['uuid'])
        if node['name'] in self.service_http_errors:
            return error(self.service_http_errors[node['name']],
                         'Node %s is locked by host conductor-1, please retry '
                         'after the current operation is completed.'
                         % node['uuid'])
        self.provision_requests.append((node['name'], body['target']))
        self.provision_bodies.append((node['name'], body))
        if body['target'] in ('manage', 'clean', 'provide'):
            return self._clean(node, body)
        if body['target'] == 'abort':
            if not self.aborts_hang:
                self.set_state(node, 'active')
                if self.abort_lock_reads:
                    node.update(reservation='conductor-1',
                                reservation_reads=self.abort_lock_reads)
            return response(202)
        if self.service_error or node['name'] in self.failing_nodes:
            # as ironic: the target stays "active", and the failed step
            # puts the node in maintenance (its fault, its error for the
            # reason)
            self.set_state(node, 'servicing', 'active')
            self.record_start(node, body['service_steps'])
            failure = self.service_error or 'step failed'
            self.set_state(node, 'service failed', 'active',
                           last_error=failure, maintenance=True,
                           maintenance_reason=failure,
                           fault='service failure')
            self.record(node, 'servicing_end', error=True)
            self.record(node, 'servicing', error=True)
            return response(202)
        self.set_state(node, 'servicing', 'active',
                       service_reads_left=self.servicing_reads,
                       service_steps=body['service_steps'])
        self.record_start(node, body['service_steps'])
        self._servicing_goes_on(node)
        return response(202)

    def _clean(self, node, body):
        """manage, manual cleaning (its BIOS steps' effect at once, or
        the failure of a failing node) and provide, each done at once."""
        if body['target'] == 'provide' and node['name'] in self.provide_fails:
            self.set_state(node, 'clean failed', last_error='agent lost')
            return response(202)
        if body['target'] == 'provide' and self.provide_hangs:
            # ironic's automated clean, longer than the wait
            self.set_state(node, 'clean wait', 'available')
            return response(202)
        if body['target'] != 'clean':
            self.set_state(node, 'manageable' if body['target'] == 'manage'
                           else 'available', last_error=None)
            return response(202)
        if node['name'] in self.clean_http_errors:
            return error(self.clean_http_errors[node['name']],
                         'Failed to validate power driver interface')
        self.cleaned.append((node['name'], body['clean_steps'],
                             body.get('disable_ramdisk')))
        if node['name'] in self.blank_disks:
            settings = body['clean_steps'][-1]['args']['settings']
            self.set_state(node, 'clean wait', 'manageable')
            node['driver_internal_info'] = {
                'cleaning_disable_ramdisk': True,
                'redfish_bios_state': {
                    'reboot_requested': True, 'requested_bios_attrs': {
                        s['name']: s['value'] for s in settings}}}
            return response(202)
        if node['name'] in self.failing_nodes:
            # as ironic: the failed step holds the node in maintenance
            failure = self.service_error or 'step failed'
            self.set_state(node, 'clean failed', last_error=failure,
                           maintenance=True, maintenance_reason=failure,
                           fault='clean failure')
            return response(202)
        for step in body['clean_steps']:
            for setting in step['args'].get('settings', ()):
                node['bios'][setting['name']] = setting['value']
                self._unlock(node, setting)
        self.set_state(node, 'manageable')
        return response(202)

    def _unlock(self, node, setting):
        """A registry's read-only flags as a Dell's follow its profile:
        ``locked_by`` {setting: (profile, unlocking value)}."""
        registry = self.bios_registries.get(node['uuid'], {})
        for name, (profile, value) in self.locked_by.items():
            if profile == setting['name'] and name in registry:
                registry[name] = dict(registry[name], read_only=(
                    setting['value'] != value))

    def _worker_goes_on(self, node):
        """A read of a node an abort's worker holds: one read less."""
        if node['reservation_reads'] > 0:
            node['reservation_reads'] -= 1
            if not node['reservation_reads']:
                node['reservation'] = None

    def _servicing_goes_on(self, node):
        """A read of a node under servicing: one read less to wait, and
        the steps' effect at the end."""
        if node['provision_state'] != 'servicing':
            return
        if node['service_reads_left'] > 0:
            node['service_reads_left'] -= 1
            return
        for step in node['service_steps']:
            if (step['interface'], step['step']) == (
                    'bios', 'apply_configuration') and not (
                    self.bios_ignores_steps):
                for setting in step['args']['settings']:
                    if node['bios'].get(setting['name']) != setting['value']:
                        node['bios'][setting['name']] = setting['value']
                        node['bios_at'][setting['name']] = SERVICED_AT
                    self._unlock(node, setting)
        self.serviced.append((node['name'], node['service_steps']))
        self.set_state(node, 'active', last_error=None)
        # as ironic, which wipes the steps before it writes the end
        self.record(node, 'servicing_end', event='Servicing completed '
                    'successfully with steps=[]')


class FakeNova(FakeService):
    """nova's flavor routes, over dicts."""

    url = 'http://nova.test/v2.1'

    def __init__(self, max_version=(2, 100), page_size=1000):
        # and, as OSC's compute client, what its server create and rebuild
        # call around our hooks
        super().__init__(compute_proxy.Proxy, max_version, page_size,
                         PROXY_SURFACE + ('find_flavor', 'find_server',
                                          'rebuild_server'))
        self.flavors = {}
        self.servers = {}
        self.actions = {}
        # the credentials are the servers' own project's (an admin of it):
        # nova ignores their lock of a locked server
        self.locks_as_owner = False
        self.no_valid_host = False
        self.confirm_error = None   # a failed confirmation's event details
        self.confirm_leaves = 'ACTIVE'  # the status a confirmation leaves
        # how many reads of the server a resize shows under way (-1: it
        # never ends)
        self.resize_reads = 0
        self.hypervisors = {'fake-compute': 'fake'}
        self.access = {}            # {flavor ID: [project IDs]}
        # {server ID: [(status, task_state)]}: what each read of the
        # server shows next, the last one staying
        self.transitions = {}
        # a project-scoped token's project: it sees its own servers only
        self.project = None
        # the admin's own project: what a listing without all_tenants shows
        self.admin_project = 'project-1'

    def add_flavor(self, name, extra_specs=None, description=None,
                   public=True):
        flavor = {'id': str(uuid.uuid4()), 'name': name, 'vcpus': 1,
                  'ram': 512, 'disk': 1, 'OS-FLV-EXT-DATA:ephemeral': 0,
                  'swap': '', 'description': description,
                  'os-flavor-access:is_public': public,
                  'extra_specs': dict(extra_specs or {})}
        if not public:
            self.access[flavor['id']] = []
        self.flavors[flavor['id']] = flavor
        return flavor

    def add_server(self, name, flavor, status='ACTIVE', metadata=None,
                   hypervisor='fake-compute', image=None):
        server = {'id': str(uuid.uuid4()), 'name': name, 'status': status,
                  'image': {'id': image} if image else '',
                  'OS-EXT-STS:task_state': None, 'tenant_id': 'project-1',
                  'locked': False, 'locked_reason': None, 'locked_by': None,
                  'OS-EXT-SRV-ATTR:hypervisor_hostname': hypervisor,
                  'metadata': dict(metadata or {}),
                  'created': '2026-12-01T09:00:00Z',
                  'flavor': self.embedded(flavor)}
        self.servers[server['id']] = server
        return server

    @staticmethod
    def embedded(flavor):
        """A flavor as a server embeds it (compute API 2.47)."""
        return {'original_name': flavor['name'], 'vcpus': flavor['vcpus'],
                'ram': flavor['ram'], 'disk': flavor['disk'],
                'ephemeral': flavor['OS-FLV-EXT-DATA:ephemeral'],
                'swap': int(flavor['swap'] or 0),
                'extra_specs': dict(flavor['extra_specs'])}

    def refuse_version(self, microversion):
        return response(406, {'computeFault': {
            'code': 406, 'message': 'Version %s is not supported by the '
            'API. Minimum is 2.1 and maximum is %d.%d.'
            % ((microversion,) + self.max_version)}},
            url='http://nova.test/v2.1/flavors')

    def route(self, method, segments, query, json, microversion):
        if segments[0] == 'servers':
            return self._servers(method, segments[1:], query, json)
        if segments == ['os-hypervisors', 'detail']:
            pattern = query.get('hypervisor_hostname_pattern', '')
            return response(200, {'hypervisors': [
                {'hypervisor_hostname': name, 'hypervisor_type': kind}
                for name, kind in self.hypervisors.items()
                if pattern in name]})
        if segments == ['flavors'] and method == 'POST':
            return self._create_flavor(json['flavor'])
        if segments[2:] == ['os-flavor-access']:
            return response(200, {'flavor_access': [
                {'flavor_id': segments[1], 'tenant_id': t}
                for t in self.access[segments[1]]]})
        if segments[2:] == ['action']:
            if 'removeTenantAccess' in json:
                self.access[segments[1]].remove(
                    json['removeTenantAccess']['tenant'])
            else:
                self.access[segments[1]].append(
                    json['addTenantAccess']['tenant'])
            return response(200, {})
        if segments == ['flavors'] and method == 'GET':
            return response(200, {'flavors': [
                {'id': f['id'], 'name': f['name']} for f in sorted(
                    self.flavors.values(), key=lambda f: f['id'])]})
        if segments[:2] == ['flavors', 'detail']:
            ordered = sorted(self.flavors.values(), key=lambda f: f['id'])
            if 'name' in query:     # a regex, from 2.102
                ordered = [f for f in ordered
                           if re.search(query['name'], f['name'])]
            if 'marker' in query:
                ordered = [f for f in ordered if f['id'] > query['marker']]
            page = {'flavors': copy.deepcopy(ordered[:self.page_size])}
            if len(ordered) > self.page_size:
                page['flavors_links'] = [{'rel': 'next', 'href': (
                    'http://nova.test/v2.1/flavors/detail?is_public=None&'
                    'marker=%s' % ordered[self.page_size - 1]['id'])}]
            return response(200, page)
        flavor = self.flavors.get(segments[1])
        if flavor is None:
            return error(404, 'Flavor %s could not be found.' % segments[1])
        if method == 'GET' and len(segments) == 2:
            return response(200, {'flavor': copy.deepcopy(flavor)})
        if method == 'GET':
            return response(200, {'extra_specs': dict(flavor['extra_specs'])})
        if method == 'POST':
            flavor['extra_specs'].update(json['extra_specs'])
            return response(200, {'extra_specs': json['extra_specs']})
        if method == 'DELETE':
            if segments[3] not in flavor['extra_specs']:
                return error(404, 'Flavor %s has no extra specs with key '
                             '%s.' % (segments[1], segments[3]))
            del flavor['extra_specs'][segments[3]]
            return response(200)
        return error(405, method)


    def _create_flavor(self, body):
        if any(f['name'] == body['name'] for f in self.flavors.values()):
            return error(409, 'Flavor with name %s already exists.'
                         % body['name'])
        flavor = self.add_flavor(body['name'],
                                 description=body.get('description'),
                                 public=body['os-flavor-access:is_public'])
        flavor.update(vcpus=body['vcpus'], ram=body['ram'],
                      disk=body['disk'], swap=body['swap'] or '',
                      **{'OS-FLV-EXT-DATA:ephemeral':
                         body['OS-FLV-EXT-DATA:ephemeral']})
        return response(200, {'flavor': copy.deepcopy(flavor)})

    def listed_project(self, query):
        """The project a listing shows (None: every one): a project
        token's own; an admin's own, unless all_tenants."""
        if self.project or query.get('all_tenants'):
            return self.project
        return self.admin_project

    def _servers(self, method, rest, query, body):
        if rest == ['detail']:
            name = query.get('name', '').strip('^$').replace('\\', '')
            return response(200, {'servers': [
                copy.deepcopy(s) for s in self.servers.values()
                if (s['name'] == name or 'name' not in query)
                and query.get('project_id') in (None, s['tenant_id'])
                and self.listed_project(query) in (None, s['tenant_id'])]})
        server = self.servers.get(rest[0])
        if server is None or self.project not in (None, server['tenant_id']):
            return error(404, 'Instance %s could not be found.' % rest[0])
        if len(rest) == 1:
            if self.transitions.get(server['id']):
                shown = self.transitions[server['id']]
                server['status'], server['OS-EXT-STS:task_state'] = (
                    shown.pop(0) if len(shown) > 1 else shown[0])
            return response(200, {'server': copy.deepcopy(server)})
        if rest[1] == 'metadata' and method == 'DELETE':
            if server['metadata'].pop(rest[2], None) is None:
                return error(404, 'Metadata item was not found')
            return response(204)
        if rest[1] == 'metadata':
            server['metadata'].update(body['metadata'])
            return response(200, {'metadata': server['metadata']})
        if rest[1:] == ['os-instance-actions']:
            return response(200, {'instanceActions': copy.deepcopy([
                a for a in reversed(self.actions.values())
                if a['instance_uuid'] == server['id']])})
        if rest[1] == 'os-instance-actions':
            return response(200, {'instanceAction': copy.deepcopy(
                self.actions[rest[2]])})
        return self._action(server, body)

    def locks(self, server):
        """The lock and unlock actions of a server, in their order."""
        return [a['action'] for a in self.actions.values()
                if a['instance_uuid'] == server['id']
                and a['action'] in ('lock', 'unlock')]

    def _lock(self, server, body, action):
        if 'lock' in body:
            action['action'] = 'lock'
            server.update(locked=True, locked_by='admin',
                          locked_reason=(body['lock'] or {}).get(
                              'locked_reason'))
        else:
            action['action'] = 'unlock'
            server.update(locked=False, locked_by=None, locked_reason=None)

    def _action(self, server, body):
        request_id = 'req-%s' % uuid.uuid4()
        action = {'request_id': request_id, 'events': [],
                  'instance_uuid': server['id'], 'message': None}
        if 'resize' in body:
            if server['status'] != 'ACTIVE':
                return error(409, 'Cannot resize in vm_state %s'
                             % server['status'].lower())
            action['action'] = 'resize'
            if self.no_valid_host:
                # nova answers 202, then gives up: the event says why
                action['events'].append({
                    'event': 'conductor_migrate_server', 'result': 'Error',
                    'details': 'No valid host was found. '})
            else:
                target = self.flavors[body['resize']['flavorRef']]
                server['flavor'] = self.embedded(target)
                server['status'] = 'VERIFY_RESIZE'
                self.transitions.pop(server['id'], None)
                if self.resize_reads:
                    under_way = [('RESIZE', 'resize_migrating')]
                    self.transitions[server['id']] = under_way * abs(
                        self.resize_reads) + (
                        [('VERIFY_RESIZE', None)]
                        if self.resize_reads > 0 else [])
        elif 'confirmResize' in body:
            if server['status'] != 'VERIFY_RESIZE':
                return error(400, 'Instance has not been resized.')
            action['action'] = 'confirmResize'
            if self.confirm_error:
                # nova answers 202; the compute host fails it, and the
                # server stays in VERIFY_RESIZE
                action['message'] = 'Error'
                action['events'].append({
                    'event': 'compute_confirm_resize', 'result': 'Error',
                    'details': self.confirm_error})
            else:
                server['status'] = self.confirm_leaves
                self.transitions.pop(server['id'], None)
        elif 'lock' in body and server['locked'] and self.locks_as_owner:
            # as nova: the server's own project locks it only while it is
            # unlocked; a lock of a locked server is answered, not recorded
            resp = response(202)
            resp.headers['x-openstack-request-id'] = request_id
            return resp
        elif 'lock' in body or 'unlock' in body:
            self._lock(server, body, action)
        self.actions[request_id] = action
        resp = response(202)
        resp.headers['x-openstack-request-id'] = request_id
        return resp


class FakePlacement(FakeService):
    """The resource providers of servers' allocations, over dicts."""

    url = 'http://placement.test'

    def __init__(self):
        super().__init__(placement_proxy.Proxy, (1, 39), 1000)
        self.providers = {}
        self.allocations = {}
        self.nova_copies_from = None
        self.forbidden = False      # as placement answers a member

    def copy_traits_like_nova(self, ironic, after_polls=1):
        """Listings by trait after the first ``after_polls`` find the
        traits of the ironic nodes of the same UUIDs copied, as nova's
        periodic task copies them (a while after the writes)."""
        self.nova_copies_from = ironic
        self.polls_before_copy = after_polls

    def _copy_traits(self):
        if self.nova_copies_from is None:
            return
        self.polls_before_copy -= 1
        if self.polls_before_copy >= 0:
            return
        for node_uuid, node in self.nova_copies_from.nodes.items():
            if node_uuid in self.providers:
                self.providers[node_uuid]['traits'] = list(node['traits'])

    def add_provider(self, name, traits=(), uuid_=None, reserved=0,
                     resource_class='VCPU'):
        provider = {'uuid': uuid_ or str(uuid.uuid4()), 'name': name,
                    'traits': list(traits),
                    'inventories': {resource_class: {'total': 1,
                                                     'reserved': reserved}}}
        self.providers[provider['uuid']] = provider
        return provider

    def allocate(self, consumer, provider, resources):
        self.allocations[consumer] = {
            provider['uuid']: {'resources': dict(resources)}}

    def used(self, provider, resource_class):
        return sum(held['resources'].get(resource_class, 0)
                   for allocation in self.allocations.values()
                   for uuid, held in allocation.items()
                   if uuid == provider['uuid'])

    def known_traits(self):
        return {t for p in self.providers.values() for t in p['traits']}

    def _unknown(self, traits):
        unknown = sorted(set(traits) - self.known_traits())
        if unknown:
            return response(400, {'errors': [{
                'status': 400, 'title': 'Bad Request',
                'detail': 'No such trait(s): %s.' % ', '.join(unknown)}]})
        return None

    def _candidates(self, query):
        wanted = {rc: int(n) for rc, n in (
            item.split(':') for item in query['resources'].split(','))}
        traits = [t for t in query.get('required', '').split(',') if t]
        required = {t for t in traits if not t.startswith('!')}
        forbidden = {t[1:] for t in traits if t.startswith('!')}
        refused = self._unknown(required | forbidden)
        if refused:
            return refused
        summaries = {}
        for provider in self.providers.values():
            inventories = provider['inventories']
            free = all(
                rc in inventories and inventories[rc]['total']
                - inventories[rc]['reserved'] - self.used(provider, rc) >= n
                for rc, n in wanted.items())
            have = set(provider['traits'])
            if free and required <= have and not forbidden & have:
                summaries[provider['uuid']] = {'traits': sorted(have)}
        return response(200, {'allocation_requests': [],
                              'provider_summaries': summaries})

    def route(self, method, segments, query, json, microversion):
        if self.forbidden:
            return error(403, 'Access was denied to this resource.')
        if segments[0] == 'allocations':
            return response(200, {'allocations': copy.deepcopy(
                self.allocations.get(segments[1], {}))})
        if segments[0] == 'allocation_candidates':
            return self._candidates(query)
        if segments == ['resource_providers']:
            if 'required' in query:
                self._copy_traits()
                refused = self._unknown([query['required']])
                if refused:
                    return refused
            return response(200, {'resource_providers': [
                {'uuid': p['uuid'], 'name': p['name']}
                for p in self.providers.values()
                if query.get('required') in (None, *p['traits'])]})
        provider = self.providers[segments[1]]
        if len(segments) == 2:
            return response(200, {'uuid': provider['uuid'],
                                  'name': provider['name']})
        return response(200, {segments[2]: copy.deepcopy(
            provider[segments[2]])})


class FakeGlance(FakeService):
    """glance's image show: properties as top-level keys."""

    url = 'http://glance.test/v2'

    def __init__(self):
        # and what OSC's server create calls of its image client
        super().__init__(image_proxy.Proxy, (2, 0), 1000,
                         PROXY_SURFACE + ('find_image',))
        self.discovered = False     # glance has no microversions
        self.images = {}
        # property protections: the prefixes only an admin may create
        # (the shipped hardening's), and the roles of the token
        self.protected = ('trait:', 'deploy-config:')
        self.roles = {'admin', 'member', 'reader'}

    def add_image(self, name, **properties):
        image = dict(properties, id=str(uuid.uuid4()), name=name)
        image['self'] = '/v2/images/%s' % image['id']     # as glance
        self.images[image['id']] = image
        return image

    def _create(self, body):
        """glance's order: property protections, then the store (a
        duplicate ID)."""
        if 'admin' not in self.roles and any(
                key.startswith(self.protected) for key in body):
            return error(403, 'Attribute is reserved.')
        if body.get('id') in self.images:
            return error(409, 'Image ID %s already exists!' % body['id'])
        return response(201, self.add_image(body.pop('name', None), **body))

    def route(self, method, segments, query, json, microversion):
        if segments == ['images'] and method == 'POST':
            return self._create(dict(json))
        if segments == ['images']:
            limit = int(query.get('limit', 0)) or None
            return response(200, {'images': copy.deepcopy(
                [i for i in self.images.values()
                 if query.get('name') in (None, i['name'])][:limit])})
        image = self.images.get(segments[1])
        if image is None:
            return error(404, 'No image found with ID %s' % segments[1])
        if method == 'PATCH':
            for op in json:
                key = op['path'][1:]
                if op['op'] == 'remove':
                    del image[key]
                elif (op['op'] == 'add') == (key in image):
                    return error(409 if op['op'] == 'add' else 404,
                                 'bad %s of %s' % (op['op'], key))
                else:
                    image[key] = op['value']
        return response(200, copy.deepcopy(image))


def grant(template, *projects):
    """Record, as ``project deploy-config set`` does, the template's grant
    to these projects, of its content now."""
    template['extra'][grants.GRANTED] = {
        p: grants.content_digest(template) for p in projects}


class FakeKeystone:
    """The projects, domains, users and roles keystone has, behind an
    autospec'd identity proxy."""

    def __init__(self, projects, domains=None):
        # {ID: name, or (name, domain ID)}
        self.projects = {i: p if isinstance(p, tuple) else (p, 'default')
                         for i, p in projects.items()}
        self.domains = dict(domains or {'default': 'Default'})
        self.users = {}                     # {ID: (name, project, role)}
        self.removed = []                   # the names of users deleted
        self.refuse_assignment = False
        self.proxy = proxy_double(identity_proxy.Proxy, (
            'get_project', 'projects', 'find_domain', 'find_role',
            'create_user', 'assign_project_role_to_user', 'delete_user'))
        self.proxy.get_project.side_effect = self.get_project
        self.proxy.projects.side_effect = self.listed
        self.proxy.find_domain.side_effect = self.find_domain
        self.proxy.find_role.side_effect = self.find_role
        self.proxy.create_user.side_effect = self.create_user
        self.proxy.assign_project_role_to_user.side_effect = self.assign
        self.proxy.delete_user.side_effect = self.delete_user

    def project(self, project_id):
        found = mock.Mock(spec=['id', 'name', 'domain_id'], id=project_id)
        # not the mock's name
        found.name, found.domain_id = self.projects[project_id]
        return found

    def get_project(self, project_id):
        if project_id not in self.projects:
            raise sdk_exceptions.NotFoundException('No Project %s'
                                                   % project_id)
        return self.project(project_id)

    def find_domain(self, name_or_id, ignore_missing=True):
        for domain_id, name in self.domains.items():
            if name_or_id in (domain_id, name):
                return mock.Mock(spec=['id', 'name'], id=domain_id)
        raise sdk_exceptions.ResourceNotFound('No Domain %s' % name_or_id)

    def listed(self, name=None, domain_id=None, **kwargs):
        return [self.project(i) for i, (n, d) in self.projects.items()
                if name in (None, n) and domain_id in (None, d)]

    @staticmethod
    def _named(kind, name):
        found = mock.Mock(spec=['id', 'name'], id='%s-%s' % (kind, name))
        found.name = name
        return found

    def find_role(self, name, ignore_missing=True):
        return self._named('role', name)

    def create_user(self, name, password, domain_id, description):
        user = self._named('user', name)
        self.users[user.id] = (name, None, None)
        return user

    def assign(self, project, user, role):
        if self.refuse_assignment:
            raise sdk_exceptions.ForbiddenException('role assignment')
        self.users[user.id] = (user.name, project.id, role.name)

    def delete_user(self, user, ignore_missing=True):
        self.removed.append(self.users.pop(user.id)[0])


class TestCommand(base.TestCommand):
    """A command test with the fake services behind our real Clients."""

    def setUp(self):
        super().setUp()
        # the toggle records this machine's boots: in the test's own place
        self.useFixture(fixtures.EnvironmentVariable(
            'XDG_STATE_HOME', self.useFixture(fixtures.TempDir()).path))
        # a write the fakes refuse with 409 is retried: without the pauses
        self.useFixture(fixtures.MockPatch(
            'osc_deploy_config.services.rest.RETRY_SECONDS', 0.001))
        self.fake_stderr = io.StringIO()
        self.app.stderr = self.fake_stderr
        self.ironic = FakeIronic()
        # the Connection's attributes by name (its proxies are doubled)
        self.conn = mock.NonCallableMock(spec=connection.Connection)
        # what our code reads of a Connection's CloudRegion
        self.conn.config = mock.Mock(spec=['config', 'get_interface',
                                           'get_region_name'])
        self.conn.config.config = {'auth_type': 'password',
                                   'auth': {'system_scope': 'all'}}
        self.conn.baremetal = self.ironic.proxy
        self.nova = FakeNova()
        self.conn.compute = self.nova.proxy
        self.placement = FakePlacement()
        self.conn.placement = self.placement.proxy
        self.glance = FakeGlance()
        self.conn.image = self.glance.proxy
        self.keystone = FakeKeystone({'project-1': 'demo',
                                      'project-2': 'other'})
        self.conn.identity = self.keystone.proxy
        self.conn.session = mock.create_autospec(session.Session,
                                                 instance=True)
        self.with_roles('admin', 'member', 'reader')
        # what our code reads of OSC's ClientManager: its connection and
        # the cloud's settings (clouds.yaml, --os-* options)
        self.cloud_settings = {}
        instance = mock.Mock(spec=['sdk_connection', 'get_configuration'],
                             sdk_connection=self.conn)
        instance.get_configuration.side_effect = lambda: dict(
            self.cloud_settings)
        self.app.client_manager.deploy_config = clients.Clients(instance)

    def deploy_on_node(self, server, node_name, traits, bios):
        """Deploy a server on a new ironic node, as nova and placement
        record it: the node's provider (reserved=1) holds the server's
        allocation of its resource class."""
        node = self.ironic.add_node(node_name, traits,
                                    instance_uuid=server['id'])
        node['bios'] = dict(bios)
        # ironic makes the instance's project the node's lessee
        node['lessee'] = server['tenant_id']
        # nova's ironic driver names a node's hypervisor by its UUID
        self.nova.servers[server['id']][
            'OS-EXT-SRV-ATTR:hypervisor_hostname'] = node['uuid']
        self.nova.hypervisors[node['uuid']] = 'ironic'
        provider = self.placement.add_provider(
            node['uuid'], traits=traits, uuid_=node['uuid'], reserved=1,
            resource_class='CUSTOM_BAREMETAL_GOLD')
        self.placement.allocate(server['id'], provider,
                                {'CUSTOM_BAREMETAL_GOLD': 1})
        return node

    def with_roles(self, *roles):
        """The roles the token OSC holds carries (keystoneauth's
        AccessInfo, read without a request)."""
        self.conn.session.auth = mock.Mock(spec=['get_access'])
        self.conn.session.auth.get_access.return_value = mock.Mock(
            spec=['role_names', 'project_name'], role_names=list(roles),
            project_name=None)

    def without_system_role(self):
        """Credentials bound to a project whose user has no role on the
        system: keystone refuses the system-scoped token (SDK boundary)."""
        self.conn.config.config['auth'] = {'project_name': 'admin'}
        self.conn.session._discovery_cache = {}
        refused = mock.create_autospec(connection.Connection, instance=True)
        refused.config = mock.Mock(spec=['config'], config={})
        refused.authorize.side_effect = ksa_exceptions.Unauthorized()
        self.useFixture(fixtures.MockPatch('openstack.connect',
                                           autospec=True,
                                           return_value=refused))

    def as_project(self, *roles, project='project-1'):
        """Credentials of a user of ``project`` with these roles, and no
        role on the system (project-scoped tokens, as ironic and nova judge
        them)."""
        self.without_system_role()
        self.with_roles(*roles)
        self.conn.current_project_id = project
        self.ironic.project = project
        self.ironic.project_roles = set(roles)
        self.nova.project = project
        # a new command: clients built anew, as in a new process
        self.app.client_manager.deploy_config = clients.Clients(mock.Mock(
            spec=['sdk_connection'], sdk_connection=self.conn))

    def run_command(self, command_class, args, stdin=None):
        cmd = command_class(self.app, None)
        if stdin is not None:
            self.app.stdin = stdin
        parsed = self.check_parser(cmd, args, [])
        return cmd.take_action(parsed)


def intercept(service, hook):
    """Let ``hook(path, method, json)`` see each request to the fake
    ``service`` first: its answer, or None for the service's own."""
    own = service.proxy.request.side_effect

    def request(path, method, json=None, **kwargs):
        answer = hook(path, method, json)
        if answer is None:
            answer = own(path, method, json=json, **kwargs)
        return answer

    service.proxy.request.side_effect = request
