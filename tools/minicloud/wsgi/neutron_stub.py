"""The mini cloud's only stand-in: a Networking API where every list is empty.

nova lists ports and extensions even for servers booted with
``--nic none``; empty collections are all it needs.  Every request is logged.
"""
import json
import sys


def _reply(start_response, status, body):
    data = json.dumps(body).encode()
    start_response(status, [('Content-Type', 'application/json'),
                            ('Content-Length', str(len(data)))])
    return [data]


def application(environ, start_response):
    method = environ['REQUEST_METHOD']
    path = environ.get('PATH_INFO', '/')
    print('neutron-stub %s %s' % (method, path), file=sys.stderr, flush=True)
    parts = [p for p in path.split('/') if p]
    if parts and parts[-1].endswith('.json'):
        parts[-1] = parts[-1][:-len('.json')]
    if not parts:
        host = environ.get('HTTP_HOST', '127.0.0.1')
        return _reply(start_response, '200 OK', {'versions': [{
            'id': 'v2.0', 'status': 'CURRENT',
            'links': [{'rel': 'self', 'href': 'http://%s/v2.0/' % host}]}]})
    if parts[0] == 'v2.0' and method == 'GET' and len(parts) <= 2:
        if len(parts) == 1:
            return _reply(start_response, '200 OK', {'resources': []})
        return _reply(start_response, '200 OK',
                      {parts[1].replace('-', '_'): []})
    return _reply(start_response, '404 Not Found', {'NeutronError': {
        'type': 'NotFound', 'detail': '',
        'message': 'neutron stub has no %s %s' % (method, path)}})
