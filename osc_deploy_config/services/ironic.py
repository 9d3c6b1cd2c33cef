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

"""A thin wrapper of ironic's REST API over the SDK's baremetal proxy.

Every request names its microversion (from ``versions``), so the number and
shape of requests is exactly what a command needs, whatever version the
proxy was pinned to.  Objects are plain dicts, as the API returns them.

Under ironic's default secure RBAC most of this API is for system-scoped
tokens only: a refusal (403) says in one line what is missing, knowing the
scope the wrapper was given (``clients.Clients.ironic``).
"""

import copy
import urllib.parse

from osc_lib import exceptions

from osc_deploy_config.services import rest
from osc_deploy_config.services import versions

# What each purpose reads of a node, in one listing or one read.
TAGGING_FIELDS = ('uuid', 'name', 'traits', 'maintenance', 'retired',
                  'provision_state', 'instance_uuid', 'instance_info',
                  'resource_class', 'bios_interface', 'properties',
                  'management_interface')
PROVISION_FIELDS = ('uuid', 'name', 'provision_state',
                    'target_provision_state', 'provision_updated_at',
                    'maintenance', 'maintenance_reason', 'last_error',
                    'traits', 'properties', 'extra', 'owner',
                    'resource_class', 'raid_config', 'lessee',
                    'bios_interface')
# What a servicing's wait reads of the node, each poll.
POLL_FIELDS = ('uuid', 'name', 'provision_state', 'target_provision_state',
               'provision_updated_at', 'last_error')
# What a report reads of a node: the hardware, and the toggle record.
HARDWARE_FIELDS = ('uuid', 'name', 'raid_config', 'properties', 'extra',
                   'resource_class')
# How many nodes' BIOS registries are read at once.
READERS = 8
# What deciding about a template's config and steps reads of it; with,
# where sets are made, whether one was just written
# (``config_sets.just_written``).
TEMPLATE_STEP_FIELDS = ('uuid', 'name', 'steps')
TEMPLATE_WRITE_FIELDS = TEMPLATE_STEP_FIELDS + ('created_at', 'updated_at')
# Why ironic refuses a project-scoped token under its default policy, and
# what to do: the end of every line that says so.
SYSTEM_ROLE_HINT = (
    'these credentials have no role on the system. Use a cloud entry with '
    '"system_scope: all", or ask for a system role (openstack role add '
    '--system all --user USER admin)')
_VERBS = {'GET': 'list', 'POST': 'create', 'PATCH': 'update',
          'PUT': 'change', 'DELETE': 'delete'}
_NODE_PARTS = {'traits': 'node traits', 'bios': 'node BIOS settings',
               'states': 'node states'}


class Refused(exceptions.CommandError):
    """Ironic's policy refused a request (403), said in one line."""


class Runbooks:
    """Ironic's runbooks (API 1.92; gated by their own traits from 1.112):
    a project's grant, and the servicing a project's manager runs with
    them.  Part of ``Ironic``."""

    def runbooks(self, project=None):
        """Every runbook these credentials see, in detail (a project's
        own and the public ones), in as few requests as the server allows;
        ``project``: only those it owns.  Filtered here: ironic 39 takes
        its own ``project`` filter for a boolean."""
        found = self._pages('/runbooks?detail=True', 'runbooks',
                            versions.PROJECT_RUNBOOKS)
        if project is None:
            return found
        return [r for r in found if r.get('owner') == project]

    def create_runbook(self, body):
        return self._request('POST', '/runbooks', versions.PROJECT_RUNBOOKS,
                             json=body)

    def patch_runbook(self, ident, patch):
        return self._request('PATCH', '/runbooks/%s' % ident,
                             versions.PROJECT_RUNBOOKS, json=patch)

    def set_runbook_traits(self, ident, traits):
        """Replace the runbook's traits (the nodes it may run on carry one
        of them)."""
        self._request('PUT', '/runbooks/%s/traits' % ident,
                      versions.PROJECT_RUNBOOKS,
                      json={'traits': list(traits)})

    def delete_runbook(self, ident):
        """Idempotent: a runbook already gone is no error."""
        from openstack import exceptions as sdk_exceptions

        try:
            self._request('DELETE', '/runbooks/%s' % ident,
                          versions.PROJECT_RUNBOOKS)
        except sdk_exceptions.NotFoundException:
            pass

    def service_with_runbook(self, node, runbook):
        """Service an active node with a runbook's steps: ironic checks
        that the caller may use the runbook, and that the node carries one
        of its traits."""
        self._request('PUT', '/nodes/%s/states/provision' % node,
                      versions.PROJECT_RUNBOOKS,
                      json={'target': 'service', 'runbook': runbook})


