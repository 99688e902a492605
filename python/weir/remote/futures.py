"""What a remote call gives back: ObjectRef (a weir.put value), Future (one call's job), and
weir.get, weir.wait, weir.kill over them.  A call's result is the file the task wrote into
the object folder's results/, read once its job has ended."""

import concurrent.futures
import glob
import os
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import cloudpickle

from . import objects as _objects
from ..client import JOB_FINAL
from ..errors import ApiError, GetTimeoutError, JobFailed, WeirError, remote_error
from . import ray_ids as _ray_ids
from .session import _get_session, _Session


class ObjectRef:
    """A value stored once by weir.put: pass it to remote calls (a top-level argument is
    replaced by the value; one inside a structure is read with weir.get in the task)."""

    __slots__ = ("sha",)

    def __init__(self, sha: str) -> None:
        self.sha = sha

    def __repr__(self) -> str:
        return "ObjectRef(%s)" % self.sha[:16]

    def __reduce__(self) -> Tuple[Any, Tuple[str]]:
        _objects.note_ref(self.sha)
        return (ObjectRef, (self.sha,))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ObjectRef) and other.sha == self.sha

    def __hash__(self) -> int:
        return hash(self.sha)

    # Ray's ObjectRef methods (remote/ray_ids.py): a put value's id, from what names it
    def hex(self) -> str:
        return _ray_ids.put_hex(self._ray_key())

    def binary(self) -> bytes:
        return bytes.fromhex(self.hex())

    def task_id(self) -> _ray_ids.TaskID:
        return _ray_ids.TaskID(self.hex()[:2 * _ray_ids.TASK_BYTES])

    def _ray_key(self) -> str:
        return self.sha


