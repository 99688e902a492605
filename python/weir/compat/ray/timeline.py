"""ray.timeline(): the program's calls on warm workers as Chrome trace events (docs/ray.md),
from the records the program keeps of its calls' tries (remote/call_records.py)."""

import json
import os
import socket
from typing import Any, Dict, List, Optional

from ...remote import session as _session
from ...remote import warm as _warm


def timeline(filename: Optional[str] = None) -> Optional[List[Dict[str, Any]]]:
    """The calls (and actors' method calls) of this program that have ended, each a
    complete event of Chrome's trace format: name (the function, Class.method), cat
    ("task"), ph ("X"), ts and dur (microseconds; ts since the epoch), pid (the node), tid
    (the worker's weir job), args (state, tries, worker_job, call, error).  Written to
    filename as JSON (then None), else returned.  Load it in chrome://tracing or
    Perfetto."""
    from . import api
    if api._in_task():
        raise RuntimeError("ray.timeline(): call it in the program (the calls' records are "
                           "the program's), not in a task")
    api._ensure()
    events = _warm.pool_of(_session._get_session()).records.chrome_events(
        socket.gethostname())
    if filename is None:
        return events
    tmp = "%s.tmp%d" % (filename, os.getpid())
    with open(tmp, "w") as f:
        json.dump(events, f)
    os.replace(tmp, filename)
    return None
