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

"""The REST calls of one service, over an SDK proxy, at the versions the
command's features need (see ``versions``).

Every request has a connect and a read timeout (``Timeouts``: the
cloud's ``deploy_config_request_seconds``, or
``--os-deploy-config-request-seconds``; keystoneauth's own default is to
wait for ever).  A command may bound its reads further by a deadline of
its own (``bounded``: a rollout's --wait-timeout): a read then waits no
longer than the time left, and none starts past it.

A read's timeouts bound its whole answer, its body read, not only each
socket read (a body that trickles never times out a socket read): each
read runs in a thread of its own, waited for that long, and left behind
past it.  A write runs in the caller's thread, within its timeouts for
each socket operation: it is never left running after its line is said.
The token is renewed ahead of any attempt it may not outlive (before
keystoneauth would renew it on the way, unbounded), by one thread at a
time, within the request's bound, and a keystone that does not answer is
named as keystone.

Reads are idempotent: a refused connection or a 503 (a service restarting,
a proxy in front of it) is retried here, not by keystoneauth (which sleeps
any Retry-After, uncapped), with a backoff (0.5 s, doubling) or after the
answer's Retry-After, only where the pause leaves time before the
command's bound and is no longer than a request's read timeout; a read
that timed out, in its headers or its body, is not (a service that
accepts and never answers would only be waited for again).  A write is
retried only where a service says so (``retriable_writes``), never a
create, and never after a timeout: here too, and only where the pause and
the write's whole timeouts end before the command's bound.  Retries are
logged for --debug only
(``v1.cli.demote_keystoneauth_warnings``); a service that stays
unreachable, does not answer in time, or fails a read (5xx) gets one line
naming it and its URL.
"""

import collections
import contextlib
import re
import threading
import time
import urllib.parse

from osc_lib import exceptions as osc_exceptions

from osc_deploy_config.services import versions

READ_RETRIES = 2
# How much longer than its timeouts a request's whole answer is waited
# for: keystoneauth's own timeout, which says which, ends it first.
SLACK_SECONDS = 0.5
# What requests says of a body that stopped coming (a ConnectionError).
READ_TIMED_OUT = 'Read timed out'
# Keystoneauth renews a token this close to its expiry (its
# MIN_TOKEN_LIFE_SECONDS).
TOKEN_MIN_LIFE_SECONDS = 120
WRITE_RETRIES = 5   # as the SDK retries ironic's by default
# The first pause before a refused read is sent again (then doubled).
RETRY_SECONDS = 0.5
# A request's bounds, in seconds: to connect, and to read each answer.
Timeouts = collections.namedtuple('Timeouts', ['connect', 'read'])
DEFAULT_TIMEOUTS = Timeouts(10.0, 60.0)
# Where a cloud entry sets them (its clouds.yaml key, the --os-* option):
# a key that ends in "timeout" the SDK would fold into its api_timeout.
TIMEOUTS_SETTING = 'deploy_config_request_seconds'
SERVICE_NAMES = {
    'baremetal': 'baremetal service (ironic)',
    'compute': 'compute service (nova)',
    'placement': 'placement service',
    'image': 'image service (glance)',
    'identity': 'identity service (keystone)',
}


_SCOPE_REFUSED = 'requires a scope of'
# One token renewal at a time: those waiting find it renewed.
_renewal = threading.Lock()
_URL = re.compile(r'https?://[^/\s:]+(:\d+)?')
_FULL_URL = re.compile(r'https?://\S+')


def relative_link(url, version_root):
    """A service's absolute link (a next page) as a path relative to its
    versioned endpoint: ``http://h/v1/nodes?marker=x`` -> ``/nodes?...``
    for the root ``/v1``."""
    if not url:
        return None
    parts = urllib.parse.urlsplit(url)
    path = parts.path
    at = path.find(version_root + '/')
    if at >= 0:
        path = path[at + len(version_root):]
    return path + ('?' + parts.query if parts.query else '')


