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

"""The ``openstack`` CLI run in this interpreter, as a fresh process would.

Starting ``openstack`` costs 1.3-1.6 s of imports, most of a functional
test's time when every command is a process.  ``run`` runs OSC's own
shell here instead (as osc-placement's functional tests do): the
same shell, the plugin loaded through its entry points, with the run's
environment, standard streams, warnings and logging set up as a process
would have them, and put back afterwards, so no run sees another's.
"""

import contextlib
import io
import logging
import os
import subprocess
import sys
import warnings


def run(argv, env, stdin=''):
    """Run ``openstack argv`` (``argv[0]`` the program's path) with
    environment ``env``; the finished run as a
    ``subprocess.CompletedProcess`` (returncode, stdout, stderr)."""
    from openstackclient import shell

    _forget_clients()
    out, err = io.StringIO(), io.StringIO()
    with _like_a_process(argv, env, io.StringIO(stdin), out, err):
        try:
            app = shell.OpenStackShell()
            # cliff names commands after the program it found on import
            app.NAME = os.path.basename(argv[0])
            code = app.run(list(argv[1:]))
        except SystemExit as exc:     # argparse's exits (--help, errors)
            code = _exit_code(exc, err)
    return subprocess.CompletedProcess(list(argv), code,
                                       out.getvalue(), err.getvalue())


def _forget_clients():
    """OSC caches each service's client (ours: the plugin's ``Clients``)
    on its ClientManager *class*, for the one run of a process: a new run
    must build its own, with its own cloud and session."""
    from openstackclient.common import clientmanager
    from osc_lib import clientmanager as osc_clientmanager

    for cls in clientmanager.ClientManager.__mro__:
        for cache in vars(cls).values():
            if isinstance(cache, osc_clientmanager.ClientCache):
                cache._handle = None


def _exit_code(exc, err):
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    err.write('%s\n' % exc.code)
    return 1


@contextlib.contextmanager
def _like_a_process(argv, env, stdin, stdout, stderr):
    saved_argv = sys.argv
    saved_env = dict(os.environ)
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    saved_logging = _logging_state()
    os.environ.clear()
    os.environ.update(env)
    sys.argv = list(argv)       # argparse names the program after it
    sys.stdin, sys.stdout, sys.stderr = stdin, stdout, stderr
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')     # as PYTHONWARNINGS=ignore
            yield
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        sys.argv = saved_argv
        os.environ.clear()
        os.environ.update(saved_env)
        _restore_logging(saved_logging)


def _loggers():
    manager = logging.Logger.manager
    return [logging.getLogger()] + [
        logger for logger in list(manager.loggerDict.values())
        if isinstance(logger, logging.Logger)]


def _logging_state():
    """What OSC's log set-up changes: each logger's level, handlers,
    filters; the root gets a console handler on the run's stderr."""
    return {id(logger): (logger.level, list(logger.handlers),
                         list(logger.filters), logger.propagate,
                         logger.disabled)
            for logger in _loggers()}


def _restore_logging(saved):
    fresh = (logging.NOTSET, [], [], True, False)
    for logger in _loggers():
        (logger.level, handlers, filters, logger.propagate,
         logger.disabled) = saved.get(id(logger), fresh)
        logger.handlers[:] = handlers
        logger.filters[:] = filters
    logging.Logger.manager._clear_cache()
