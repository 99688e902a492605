"""Remote functions over weir's jobs: @weir.remote, .remote(), weir.get, weir.wait,
weir.put, weir.train.

One call is one weir job of one task.  The call (function and arguments, cloudpickled) is a
file in the object folder linked into the task; `weir.put` objects and large arguments are
tar archives there, which weir unpacks once per content hash into its cache and links into
every task that uses them; the task (weir/_runner.py, run by the caller's interpreter) writes
what the function returned or raised into the folder's results/, and weir.get reads it once
the job has ended.  Jobs this process started and has not seen end are killed on Ctrl-C and
at exit.
"""

import atexit
import inspect
import os
import re
import shlex
import signal
import sys
import sysconfig
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import cloudpickle

from . import _config, _objects
from .client import JOB_FINAL, Client
from .errors import (ApiError, GetTimeoutError, JobFailed, WeirError,
                     remote_error)

RUNNER = Path(__file__).resolve().parent / "_runner.py"
PACKAGE_PARENT = str(Path(__file__).resolve().parent.parent)
# an argument whose pickle is larger than this travels as an archive, as weir.put's do
LARGE_ARG = 1 << 20
AMOUNT = re.compile(r"^\s*\d+(\.\d+)?\s*([kKmMgGtT]([iI]?[bB]?)?)?\s*$")
DURATION = re.compile(r"^\s*(\d+[smhd]?)+\s*$")


class ObjectRef:
    """A value stored once by weir.put: pass it to remote calls (a top-level argument is
    replaced by the value; one inside a structure is read with weir.get in the task)."""

    __slots__ = ("sha",)

    def __init__(self, sha: str):
        self.sha = sha

    def __repr__(self):
        return "ObjectRef(%s)" % self.sha[:16]

    def __reduce__(self):
        _objects.note_ref(self.sha)
        return (ObjectRef, (self.sha,))

    def __eq__(self, other):
        return isinstance(other, ObjectRef) and other.sha == self.sha

    def __hash__(self):
        return hash(self.sha)


class Future:
    """The result of one remote call (one weir job); weir.get(future) waits for it."""

    def __init__(self, session: "_Session", job: dict, result: Path, name: str,
                 call_file: Optional[Path], ranks: int = 1):
        self._session = session
        self.job_id: int = job["id"]
        self.name = name
        self._result = result
        self._call_file = call_file
        self._ranks = ranks
        self._version = job.get("version")
        self._state = job["state"]
        self._job: Optional[dict] = None
        self._done = False
        self._value: Any = None
        self._error: Optional[BaseException] = None

    def __repr__(self):
        return "<weir.Future %s job %d %s>" % (self.name, self.job_id,
                                                self._state if not self._done else "done")

    # the paths of what rank r writes
    def _result_of(self, rank: int) -> Path:
        return self._result if self._ranks == 1 else self._result.with_name(
            "%s.%d.pkl" % (self._result.stem, rank))

    def job(self) -> dict:
        """The job as the API shows it now."""
        return self._session.client.job(self.job_id)

    def logs(self, index: int = 0) -> str:
        """The call's output (its job's log)."""
        return self._session.client.logs(self.job_id, "worker", index)

    def kill(self):
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

    def result(self, timeout: Optional[float] = None):
        """The value (raises what the function raised); weir.get(self, timeout)."""
        return get(self, timeout=timeout)

    def _wait(self, deadline: Optional[float]):
        client = self._session.client
        while not self._done:
            wait = 30.0
            if deadline is not None:
                wait = deadline - time.monotonic()
                if wait <= 0:
                    raise GetTimeoutError("%s (job %d) still %s" % (self.name, self.job_id,
                                                                    self._state))
            params = {"wait": max(1, min(600, int(wait + 0.999)))}
            if self._version:
                params["since"] = self._version
            job = client.request("GET", "/jobs/%d" % self.job_id, params=params,
                                 timeout=params["wait"] + 30)
            self._state, self._version = job["state"], job["version"]
            if job["state"] in JOB_FINAL:
                self._finish(job)

    def _finish(self, job: dict):
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

    def _read(self, job: dict):
        paths = [self._result_of(r) for r in range(self._ranks)]
        got = None
        # the task wrote its result before it exited: give a shared folder a moment
        for _ in range(20 if job["state"] == "succeeded" else 1):
            got = _load_result(paths[0]) if job["state"] == "succeeded" else None
            if got is not None or job["state"] != "succeeded":
                break
            time.sleep(0.1)
        if job["state"] != "succeeded":
            # the rank that raised first: the others' errors often follow from it (a peer
            # gone from the collective)
            errors = []
            for p in paths:
                rec = _load_result(p)
                if rec is not None and rec[0] == "error":
                    errors.append((p.stat().st_mtime_ns, rec))
            got = min(errors, key=lambda e: e[0])[1] if errors else None
        for p in paths:
            try:
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

    def _no_result(self, job: dict) -> JobFailed:
        tail = ""
        try:
            tail = self._session.client.logs(self.job_id, "worker", 0, offset=-2000)
        except WeirError:
            pass
        why = job.get("reason") or ("exit code %s" % job.get("exit_code"))
        return JobFailed("%s (job %d) %s without a result: %s" % (self.name, self.job_id,
                                                                 job["state"], why), job, tail)


