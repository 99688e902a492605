"""Calls on warm workers: the program's side (docs/internals/calls.md).

A pool per session: a Unix socket in a fresh 0700 folder, a key file beside it, and per
resource shape (cores, GPUs, memory, interpreter, environment) the warm workers (weir jobs
running weir/worker/warm.py) and the calls waiting for one.  A call is a frame to an idle
worker; its WarmFuture is settled by the thread that reads that worker's socket.  A worker
job is submitted when the calls outstanding outnumber the shape's workers, up to its cap.
"""

import atexit
import hashlib
import hmac
import itertools
import os
import shlex
import shutil
import socket
import sys
import tempfile
import threading
import time
from collections import deque
from typing import Any, Callable, Deque, Dict, List, Optional, Set, Tuple

import cloudpickle

from . import channel as _channel
from . import functions as _functions
from . import objects as _objects
from . import results as _results
from . import shm as _shm
from ..errors import ActorDied, JobFailed, WeirError, remote_error
from ..worker import warm as _w
from .futures import Future
from .warm_future import WarmFuture
from .call_records import CallRecords
from .patience import patiently
from .session import _Session

WORKER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "worker",
                      "warm.py")
# calls a worker may hold beyond the one it runs, when the shape cannot grow, its calls are
# short (PIPE_CALL_S on average, of those sent to an idle worker) and the worker has been on
# its current call for less than PIPE_FRESH_S:
# a burst of short calls never waits for the program between two, and a call is not queued
# behind a long one
PIPELINE = 4
PIPE_CALL_S = 0.002
PIPE_FRESH_S = 0.005
# how long a worker's end is waited for (its job's final state) after its socket closed
END_WAIT = 30.0


def enabled() -> bool:
    """Whether Ray calls go to warm workers ($WEIR_RAY_WARM=0 turns them off)."""
    return os.environ.get("WEIR_RAY_WARM", "1") != "0"


def eligible(o: Dict[str, Any]) -> bool:
    """Whether a call of options o can run on a warm worker: not one with a timeout, a
    queue or Slurm settings (those stay a job each)."""
    return o["timeout"] is None and o["queue"] is None and o["slurm"] is None


def _shape_key(o: Dict[str, Any]) -> Tuple[Any, ...]:
    return (o["cpus"], o["gpus"], str(o["memory"]), o["python"],
            tuple(sorted((str(k), str(v)) for k, v in o["env"].items())), o.get("placement"),
            o.get("max_calls") or 0)


class _Slot:
    """Where a call's argument that is a ref of a call not ended goes (Pool._after)."""

    __slots__ = ("key",)

    def __init__(self, key: Any) -> None:
        self.key = key

    def __reduce__(self) -> Tuple[Any, Tuple[Any]]:
        return (_Slot, (self.key,))


class _Worker:
    """One warm worker: its job, then its socket once it said hello."""

    def __init__(self, shape: Optional["_Shape"], job_id: int, actor: Any = None) -> None:
        self.shape = shape  # None for an actor's worker
        self.actor = actor  # the actor it holds (remote/actors.py), or None
        self.job_id = job_id
        self.sock: Optional[socket.socket] = None
        self.pid = 0
        self.inflight: Dict[int, WarmFuture] = {}  # in the order sent (dicts keep it)
        self.sent_fns: Set[bytes] = set()
        self.wlock = threading.Lock()
        self.final: Optional[Dict[str, Any]] = None
        self.ended = threading.Event()
        self.leaving = False
        self.gone = False
        self.head_since = 0.0  # since when it runs its first call in flight (perf_counter)
        self.remote = False  # connected over TCP: its pid is another node's (remote/channel.py)
        self.calls = 0  # the calls sent to it
        self.spent = False  # it had its shape's max_calls: it leaves after the last one
        # its calls that wait (ray.get) for others: while all it holds wait, it takes one
        # more call and runs it on top of them (worker/warm.py, serve_while)
        self.blocked = 0

    def free(self) -> bool:
        """Whether it runs no call but those that wait for others."""
        return len(self.inflight) <= self.blocked


class _Shape:
    def __init__(self, key: Tuple[Any, ...], o: Dict[str, Any], cap: int) -> None:
        self.key = key
        self.o = o
        self.cap = cap
        self.workers: List[_Worker] = []  # submitted and not gone
        self.queue: Deque[WarmFuture] = deque()
        self.connected = 0
        self.cold: Optional[str] = None  # why calls of this shape go the job path
        self.call_s: Optional[float] = None  # a call's time, send to result (moving mean)
        self.starting = 0  # worker jobs decided on and not yet submitted


