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

"""Ctrl-C during a rollout, from its start to its table's last line
(``interrupts``): before any toggle starts it stops the command at once;
then a first one stops new starts, a second one leaves, a third one
leaves at once.  One that comes while a result becomes its row, or while
the table prints (``shielded``), waits for its end: every row is
printed, and each is the truth."""

import contextlib
import signal
import types


@contextlib.contextmanager
def interrupts(rollout):
    """Meanwhile, Ctrl-C as the module says (``rollout.started``: a
    toggle may have started; ``rollout.interrupted``: a Ctrl-C came)."""
    def interrupt(signum, frame):
        # no line here: the drive says it (``say_interrupted``); a
        # handler that took the lines' lock could wait on itself
        leave = rollout.interrupted or not rollout.started
        rollout.interrupted = True
        if not leave:
            return
        if rollout.shielded:
            rollout.deferred = True
            return
        raise KeyboardInterrupt()

    try:
        previous = signal.signal(signal.SIGINT, interrupt)
    except ValueError:      # not the main thread: no signals here
        previous = None
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


@contextlib.contextmanager
def shielded(rollout, final=False):
    """Meanwhile, a Ctrl-C that would leave waits: raised at the end
    (KeyboardInterrupt), or, ``final`` (the rows, the table), not at all:
    the command ends as interrupted anyway."""
    rollout.shielded += 1
    try:
        yield
    finally:
        rollout.shielded -= 1
    if rollout.deferred and not rollout.shielded and not final:
        rollout.deferred = False
        raise KeyboardInterrupt()


def hold_off(rollout):
    """From now on, a Ctrl-C that would leave waits for ever: the rows and
    the table come whole, and the command ends as interrupted anyway."""
    rollout.shielded += 1


class Current:
    """The rollout under way of several run in turn (``apply --rollout``),
    as ``interrupts`` reads and marks it (``rollout``: set each in turn):
    before the first, Ctrl-C stops at once; between two, and while the
    table prints, it marks the last one, held off, and waits."""

    def __init__(self):
        object.__setattr__(self, 'rollout', types.SimpleNamespace(
            interrupted=False, started=False, shielded=0, deferred=False))

    def __getattr__(self, name):
        return getattr(self.rollout, name)

    def __setattr__(self, name, value):
        if name == 'rollout':
            object.__setattr__(self, name, value)
        else:
            setattr(self.rollout, name, value)