class NodeHistory:
    """A node's history (API 1.78): what proves a servicing ran.  Part of
    ``Ironic``."""

    def history_since(self, node, since, page=50):
        """The node's history events after ``since`` (and the first at or
        before it), newest first: pages of ``page`` until one reaches
        back to it, or the history ends."""
        from osc_deploy_config.domain.toggle import toggle_record

        found, marker = [], ''
        while True:
            events = self._request(
                'GET', '/nodes/%s/history?detail=True&sort_dir=desc&limit=%d'
                '%s' % (node, page, marker), versions.NODE_HISTORY)['history']
            found += events
            if len(events) < page or not toggle_record.at_or_after(
                    events[-1].get('created_at'), since):
                return found
            marker = '&marker=%s' % events[-1]['uuid']

    def histories_since(self, since_by_node):
        """{node: ``history_since``} of many nodes, READERS at a time."""
        nodes = list(since_by_node)
        if not nodes:
            return {}
        return dict(zip(nodes, rest.concurrently(
            lambda n: self.history_since(n, since_by_node[n]), nodes,
            min(READERS, len(nodes))), strict=True))

    def node_history(self, node, limit=20):
        """The node's latest history events, in detail, newest first."""
        return self._request(
            'GET', '/nodes/%s/history?detail=True&sort_dir=desc&limit=%d'
            % (node, limit), versions.NODE_HISTORY)['history']


class Leases:
    """Which project each node with an instance is leased to (API 1.65),
    and the probe of its ``instance_info`` that ``project deploy-config
    check`` makes.  Part of ``Ironic``."""

    def leases(self):
        """Every node with an instance, its instance and lessee (API
        1.65), in as few requests as the server allows."""
        return [n for n in self._list('nodes', {
            'fields': 'uuid,name,instance_uuid,lessee'}, limit=0,
            feature=versions.NODE_LESSEE) if n.get('instance_uuid')]

    def probe_instance_info(self, node, patch):
        """The HTTP status of a node PATCH of ``instance_info`` (a probe
        of ``domain.hardening``, built to write nothing)."""
        return self.probe('PATCH', '/nodes/%s' % node, json=patch)[0]

    def probe_provision(self, node, body):
        """(status, text) of a provision request built to write nothing
        (``domain.hardening``: its rescue password for another target)."""
        return self.probe('PUT', '/nodes/%s/states/provision' % node,
                                 json=body)

    def probe_runbook_create(self):
        """(status, text) of a runbook create with an empty body: ironic
        checks its policy, then refuses the body."""
        return self.probe('POST', '/runbooks', json={})

    def owners(self):
        """Every node's owner, lessee and traits (API 1.65)."""
        return self._list('nodes', {
            'fields': 'uuid,name,instance_uuid,lessee,owner,traits'},
            limit=0, feature=versions.NODE_LESSEE)


class Range:
    """What this ironic's API range tells: its maximum, the features it
    reaches, its release.  Part of ``Ironic``."""

    def _endpoint(self):
        """The SDK's version discovery of this ironic; None where it
        cannot tell."""
        try:
            return self.proxy.get_endpoint_data()
        except Exception:   # noqa: BLE001 - not known
            return None

    def maximum(self):
        """This ironic's API maximum ((major, minor)); None when discovery
        does not tell."""
        return versions.maximum(self._endpoint())

    def reaches(self, feature):
        """Whether this ironic's range reaches a feature's version; None
        when discovery does not tell."""
        return versions.reaches(self._endpoint(), feature)

    def release(self):
        """What this ironic's redfish BIOS interface does
        (``ironic_releases.Release``), by its API maximum."""
        from osc_deploy_config.domain.hardware import ironic_releases

        return ironic_releases.of_api(self.maximum())