def _load_result(path: Path):
    try:
        with open(path, "rb") as f:
            return cloudpickle.load(f)
    except FileNotFoundError:
        return None


# ---- the session: one client, the object folder, the jobs to kill on Ctrl-C -------------

class _Session:
    def __init__(self, server=None, token=None, home=None, objects_dir=None):
        self.client = Client(server, token, home)
        s = _config.settings(server, token, home, objects_dir)
        self.objects_dir = s.objects_dir
        self.active: Dict[int, str] = {}
        self.calls: Dict[Path, int] = {}  # call files this process wrote: in-flight users
        self.lock = threading.Lock()
        self._handler_installed = False

    def track(self, job_id: int, name: str):
        with self.lock:
            self.active[job_id] = name
        if not self._handler_installed:
            _install_sigint()
            self._handler_installed = True

    def forget(self, job_id: int):
        with self.lock:
            self.active.pop(job_id, None)

    def hold_call(self, path: Path, new: bool):
        with self.lock:
            if new or path in self.calls:
                self.calls[path] = self.calls.get(path, 0) + 1

    def release_call(self, path: Path):
        with self.lock:
            n = self.calls.get(path)
            if n is None:
                return
            if n > 1:
                self.calls[path] = n - 1
                return
            del self.calls[path]
        try:
            path.unlink()
        except OSError:
            pass

    def kill_active(self, why: str) -> List[int]:
        with self.lock:
            ids = sorted(self.active)
            self.active.clear()
        if not ids:
            return ids
        # a client of its own: the interrupted thread may be in the middle of a request
        killer = Client(self.client.server, self.client.settings.token,
                        self.client.settings.home, timeout=10)
        sys.stderr.write("weir: %s: killing job%s %s\n" % (why, "s" if len(ids) > 1 else "",
                                                          ", ".join(map(str, ids))))
        for i in ids:
            try:
                killer.kill(i)
            except WeirError:
                pass  # ended meanwhile (409), or the server is gone
        return ids


_session: Optional[_Session] = None
_session_lock = threading.Lock()
_prev_sigint = None


def init(server: Optional[str] = None, token: Optional[str] = None,
         home: Optional[str] = None, objects_dir: Optional[str] = None) -> Client:
    """Connects this process to a weir server (optional: the first call connects with the
    defaults).  `objects_dir` is where arguments, results and weir.put objects are written:
    a folder every task reads (default $WEIR_OBJECTS, else HOME/objects)."""
    global _session
    with _session_lock:
        _session = _Session(server, token, home, objects_dir)
        return _session.client