class Pool:
    """The warm workers of one session and their calls."""

    def __init__(self, session: _Session) -> None:
        self.session = session
        self.lock = threading.Lock()
        self.cond = threading.Condition(self.lock)
        self.shapes: Dict[Tuple[Any, ...], _Shape] = {}
        self.by_job: Dict[int, _Worker] = {}
        self.ids = itertools.count(1)
        self.rec_ids = itertools.count(1)  # a try's number in the records
        self.fns: Dict[Any, Tuple[bytes, bytes]] = {}  # function -> (sha256, pickle)
        self.actors: Dict[int, Any] = {}  # id -> remote/actors.py's Actor
        self.named: Dict[Tuple[str, str], Any] = {}  # (namespace, name) -> Actor
        self.groups: Dict[int, Any] = {}  # id -> remote/placement.py's Group
        self.slots: Dict[str, _Worker] = {}  # the workers a group's bundle hosts start
        # the calls whose refs went to a task (pickled, or made by one): id -> future; held
        # while the program lives (a task may ask for the value at any time)
        self.exported: Dict[int, WarmFuture] = {}
        self.adopted: List[Any] = []  # the shared objects its tasks put (remote/shm.py)
        self.swept = False  # whether the segments of ended programs were removed
        self.closed = False
        self.dir = tempfile.mkdtemp(prefix="weir-warm-")  # 0700
        self.tag = os.path.basename(self.dir)[len("weir-warm-"):]
        self.key = os.urandom(_w.KEY_BYTES)
        fd = os.open(os.path.join(self.dir, "key"), os.O_WRONLY | os.O_CREAT | os.O_EXCL,
                     0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(self.key)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(os.path.join(self.dir, "sock"))
        self.listener.listen(64)
        self.results = str(session.objects_dir / "results")
        try:  # where a worker writes a value too large for a frame
            os.makedirs(self.results, exist_ok=True)
        except OSError as e:
            raise WeirError("object folder %s: %s (set WEIR_OBJECTS or weir.init(objects_dir="
                            "...) to a folder every task reads)" % (self.results, e)) from e
        # "unix" or "tcp" (remote/channel.py), decided at the first worker's job; the TCP
        # listener and the address workers are told, when TCP
        self.channel: Optional[str] = None
        self.tcp: Optional[Tuple[socket.socket, str, int]] = None
        threading.Thread(target=self._accept, args=(self.listener,), name="weir-warm-accept",
                         daemon=True).start()
        self.records = CallRecords(session.client, lambda: self.closed)

    def put(self, value: Any) -> Optional[Any]:
        """value in shared memory (remote/shm.py), or None past the store's size."""
        if not self.swept:
            self.swept = True
            _shm.sweep(os.path.dirname(self.dir))
        return _shm.put(value, self.tag)

    def running_on(self, pid: int) -> Optional[WarmFuture]:
        """The call that the worker of process pid runs now (the innermost one when calls
        wait in ray.get under it), or None."""
        with self.lock:
            for s in self.shapes.values():
                for w in s.workers:
                    if w.pid == pid and w.inflight:
                        calls = list(w.inflight.values())
                        return calls[-1] if w.blocked else calls[0]
        return None

    def export(self, f: WarmFuture) -> None:
        """f's ref goes to a task: held until the program ends."""
        with self.lock:
            self.exported[f.call_id] = f

    # ---- workers ------------------------------------------------------------------------
    def _channel(self) -> str:
        """How workers reach this program: "unix", or "tcp" (a port opened now, once).  Once
        decided it is read without the lock: a placement group's bundle asks for a worker's
        spec with the lock held (remote/placement.py), after the group's own spec decided."""
        how = self.channel
        if how is not None:
            return how
        how = _channel.mode(self.session.client)
        with self.lock:
            if self.channel is None:
                if how == "tcp":
                    self.tcp = _channel.listen()
                    threading.Thread(target=self._accept, args=(self.tcp[0],), daemon=True,
                                     name="weir-warm-accept-tcp").start()
                self.channel = how
            return self.channel

    def _spec(self, o: Dict[str, Any], name: str = "warm-worker",
              env_more: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
        role: Dict[str, Any] = {"instances": 1, "vcores": o["cpus"], "gpus": o["gpus"],
                                "command": "%s %s" % (shlex.quote(o["python"]),
                                                      shlex.quote(WORKER))}
        if o["memory"] is not None:
            role["memory"] = o["memory"]
        env = {"PYTHONPATH": _functions._task_path(), "WEIR_PY_OBJECTS":
               str(self.session.objects_dir), "WEIR_WARM_DIR": self.dir,
               "WEIR_WARM_TAG": self.tag, "WEIR_WARM_RESULTS": self.results,
               "WEIR_WARM_IDLE": os.environ.get("WEIR_WARM_IDLE", "10"),
               # 0: large results in the frame or the results folder, not /dev/shm
               "WEIR_WARM_SHM": os.environ.get("WEIR_WARM_SHM", "1"),
               "WEIR_WARM_CPUS": str(o["cpus"])}  # get_runtime_context's resources
        env.update(env_more or {})
        env.update({str(k): str(v) for k, v in o["env"].items()})
        spec = {"name": name, "framework": "none", "roles": {"worker": role}, "env": env}
        if self._channel() == "tcp":
            assert self.tcp is not None
            more, mask = _channel.worker_env(self.tcp[1], self.tcp[2], self.key)
            env.update(more)
            spec["mask"] = mask  # the key: *** in every view of the job and in its log
        return spec

    def _start_worker(self, shape: _Shape) -> None:
        """Submits one worker job (in the caller's thread: a refusal, such as a GPU the
        server lacks, is raised to the caller) and a thread that waits for its end.  A
        shape placed in a placement group has its workers started by a bundle's host."""
        if shape.o.get("placement") is not None:
            from . import placement
            placement.start_worker(self, shape)
            return
        try:
            spec = self._spec(shape.o)
            job = patiently("a warm worker's job",
                            lambda: self.session.client.submit(spec),
                            stop=lambda: self.closed)
        except BaseException:
            with self.lock:
                shape.starting -= 1
            raise
        w = _Worker(shape, job["id"])
        with self.lock:
            shape.starting -= 1
            shape.workers.append(w)
            self.by_job[w.job_id] = w
        threading.Thread(target=self._watch, args=(w,), name="weir-warm-job-%d" % w.job_id,
                         daemon=True).start()

    def _watch(self, w: _Worker) -> None:
        """Long-polls the worker's job until it has ended; a worker that ended without
        saying hello makes its shape cold when none of the shape ever did."""
        from ..client import Client
        s = self.session.client.settings
        client = Client(self.session.client.server, s.token, s.home)
        job: Dict[str, Any] = {}
        while True:
            try:
                job = client.wait(w.job_id)
                break
            except WeirError:
                if self.closed:
                    return
                time.sleep(0.5)
        w.final = job
        w.ended.set()
        if w.sock is not None:
            return
        if w.actor is not None:  # it ended before it reached the program
            w.actor.gone(w)
            return
        with self.lock:
            shape = w.shape
            assert shape is not None
            if w in shape.workers:
                shape.workers.remove(w)
            if self.closed:
                return
            if shape.connected == 0 and not any(x.sock for x in shape.workers):
                shape.cold = ("warm worker job %d ended (%s) before it reached the program"
                              % (w.job_id, job.get("state")))
                moved = list(shape.queue)
                shape.queue.clear()
            else:
                moved = []
        for f in moved:
            self._to_job_path(f)
        if not moved:
            self._pump(shape)

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                sock, _ = listener.accept()
            except OSError:
                return
            _channel.tune(sock)
            threading.Thread(target=self._serve, args=(sock,), name="weir-warm-conn",
                             daemon=True).start()

    def _serve(self, sock: socket.socket) -> None:
        """A worker's socket: the hello, then every frame it sends until it ends."""
        reader = _w.FrameReader()
        w: Optional[_Worker] = None
        try:
            sock.settimeout(10)
            frames: List[Tuple[int, int, bytes]] = []
            while not frames:
                data = sock.recv(1 << 16)
                if not data:
                    sock.close()
                    return
                frames = reader.feed(data)
                if not frames and reader.pending() > _channel.HELLO_MAX:
                    sock.close()  # no hello: whoever it is does not know the key
                    return
            kind, _, body = frames[0]
            if kind == _w.BUNDLE:  # a placement group's bundle host (remote/placement.py)
                if not hmac.compare_digest(body[:_w.KEY_BYTES], self.key):
                    sock.close()
                    return
                sock.settimeout(None)
                from . import placement
                placement.serve_bundle(self, sock, reader, frames[1:], body)
                return
            if kind == _w.LINK:  # a task that calls actors (remote/actors.py)
                if not hmac.compare_digest(body[:_w.KEY_BYTES], self.key):
                    sock.close()
                    return
                sock.settimeout(None)
                from . import actors as _actors
                lpid = body[_w.KEY_BYTES:].decode("ascii", "replace")
                _actors.serve_link(self, sock, reader, frames[1:],
                                   int(lpid) if lpid.isdigit() else 0)
                return
            key, pid, job = _w.parse_hello(body) if kind == _w.HELLO else (b"", 0, "")
            if not hmac.compare_digest(key, self.key) or not (job.isdigit() or
                                                               job in self.slots):
                sock.close()
                return
            sock.settimeout(None)
            with self.lock:
                w = self.by_job.get(int(job)) if job.isdigit() else self.slots.get(job)
                if w is None or w.sock is not None or self.closed:
                    sock.close()
                    return
                w.sock, w.pid = sock, pid
                w.remote = _channel.is_remote(sock)
                if w.shape is not None:
                    w.shape.connected += 1
            if w.actor is not None:
                w.actor.connected(w)
            else:
                assert w.shape is not None
                self._pump(w.shape)
            rest = frames[1:]
            while True:
                for fr in rest:
                    self._frame(w, *fr)
                data = sock.recv(1 << 20)
                if not data:
                    break
                rest = reader.feed(data)
        except (OSError, _w.FrameError):
            pass
        if w is not None:
            self._gone(w)

    def _frame(self, w: _Worker, kind: int, cid: int, body: bytes) -> None:
        if kind == _w.BYE:
            with self.lock:
                w.leaving = True
            return
        if kind in (_w.BLOCKED, _w.UNBLOCKED):
            with self.lock:
                w.blocked = max(0, w.blocked + (1 if kind == _w.BLOCKED else -1))
            if w.shape is not None:
                self._pump(w.shape)
            return
        if kind == _w.ITEM:  # a generator's item: the call goes on
            with self.lock:
                f = w.inflight.get(cid)
            if f is not None:
                _results.item(self, f, body)
            return
        with self.lock:
            f = w.inflight.pop(cid, None)
            now = time.perf_counter()
            w.head_since = now  # the next call in flight starts now
            if f is not None and f._solo and w.shape is not None and \
                    kind in (_w.VALUE, _w.PATHVAL, _w.ERROR, _w.SHMVAL):
                took = now - f._sent
                c = w.shape.call_s
                w.shape.call_s = took if c is None else 0.8 * c + 0.2 * took
            spent = w.spent and not w.inflight
        if spent:
            self._retire(w)
        if f is None:
            return
        if kind in (_w.VALUE, _w.SHMVAL):
            try:
                value, f._shm = _results.value_of(self, kind, body)
            except (OSError, ValueError) as e:  # a segment not the program's, or torn
                self._settle(f, error=WeirError("%s (call %d): its result cannot be read: %s"
                                                % (f.name, f.call_id, e)))
            else:
                if f._items is not None:  # a generator's: the count; its value the items'
                    value = [v for v, _ in f._items]
                self._settle(f, value=value)
        elif kind == _w.PATHVAL:
            path = _w.result_file(self.results, self.tag, cid)
            with open(path, "rb") as fh:
                value = cloudpickle.load(fh)
            os.unlink(path)
            self._settle(f, value=value)
        elif kind == _w.ERROR:
            self._raised(f, cloudpickle.loads(body))
        elif kind == _w.CANCELLED:
            self._settle(f, error=self._cancelled(f))
        elif kind == _w.ACTOR_EXIT and w.actor is not None:  # exit_actor() in that call
            w.actor.exited(f)
        if w.shape is not None:
            self._pump(w.shape)

    def _retire(self, w: _Worker) -> None:
        """A worker that ran its shape's max_calls leaves (its socket closed: it sees the
        end and exits); another starts for the calls that wait."""
        assert w.shape is not None
        shape = w.shape
        with self.lock:
            w.leaving = True
            grow = bool(shape.queue) and self._wants_worker(shape)
        try:
            assert w.sock is not None
            w.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        if grow:
            try:
                self._start_worker(shape)
            except WeirError as e:
                with self.lock:
                    moved = list(shape.queue)
                    shape.queue.clear()
                for q in moved:
                    self._settle(q, error=e)

    def _raised(self, f: WarmFuture, rec: Tuple[Any, ...]) -> None:
        _, type_name, message, tb, exc_bytes = rec
        cause = None
        if exc_bytes:
            try:
                cause = cloudpickle.loads(exc_bytes)
            except Exception:
                cause = None
        rx = f._opts["retry_exceptions"]
        again = rx is True or (isinstance(rx, tuple) and cause is not None and
                               isinstance(cause, rx))
        if again and f._tries <= f._opts["retries"] and not f._cancel:
            self._note(f, "failed", type_name)  # this try's record; the next is another
            self._requeue(f)
            return
        self._settle(f, error=remote_error(type_name, message, tb, cause, f.job_id))

    def _cancelled(self, f: WarmFuture) -> JobFailed:
        return JobFailed("%s (call %d) was cancelled%s" % (
            f.name, f.call_id, " (force=True: its worker was killed)" if f._forced else ""),
            {"state": "killed", "id": f.job_id, "tasks": [], "force": f._forced})

    def _gone(self, w: _Worker) -> None:
        """A worker's socket ended: its calls go back to the queue, but the one it was
        running when it did not say bye: that one is retried or fails as its job ended."""
        _results.worker_gone(self.tag, w.pid)
        if w.actor is not None:
            w.actor.gone(w)
            return
        with self.lock:
            w.gone = True
            shape = w.shape
            assert shape is not None
            if w in shape.workers:
                shape.workers.remove(w)
            if w.sock is not None:
                shape.connected -= 1
            calls = list(w.inflight.values())
            w.inflight.clear()
            leaving = w.leaving or self.closed
        if self.closed:
            return
        first = calls[0] if calls and not leaving else None
        for f in calls:
            if f is not first:
                self._unrun(f)
                self._requeue(f, free=True)
        if first is not None:
            if first._cancel:
                self._settle(first, error=self._cancelled(first))
            else:
                w.ended.wait(END_WAIT)
                job = w.final or {"id": w.job_id, "state": "failed", "tasks": []}
                why = job.get("reason") or "exit code %s" % job.get("exit_code")
                oom = any(t.get("oom_killed") for t in job.get("tasks") or [])
                self._note(first, "crashed", "out of memory" if oom else "died: %s" % why)
                if first._tries <= first._opts["retries"]:
                    self._requeue(first)
                else:
                    self._settle(first, error=JobFailed(
                        "%s (call %d) ended without a result: its worker (job %d) %s: %s"
                        % (first.name, first.call_id, w.job_id,
                           "ran out of memory" if oom else "died", why), job))
        self._pump(shape)

    # ---- the calls' records (remote/call_records.py) ------------------------------------
    def _note(self, f: WarmFuture, state: str, error: Optional[str] = None) -> None:
        """The state of f's current try on its worker, to send with the next batch: a record
        a try (the call's id in the program is the future's; a retry on another worker is
        a record under that worker's job)."""
        if f.job_id is not None and f._rec:
            self.records.note(f.job_id, f._rec, f.name, max(1, f._tries), state, error)

    def _unrun(self, f: WarmFuture) -> None:
        """f's try was sent to a worker that did not run it (it left, or it died running
        the call ahead): its record goes, or says so when it was sent already."""
        if not self.records.unsent(f.job_id or 0, f._rec):
            self._note(f, "cancelled", "not run on this worker: sent to another")

    # ---- calls --------------------------------------------------------------------------
    def _fn(self, fn: Callable[..., Any], name: str) -> Tuple[bytes, bytes]:
        got = self.fns.get(fn)
        if got is None:
            data = _objects.dumps(fn, "the function %s" % name)
            got = (hashlib.sha256(data).digest(), data)
            self.fns[fn] = got
        return got

    def submit(self, fn: Callable[..., Any], args: Tuple[Any, ...], kwargs: Dict[str, Any],
               o: Dict[str, Any], name: str) -> Future:
        key = _shape_key(o)
        with self.lock:
            shape = self.shapes.get(key)
            if shape is None:
                cap = int(os.environ.get("WEIR_WARM_WORKERS") or os.cpu_count() or 1)
                cap = max(1, cap // max(1, o["cpus"]))
                if o.get("placement") is not None:  # what its bundles hold (placement.py)
                    cap = o["placement"][2]
                shape = self.shapes[key] = _Shape(key, o, cap)
            cold = shape.cold
        if cold is not None:
            return _functions._submit(fn, args, kwargs, o, "call", extra=_extra(o))
        self._fn(fn, name)
        deps = {i: a for i, a in list(enumerate(args)) + list(kwargs.items())
                if isinstance(a, WarmFuture) and a._pool is self and not a._done}
        if deps:
            return self._after(fn, args, kwargs, o, name, shape, deps)
        holds: List[Any] = []
        data = self.pickle_args(args, kwargs, name, holds)
        f = WarmFuture(self, next(self.ids), name, fn, data, o)
        f._holds = holds
        with self.lock:
            shape.queue.append(f)
            grow = self._wants_worker(shape)
        if grow:
            try:
                self._start_worker(shape)
            except BaseException:
                # refused (a GPU the server lacks...): the call is not made, as on the job path
                with self.lock:
                    if f in shape.queue:
                        shape.queue.remove(f)
                raise
        self._pump(shape)
        return f

    def _after(self, fn: Callable[..., Any], args: Tuple[Any, ...], kwargs: Dict[str, Any],
               o: Dict[str, Any], name: str, shape: _Shape, deps: Dict[Any, "WarmFuture"]
               ) -> "WarmFuture":
        """A call given refs of calls not ended yet (at the top level): its ref at once, as
        Ray's; queued when they have ended, their values in their places (the error of the
        first that failed, in the arguments' order, is its own).  Its other arguments are
        pickled now (a later change of one is not the call's; one that cannot be pickled is
        refused here, nothing made)."""
        snap = _objects.dumps_args(
            tuple(_Slot(i) if i in deps else a for i, a in enumerate(args)),
            {k: _Slot(k) if k in deps else v for k, v in kwargs.items()}, name)
        f = WarmFuture(self, next(self.ids), name, fn, b"", o)
        f._holds = [args, kwargs]  # their shared objects live until it is made
        unique = list({id(d): d for d in deps.values()}.values())
        left = [len(unique)]
        count = threading.Lock()

        def ready(_: "WarmFuture") -> None:
            with count:
                left[0] -= 1
                if left[0]:
                    return
            if f._done:  # cancelled meanwhile
                return
            bad = next((d for d in deps.values() if d._error is not None), None)
            try:
                if bad is not None:
                    raise bad._error  # type: ignore[misc]
                a2, k2 = cloudpickle.loads(snap)
                a2 = tuple(deps[x.key]._value if isinstance(x, _Slot) else x for x in a2)
                k2 = {k: deps[v.key]._value if isinstance(v, _Slot) else v
                      for k, v in k2.items()}
                holds: List[Any] = []
                f._args = self.pickle_args(a2, k2, name, holds)
                f._holds = holds
                with self.lock:
                    if f._done:
                        return
                    shape.queue.append(f)
                    grow = self._wants_worker(shape)
                if grow:
                    self._start_worker(shape)
            except BaseException as e:
                with self.lock:
                    if f in shape.queue:
                        shape.queue.remove(f)
                self._settle(f, error=e)
                return
            self._pump(shape)
        for d in unique:
            d.then(ready)
        return f

    def pickle_args(self, args: Tuple[Any, ...], kwargs: Dict[str, Any], name: str,
                    holds: Optional[List[Any]] = None) -> bytes:
        """The arguments of a call, pickled now, as the job path does: a later change of a
        mutable argument is not the call's.  Once, when no argument is a call's future
        (waited for first) and all of them together are small (else one by one: a large
        one becomes a put object).  The shared objects among them are added to holds (the
        call keeps them until it ends)."""
        if self._channel() == "tcp":
            # a worker on another node cannot map this machine's shared memory: the put
            # objects among the arguments go to the object folder (as for a job's call)
            with _objects.collecting():
                return self._pickle_args(args, kwargs, name, holds)
        return self._pickle_args(args, kwargs, name, holds)

    def _pickle_args(self, args: Tuple[Any, ...], kwargs: Dict[str, Any], name: str,
                     holds: Optional[List[Any]] = None) -> bytes:
        with _shm.holding() as h:
            data = b""
            if not any(isinstance(a, Future) for a in args) and \
                    not any(isinstance(v, Future) for v in kwargs.values()):
                data = _objects.dumps_args(args, kwargs, name)
            if not data or len(data) > _functions.LARGE_ARG:
                h.refs.clear()
                args, kwargs = _functions._prepare_args(self.session, args, kwargs)
                data = _objects.dumps_args(args, kwargs, name)
        if holds is not None:
            holds.extend(h.refs)
        return data

    def _wants_worker(self, shape: _Shape) -> bool:
        """Whether one more worker job should start (the caller holds the lock; counted as
        starting when so, until _start_worker() submitted it)."""
        live = [w for w in shape.workers if not w.spent]
        out = sum(max(0, len(w.inflight) - w.blocked) for w in live) + len(shape.queue)
        grow = len(live) + shape.starting < min(shape.cap, out) and \
            shape.cold is None and not self.closed
        if grow:
            shape.starting += 1
        return grow

    def _requeue(self, f: WarmFuture, free: bool = False) -> None:
        with self.lock:
            if free:
                f._tries -= 1  # it did not run: this try does not count
            f._state = "queued"
            f._worker = None
            f.job_id = None
            if self.closed:
                return
            f._pool.shapes[_shape_key(f._opts)].queue.appendleft(f)
            grow = self._wants_worker(f._pool.shapes[_shape_key(f._opts)])
        if grow:
            shape = self.shapes[_shape_key(f._opts)]
            try:
                self._start_worker(shape)
            except WeirError as e:
                with self.lock:
                    if f in shape.queue:
                        shape.queue.remove(f)
                self._settle(f, error=e)

    def _pump(self, shape: _Shape) -> None:
        """Sends queued calls to the shape's workers: an idle one first; when the shape is
        at its cap, up to PIPELINE more behind the one a worker runs."""
        while True:
            with self.lock:
                if not shape.queue or self.closed:
                    return
                ready = [w for w in shape.workers if w.sock is not None and not w.leaving
                         and not w.gone and not w.spent]
                idle = [w for w in ready if w.free()]
                now = time.perf_counter()
                if idle:
                    w = idle[0]
                elif len(ready) < shape.cap or shape.call_s is None or \
                        shape.call_s > PIPE_CALL_S:
                    return  # a worker frees up, or one more comes
                else:
                    busy = [w for w in ready if len(w.inflight) <= PIPELINE and
                            not w.blocked and now - w.head_since < PIPE_FRESH_S]
                    if not busy:
                        return
                    w = min(busy, key=lambda x: len(x.inflight))
                f = shape.queue.popleft()
                f._sent = now
                f._solo = not w.inflight
                if not w.inflight:
                    w.head_since = now
                f._state = "running"
                f._worker = w
                f.job_id = w.job_id
                f._tries += 1
                f._rec = next(self.rec_ids)
                w.inflight[f.call_id] = f
                w.calls += 1
                if w.calls == shape.o.get("max_calls"):
                    w.spent = True
                fhash, fdata = self.fns[f._fn]
                send_fn = fhash not in w.sent_fns
                w.sent_fns.add(fhash)
            self._note(f, "running")
            frame = _w.encode(_w.CALL, f.call_id,
                              _w.call_body(fhash, fdata if send_fn else None, f._args))
            try:
                with w.wlock:
                    assert w.sock is not None
                    w.sock.sendall(frame)
            except OSError:
                pass  # its reader sees the end and puts the call back

    def cancel(self, f: WarmFuture, force: bool) -> None:
        with self.lock:
            if f._done:
                return
            f._cancel = True
            w = f._worker
            queued = w is None
            if queued:
                for shape in self.shapes.values():
                    if f in shape.queue:
                        shape.queue.remove(f)
                for a in self.actors.values():
                    if f in a.pending:
                        a.pending.remove(f)
        if queued:
            self._settle(f, error=self._cancelled(f))
            return
        assert w is not None
        import signal
        with self.lock:
            running = next(iter(w.inflight), None) == f.call_id
        if w.remote and running:
            # on another node: no signal reaches it but through its job, killed (as force)
            self._kill_job(w)
            return
        if force and running:  # the worker killed; a call queued behind is only dropped
            f._forced = True
            try:
                os.kill(w.pid, signal.SIGKILL)
            except OSError:
                pass
            return
        # the frame first, then the signal: the worker drops the call if it has not started
        # and interrupts it if it runs, and no other (worker/warm.py, _on_sigint).  An
        # actor's call that runs is not interrupted, as in Ray (its state would be left half
        # made): the frame only, and it ends cancelled when it returns (_settle)
        try:
            with w.wlock:
                assert w.sock is not None
                w.sock.sendall(_w.encode(_w.CANCEL, f.call_id))
            # a remote worker's call is not running (the frame drops it); an actor's is
            # not interrupted
            if f._method is None and not w.remote:
                os.kill(w.pid, signal.SIGINT)
        except OSError:
            pass

    def _kill_job(self, w: _Worker) -> None:
        """Kills a worker through its job (the server's SIGTERM, then SIGKILL)."""
        try:
            patiently("killing warm worker job %d" % w.job_id,
                      lambda: self.session.client.kill(w.job_id))
        except WeirError:
            pass  # it has ended already

    def _settle(self, f: WarmFuture, value: Any = None,
                error: Optional[BaseException] = None) -> None:
        with self.cond:
            if f._done:
                return
            if f._cancel and not (isinstance(error, JobFailed) and
                                  error.job.get("state") == "killed"):
                error = self._cancelled(f)  # it ends cancelled, whatever it raised meanwhile
            f._value, f._error = value, error
            f._state = "failed" if error is not None else "succeeded"
            # noted before it is seen done: what its waiters do next (ray.timeline()) sees
            # its end
            if error is None:
                self._note(f, "succeeded")
            elif isinstance(error, JobFailed):
                self._note(f, "cancelled" if error.job.get("state") == "killed" else
                           "crashed")
            elif not isinstance(error, ActorDied):  # (an actor's: noted "crashed" with the
                # cause by remote/actors.py, or it never ran)
                self._note(f, "failed", getattr(error, "type_name", None) or
                           type(error).__name__)
            f._done = True
            f._args = b""
            f._holds = []
            f._children = []
            then, f._then = f._then, []
            self.cond.notify_all()
        f._event.set()
        if f._on_done is not None:
            f._on_done(f)
        for cb in then:
            cb(f)

    def _to_job_path(self, f: WarmFuture) -> None:
        """A call of a cold shape: a job of its own, as every call was before."""
        try:
            args, kwargs = cloudpickle.loads(f._args)
            assert f._fn is not None  # a function's call (an actor's never goes cold)
            d = _functions._submit(f._fn, args, kwargs, f._opts, "call", extra=_extra(f._opts))
        except BaseException as e:
            self._settle(f, error=e)
            return
        with self.cond:
            # the call is that job's now: the future becomes the job's Future
            event = f._event
            f.__dict__.clear()
            f.__dict__.update(d.__dict__)
            f.__class__ = Future  # type: ignore[assignment]
            self.cond.notify_all()
        event.set()

    def close(self) -> None:
        """Ends the pool: the sockets closed (each worker leaves at their end), the folder
        removed; calls not ended fail as cancelled."""
        with self.lock:
            if self.closed:
                return
            self.closed = True
            workers = [w for s in self.shapes.values() for w in s.workers] + \
                [a.worker for a in self.actors.values() if a.worker is not None]
            pending = [f for s in self.shapes.values() for f in s.queue] + \
                [f for a in self.actors.values() for f in a.pending] + \
                [f for w in workers for f in w.inflight.values()]
            busy = [w for w in workers if w.inflight and w.sock is not None]
        if busy:
            # their calls are stopped: the jobs killed, as the job path kills its calls'
            sys.stderr.write("weir: exiting: killing warm worker job%s %s\n" % (
                "s" if len(busy) > 1 else "", ", ".join(str(w.job_id) for w in busy)))
            for w in busy:
                try:
                    self.session.client.kill(w.job_id)
                except WeirError:
                    pass
        for w in workers:
            if w.sock is not None:
                try:
                    w.sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        for ls in [self.listener] + ([self.tcp[0]] if self.tcp is not None else []):
            try:
                ls.close()
            except OSError:
                pass
        shutil.rmtree(self.dir, ignore_errors=True)
        for a in list(self.actors.values()):
            a.closed()
        self.adopted = []
        for f in pending:
            self._settle(f, error=self._cancelled(f))
        self.records.close()  # the last calls' records


def call_ref(folder: str, ref_id: int) -> Future:
    """A call's ref unpickled: in its program, the call's future; elsewhere (a task), a
    LinkFuture whose value the program sends when the call has ended."""
    from . import actors as _actors
    pool = _actors.local_pool(folder)
    if pool is not None:
        with pool.lock:
            f = pool.exported.get(ref_id)
        if f is None:
            raise WeirError("the ObjectRef of call %d is not known to this program" % ref_id)
        return f
    return _actors.link_to(folder).fetch(ref_id)


def _extra(o: Dict[str, Any]) -> Any:
    rx = o["retry_exceptions"]
    return {"retry_on": rx} if isinstance(rx, tuple) else None


_pools: Dict[int, Pool] = {}
_pools_lock = threading.Lock()


def pool_of(session: _Session) -> Pool:
    """The session's pool, made at its first warm call."""
    with _pools_lock:
        p = _pools.get(id(session))
        if p is None or p.session is not session:
            p = _pools[id(session)] = Pool(session)
        return p


def close_pool(session: Optional[_Session]) -> None:
    """Ends the session's pool, when it has one (ray.shutdown, the program's exit)."""
    if session is None:
        return
    with _pools_lock:
        p = _pools.pop(id(session), None)
    if p is not None:
        p.close()


@atexit.register
def _at_exit() -> None:
    with _pools_lock:
        pools = list(_pools.values())
        _pools.clear()
    for p in pools:
        p.close()
