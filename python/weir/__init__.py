"""weir for Python: remote functions, parallel training and a client for the whole API.

    import weir

    @weir.remote(cpus=2)
    def square(x):
        return x * x

    print(weir.get([square.remote(i) for i in range(4)]))   # [0, 1, 4, 9]

Every call is a weir job (named after the function, with its own log, limits, retries and a
place in the UI); `weir.put` stores a large object once for many calls; `weir.train` runs a
function on every worker of a gang (torch.distributed or TF_CONFIG set); `weir.Client` is the
REST API (jobs and DAGs).  The server and token are found as the `weir` CLI finds them
($WEIR_SERVER, $WEIR_TOKEN, HOME/token); weir.types has its answers typed (JobState,
Job, DagRun, TaskInstance, ...).  See docs/python.md.

The package: client/ (the HTTP API), remote/ (remote functions), worker/ (the task side of
a call), compat/ (the Airflow- and Ray-compatible modules, to come), types.py, errors.py,
_config.py (where the server and token are), _version.py (the one source of the version).
"""

from ._version import __version__
from .client import Client
from .errors import (ApiError, GetTimeoutError, JobFailed, RemoteError, ResourceError,
                     SerializationError, ServerUnreachable, WeirError)
from .remote import (Future, ObjectRef, RemoteFunction, cancel, get, init, kill, put, remote,
                     train, wait)

# the old module name, as an attribute too (weir._remote._at_exit() and the like)
from . import _remote  # noqa: E402,F401

__all__ = ["remote", "get", "wait", "put", "train", "init", "kill", "cancel", "Client",
           "Future", "ObjectRef", "RemoteFunction", "WeirError", "ApiError", "ResourceError",
           "RemoteError", "JobFailed", "SerializationError", "ServerUnreachable",
           "GetTimeoutError"]
