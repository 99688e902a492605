"""The exceptions the package raises.

Every one derives from WeirError.  What the server refused carries its status and message
(ApiError); what a remote function raised comes back as RemoteError, which is also an
instance of the original exception's class when that class allows it (so `except
ValueError` still catches a remote ValueError).
"""

from typing import Any, Dict, Optional, Tuple, Type


class WeirError(Exception):
    """Base of every error of this package."""


class ApiError(WeirError):
    """The server answered with an error: `status` (HTTP) and `message` (the API's text)."""

    def __init__(self, status: int, message: str, method: str = "", path: str = "",
                 body: Any = None):
        self.status = status
        self.message = message
        self.method = method
        self.path = path
        self.body = body
        where = ("%s %s: " % (method, path)) if method else ""
        super().__init__("%s%s (HTTP %d)" % (where, message, status))


class ResourceError(ApiError, ValueError):
    """The job can never run here (HTTP 422): more than any node has, or no such queue."""


class ServerUnreachable(WeirError, ConnectionError):
    """No server answered at the address."""


class SerializationError(WeirError, TypeError):
    """A function, an argument or a result could not be pickled; nothing was submitted."""


class GetTimeoutError(WeirError, TimeoutError):
    """weir.get or a wait ran out of time; the jobs go on."""


class JobFailed(WeirError):
    """A job ended without a result (killed, out of memory, lost, timed out): `job` is the
    Job as the API shows it, `log_tail` the end of its first task's log."""

    def __init__(self, message: str, job: Optional[Dict[str, Any]] = None,
                 log_tail: str = "") -> None:
        self.job = job or {}
        self.log_tail = log_tail
        text = message
        if log_tail:
            text += "\n--- log (tail)\n" + log_tail
        super().__init__(text)


class ActorDied(WeirError):
    """An actor's call cannot return: the actor has ended (killed, crashed, out of memory,
    its constructor raised, or the program ended); the message says why, `cause` is the
    constructor's error when that was it."""

    def __init__(self, message: str, cause: Optional[BaseException] = None) -> None:
        self.cause = cause
        super().__init__(message)


class RemoteError(WeirError):
    """The remote function raised: `cause` is the exception (None when it could not be
    pickled back), `type_name` its class, `remote_traceback` the traceback as printed in
    the task, `job_id` the job."""

    def __init__(self, type_name: str, message: str, remote_traceback: str,
                 cause: Optional[BaseException] = None, job_id: Optional[int] = None):
        self.type_name = type_name
        self.remote_message = message
        self.remote_traceback = remote_traceback
        self.cause = cause
        self.job_id = job_id
        Exception.__init__(self, "%s: %s (in job %s)\n\nRemote traceback:\n%s"
                           % (type_name, message, job_id, remote_traceback.rstrip()))

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""

    def __reduce__(self) -> Tuple[Type["RemoteError"], Tuple[Any, ...]]:
        return (RemoteError, (self.type_name, self.remote_message, self.remote_traceback,
                              None, self.job_id))


def remote_error(type_name: str, message: str, tb: str, cause: Optional[BaseException],
                 job_id: Optional[int], base: Type[RemoteError] = RemoteError) -> RemoteError:
    """A RemoteError (of class `base`: ray.exceptions.RayTaskError is one) that is also an
    instance of cause's class when Python allows it: a class made for the pair."""
    if cause is not None and isinstance(cause, Exception) and not isinstance(cause, base):
        cls = type(cause)
        try:
            both: Type[RemoteError] = type("%s(%s)" % (base.__name__, cls.__name__),
                                           (base, cls), {})
            err = both.__new__(both)
            RemoteError.__init__(err, type_name, message, tb, cause, job_id)
            err.__dict__.update(getattr(cause, "__dict__", {}))
            return err
        except TypeError:
            pass
    return base(type_name, message, tb, cause, job_id)