class Future:
    """The result of one remote call (one weir job); weir.get(future) waits for it."""

    # whether the call is settled in this process (a warm worker's: remote/warm.py), not
    # followed through its job
    _local = False

    def __init__(self, session: _Session, job: Dict[str, Any], result: Path, name: str,
                 call_file: Optional[Path], ranks: int = 1) -> None:
        self._session = session
        self.job_id: int = job["id"]
        self.name = name
        self._result = result
        self._call_file = call_file
        self._ranks = ranks
        self._version = job.get("version")
        self._state = job["state"]
        self._job: Optional[Dict[str, Any]] = None
        self._done = False
        self._value: Any = None
        self._error: Optional[BaseException] = None

    def __repr__(self) -> str:
        return "<weir.Future %s job %d %s>" % (self.name, self.job_id,
                                                self._state if not self._done else "done")

    # Ray's ObjectRef methods (remote/ray_ids.py): the call's task and its return's index
    def hex(self) -> str:
        """The ref's object id: its task's, then its index (56 hex digits)."""
        task, index = self._ray_task()
        return _ray_ids.object_hex(task, index)

    def binary(self) -> bytes:
        return bytes.fromhex(self.hex())

    def task_id(self) -> _ray_ids.TaskID:
        """The call's task id (get_runtime_context().get_task_id() in the call)."""
        return _ray_ids.TaskID(self._ray_task()[0])

    def _ray_task(self) -> Tuple[str, int]:
        """(the task's hex, the index of this ref among its returns): a call that is a job
        is the task of the job's own scope (compat/ray/runtime.py, job_scope)."""
        job = getattr(self, "job_id", None)
        if job is not None:
            return _ray_ids.task_hex("weir-job-%s" % job, 0), 1
        return _ray_ids.task_hex("ref", id(self)), 1  # no call behind it (a value here)

    # the paths of what rank r writes
    def _result_of(self, rank: int) -> Path:
        return self._result if self._ranks == 1 else self._result.with_name(
            "%s.%d.pkl" % (self._result.stem, rank))

    def job(self) -> Dict[str, Any]:
        """The job as the API shows it now."""
        return self._session.client.job(self.job_id)

    def logs(self, index: int = 0) -> str:
        """The call's output (its job's log)."""
        return self._session.client.logs(self.job_id, "worker", index)

    def kill(self) -> None:
        """Kills the call's job."""
        try:
            self._session.client.kill(self.job_id)
        except ApiError as e:
            if e.status != 409:
                raise

    def done(self) -> bool:
        """Whether the job has ended (and the result can be read without waiting)."""
        if self._done:
            return True
        job = self._session.client.job(self.job_id)
        self._state, self._version = job["state"], job["version"]
        if job["state"] in JOB_FINAL:
            self._finish(job)
        return self._done

    def result(self, timeout: Optional[float] = None) -> Any:
        """The value (raises what the function raised); weir.get(self, timeout)."""
        return get(self, timeout=timeout)

    def future(self) -> "concurrent.futures.Future[Any]":
        """A concurrent.futures.Future of the value (Ray's ObjectRef.future()), set by a
        thread that waits for it with RESOLVE (ray.get's errors under `import ray`)."""
        out: "concurrent.futures.Future[Any]" = concurrent.futures.Future()

        def wait() -> None:
            try:
                out.set_result(RESOLVE(self))
            except BaseException as e:
                out.set_exception(e)
        threading.Thread(target=wait, name="weir-ref-future", daemon=True).start()
        return out

    def __await__(self) -> Any:
        """`await ref` in a coroutine (an async actor's method): the value, the event loop
        free meanwhile."""
        import asyncio
        return asyncio.wrap_future(self.future()).__await__()

    def _wait(self, deadline: Optional[float]) -> None:
        client = self._session.client
        while not self._done:
            wait = 30.0
            if deadline is not None:
                wait = deadline - time.monotonic()
                if wait <= 0:
                    if self.done():  # one last look: ended since (timeout=0 asks only that)
                        break
                    raise GetTimeoutError("%s (job %d) still %s" % (self.name, self.job_id,
                                                                    self._state))
            params: Dict[str, Any] = {"wait": max(1, min(600, int(wait + 0.999)))}
            if self._version:
                params["since"] = self._version
            job = client._obj("GET", "/jobs/%d" % self.job_id, params=params,
                              timeout=params["wait"] + 30)
            self._state, self._version = job["state"], job["version"]
            if job["state"] in JOB_FINAL:
                self._finish(job)

    def _finish(self, job: Dict[str, Any]) -> None:
        """Reads the result of an ended job: the value, or the error to raise."""
        self._job = job
        self._session.forget(self.job_id)
        try:
            self._read(job)
        except BaseException as e:  # what get() raises for this future
            self._error = e
        self._done = True
        if self._call_file is not None:
            self._session.release_call(self._call_file)

    def _read(self, job: Dict[str, Any]) -> None:
        paths = [self._result_of(r) for r in range(self._ranks)]
        got: Any = None
        # the task wrote its result before it exited: give a shared folder a moment
        for _ in range(20 if job["state"] == "succeeded" else 1):
            got = _load_result(paths[0]) if job["state"] == "succeeded" else None
            if got is not None or job["state"] != "succeeded":
                break
            time.sleep(0.1)
        if job["state"] != "succeeded":
            # the rank that raised first: the others' errors often follow from it (a peer
            # gone from the collective)
            errors: List[Tuple[int, Any]] = []
            for p in paths:
                rec = _load_result(p)
                if rec is not None and rec[0] == "error":
                    errors.append((p.stat().st_mtime_ns, rec))
            got = min(errors, key=lambda e: e[0])[1] if errors else None
        for p in paths + [Path(x) for x in glob.glob(glob.escape(str(paths[0])) + ".item.*")]:
            try:  # (a streaming generator's items: worker/runner.py, item_path)
                p.unlink()
            except OSError:
                pass
        if got is None:
            raise self._no_result(job)
        if got[0] == "ok":
            self._value = got[1]
            return
        _, type_name, message, tb, exc_bytes = got
        cause = None
        if exc_bytes:
            try:
                cause = cloudpickle.loads(exc_bytes)
            except Exception:
                cause = None
        raise remote_error(type_name, message, tb, cause, self.job_id)

    def _no_result(self, job: Dict[str, Any]) -> JobFailed:
        tail = ""
        try:
            tail = self._session.client.logs(self.job_id, "worker", 0, offset=-2000)
        except WeirError:
            pass
        why = job.get("reason") or ("exit code %s" % job.get("exit_code"))
        return JobFailed("%s (job %d) %s without a result: %s" % (self.name, self.job_id,
                                                                 job["state"], why), job, tail)


class LocalFuture(Future):
    """A ref settled in this process, followed through no job: its name, no job id, its
    value or error once done.  A subclass says when it is done (_done) and how it waits
    (_wait, _wait_any)."""

    _local = True

    def __init__(self, name: str, job_id: Optional[int] = None) -> None:
        self.name = name
        self.job_id = job_id  # type: ignore[assignment]
        self._value: Any = None
        self._error: Optional[BaseException] = None

    def __repr__(self) -> str:
        return "<weir.Future %s>" % self.name

    def done(self) -> bool:
        return bool(self._done)