def _get_session() -> _Session:
    global _session
    with _session_lock:
        if _session is None:
            _session = _Session()
        return _session


def _on_sigint(signum, frame):
    s = _session
    if s is not None:
        s.kill_active("interrupted")
    prev = _prev_sigint
    if callable(prev) and prev is not _on_sigint:
        return prev(signum, frame)
    raise KeyboardInterrupt


def _install_sigint():
    global _prev_sigint
    if threading.current_thread() is not threading.main_thread():
        return
    cur = signal.getsignal(signal.SIGINT)
    if cur is _on_sigint or cur in (signal.SIG_IGN, None):
        return
    _prev_sigint = cur if callable(cur) else None
    signal.signal(signal.SIGINT, _on_sigint)


@atexit.register
def _at_exit():
    s = _session
    if s is not None:
        s.kill_active("exiting")


# ---- building a call's job ---------------------------------------------------------------

def _check_int(name: str, v, lo: int) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or int(v) != v or v < lo:
        raise ValueError("%s: expected a whole number >= %d, got %r" % (name, lo, v))
    return int(v)


def _options(cpus=1, gpus=0, memory=None, retries=0, retry_exceptions=False, timeout=None,
             queue=None, name=None, python=None, venv=None, env=None, priority=None,
             slurm=None) -> dict:
    o = {"cpus": _check_int("cpus", cpus, 1), "gpus": _check_int("gpus", gpus, 0),
         "retries": _check_int("retries", retries, 0), "retry_exceptions": bool(retry_exceptions)}
    if memory is not None:
        if isinstance(memory, bool) or not (isinstance(memory, int) and memory > 0 or
                                            isinstance(memory, str) and AMOUNT.match(memory)):
            raise ValueError("memory: expected an amount like \"4g\" or \"512m\" (or MiB as a "
                             "number), got %r" % (memory,))
    o["memory"] = memory
    if timeout is not None:
        if isinstance(timeout, bool) or not (isinstance(timeout, (int, float)) and timeout >= 0
                                             or isinstance(timeout, str) and
                                             DURATION.match(timeout)):
            raise ValueError("timeout: expected seconds or a duration like \"90s\", \"1h30m\", "
                             "got %r" % (timeout,))
        timeout = int(timeout) if isinstance(timeout, (int, float)) else timeout.strip()
    o["timeout"] = timeout
    if queue is not None and (not isinstance(queue, str) or not re.match(r"^[A-Za-z0-9_.-]{1,64}$",
                                                                        queue)):
        raise ValueError("queue: expected a queue name of the server ([A-Za-z0-9_.-], at most "
                         "64), got %r" % (queue,))
    o["queue"] = queue
    if python is not None and venv is not None:
        raise ValueError("give python= or venv=, not both")
    if venv is not None:
        python = os.path.join(os.path.abspath(os.fspath(venv)), "bin", "python")
    o["python"] = os.fspath(python) if python is not None else (sys.executable or "python3")
    if env is not None:
        for k in env:
            if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", str(k)):
                raise ValueError("env: %r is not a variable name" % (k,))
    o["env"] = dict(env or {})
    o["name"] = name
    o["priority"] = priority
    o["slurm"] = slurm
    return o


def _job_name(fn) -> str:
    mod = getattr(fn, "__module__", None) or ""
    qual = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or "call"
    qual = qual.rsplit("<locals>.", 1)[-1]  # a nested function by its own name
    name = qual if mod in ("__main__", "", "__mp_main__") else "%s.%s" % (mod, qual)
    return "".join(ch if ch.isprintable() else "_" for ch in name)[:128] or "call"


