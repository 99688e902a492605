"""The warm pool's requests to the server across its restart (docs/internals/recovery.md,
"Ray programs").

A Ray program's calls run on warm workers that reach the program directly, so a server
killed and started again does not stop them; what does need the server (a worker's or an
actor's job submitted, the calls' records) waits for it to answer again, as Ray's driver
waits for its GCS to come back, instead of failing the call.  How long: $WEIR_SERVER_WAIT
seconds (60 by default, Ray's reconnection timeout); past it the error is raised as before.
"""

import os
import sys
import time
from typing import Callable, Optional, TypeVar

from ..errors import ServerUnreachable

T = TypeVar("T")
# the first pause between two tries (s); doubled up to STEP_MAX
STEP = 0.05
STEP_MAX = 1.0


def wait_limit() -> float:
    """How long a request waits for the server to answer again ($WEIR_SERVER_WAIT, s)."""
    raw = os.environ.get("WEIR_SERVER_WAIT", "60")
    try:
        return max(0.0, float(raw))
    except ValueError:
        raise ValueError("WEIR_SERVER_WAIT: a number of seconds expected, got %r" % raw)


def patiently(what: str, call: Callable[[], T], stop: Optional[Callable[[], bool]] = None,
              limit: Optional[float] = None) -> T:
    """call(), tried again while the server does not answer (ServerUnreachable), up to
    `limit` seconds (wait_limit() by default) or until stop() is true; then the last error
    is raised.  Says once on stderr that it waits, naming `what`."""
    deadline = time.monotonic() + (wait_limit() if limit is None else limit)
    step = STEP
    said = False
    while True:
        try:
            got = call()
        except ServerUnreachable as e:
            if time.monotonic() + step > deadline or (stop is not None and stop()):
                raise
            if not said:
                said = True
                sys.stderr.write("weir: %s: the server does not answer (%s); waiting for it\n"
                                 % (what, e))
            time.sleep(step)
            step = min(STEP_MAX, step * 2)
            continue
        if said:
            sys.stderr.write("weir: %s: the server answers again\n" % what)
        return got