class Api:
    """One service's calls, at the version the features need."""

    # The path of the service's versioned endpoint, which its links carry.
    version_root = ''
    # Whether the SDK reads the service's version range when it builds the
    # proxy (openstacksdk 4 does for ironic and placement, not for nova):
    # only then is checking it before a request free of a request.
    range_known = False

    # (connect, read) seconds of each request; Clients sets the cloud's.
    timeouts = DEFAULT_TIMEOUTS
    # The service's scheme, host and port, as its last answer had them.
    root = ''

    def __init__(self, proxy, *features):
        self.proxy = proxy
        self.features = features
        self.version = versions.need(*features)
        self._supported = set()

    def _send(self, method, path, feature=None, **kwargs):
        """One request; the response, or the SDK's exception.  A call of a
        feature of its own names it, and goes at that feature's version."""
        from openstack import exceptions

        features = (feature,) if feature else self.features
        self._check_supported(features, method, path)
        response = self._answer(method, path, versions.need(*features),
                                **kwargs)
        versions.check_response(response, *features)
        if response.status_code == 500 and _SCOPE_REFUSED in response.text:
            # an older ironic (22.1) answers a token of the wrong scope
            # with 500: it is a refusal, as newer ones say with 403
            response.status_code = 403
        if method == 'GET' and response.status_code >= 500:
            raise osc_exceptions.CommandError(
                'The %s at %s failed to answer %s: %d %s%s' % (
                    service_name(self.service_type),
                    root_url(response.url or ''),
                    urllib.parse.urlsplit(response.url or path).path,
                    response.status_code, response.reason,
                    retried_text(getattr(response, 'retried', None))))
        self.refuse(method, path, response)
        exceptions.raise_from_response(response)
        return response

    def _answer(self, method, path, microversion, **kwargs):
        """The service's answer (``whole_answer``); a read refused or
        answered 503, or a write answered what ``retriable_writes`` says,
        sent again (READ_RETRIES or WRITE_RETRIES times, after a backoff or
        its Retry-After) only where the pause ``fits``: a write only where
        its whole time does too, as it is never cut."""
        again = self.retriable_writes(method, path) if method != 'GET' \
            else [503]
        retries = READ_RETRIES if method == 'GET' else (
            WRITE_RETRIES if again else 0)
        pause, made = RETRY_SECONDS, 0
        while True:
            timeout, bounded_by = self._timeout(method, path)
            renew_token(self.proxy, method, timeout, bounded_by)
            response, refused = whole_answer(
                self.proxy, self.service_type, method, path, timeout,
                bounded_by, self.root, microversion=microversion,
                raise_exc=False, timeout=timeout, status_code_retries=0,
                connect_retries=0, **kwargs)
            if response is not None:
                self.root = root_url(response.url or '') or self.root
                if response.status_code not in again:
                    return response
            elif method != 'GET':
                raise refused
            wait = retry_after(response, pause)
            if made == retries or not fits(
                    self.timeouts, wait, whole=method != 'GET'):
                if refused is not None:
                    raise refused
                response.retried = (made, why_not_again(
                    self.timeouts, wait) if made < retries else None)
                return response
            made += 1
            time.sleep(wait)
            pause *= 2

    def _timeout(self, method, path):
        """(connect, read) seconds for this request, and what bounds it
        (``request_bounds``)."""
        return request_bounds(self.timeouts, self.service_type, method, path)

    def probe(self, method, path, **kwargs):
        """(HTTP status, text) of a request whose answer is the point: never
        retried, refusals never raised (a service unreached, one line, as
        ``whole_answer`` says it)."""
        self._check_supported(self.features, method, path)
        timeout, bounded_by = self._timeout(method, path)
        renew_token(self.proxy, method, timeout, bounded_by)
        answer, refused = whole_answer(
            self.proxy, self.service_type, method, path, timeout, bounded_by,
            self.root, microversion=self.version, raise_exc=False,
            status_code_retries=0, connect_retries=0, timeout=timeout,
            **kwargs)
        if refused is not None:
            raise refused
        return answer.status_code, answer.text

    def require(self):
        """Refuse, before any change, a service too old for this object's
        features (no request where the SDK knows its range)."""
        self._check_supported(self.features)

    def require_feature(self, feature):
        """Refuse, as ``require``, a service too old for one feature."""
        self._check_supported((feature,))

    def _check_supported(self, features, method='GET', path='/'):
        """Refuse, before sending, a call the service's discovered range
        cannot take (once per set of features); the token renewed first,
        within the bound of the request (``method``, ``path``)."""
        if not self.range_known or features in self._supported:
            return
        # the discovery renews the token on its way, unbounded: first ours
        renew_token(self.proxy, method, *self._timeout(method, path))
        try:
            endpoint = self.proxy.get_endpoint_data()
        except Exception:   # noqa: BLE001 - the request will tell
            endpoint = None
        versions.check_supported(endpoint, *features)
        self._supported.add(features)

    def refuse(self, method, path, response):
        """A refusal the service's wrapper can say better than the SDK's
        exception (see ``ironic.Ironic``); nothing by default."""

    def retriable_writes(self, method, path):
        """The statuses on which this write may be sent again, up to
        WRITE_RETRIES times (``_answer``)."""
        return []

    @property
    def service_type(self):
        return versions.NEEDS[self.features[0]][0]

    def _pages(self, path, collection, feature=None, limit=0):
        """The objects of a listing, one request a page, following the
        service's next links: every page (``limit`` 0), the first (None),
        or at most ``limit`` objects."""
        found = []
        while path:
            page = self._request('GET', path, feature)
            found.extend(page[collection])
            if limit is None or (limit and len(found) >= limit):
                break
            path = relative_link(self.next_link(page, collection),
                                 self.version_root)
        return found[:limit] if limit else found

    def next_link(self, page, collection):
        """The link to the page after ``page``, or None."""
        return page.get('next')

    def _delete_item(self, path, item):
        """DELETE one item of an object, idempotently: a 404 whose detail
        names the item (already gone) is no error; one about the object
        itself (gone too) is."""
        from openstack import exceptions

        try:
            self._request('DELETE', path)
        except exceptions.NotFoundException as exc:
            if item not in str(exc.details or '').lower():
                raise

    def _request(self, method, path, feature=None, **kwargs):
        """One request; its JSON answer."""
        response = self._send(method, path, feature, **kwargs)
        return response.json() if response.content else None


