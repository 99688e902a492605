"""A call on a warm worker as the program sees it (docs/internals/calls.md): WarmFuture,
settled by the pool (remote/warm.py) from the frames of the worker's socket, waited for
without the server."""

import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple

from ..errors import GetTimeoutError, WeirError
from ..worker import warm as _w
from .futures import Future

if TYPE_CHECKING:
    from .warm import Pool, _Worker


class WarmFuture(Future):
    """A call on a warm worker: settled by the pool, waited for without the server."""

    _local = True

    def __init__(self, pool: "Pool", call_id: int, name: str,
                 fn: Optional[Callable[..., Any]], args: bytes, o: Dict[str, Any]) -> None:
        self._session = pool.session
        self._pool = pool
        self.call_id = call_id
        self.job_id: Optional[int] = None  # type: ignore[assignment]
        self.name = name
        self._fn = fn
        self._args = args  # the pickle of (args, kwargs), kept for a retry
        self._opts = o
        self._tries = 0
        self._state = "queued"
        self._event = threading.Event()
        self._done = False
        self._value: Any = None
        self._error: Optional[BaseException] = None
        self._cancel = False
        self._forced = False  # cancelled with force=True: its worker killed
        self._worker: Optional["_Worker"] = None
        self._rec = 0  # the current try's number in the records (0: none yet)
        self._sent = 0.0  # when the current try was sent (perf_counter)
        self._solo = False  # whether it was sent to an idle worker (its time is the call's)
        self._result = None  # type: ignore[assignment]
        self._call_file = None
        self._ranks = 1
        self._version = None
        self._job = None
        self._on_done: Optional[Callable[["WarmFuture"], None]] = None  # called once settled
        self._then: List[Callable[["WarmFuture"], None]] = []  # then()'s, called once settled
        self._holds: List[Any] = []  # the shared objects of its arguments, until it ends
        self._children: List[Future] = []  # the calls it made (ray.cancel(recursive=True))
        self._method: Optional[str] = None  # an actor's method (remote/actors.py)
        self._actor_no: Optional[int] = None  # its actor's number (Ray's ids: ray_ids.py)
        # a streaming generator's items so far, (value, SharedRef or None) each (None: not a
        # generator's call); its value once ended is the list of the items' values
        self._items: Optional[List[Tuple[Any, Any]]] = \
            [] if getattr(fn, _w.STREAM_ATTR, None) is not None else None
        self._shm: Any = None  # the SharedRef of a value in shared memory (remote/results.py)

    def __repr__(self) -> str:
        return "<weir.Future %s call %d %s>" % (self.name, self.call_id,
                                                self._state if not self._done else "done")

    def then(self, cb: Callable[["WarmFuture"], None]) -> None:
        """cb(self) once the call has ended: now when it has, else in the thread that
        settles it."""
        with self._pool.cond:
            if not self._done:
                self._then.append(cb)
                return
        cb(self)

    def __reduce__(self) -> Tuple[Any, Tuple[str, int]]:
        """A ref pickled (into a call's arguments, a value): the program's folder and the
        call's id; call_ref() makes it this future in the program, a LinkFuture in a task
        (its value asked of the program)."""
        from .warm import call_ref  # (warm imports this module)

        self._pool.export(self)
        return (call_ref, (self._pool.dir, self.call_id))

    def _ray_task(self) -> Tuple[str, int]:
        """Ray's ids (remote/ray_ids.py): the program's tag, the call's number, its
        actor's."""
        from . import ray_ids
        return ray_ids.task_hex(self._pool.tag, self.call_id, self._actor_no), 1

    def job(self) -> Dict[str, Any]:
        """The worker job that ran (or runs) the call, as the API shows it."""
        if self.job_id is None:
            raise WeirError("%s (call %d) has no worker yet" % (self.name, self.call_id))
        return self._session.client.job(self.job_id)

    def logs(self, index: int = 0) -> str:
        """The log of the worker job that ran the call (its other calls' lines too)."""
        if self.job_id is None:
            return ""
        return self._session.client.logs(self.job_id, "worker", index)

    def kill(self) -> None:
        """Cancels the call (weir.kill's meaning): see cancel()."""
        self.cancel(force=False)

    def cancel(self, force: bool = False, recursive: bool = True) -> None:
        """A queued call is dropped; a running one gets SIGINT (KeyboardInterrupt in the
        call), or with force its worker is killed.  get() then raises JobFailed of a
        "killed" job (Ray: TaskCancelledError).  An ended call is left as it is.  With
        recursive, the calls it made (and theirs) are cancelled too, first."""
        if recursive:
            for c in list(self._children):
                if isinstance(c, WarmFuture):
                    c.cancel(force, True)
        self._pool.cancel(self, force)

    def done(self) -> bool:
        return self._done

    def _wait(self, deadline: Optional[float]) -> None:
        if self._done:
            return
        wait = None if deadline is None else max(0.0, deadline - time.monotonic())
        if not self._event.wait(wait):
            raise GetTimeoutError("%s (call %d) still %s" % (self.name, self.call_id,
                                                             self._state))
        if type(self) is not WarmFuture:  # it became a job's Future (_to_job_path)
            self._wait(deadline)

    def _wait_any(self, pending: List[Future], timeout: Optional[float]) -> None:
        """Returns when one of pending (this pool's calls) may have ended, or after
        timeout."""
        with self._pool.cond:
            if any(f._done for f in pending):
                return
            self._pool.cond.wait(timeout)