class SettledFuture(LocalFuture):
    """A ref whose value (or error) is here already: get gives it at once."""

    _done = True

    def __init__(self, name: str, value: Any = None,
                 error: Optional[BaseException] = None) -> None:
        super().__init__(name)
        self._value = value
        self._error = error

    def _wait(self, deadline: Optional[float]) -> None:
        return None

    def _wait_any(self, pending: List[Future], timeout: Optional[float]) -> None:
        return None


def _load_result(path: Path) -> Any:
    try:
        with open(path, "rb") as f:
            return cloudpickle.load(f)
    except FileNotFoundError:
        return None


def _get_ref(ref: ObjectRef) -> Any:
    """The value of a put object: a shared segment's mapped (remote/shm.py); in a task
    its linked copy, else the object folder."""
    if hasattr(ref, "path"):  # a SharedRef
        return ref.value()  # type: ignore[attr-defined]
    objs = os.environ.get("WEIR_PY_OBJECTS")
    if objs is not None:  # in a task: its linked copy, else the folder
        return _objects.read_archive_value(Path(objs), ref.sha)
    return _objects.read_archive_value(_get_session().objects_dir, ref.sha)


def _resolve(ref: Future) -> Any:
    return get(ref)


# what Future.future() and `await` wait with: weir.get; ray's get under `import ray`
RESOLVE: Callable[[Future], Any] = _resolve


def get(refs: Union[Future, ObjectRef, Sequence[Union[Future, ObjectRef]]],
        timeout: Optional[float] = None) -> Any:
    """The value of a Future or ObjectRef, or of each in a list (in order).  Raises what a
    call raised (RemoteError, with the remote traceback), JobFailed for a call that ended
    without a result, GetTimeoutError after `timeout` seconds (the jobs go on)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    items: List[Union[Future, ObjectRef]]
    if isinstance(refs, (Future, ObjectRef)):
        single, items = True, [refs]
    else:
        single, items = False, list(refs)
    out: List[Any] = []
    for r in items:
        if isinstance(r, ObjectRef):
            out.append(_get_ref(r))
            continue
        if not isinstance(r, Future):
            raise TypeError("weir.get: expected a Future or an ObjectRef, got %r" % (r,))
        r._wait(deadline)
        if r._error is not None:
            raise r._error
        out.append(r._value)
    return out[0] if single else out


def wait(futures: Sequence[Future], num_returns: int = 1, timeout: Optional[float] = None
         ) -> Tuple[List[Future], List[Future]]:
    """(ready, not_ready): returns once num_returns of the futures have ended, or after
    timeout seconds; the order of each list is the order given."""
    futures = list(futures)
    if not 0 <= num_returns <= len(futures):
        raise ValueError("num_returns: expected 0 to %d, got %r" % (len(futures), num_returns))
    deadline = None if timeout is None else time.monotonic() + timeout
    pause = 0.02
    while True:
        pending = [f for f in futures if not f._done]
        if len(futures) - len(pending) >= num_returns:
            break
        if pending and all(f._local for f in pending):
            # a warm worker's calls: woken when one ends, no server asked
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                break
            pending[0]._wait_any(pending, left)  # type: ignore[attr-defined]
            continue
        _refresh([f for f in pending if not f._local])
        if len(futures) - sum(1 for f in futures if not f._done) >= num_returns:
            break
        if deadline is not None and time.monotonic() >= deadline:
            break
        time.sleep(pause if deadline is None else max(0, min(pause,
                                                             deadline - time.monotonic())))
        pause = min(pause * 2, 0.5)
    ready = [f for f in futures if f._done][:num_returns] if num_returns else []
    return ready, [f for f in futures if f not in ready]


def _refresh(pending: List[Future]) -> None:
    """Looks at the pending futures' jobs: one list request when there are many."""
    if not pending:
        return
    client = pending[0]._session.client
    if len(pending) <= 4:
        for f in pending:
            f.done()
        return
    lo = min(f.job_id for f in pending)
    hi = max(f.job_id for f in pending)
    seen = {j["id"]: j for j in client.jobs(limit=min(1000000, hi - lo + 1000))}
    for f in pending:
        j = seen.get(f.job_id)
        if j is None:
            f.done()
        elif j["state"] in JOB_FINAL:
            f._finish(client.job(f.job_id))
        else:
            f._state = j["state"]


def kill(future: Future) -> None:
    """Kills a call's job (weir.cancel's meaning in Ray)."""
    future.kill()


cancel = kill