class OutOfTime(osc_exceptions.CommandError):
    """A read the command's deadline left no time for (``bounded``)."""


class _Bound(threading.local):
    until = None    # on time.monotonic
    why = ''


_bound = _Bound()


@contextlib.contextmanager
def bounded(until, why='--wait-timeout reached'):
    """Meanwhile, in this thread, no read waits past ``until`` (on
    time.monotonic; None: no bound but the requests' timeouts), and none
    starts after it: ``why`` ends the line of one that would."""
    previous = _bound.until, _bound.why
    _bound.until, _bound.why = until, why
    try:
        yield
    finally:
        _bound.until, _bound.why = previous


def current_bound():
    """The deadline of this thread's reads (``bounded``), or None."""
    return _bound.until


class Later:
    """``read()`` begun now, in a thread of its own, bounded by ``until``
    and ``why`` (``bounded``; by default, as this thread's reads are);
    ``result()`` waits for it."""

    def __init__(self, read, until=None, why=None):
        if until is None:
            until, why = _bound.until, _bound.why
        self.value = self.error = None
        self.thread = threading.Thread(target=self.run, args=(
            read, until, why or '--wait-timeout reached'), daemon=True,
            name='read')
        self.thread.start()

    def run(self, read, until, why):
        try:
            with bounded(until, why):
                self.value = read()
        except Exception as exc:    # noqa: BLE001 - the reader's to raise
            self.error = exc

    def result(self):
        """What ``read()`` returned, or raise what it raised."""
        self.thread.join()
        if self.error is not None:
            raise self.error
        return self.value


def request_bounds(timeouts, service_type, method, path):
    """(connect, read) seconds for a request, and what bounds its read:
    the setting, or (a read) the command's deadline when it leaves less.
    A read past that deadline is not sent (OutOfTime)."""
    connect, read = timeouts
    until = current_bound()
    if method != 'GET' or until is None:
        return (connect, read), TIMEOUTS_SETTING
    left = until - time.monotonic()
    if left <= 0:
        raise OutOfTime('No time was left to ask the %s %s %s: %s' % (
            service_name(service_type), method,
            urllib.parse.urlsplit(path).path, _bound.why))
    if left < read:
        return (min(connect, left), left), _bound.why
    return (connect, read), TIMEOUTS_SETTING