def _task_path() -> str:
    """PYTHONPATH for the task: this package, then the caller's own folders (its script's,
    $PYTHONPATH's, the current directory), not the interpreter's own."""
    own = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    own.update(os.path.realpath(p) for p in sysconfig.get_paths().values())
    out = [PACKAGE_PARENT]
    for p in sys.path:
        p = os.path.abspath(p or os.getcwd())
        rp = os.path.realpath(p)
        if not os.path.isdir(p) or "site-packages" in rp or "dist-packages" in rp:
            continue
        if any(rp == o or rp.startswith(o + os.sep) for o in own if o != "/"):
            continue
        if p not in out:
            out.append(p)
    return os.pathsep.join(out)


def _spec(name: str, o: dict, objects_dir: Path, call_file: Path, shas: Iterable[str],
          result: Path, workers: int = 1, framework: str = "none") -> dict:
    role: Dict[str, Any] = {"instances": workers, "vcores": o["cpus"], "gpus": o["gpus"],
                            "command": "%s %s" % (shlex.quote(o["python"]),
                                                  shlex.quote(str(RUNNER)))}
    if o["memory"] is not None:
        role["memory"] = o["memory"]
    env = {"PYTHONPATH": _task_path(), "PYTHONUNBUFFERED": "1",
           "WEIR_PY_OBJECTS": str(objects_dir), "WEIR_PY_RESULT": str(result)}
    env.update({str(k): str(v) for k, v in o["env"].items()})
    arts = [{"path": str(call_file), "name": "weir-call.pkl", "archive": False}]
    arts += [{"path": str(_objects.archive_path(objects_dir, s)),
              "name": _objects.artifact_name(s), "archive": True} for s in sorted(shas)]
    spec: Dict[str, Any] = {"name": o["name"] or name, "framework": framework,
                            "roles": {"worker": role}, "env": env, "artifacts": arts}
    if workers > 1:
        role["stop_on_failure"] = True
        spec["success_policy"] = "all"
    if o["retries"]:
        spec["restart"] = {"max_restarts": o["retries"],
                           "retry_exit_codes": "1-255" if o["retry_exceptions"] else "128-255"}
    if o["timeout"] is not None:
        spec["timeouts"] = {"execution": o["timeout"]}
    if o["queue"] is not None:
        spec["queue"] = o["queue"]
    if o["priority"] is not None:
        spec["priority"] = o["priority"]
    if o["slurm"] is not None:
        spec["slurm"] = dict(o["slurm"])
    return spec


def _prepare_args(s: _Session, args: tuple, kwargs: dict) -> Tuple[tuple, dict]:
    """Futures among the arguments are waited for; large arguments become put objects."""
    def one(i, a):
        if isinstance(a, Future):
            return get(a)
        if isinstance(a, ObjectRef):
            return a
        data = _objects.dumps(a, "argument %s" % i)
        if len(data) > LARGE_ARG:
            s.objects_dir.mkdir(parents=True, exist_ok=True)
            return ObjectRef(_objects.write_archive(s.objects_dir, data))
        return a
    return (tuple(one(i, a) for i, a in enumerate(args)),
            {k: one(repr(k), v) for k, v in kwargs.items()})


def _submit(fn, args: tuple, kwargs: dict, o: dict, mode: str, workers: int = 1,
            framework: str = "none", extra: Any = None) -> Future:
    s = _get_session()
    name = _job_name(fn)
    args, kwargs = _prepare_args(s, args, kwargs)
    with _objects.collecting() as c:
        data = _objects.dumps((mode, fn, args, kwargs, extra), "the call of %s" % name)
    call_id = uuid.uuid4().hex
    result = _objects.result_path(s.objects_dir, call_id)
    try:
        (s.objects_dir / "results").mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise WeirError("object folder %s: %s (set WEIR_OBJECTS or weir.init(objects_dir=...) "
                        "to a folder every task reads)" % (s.objects_dir, e)) from e
    for sha in c.found:
        if not _objects.archive_path(s.objects_dir, sha).exists():
            raise WeirError("ObjectRef %s: no such object in %s (was it put with another "
                            "object folder?)" % (sha[:16], s.objects_dir))
    call_file, new = _objects.write_call(s.objects_dir, data)
    s.hold_call(call_file, new)
    spec = _spec(name, o, s.objects_dir, call_file, c.found, result, workers, framework)
    try:
        job = s.client.submit(spec)
    except BaseException:
        s.release_call(call_file)
        raise
    s.track(job["id"], name)
    return Future(s, job, result, spec["name"], call_file, ranks=workers if mode == "train"
                  else 1)


