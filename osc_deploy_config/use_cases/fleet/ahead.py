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

"""Toggles prepared ahead of their place: while every place of the budget
is held by a toggle that waits on the cloud (its change asked for), as
many of the waiting toggles as hold one start and lock their servers,
then wait at a ``Gate`` before their first write.  The drive opens a gate
with the server and node as the budget read them when it gave the place
(the toggle is planned again on them), and closes every gate still shut
when no more server may start: those toggles unlock their servers and
report "not started".  One refused before its place (on an older read)
waits as any other, and is not prepared ahead again."""

import functools
import threading

from osc_deploy_config.use_cases.toggle import waits


class NotPlaced(Exception):
    """A toggle prepared ahead got no place: it did not start (``str``:
    why)."""


class Gate:
    """Where a toggle prepared ahead waits for its place (``wait``, in
    its worker), until the drive opens it (``open``) or closes it
    (``close``), or the rollout leaves (``leaving``: an Event)."""

    def __init__(self, leaving):
        self.leaving = leaving
        self.fresh = None
        self.why = ''
        self.shut = threading.Event()

    def open(self, fresh):
        """The toggle has a place: (server, node) as read then."""
        self.fresh = fresh
        self.shut.set()

    def close(self, why):
        """No place comes (``why``): the toggle does not start."""
        if not self.shut.is_set():
            self.why = why
            self.shut.set()

    def wait(self):
        """(server, node) once the gate is open; NotPlaced once it is
        closed, or the rollout leaves."""
        while not self.shut.wait(waits.POLL_SECONDS):
            if self.leaving.is_set():
                raise NotPlaced('the rollout left')
        if self.fresh is None:
            raise NotPlaced(self.why)
        return self.fresh


class Gates:
    """The gates of a rollout's toggles prepared ahead, by server ID,
    each kept until its toggle ends (``leaving``: the rollout's Event;
    ``reading(server, node)``: a toggle's Reading of them)."""

    def __init__(self, leaving, reading):
        self.leaving = leaving
        self.reading = reading
        self.by_server = {}
        self.on_cloud = set()   # the toggles that wait on the cloud
        self.ended_ahead = set()    # the toggles not prepared ahead again

    def __contains__(self, server_id):
        return server_id in self.by_server

    def hook(self, waits_, server_id):
        """Tell a toggle's ``waits`` where it waits for a place
        (``placed``), and to tell when it waits on the cloud."""
        waits_.place = functools.partial(self.placed, server_id)
        waits_.on_waiting = functools.partial(self.waits_on_cloud, server_id)

    def waits_on_cloud(self, server_id):
        """In a toggle's worker: its change asked for, it waits on nova's
        or ironic's own work."""
        self.on_cloud.add(server_id)

    def prepare(self, waiting, running, held, seen, run):
        """Once every toggle ``running`` waits on the cloud, start ahead as
        many of the ``waiting`` toggles as hold a place (``held``), but an
        interrupted one of ours (it takes over a lock of its own):
        ``run(one, (server, node))``, as ``seen`` by the budget's last
        read."""
        if not set(running) <= self.on_cloud:
            return      # their starts first; and no lock sooner than that
        shut = sum(1 for one in waiting if one.server['id'] in self)
        for one in waiting:
            if shut >= held:
                return
            server_id = one.server['id']
            if one.ours or server_id in self or server_id in self.ended_ahead:
                continue
            self.by_server[server_id] = Gate(self.leaving)
            run(one, seen.get(server_id) or (one.server,
                                             one.prepared.reading.node))
            shut += 1

    def open(self, server_id, fresh):
        """Open the server's gate: whether it had one."""
        gate = self.by_server.get(server_id)
        if gate is not None:
            gate.open(fresh)
        return gate is not None

    def placed(self, server_id):
        """In a toggle's worker, before its first write: once it has its
        place, its Reading of the server and node read then (None: it
        started with them)."""
        gate = self.by_server.get(server_id)
        return None if gate is None else self.reading(*gate.wait())

    def close(self, why=''):
        """No more toggle starts (``why``): those prepared ahead do not."""
        for gate in list(self.by_server.values()):
            gate.close(why or 'the rollout stopped')

    def ended(self, server_id):
        if self.by_server.pop(server_id, None) is not None:
            self.ended_ahead.add(server_id)
