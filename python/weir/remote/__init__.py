"""Remote functions over weir's jobs: @weir.remote, .remote(), weir.get, weir.wait,
weir.put, weir.train, weir.kill.

One call is one weir job: functions.py turns a call into a job's spec, futures.py reads what
the task wrote, session.py holds the process's client and the jobs to kill on Ctrl-C and at
exit, objects.py the object folder (calls, results, put archives).  The task's side is
weir/worker/runner.py.
"""

from .functions import RemoteFunction, put, remote, train
from .futures import Future, ObjectRef, cancel, get, kill, wait
from .session import init

__all__ = ["remote", "get", "wait", "put", "train", "init", "kill", "cancel", "Future",
           "ObjectRef", "RemoteFunction"]