class Ironic(Range, Runbooks, NodeHistory, Leases, rest.Api):
    """``scope``: 'system' or 'project', the token's; it names what a
    refusal lacks."""

    version_root = '/v1'
    range_known = True

    def __init__(self, proxy, *features, scope='system'):
        super().__init__(proxy, *features)
        self.scope = scope
        self.registries = None      # Clients.remember_registries

    def refuse(self, method, path, response):
        """A 403 in one line: what was refused, and what is missing."""
        from openstack import exceptions as sdk_exceptions

        if response.status_code != 403:
            return
        action = describe_request(method, path)
        if self.scope == 'project':
            raise Refused(
                'Ironic refused to %s (403): its default policy allows it '
                'to a system-scoped token only, and %s.'
                % (action, SYSTEM_ROLE_HINT))
        try:
            sdk_exceptions.raise_from_response(response)
        except sdk_exceptions.HttpException as exc:
            detail = exc.details or str(exc)
        raise Refused('Ironic refused to %s (403): %s' % (action, detail))

    def warn_if_nodes_hidden(self, nodes, log):
        """An empty node list may only mean the project scope sees none."""
        if not nodes and self.scope == 'project':
            log.warning('No node is visible to a project-scoped token; '
                        "under ironic's default policy only a system-scoped "
                        'one sees them all.')

    def retriable_writes(self, method, path):
        """A node write refused with 409 found the node locked by the
        conductor: the SDK retries it (5 times by default).  Elsewhere a
        409 is a real conflict (a name taken), never to retry."""
        return [409] if path.startswith('/nodes/') else []

    def _list(self, collection, params, limit=None, feature=None):
        """A listing with these query parameters; ``limit`` None is one
        page of the server's size, 0 every page, N at most N objects."""
        params = {k: v for k, v in params.items() if v is not None}
        if limit:
            params['limit'] = limit
        return self._pages('/%s?%s' % (collection, urllib.parse.urlencode(
            params)), collection, feature, limit=limit)

    def deploy_templates(self, detail=False, fields=None, limit=None,
                         marker=None):
        return self._list('deploy_templates', {
            'detail': 'True' if detail else None,
            'fields': ','.join(fields) if fields else None,
            'marker': marker,
        }, limit, versions.DEPLOY_TEMPLATES)

    def config_templates(self, fields=('uuid', 'name')):
        """templates.ConfigTemplates of every template that realises a
        deploy config: one listing of every page, with these fields and
        ``extra`` (``fields=None``: every field)."""
        from osc_deploy_config.domain.configs import templates

        if fields is not None:
            fields = list(dict.fromkeys([*fields, 'extra']))
        return templates.by_config(self.deploy_templates(
            detail=fields is None, fields=fields, limit=0))

    def deploy_template(self, ident, fields=None):
        query = '?fields=%s' % ','.join(fields) if fields else ''
        return self._request('GET', '/deploy_templates/%s%s' % (
            urllib.parse.quote(ident, safe=''), query))

    def create_deploy_template(self, body):
        return self._request('POST', '/deploy_templates', json=body)

    def patch_deploy_template(self, ident, patch):
        return self._request('PATCH', '/deploy_templates/%s' % (
            urllib.parse.quote(ident, safe='')), json=patch)

    def delete_deploy_template(self, ident):
        self._request('DELETE', '/deploy_templates/%s' % (
            urllib.parse.quote(ident, safe='')))

    # ------------------------------------------------------ nodes

    def nodes(self, fields):
        """Every node, with these fields, in as few requests as the server
        allows (one per page of its maximum size)."""
        return self._list('nodes', {'fields': ','.join(fields)}, limit=0)

    def nodes_in(self, state, fields):
        """Every node in provision state ``state``, with these fields."""
        return self._list('nodes', {'provision_state': state,
                                    'fields': ','.join(fields)}, limit=0)

    def node_of_instance(self, instance_uuid, fields):
        """The node an instance runs on, or None (a virtual instance)."""
        found = self._request('GET', '/nodes?%s' % urllib.parse.urlencode(
            {'instance_uuid': instance_uuid, 'fields': ','.join(fields)}))
        return found['nodes'][0] if found['nodes'] else None

    def node(self, ident, fields):
        return self._request('GET', '/nodes/%s?fields=%s' % (
            ident, ','.join(fields)))

    def bios(self, node):
        """The node's BIOS settings (name, value, created_at, updated_at),
        as ironic last read them from the hardware."""
        return self._request('GET', '/nodes/%s/bios' % node,
                             versions.NODE_BIOS)['bios']

    def bios_registry(self, node):
        """The node's BIOS settings with the registry fields ironic keeps
        of each (``attribute_type``, ``allowable_values``, ...); read once
        where the registries are remembered."""
        if self.registries is not None and node in self.registries:
            return copy.deepcopy(self.registries[node])
        found = self._request('GET', '/nodes/%s/bios?detail=True' % node,
                              versions.NODE_BIOS_REGISTRY)['bios']
        if self.registries is not None:
            self.registries[node] = copy.deepcopy(found)
        return found

    def bios_registries(self, nodes):
        """{node: its detailed BIOS settings} of these nodes (UUIDs or
        names), READERS at a time."""
        nodes = list(nodes)
        if not nodes:
            return {}
        return dict(zip(nodes, rest.concurrently(
            self.bios_registry, nodes, min(READERS, len(nodes))),
            strict=True))

    def service(self, node, steps):
        """Run service steps on an active node (ironic servicing); BIOS
        steps alone with the ramdisk off where the API can say so (1.108),
        which ironic 35.0 otherwise records as booting it.  A step that
        needs the agent (a burn-in) keeps ironic's own choice."""
        body = {'target': 'service', 'service_steps': steps}
        feature = None
        if all(s.get('interface') == 'bios' for s in steps) and (
                self.reaches(versions.SERVICE_WITHOUT_RAMDISK) is not False):
            body['disable_ramdisk'] = True
            feature = versions.SERVICE_WITHOUT_RAMDISK
        self._request('PUT', '/nodes/%s/states/provision' % node, feature,
                      json=body)

    def set_provision_state(self, node, target, **body):
        """Move the node to ``target`` ('manage', 'provide', ...)."""
        self._request('PUT', '/nodes/%s/states/provision' % node,
                      json=dict(body, target=target))

    def clean(self, node, steps):
        """Manual cleaning of a manageable node with these steps, the
        ramdisk disabled (API 1.70): steps that need no agent."""
        self._request('PUT', '/nodes/%s/states/provision' % node,
                      versions.NODE_CLEANING_WITHOUT_RAMDISK,
                      json={'target': 'clean', 'clean_steps': steps,
                            'disable_ramdisk': True})

    def abort(self, node):
        """Abort what the node is doing; from "service failed", back to
        active (ironic 32.0 and later)."""
        self._request('PUT', '/nodes/%s/states/provision' % node,
                      json={'target': 'abort'})

    def set_maintenance(self, node, on, reason=None):
        path = '/nodes/%s/maintenance' % node
        if on:
            self._request('PUT', path, json={'reason': reason})
        else:
            self._request('DELETE', path)

    def patch_node(self, node, patch):
        """Apply a JSON patch to a node (nothing for an empty one); the
        node as ironic has it then, or None."""
        if not patch:
            return None
        return self._request('PATCH', '/nodes/%s' % node, json=patch)

    def add_node_trait(self, node, trait):
        self._request('PUT', '/nodes/%s/traits/%s' % (node, trait))

    def remove_node_trait(self, node, trait):
        """Idempotent: a trait already gone (a concurrent sync removed it)
        is no error."""
        self._delete_item('/nodes/%s/traits/%s' % (node, trait), 'trait')


def describe_request(method, path):
    """What a request does, in words: ``GET /nodes`` -> 'list nodes'."""
    parts = urllib.parse.urlsplit(path).path.strip('/').split('/')
    if parts[0] == 'nodes' and len(parts) > 2:
        return '%s %s' % ('read' if method == 'GET' else 'change',
                          _NODE_PARTS.get(parts[2], 'nodes'))
    verb = 'show' if method == 'GET' and len(parts) > 1 else _VERBS.get(
        method, method.lower())
    return '%s %s' % (verb, parts[0].replace('_', ' '))