def fits(timeouts, pause, whole=False):
    """Whether a request sent again after ``pause`` seconds still has
    time to be answered: it starts within the command's bound (``whole``,
    a write, which is never cut: it ends within it, its timeouts
    together), and the pause is no longer than a request may wait for its
    answer."""
    until = current_bound()
    ends = time.monotonic() + pause + (sum(timeouts) if whole else 0)
    if until is not None and ends >= until:
        return False
    return pause <= timeouts.read


def whole_answer(proxy, service_type, method, path, bounds, bounded_by,
                 root='', **request):
    """(the answer, or None; the line of a refused connection a retry may
    mend, or None).  A read's whole answer, its body included, within its
    bound: its connect and read timeouts together (keystoneauth gives each
    socket operation alone), or what the command's bound leaves; it runs
    in a thread of its own, left behind past that bound.  A write runs in
    this thread, within its timeouts for each socket operation: never left
    running after its line is said (``root``: the service's URL, as its
    last answer had it).  One line for an answer not whole in time, or
    whose body stopped coming."""
    from keystoneauth1 import exceptions as ksa_exceptions

    seconds = whole_bound(method, bounds)
    try:
        if method != 'GET':
            done, response = True, uncached(proxy, path, method, **request)
        else:
            done, response = within(seconds + SLACK_SECONDS, lambda: (
                uncached(proxy, path, method, **request)))
    except ksa_exceptions.ConnectTimeout as exc:
        raise timed_out(named(proxy, service_type, str(exc)), method, path,
                        str(exc), timed_out_at(exc), bounds,
                        bounded_by) from None
    except ksa_exceptions.ConnectionError as exc:
        service = named(proxy, service_type, str(exc))
        if READ_TIMED_OUT in str(exc):
            # the body stopped coming: a timeout, never retried
            raise timed_out(service, method, path, str(exc), 'read', bounds,
                            bounded_by) from None
        return None, unreachable(service, str(exc), reason_of(exc))
    if not done:
        endpoint = getattr(proxy, 'endpoint_override', None) or root
        raise timed_out(service_type, method, path, endpoint.rstrip('/') +
                        path if endpoint else '', 'whole', (0, seconds),
                        bounded_by)
    return response, None


def uncached(proxy, path, method, **request):
    """The proxy's request, never served from the SDK's cache: with
    ``cache:`` in clouds.yaml, the SDK answers a read from it (a poll
    would see nothing move), so a read goes as the proxy's keystoneauth
    adapter sends it; a write goes through the proxy, which drops what
    the cache holds of it.  (The SDK's ``skip_cache`` drops the cache at
    every read, and races there between threads.)"""
    conn = getattr(proxy, '_get_connection', lambda: None)()
    if method == 'GET' and getattr(conn, 'cache_enabled', False) is True:
        from keystoneauth1 import adapter

        request.setdefault('global_request_id', getattr(
            conn, '_global_request_id', None))
        return adapter.Adapter.request(proxy, path, method, **request)
    return proxy.request(path, method, **request)


def whole_bound(method, bounds):
    """The seconds a request's whole answer is waited for: its connect
    and read timeouts together, and a read no later than the command's
    bound (a write is not cut)."""
    seconds, until = sum(bounds), current_bound()
    if method == 'GET' and until is not None:
        seconds = min(seconds, max(0.0, until - time.monotonic()))
    return seconds


def renew_token(proxy, method, timeout, bounded_by):
    """Renew the session's token before a request it may not outlive
    (``token_due``): one thread at a time, the others then finding it
    renewed; within the request's whole bound (``issued``).  Not through
    keystoneauth's own renewal, which holds its lock for as long as
    keystone is silent, and drops the token it has first."""
    auth, lasting = _auth_of(proxy), sum(timeout)
    if not token_due(auth, lasting):
        return

    def renew():
        with _renewal:
            if token_due(auth, lasting):
                auth.auth_ref = auth.get_auth_ref(proxy.session)

    issued(renew, proxy, method, (timeout, bounded_by))