class RemoteFunction:
    """A function whose calls run as weir jobs: f.remote(*args, **kwargs) -> Future."""

    def __init__(self, fn, options: dict):
        if not callable(fn):
            raise TypeError("weir.remote: %r is not callable" % (fn,))
        if inspect.isclass(fn):
            raise TypeError("weir.remote: classes (actors) are not supported; decorate a "
                            "function")
        self._fn = fn
        self._options = options
        self.__name__ = getattr(fn, "__name__", "remote")
        self.__qualname__ = getattr(fn, "__qualname__", self.__name__)
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__wrapped__ = fn

    def __repr__(self):
        return "<weir.remote %s>" % _job_name(self._fn)

    def __call__(self, *args, **kwargs):
        raise TypeError("%s is a remote function: call %s.remote(...), or .local(...) to run "
                        "it here" % (self.__name__, self.__name__))

    def local(self, *args, **kwargs):
        """Runs the function here, in this process."""
        return self._fn(*args, **kwargs)

    def remote(self, *args, **kwargs) -> Future:
        """Starts one call as a weir job and returns its Future at once."""
        return _submit(self._fn, args, kwargs, self._options, "call")

    def options(self, **overrides) -> "RemoteFunction":
        """The same function with some options changed: f.options(cpus=4).remote(x)."""
        cur = {k: v for k, v in self._options.items()}
        merged = dict(cpus=cur["cpus"], gpus=cur["gpus"], memory=cur["memory"],
                      retries=cur["retries"], retry_exceptions=cur["retry_exceptions"],
                      timeout=cur["timeout"], queue=cur["queue"], name=cur["name"],
                      python=cur["python"], env=cur["env"], priority=cur["priority"],
                      slurm=cur["slurm"])
        if "venv" in overrides:
            merged.pop("python")  # the venv's interpreter replaces the one chosen before
        merged.update(overrides)
        return RemoteFunction(self._fn, _options(**merged))


def remote(fn=None, *, cpus: int = 1, gpus: int = 0, memory: Union[str, int, None] = None,
           retries: int = 0, retry_exceptions: bool = False,
           timeout: Union[str, int, None] = None, queue: Optional[str] = None,
           name: Optional[str] = None, python: Optional[str] = None,
           venv: Optional[str] = None, env: Optional[Mapping[str, str]] = None,
           priority: Optional[int] = None, slurm: Optional[Mapping[str, Any]] = None):
    """Makes a function remote: each f.remote(...) call runs as one weir job.

        @weir.remote(cpus=2, gpus=1, memory="4g", retries=1, timeout="1h")
        def train(x): ...
        futures = [train.remote(i) for i in range(4)]
        weir.get(futures)

    cpus, gpus, memory: what the call's one task asks (weir's vcores, gpus, memory; memory
    default: the server's, 2g).  retries: restarts after the task died (a signal, out of
    memory); with retry_exceptions=True also after the function raised.  timeout: the
    execution limit ("90s", "1h30m", or seconds).  queue: a queue of the server (docs/
    slurm.md: local or Slurm).  python / venv: the interpreter the call runs (default: this
    one, sys.executable).  name: the job's name (default: the function's).  env: extra
    environment.  slurm: the job's own Slurm settings (partition, account, qos, time).
    """
    opts = _options(cpus=cpus, gpus=gpus, memory=memory, retries=retries,
                    retry_exceptions=retry_exceptions, timeout=timeout, queue=queue, name=name,
                    python=python, venv=venv, env=env, priority=priority, slurm=slurm)
    if fn is not None:
        return RemoteFunction(fn, opts)
    return lambda f: RemoteFunction(f, opts)


