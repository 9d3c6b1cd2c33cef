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

"""A fault-injecting HTTP proxy in front of one real service.

A cloud entry with ``<service>_endpoint_override`` pointing at the proxy
sends a command's requests for that service through it.  The proxy
forwards each request, unless ``fault(method, path, body)`` says
otherwise: an int is answered as that status without forwarding; a
``RetryAfter`` as its status, with its ``Retry-After``; ``HANG`` holds the
request until the proxy closes (to kill the client mid-way); a
``threading.Event`` holds it until the event is set, then forwards it;
a ``Trickle`` forwards it, and sends the answer's body ``chunk`` bytes
every ``pause`` seconds (``TRICKLE``: a byte a second); a
``Rewrite`` forwards it, and answers with the body its function returns
for the service's.
"""

import collections
import http.client
import http.server
import threading
import urllib.parse

HANG = 'hang'
Trickle = collections.namedtuple('Trickle', ['chunk', 'pause'])
TRICKLE = Trickle(1, 1.0)
RetryAfter = collections.namedtuple('RetryAfter', ['status', 'seconds'])
Rewrite = collections.namedtuple('Rewrite', ['body'])
_HOP_HEADERS = {'connection', 'keep-alive', 'transfer-encoding',
                'content-length', 'host'}


class FaultProxy:
    def __init__(self, target, fault=None):
        self.target = urllib.parse.urlsplit(target)
        self.fault = fault or (lambda method, path, body: None)
        self.seen = []          # (method, path, status or HANG)
        self._release = threading.Event()
        self._lock = threading.Lock()
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = 'HTTP/1.1'

            def log_message(self, *args):
                pass

            def handle(self):
                try:
                    super().handle()
                except (BrokenPipeError, ConnectionResetError):
                    # the client was killed meanwhile (on purpose)
                    self.close_connection = True

            def handle_one(self):
                length = int(self.headers.get('Content-Length') or 0)
                body = self.rfile.read(length) if length else None
                with proxy._lock:
                    fault = proxy.fault(self.command, self.path, body or b'')
                    proxy.seen.append((self.command, self.path, fault))
                if fault == HANG:
                    proxy._release.wait()
                    self.close_connection = True
                    return
                if isinstance(fault, threading.Event):
                    fault.wait(timeout=600)
                    fault = None
                if isinstance(fault, RetryAfter):
                    self.answer(fault.status, {'Retry-After': str(
                        fault.seconds)}, b'{"error": "injected fault"}')
                    return
                if fault is not None and not isinstance(
                        fault, (Trickle, Rewrite)):
                    self.answer(fault, {}, b'{"error": "injected fault"}')
                    return
                upstream = http.client.HTTPConnection(
                    proxy.target.hostname, proxy.target.port, timeout=60)
                headers = {k: v for k, v in self.headers.items()
                           if k.lower() not in _HOP_HEADERS}
                upstream.request(self.command, self.path, body, headers)
                response = upstream.getresponse()
                body = response.read()
                if isinstance(fault, Rewrite):
                    body = fault.body(body)
                self.answer(response.status, dict(response.getheaders()),
                            body, fault if isinstance(fault, Trickle) else
                            None)
                upstream.close()

            def answer(self, status, headers, body, trickle=None):
                self.send_response(status)
                for key, value in headers.items():
                    if key.lower() not in _HOP_HEADERS:
                        self.send_header(key, value)
                if not any(k.lower() == 'content-type' for k in headers):
                    self.send_header('Content-Type', 'application/json')
                self.send_header('Content-Length', str(len(body)))
                chunk = trickle.chunk if trickle else len(body) or 1
                try:
                    self.end_headers()
                    for at in range(0, len(body), chunk):
                        self.wfile.write(body[at:at + chunk])
                        self.wfile.flush()
                        if trickle and proxy._release.wait(trickle.pause):
                            break
                except (BrokenPipeError, ConnectionResetError):
                    # the client was killed meanwhile (on purpose)
                    self.close_connection = True

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = handle_one

        self._server = http.server.ThreadingHTTPServer(('127.0.0.1', 0),
                                                       Handler)
        self._server.daemon_threads = True
        self.url = 'http://127.0.0.1:%d' % self._server.server_address[1]

    def __enter__(self):
        threading.Thread(target=self._server.serve_forever,
                         daemon=True).start()
        return self

    def __exit__(self, *exc):
        self._release.set()
        self._server.shutdown()
        self._server.server_close()

    def count(self, method, fragment='', forwarded=False):
        """How many requests of ``method`` with ``fragment`` in their path
        the proxy saw (``forwarded``: only those it passed on)."""
        with self._lock:
            return sum(1 for m, p, fault in self.seen
                       if m == method and fragment in p and not (
                           forwarded and not _passed_on(fault)))


def _passed_on(fault):
    return fault is None or isinstance(fault, (threading.Event, Trickle,
                                               Rewrite))
