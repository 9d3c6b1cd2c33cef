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

"""A rollout's availability budget: at most ``limit`` of the selected
servers down at once, those down for any cause included, read from the
cloud whenever a slot is wanted.

A slot is wanted when a toggle is to start.  The budget then reads the
selected servers and their nodes as they are now (``look``: a listing of
each, in pages): a server that came back frees its place, one that went
down, whatever the cause, takes one.  A toggle in flight holds its place
until it ends (a bare-metal one: until its server is up again, read back
and recorded), whatever its server looks like meanwhile.  A server starts
only if, with it, no more than ``limit`` are down: starting one already
down (an interrupted toggle of ours, to finish) adds none, and nothing
starts past the limit, ours included.
"""

import threading
import time

from osc_deploy_config.domain.fleet import fleet_plan


class Budget:
    """``look()``: {server ID: (server, node or None)} of the selected
    servers now; ``clock``: time.monotonic."""

    def __init__(self, limit, look, clock=time.monotonic):
        self.limit = limit
        self.look = look
        self.clock = clock
        self.running = set()
        self.seen = {}
        self.read_at = None     # when the kept read's nodes were listed
        self._kept = threading.Lock()

    def read(self, nodes=None, began=None, servers=None):
        """The cloud as it is now: {server ID: (server, node)}
        (``nodes``: the nodes as read since ``began``; ``servers``: the
        servers listed since then, else read now).  Of reads made at once
        (the drive's, a worker's), the one begun last is kept."""
        if nodes is None or began is None:
            began = self.clock()
        seen = self.look() if nodes is None else self.look(nodes, servers)
        with self._kept:
            if self.read_at is None or began >= self.read_at:
                # as old as its nodes: the drive reads again in time
                self.seen, self.read_at = seen, began
            return self.seen

    def down(self, seen=None):
        """{server ID: fleet_plan.Down} of the selected servers down at the
        last read (or as ``seen``), but for those our toggles hold."""
        found = {}
        seen = self.seen if seen is None else seen
        for server_id, (server, node) in seen.items():
            down = fleet_plan.unavailable(server, node)
            if down and server_id not in self.running:
                found[server_id] = down
        return found

    def acquire(self, server_id, seen=None):
        """Take a place for the server's toggle, if, at the last read (or
        as ``seen``), the budget has room for it: whether it did."""
        spent = set(self.down(seen)) | self.running
        if len(spent | {server_id}) > self.limit:
            return False
        self.running.add(server_id)
        return True

    def release(self, server_id):
        """The server's toggle ended: its place is the cloud's to say."""
        self.running.discard(server_id)

    def full(self):
        """Whether no toggle can start however the others look: every
        place is held by a toggle in flight."""
        return len(self.running) >= self.limit

    def moving(self):
        """Whether a server that spends the budget may come back by itself
        (a task or a provisioning under way)."""
        return any(d.moving for d in self.down().values())

    def spent_by(self, names):
        """'name (why), ...' of the servers down at the last read
        (``names``: {server ID: name})."""
        return ', '.join(sorted('%s (%s)' % (names.get(i, i), d.why)
                                for i, d in self.down().items()))
