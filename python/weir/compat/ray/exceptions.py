"""ray.exceptions: the errors a Ray program catches, raised by weir's ray module.

Every one derives from RayError.  What a remote function raised comes back as RayTaskError,
which is also weir's RemoteError and, as in Ray, an instance of the user's exception class
(a class made for the pair: `RayTaskError(ValueError)`), so both `except RayTaskError` and
`except ValueError` catch it; `.cause` is the exception as it was raised.  A call whose
process ended without a result is WorkerCrashedError (OutOfMemoryError when the kernel
killed it for memory, TaskCancelledError when it was cancelled); GetTimeoutError is also
a TimeoutError and weir's GetTimeoutError.
"""

from typing import Optional

from ...errors import GetTimeoutError as _WeirTimeout
from ...errors import RemoteError, remote_error

__all__ = ["RayError", "RayTaskError", "GetTimeoutError", "TaskCancelledError",
           "WorkerCrashedError", "ForceCancelledError", "OutOfMemoryError",
           "ObjectLostError", "RayActorError", "ActorDiedError", "RaySystemError",
           "RuntimeEnvSetupError", "ObjectStoreFullError", "ActorUnschedulableError",
           "TaskUnschedulableError", "OwnerDiedError", "ObjectFetchTimedOutError",
           "ObjectReconstructionFailedError", "LocalRayletDiedError",
           "CrossLanguageError", "PendingCallsLimitExceeded", "ActorUnavailableError",
           "AsyncioActorExit"]


class RayError(Exception):
    """Base of every error of the ray module."""


class RayTaskError(RayError, RemoteError):
    """A remote function raised: `cause` is its exception (None when it could not be pickled
    back), `function_name` the function, `traceback_str` the traceback printed in the task,
    `job_id` weir's job."""

    _function_name: Optional[str] = None

    @property
    def function_name(self) -> str:
        return str(getattr(self, "_function_name", "") or self.type_name)

    @property
    def traceback_str(self) -> str:
        return self.remote_traceback

    def as_instanceof_cause(self) -> "RayTaskError":
        """This error, also an instance of the cause's class (what get() raises already)."""
        if self.cause is None or isinstance(self, type(self.cause)):
            return self
        return from_remote(self, self.function_name)


class GetTimeoutError(RayError, _WeirTimeout):
    """ray.get or ray.wait ran out of time; the calls go on."""


class TaskCancelledError(RayError):
    """The call was cancelled (its job killed) before it returned."""


class WorkerCrashedError(RayError):
    """The call's process ended without a result (killed, crashed, lost) after its retries."""


class ForceCancelledError(TaskCancelledError, WorkerCrashedError):
    """ray.cancel(ref, force=True) killed the call's worker: Ray documents
    WorkerCrashedError for it and raises TaskCancelledError too; this is both."""


class OutOfMemoryError(RayError):
    """The call's process was killed for going past its memory."""


class ObjectLostError(RayError):
    """An object (a ray.put value) is no longer in the object folder."""


class RaySystemError(RayError):
    """weir itself failed the call (the server refused it, or is unreachable)."""


class RayActorError(RayError):
    """An actor's call cannot return: the actor ended (ray.kill, its process killed or out
    of memory, its constructor raised, the program ended); the message says why.  `cause`
    is the constructor's error (RayTaskError) when that was it."""

    cause = None


ActorDiedError = RayActorError


# Ray's other errors: weir raises none of them (its own causes have the classes above, or a
# refusal at once: a runtime_env it cannot make, a resource it lacks), but a program's
# `except ray.exceptions.X` names them and must find them
class RuntimeEnvSetupError(RayError):
    """Ray: a runtime_env could not be set up (weir refuses one at @ray.remote)."""


class ObjectStoreFullError(RayError):
    """Ray: the object store is full (weir spills to the object folder instead)."""


class ActorUnschedulableError(RayError):
    """Ray: an actor can never be placed (weir refuses it at .remote())."""


class TaskUnschedulableError(RayError):
    """Ray: a task can never be placed (weir refuses it at .remote())."""


class OwnerDiedError(ObjectLostError):
    """Ray: the process that owned an object died."""


class ObjectFetchTimedOutError(ObjectLostError):
    """Ray: an object could not be fetched from another node in time."""


class ObjectReconstructionFailedError(ObjectLostError):
    """Ray: an object lost with its node could not be made again."""


class LocalRayletDiedError(RayError):
    """Ray: the node's raylet died."""


class CrossLanguageError(RayError):
    """Ray: an error from another language's worker."""


class PendingCallsLimitExceeded(RayError):
    """Ray: an actor's max_pending_calls was reached."""


class ActorUnavailableError(RayError):
    """Ray: an actor cannot be reached for now."""


class AsyncioActorExit(RayError):
    """Raised by ray.actor.exit_actor() in an async actor (as Ray): its worker ends the
    actor (worker/warm.py reads the mark, the class not being importable there)."""

    __weir_actor_exit__ = True


def from_remote(e: RemoteError, function_name: Optional[str] = None) -> RayTaskError:
    """weir's RemoteError as Ray's RayTaskError, an instance of the cause's class too."""
    err = remote_error(e.type_name, e.remote_message, e.remote_traceback, e.cause, e.job_id,
                       base=RayTaskError)
    assert isinstance(err, RayTaskError)
    err._function_name = function_name
    return err