def issued(call, proxy, method, bounds):
    """``call()``, which asks keystone for a token, within a request's
    whole bound (``whole_bound``: a write's, not cut by the command's
    bound; ``bounds``: ``request_bounds``); one line naming keystone
    where it does not answer."""
    from keystoneauth1 import exceptions as ksa_exceptions

    timeout, bounded_by = bounds
    seconds = whole_bound(method, timeout)
    keystone = getattr(_auth_of(proxy), 'auth_url', None) or ''
    try:
        done, _ = within(seconds + SLACK_SECONDS, call)
    except ksa_exceptions.ConnectTimeout as exc:
        # the session's own timeout (``clients.bound_session``)
        raise timed_out('identity', 'POST', '/auth/tokens', str(exc),
                        timed_out_at(exc), timeout, bounded_by) from None
    except ksa_exceptions.ConnectionError as exc:
        raise unreachable('identity', keystone or str(exc),
                          reason_of(exc)) from None
    if not done:
        raise osc_exceptions.CommandError(
            'The %s at %s did not issue a token within %s s (%s)' % (
                service_name('identity'), root_url(keystone),
                seconds_text(seconds), bounded_by))


def named(proxy, service_type, url_text):
    """The service a request's error is about: keystone where its URL is
    under the session's auth URL (a token renewed on the way; its version
    aside, as a devstack's ``http://h/identity``), else
    ``service_type``."""
    keystone = getattr(_auth_of(proxy), 'auth_url', None)
    found = _FULL_URL.search(url_text or '')
    if not (keystone and found):
        return service_type
    base = re.sub(r'/v[0-9.]+$', '', keystone.rstrip('/'))
    url = found.group(0).rstrip(':;,.)').rstrip('/')
    return 'identity' if url == base or url.startswith(base + '/') else (
        service_type)


def within(seconds, call):
    """(whether ``call()`` ended within ``seconds``, what it returned),
    run in a daemon thread left behind when it does not; what it raised,
    raised here."""
    box = {}

    def run():
        try:
            box['value'] = call()
        except BaseException as exc:    # noqa: BLE001 - raised below
            box['error'] = exc

    thread = threading.Thread(target=run, daemon=True, name='request')
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        return False, None
    if 'error' in box:
        raise box['error']
    return True, box['value']


def retry_after(response, pause):
    """The seconds to wait before sending a read again: the answer's
    Retry-After (seconds, or an HTTP date, UTC where it names no zone),
    or ``pause``."""
    import datetime
    import email.utils

    text = ((response.headers.get('Retry-After') if response is not None
             else None) or '').strip()
    if not text:
        return pause
    if re.fullmatch(r'[0-9]+', text):
        return float(text)
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return pause
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.timezone.utc)
    return max(0.0, when.timestamp() - time.time())


def why_not_again(timeouts, wait):
    """Why a request answered to be retried is not sent again after
    ``wait`` seconds: past the command's bound, or longer than a request
    waits."""
    until = current_bound()
    why = 'past the time left'
    if (until is None or time.monotonic() + wait < until) and (
            wait > timeouts.read):
        why = 'longer than the read timeout (%s s)' % seconds_text(
            timeouts.read)
    return 'it asks for another in %s s, %s' % (seconds_text(wait), why)


def token_due(auth, lasting=0):
    """Whether the session's token is to be renewed before a request that
    may last ``lasting`` seconds: none yet, or it expires within
    keystoneauth's margin by the request's end (keystoneauth would renew
    it on the way, unbounded)."""
    if not hasattr(auth, 'auth_ref') or not hasattr(auth, 'invalidate'):
        return False    # no token of keystone's (auth_type none, admin)
    if renews_to_the_same_expiry(auth):
        # a token's renewal keeps its expiry: none, ours or keystoneauth's
        # (which would renew it at every request of its last two minutes)
        auth.reauthenticate = False
        return False
    ref = auth.auth_ref
    return ref is None or ref.will_expire_soon(
        TOKEN_MIN_LIFE_SECONDS + lasting)


def renews_to_the_same_expiry(auth):
    """Whether the session authenticates with a token (auth_type token,
    v3token): a token it issues again expires when that one does."""
    from keystoneauth1.identity import v2
    from keystoneauth1.identity import v3
    from keystoneauth1.identity.generic import token as generic_token

    return isinstance(auth, (generic_token.Token, v3.Token, v2.Token))


def _auth_of(proxy):
    return getattr(getattr(proxy, 'session', None), 'auth', None)


