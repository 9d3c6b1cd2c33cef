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

"""The polls of a rollout's servicings, through listings of the nodes.

The poll aimed at where a servicing should have ended (``waits.Pace``),
while servers wait for a place in the budget: a listing of the nodes begun
since it asked (one for the polls that ask at once), which the budget
reads anyway, and beside it, in a thread of its own, a listing of the
servers.  The other polls, while other servicings are polled: a
listing begun since the time each gives (a little before it asked), so
that the polls of servicings under way at once share one.  Where a poll
found the node up, the listing (and the servers listed beside it, or
then) is the budget's read once the server's toggle is up again (read
back and recorded), which the next start takes instead of a read of its
own."""

import functools
import threading

from osc_deploy_config.services import rest
from osc_deploy_config.use_cases.toggle import waits


class Polls:
    """``fleet``: its ``read_nodes()`` ({instance UUID: node} of a listing
    of the nodes) and ``list_servers()``; ``wanted()``: whether servers
    wait for a place; ``deadline``: past it no server starts, and no read
    for one is made."""

    def __init__(self, budget, fleet, clock, wanted, deadline):
        self.budget = budget
        self.fleet = fleet
        self.clock = clock
        self.wanted = wanted
        self.deadline = deadline
        self.found = {}         # server ID: the listing that found it up
        self.up = set()         # the servers the budget's read found up
        # [when begun, nodes, Later of the servers or None]
        self.listed = None
        self.listing = threading.Lock()
        # guards ``polled`` and each listing's Later of the servers
        self.guard = threading.Lock()
        self.polled = set()     # the servers whose servicing is polled
        self.unshared_until = float('-inf')     # after a listing failed

    def hook(self, waits_, server_id):
        """Have the server's toggle (its ``waits.Waits``) poll through
        these listings."""
        waits_.look = functools.partial(self.node, server_id)
        waits_.polling = functools.partial(self.polling, server_id)

    def polling(self, server_id, now):
        """The server's servicing is polled now, or no longer."""
        with self.guard:
            if now:
                self.polled.add(server_id)
            else:
                self.polled.discard(server_id)

    def node(self, server_id, uuid, since=None):
        """The server's node ``uuid`` as the poll reads it
        (``waits.Waits.look``), or None (the poll reads it alone), where
        the listing can be read.  A poll aimed at the end (``since``
        None): while servers wait for a place.  Any other: while another
        servicing is polled, from a listing begun since ``since``, but for
        POLL_SECONDS after a listing failed."""
        aimed = since is None
        if not (self.wanted() if aimed else self.polled - {server_id} and (
                self.clock() >= self.unshared_until)):
            return None
        try:
            listed = self.since(self.clock() if aimed else since, aimed)
        except Exception:   # noqa: BLE001 - the poll reads the node alone
            self.unshared_until = self.clock() + waits.POLL_SECONDS
            return None
        node = listed and listed[1].get(server_id)
        if not node or node['uuid'] != uuid:
            return None
        if node['provision_state'] == 'active' and not node.get(
                'target_provision_state'):
            self.found[server_id] = listed
            if self.wanted():   # beside its read-back and record
                self.beside(listed)
        return node

    def since(self, asked, beside=True):
        """[when begun, the nodes, the servers' Later] of a listing begun
        since ``asked`` (``beside``: with the servers listed beside it);
        None where another poll's listing takes longer than a poll's
        interval (the poll then reads its node alone)."""
        if not self.listing.acquire(timeout=waits.POLL_SECONDS):
            return None
        try:
            # only one begun since then: an older one may show the node as
            # it was before its servicing began
            if self.listed is None or self.listed[0] < asked:
                began = self.clock()
                servers = rest.Later(self.fleet.list_servers,
                                     self.deadline) if beside else None
                self.listed = [began, self.fleet.read_nodes(), servers]
            elif beside:
                self.beside(self.listed)
            return self.listed
        finally:
            self.listing.release()

    def beside(self, listed):
        """The Later of the servers listed beside a listing of the nodes:
        begun with it, or now (once)."""
        with self.guard:
            if listed[2] is None:
                listed[2] = rest.Later(self.fleet.list_servers,
                                       self.deadline)
            return listed[2]

    def read_budget(self, server_id):
        """The server's toggle is over but its unlock: if its poll found
        it up, the budget's read, with the servers listed beside its nodes
        (whether it was made).  Before the deadline only."""
        listed = self.found.pop(server_id, None)
        if listed is None or not self.wanted() or (
                self.clock() - listed[0] > waits.POLL_SECONDS):
            return False    # a read-back or record that took long: stale
        began, nodes = listed[:2]
        try:
            with rest.bounded(self.deadline):
                self.budget.read(nodes, began, self.beside(listed).result())
        except Exception:   # noqa: BLE001 - the drive reads it again
            return False
        self.up.add(server_id)
        return True

    def found_up(self, server_id):
        """Whether the budget's last read found the server up (said once)."""
        found = server_id in self.up
        self.up.discard(server_id)
        self.found.pop(server_id, None)
        return found