def put(value: Any) -> ObjectRef:
    """Stores value once in the object folder and returns its reference; pass it to any
    number of calls: it is written once, and weir unpacks it once per node."""
    s = _get_session()
    data = _objects.dumps(value, "the value given to weir.put")
    try:
        s.objects_dir.mkdir(parents=True, exist_ok=True)
        return ObjectRef(_objects.write_archive(s.objects_dir, data))
    except OSError as e:
        raise WeirError("weir.put: object folder %s: %s" % (s.objects_dir, e)) from e


def _get_ref(ref: ObjectRef):
    objs = os.environ.get("WEIR_PY_OBJECTS")
    if objs is not None:  # in a task: its linked copy, else the folder
        return _objects.read_archive_value(Path(objs), ref.sha)
    return _objects.read_archive_value(_get_session().objects_dir, ref.sha)


def get(refs: Union[Future, ObjectRef, Sequence[Union[Future, ObjectRef]]],
        timeout: Optional[float] = None):
    """The value of a Future or ObjectRef, or of each in a list (in order).  Raises what a
    call raised (RemoteError, with the remote traceback), JobFailed for a call that ended
    without a result, GetTimeoutError after `timeout` seconds (the jobs go on)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    single = isinstance(refs, (Future, ObjectRef))
    items = [refs] if single else list(refs)
    out = []
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
        _refresh(pending)
        if len(futures) - sum(1 for f in futures if not f._done) >= num_returns:
            break
        if deadline is not None and time.monotonic() >= deadline:
            break
        time.sleep(pause if deadline is None else max(0, min(pause,
                                                             deadline - time.monotonic())))
        pause = min(pause * 2, 0.5)
    ready = [f for f in futures if f._done][:num_returns] if num_returns else []
    return ready, [f for f in futures if f not in ready]


def _refresh(pending: List[Future]):
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


def kill(future: Future):
    """Kills a call's job (weir.cancel's meaning in Ray)."""
    future.kill()


cancel = kill


def train(fn, config: Any = None, *, workers: int = 2, framework: str = "pytorch",
          cpus: int = 1, gpus: int = 0, memory: Union[str, int, None] = None,
          timeout: Union[str, int, None] = None, queue: Optional[str] = None,
          retries: int = 0, name: Optional[str] = None, python: Optional[str] = None,
          venv: Optional[str] = None, env: Optional[Mapping[str, str]] = None,
          backend: Optional[str] = None, init_process_group: bool = True,
          wait: bool = True):
    """Runs fn in every task of a gang of `workers` and returns rank 0's return value.

    fn(config) is called (fn() when config is None) with the framework's environment set
    by weir: framework="pytorch" gives MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE, ... and,
    unless init_process_group=False, torch.distributed's process group is initialised
    before fn and destroyed after (backend: "gloo", or "nccl" with gpus); "tensorflow" sets
    TF_CONFIG.  cpus, gpus, memory are per worker.  With wait=False a Future is returned.
    An exception in any rank is raised with its traceback; the other ranks are stopped."""
    workers = _check_int("workers", workers, 1)
    if framework not in ("pytorch", "tensorflow", "mxnet", "horovod", "none"):
        raise ValueError("framework: expected pytorch, tensorflow, mxnet, horovod or none, "
                         "got %r" % (framework,))
    o = _options(cpus=cpus, gpus=gpus, memory=memory, retries=retries, timeout=timeout,
                 queue=queue, name=name, python=python, venv=venv, env=env)
    extra = {"config": config, "has_config": config is not None, "framework": framework,
             "backend": backend or ("nccl" if o["gpus"] else "gloo"),
             "init_process_group": bool(init_process_group)}
    fut = _submit(fn, (), {}, o, "train", workers, framework, extra)
    return get(fut) if wait else fut