def concurrently(read, items, workers):
    """[read(item)] of every item, ``workers`` daemon threads at a time,
    each read in this thread's bound (``bounded``), which other threads
    do not inherit.  The first error is raised at once, and it or Ctrl-C
    leaves the reads under way behind (each ends at its own bound), the
    process free to exit."""
    items = list(items)
    if not items:
        return []
    until, why = _bound.until, _bound.why
    order = iter(range(len(items)))
    results, errors, lock = {}, [], threading.Lock()
    ended = threading.Event()

    def work():
        with bounded(until, why):
            while not errors:
                with lock:
                    at = next(order, None)
                if at is None:
                    return
                try:
                    results[at] = read(items[at])
                except BaseException as exc:    # noqa: BLE001 - raised
                    errors.append(exc)
                if errors or len(results) == len(items):
                    ended.set()

    for _ in range(min(workers, len(items))):
        threading.Thread(target=work, daemon=True, name='reader').start()
    ended.wait()
    if errors:
        raise errors[0]
    return [results[at] for at in range(len(items))]


def parse_timeouts(text):
    """Timeouts from the setting's text: ``READ`` (connecting within
    DEFAULT_TIMEOUTS.connect, or READ if less), or ``CONNECT,READ``, in
    seconds; None for the default."""
    if text is None or text == '':
        return DEFAULT_TIMEOUTS
    try:
        values = [float(v) for v in str(text).split(',')]
    except ValueError:
        values = []
    if len(values) not in (1, 2) or any(v <= 0 for v in values):
        raise osc_exceptions.CommandError(
            'Expected %s (--os-deploy-config-request-seconds) of READ or '
            'CONNECT,READ seconds, each above 0, got %r'
            % (TIMEOUTS_SETTING, text))
    if len(values) == 1:
        return Timeouts(min(DEFAULT_TIMEOUTS.connect, values[0]), values[0])
    return Timeouts(*values)


def timed_out(service_type, method, path, url_text, at, timeout,
              bounded_by):
    """The one line for a request a service did not answer in time."""
    connect, read = timeout
    found = _FULL_URL.search(url_text)
    if found:
        path = found.group(0)
    if at == 'connect':
        waited = 'connecting within %s s' % seconds_text(connect)
    elif at == 'whole':
        waited = 'giving its whole answer within %s s' % seconds_text(
            connect + read)
    else:
        waited = 'answering within %s s' % seconds_text(read)
    return osc_exceptions.CommandError(
        'The %s at %s did not answer %s %s: it timed out %s (%s)' % (
            service_name(service_type), root_url(url_text), method,
            urllib.parse.urlsplit(path).path, waited, bounded_by))


def retried_text(retried):
    """What a read answered 503 to the end says of its retries:
    ``(retries made, why the one it asked for was not made, or None)``."""
    if not retried:
        return ''
    made, why_not = retried
    parts = ['after %d retr%s' % (made, 'y' if made == 1 else 'ies')
             ] if made else []
    if why_not:
        parts.append(why_not)
    return ' (%s)' % '; '.join(parts) if parts else ''


def seconds_text(value):
    return ('%.1f' % value).rstrip('0').rstrip('.')


def timed_out_at(exc):
    """'connect' or 'read': which of a request's timeouts keystoneauth's
    ConnectTimeout was (it says neither; requests' own error does)."""
    import requests

    cause = exc.__context__
    if isinstance(cause, requests.exceptions.ConnectTimeout):
        return 'connect'
    return 'read'


def service_name(service_type):
    return SERVICE_NAMES.get(service_type, service_type + ' service')


def unreachable(service_type, url_text, reason):
    """The one line for a service that cannot be reached."""
    return osc_exceptions.CommandError('Cannot reach the %s at %s: %s' % (
        service_name(service_type), root_url(url_text), reason))


def root_url(text):
    """The scheme, host and port of the first URL in ``text``."""
    found = _URL.search(text)
    return found.group(0) if found else 'its catalog endpoint'


def reason_of(exc):
    from keystoneauth1 import exceptions as ksa_exceptions

    if isinstance(exc, ksa_exceptions.ConnectTimeout):
        return 'connection timed out'
    if 'refused' in str(exc).lower():
        return 'connection refused'
    return type(exc).__name__
