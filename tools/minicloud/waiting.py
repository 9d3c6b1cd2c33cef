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

"""Waiting for a condition of the cloud, never a fixed sleep: the one
helper of the mini cloud's seed, the functional tests, the demo and the
bench.  Standard library only (the seed runs in the services' virtualenv).
"""

import time


class TimedOut(Exception):
    """The condition did not come true in time."""


def wait_for(what, check, timeout=180, interval=0.5):
    """Poll ``check`` until it returns something true, and return that;
    ``TimedOut`` naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            raise TimedOut('timed out after %ds waiting for %s'
                           % (timeout, what))
        time.sleep(interval)
