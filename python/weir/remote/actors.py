"""Actors on warm workers: the program's side and a task's (docs/internals/calls.md,
"Actors").

An actor is a warm worker of its own (remote/warm.py's _Worker with `actor` set): a weir
job named after the class (or the actor's name) with the actor's resources, that holds the
instance.  The program sends the constructor (a CREATE frame) when the worker says hello,
then each method call as a METHOD frame, in the order they were made; the worker runs them
in that order (or several at once: a thread pool, an event loop).  The calls are the pool's
WarmFutures and are recorded as the worker's calls.

A task (or another actor) reaches an actor through the program: an ActorRef pickles to the
program's folder and the actor's id; unpickled elsewhere it calls through a Link, a
connection of that process to the program's socket (LINK hello with the key, then
ACTOR_CALL frames), which the program serves (serve_link) by making the call itself and
sending the answer back.  Only the program's user can open the folder, as for workers.
"""

import os
import socket
import sys
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

import cloudpickle

from ..errors import ActorDied, GetTimeoutError, JobFailed, RemoteError, WeirError
from ..errors import remote_error
from ..worker import warm as _w
from . import objects as _objects
from . import shm as _shm
from .futures import Future, LocalFuture
from .patience import patiently
from .warm import END_WAIT, Pool, _Worker, pool_of
from .warm_future import WarmFuture

__all__ = ["Actor", "create", "Link", "LinkFuture", "link_to", "local_pool", "pool_of",
           "serve_link"]


class Actor:
    """One actor in the program: its worker, the calls not sent yet, its restarts."""

    def __init__(self, pool: Pool, cls: Any, args: bytes, o: Dict[str, Any], name: str,
                 label: Optional[str], namespace: str, concurrency: int, max_restarts: int,
                 max_task_retries: int) -> None:
        self.pool = pool
        self.id = next(pool.ids)
        self.cls = cls
        self.args = args  # the constructor's (args, kwargs), pickled: kept for a restart
        self.o = o
        self.name = name  # its jobs' name
        self.label = label  # its name= (a named actor), or None
        self.namespace = namespace
        self.concurrency = concurrency
        self.max_restarts = max_restarts
        self.max_task_retries = max_task_retries
        self.restarts = 0
        self.lock = threading.Lock()  # held while frames are sent: their order is the calls'
        self.worker: Optional[_Worker] = None
        self.pending: List[WarmFuture] = []  # made while no worker is connected
        self.dead: Optional[str] = None  # why it ended, once it has for good
        self.cause: Optional[BaseException] = None  # the constructor's error
        self.no_restart = False  # ray.kill(no_restart=True)
        self.killing: Optional[str] = None  # why its worker is being killed (ray.kill)
        self.holds: List[Any] = []  # the shared objects of its constructor's arguments
        self.groups: Dict[str, int] = {}  # its concurrency groups and their sizes

    # ---- its worker ---------------------------------------------------------------------
    def worker_env(self) -> Dict[str, str]:
        """What its worker's environment says of it: which actor it is, and what
        ray.get_runtime_context() tells the actor of itself."""
        return {"WEIR_WARM_ACTOR": "%s-%d" % (self.pool.tag, self.id), "WEIR_WARM_IDLE": "0",
                "WEIR_WARM_ACTOR_NAME": self.label or "", "WEIR_WARM_ACTOR_HANDLE": self.name,
                "WEIR_WARM_ACTOR_RESTARTS": str(self.restarts)}

    def start(self) -> None:
        """Submits its worker job (in the caller's thread: a refusal is raised to it); an
        actor placed in a placement group is started by a bundle's host instead."""
        if self.o.get("placement") is not None:
            from . import placement
            placement.start_actor(self)
            return
        spec = self.pool._spec(self.o, self.name, self.worker_env())
        job = patiently("the job of actor %s" % self.name,
                        lambda: self.pool.session.client.submit(spec),
                        stop=lambda: self.pool.closed)
        w = _Worker(None, job["id"], self)
        with self.pool.lock:
            self.worker = w
            self.pool.by_job[w.job_id] = w
        threading.Thread(target=self.pool._watch, args=(w,), daemon=True,
                         name="weir-actor-job-%d" % w.job_id).start()

    def connected(self, w: _Worker) -> None:
        """Its worker said hello: the constructor first, then the calls made meanwhile."""
        with self.lock:
            create = WarmFuture(self.pool, next(self.pool.ids), self.name + ".__init__",
                                None, self.args, {"retry_exceptions": False, "retries": 0})
            create._on_done = self._created
            fhash, fdata = self.pool._fn(self.cls, self.name)
            body = cloudpickle.loads(self.args) + (self.concurrency, self.groups)
            self._send(w, create, _w.CREATE, _w.call_body(fhash, fdata, cloudpickle.dumps(
                body, protocol=5)))
            pending, self.pending = self.pending, []
            for f in pending:
                if f._method is not None:  # not an earlier constructor
                    self._send(w, f, _w.METHOD, _w.method_body(f._method, f._args))

    def _created(self, f: WarmFuture) -> None:
        if isinstance(f._error, RemoteError):  # the constructor raised: the actor is dead
            with self.lock:
                self.cause = f._error
                self.dead = "its constructor raised %s: %s" % (f._error.type_name,
                                                               f._error.remote_message)

    def _send(self, w: _Worker, f: WarmFuture, kind: int, body: bytes) -> None:
        """Sends a call to the worker (the caller holds self.lock); to a worker found gone,
        the call waits with the others for what gone() decides."""
        with self.pool.lock:
            if w.gone:
                self.pending.append(f)
                return
            f._state = "running"
            f._worker = w
            f.job_id = w.job_id
            f._tries += 1
            f._rec = next(self.pool.rec_ids)
            w.inflight[f.call_id] = f
        self.pool._note(f, "running")
        try:
            with w.wlock:
                assert w.sock is not None
                w.sock.sendall(_w.encode(kind, f.call_id, body))
        except OSError:
            pass  # its reader sees the end: gone() settles the call

    def call(self, method: str, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> WarmFuture:
        """A method call: sent now when the worker is connected, else when it is.  A method
        named with STREAM_MARK first is a generator's, its items sent one by one."""
        name = "%s.%s" % (self.name, method.lstrip(_w.STREAM_MARK).partition(_w.GROUP_MARK)[0])
        holds: List[Any] = []
        data = self.pool.pickle_args(args, kwargs, name, holds)
        f = WarmFuture(self.pool, next(self.pool.ids), name, None, data,
                       {"retry_exceptions": False, "retries": self.max_task_retries})
        f._holds = holds
        f._method = method
        f._actor_no = self.id
        if method.startswith(_w.STREAM_MARK):
            f._items = []
        with self.lock:
            dead = self.dead
            w = self.worker
            if dead is None:
                if w is not None and w.sock is not None and not w.gone and not self.pending:
                    self._send(w, f, _w.METHOD, _w.method_body(method, data))
                else:
                    self.pending.append(f)
        if dead is not None:
            self.pool._settle(f, error=self._died(dead))
        return f

    def _died(self, why: str) -> ActorDied:
        return ActorDied("the actor %s has ended: %s" % (self.name, why), self.cause)

    def gone(self, w: _Worker) -> None:
        """Its worker ended (its socket closed, or its job ended before it connected): the
        calls it held fail with ActorDied naming why, or wait for the restarted worker
        (max_restarts; a call is sent again when max_task_retries allows)."""
        with self.pool.lock:
            if w.gone:
                return
            w.gone = True
            calls = list(w.inflight.values())
            w.inflight.clear()
            closed = self.pool.closed
        if closed:
            return
        w.ended.wait(END_WAIT)
        job = w.final or {"id": w.job_id, "state": "failed", "tasks": []}
        oom = any(t.get("oom_killed") for t in job.get("tasks") or [])
        with self.lock:
            if self.dead is not None:
                why = self.dead
            elif self.killing is not None:
                why = self.killing
            elif oom:
                why = "its worker (job %d) ran out of memory (memory=%s)" % (w.job_id,
                                                                           self.o["memory"])
            else:
                why = "its worker (job %d) died: %s" % (
                    w.job_id, job.get("reason") or "exit code %s" % job.get("exit_code"))
            restart = self.dead is None and not self.no_restart and (
                self.max_restarts < 0 or self.restarts < self.max_restarts)
            again: List[WarmFuture] = []
            failed: List[WarmFuture] = []
            for f in calls:
                self.pool._note(f, "crashed", why)
                if restart and f._method is not None and (
                        self.max_task_retries < 0 or f._tries <= self.max_task_retries):
                    again.append(f)
                elif f._method is not None:
                    failed.append(f)
            if restart:
                self.restarts += 1
                self.killing = None
                self.pending = again + self.pending
            else:
                self.dead = why
                failed += self.pending
                self.pending = []
        if restart:
            try:
                self.start()
            except WeirError as e:
                with self.lock:
                    self.dead = "its restart was refused: %s" % e
                    failed, self.pending = self.pending, []
        for f in failed:
            self.pool._settle(f, error=self._died(self.dead or why))

    def exited(self, f: WarmFuture) -> None:
        """The call f ended the actor (ray.actor.exit_actor(), __ray_terminate__): its
        caller gets RayActorError, as in Ray; the actor is dead for good (no restart), and
        the calls its worker had not begun fail when its socket ends (gone())."""
        with self.lock:
            if self.dead is None:
                self.dead = "it ended itself (%s in %s)" % (
                    "__ray_terminate__" if f._method == _w.TERMINATE else
                    "ray.actor.exit_actor()", f.name)
            self.no_restart = True
            why = self.dead
        self.pool._note(f, "failed", "the actor ended itself")
        self.pool._settle(f, error=self._died(why))

    def kill(self, no_restart: bool) -> None:
        """ray.kill: the worker killed at once (SIGKILL), restarted unless no_restart or
        no restarts are left."""
        with self.lock:
            self.no_restart = self.no_restart or no_restart
            self.killing = "it was killed by ray.kill()"
            w = self.worker
        if w is None:
            return
        if w.pid and not w.remote:  # over TCP its pid is another node's: through its job
            import signal
            try:
                os.kill(w.pid, signal.SIGKILL)
                return
            except OSError:
                pass
        try:
            self.pool.session.client.kill(w.job_id)
        except WeirError:
            pass

    def closed(self) -> None:
        """The program ended (the pool's close)."""
        with self.lock:
            self.dead = self.dead or "the program has ended"

    def info(self) -> Tuple[str, int, str, Dict[str, Union[int, str]]]:
        """What an ActorRef holds: the program's folder, the id, the name, the methods'
        num_returns."""
        return (self.pool.dir, self.id, self.name, _num_returns(self.cls))


def _num_returns(cls: Any) -> Dict[str, Union[int, str]]:
    """The methods of cls that @ray.method gave a num_returns other than 1, and its
    generator methods ("streaming", Ray 2.8+'s default for them)."""
    import inspect
    out: Dict[str, Union[int, str]] = {}
    for k in dir(cls):
        fn = getattr(cls, k, None)
        n = getattr(fn, "__weir_num_returns__", None)
        if n is None and (inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn)):
            n = "streaming"
        if n is not None and n != 1:
            out[k] = n if isinstance(n, str) else int(n)
    return out


def create(cls: Any, args: Tuple[Any, ...], kwargs: Dict[str, Any], o: Dict[str, Any],
           name: str, label: Optional[str], namespace: str, concurrency: int,
           max_restarts: int, max_task_retries: int, get_if_exists: bool = False,
           groups: Optional[Dict[str, int]] = None) -> Actor:
    """Makes an actor in the session's pool (its job submitted now: a refusal is raised
    here); a name taken in the namespace is refused, unless get_if_exists."""
    from .session import _get_session
    pool = pool_of(_get_session())
    holds: List[Any] = []
    data = pool.pickle_args(args, kwargs, name + ".__init__", holds)
    a = Actor(pool, cls, data, o, name, label, namespace, concurrency, max_restarts,
              max_task_retries)
    a.holds = holds  # the constructor's shared objects: for its restarts
    a.groups = dict(groups or {})
    if label is not None:
        with pool.lock:
            old = pool.named.get((namespace, label))
            if old is not None and old.dead is None:
                if get_if_exists:
                    return old  # type: ignore[no-any-return]
                raise ValueError("an actor named %r exists already in namespace %r"
                                 % (label, namespace))
            pool.named[(namespace, label)] = a
    with pool.lock:
        pool.actors[a.id] = a
    try:
        a.start()
    except BaseException:
        with pool.lock:
            pool.actors.pop(a.id, None)
            if label is not None and pool.named.get((namespace, label)) is a:
                del pool.named[(namespace, label)]
        raise
    return a


# ---- a task's side: the link to the program -------------------------------------------------

def _serve_while(ready: Callable[[], bool], link: "Link") -> bool:
    """In a call on a warm worker: runs the calls the program sends this worker until
    ready() (worker/warm.py, serve_while); False elsewhere (the caller waits as it
    would)."""
    current = sys.modules.get(_w.CURRENT_MODULE)
    worker = getattr(current, "worker", None)
    if worker is None:
        return False
    return bool(worker.serve_while(ready, link.wake_r))


class LinkFuture(LocalFuture):
    """A call made from a task (an actor's method, a function's call): settled by the
    link's reader thread."""

    def __init__(self, link: "Link", call_id: int, name: str) -> None:
        super().__init__(name)
        self._link = link
        self.call_id = call_id
        self._event = threading.Event()
        self._done = False
        self._state = "running"
        self.what = "actor call"
        self.ref_id = 0  # the program's id of the call (REF), once known
        self._ref = threading.Event()
        self._actor_no: Optional[int] = None  # the actor of a method's call
        # a method call's frame body, kept to send it again (a detached actor restarted:
        # max_task_retries), and how many times it was
        self._resend: Optional[bytes] = None
        self._tries = 0
        self._cancel = False  # ray.cancel of a detached actor's call: it ends cancelled

    def _ray_task(self) -> Tuple[str, int]:
        """Ray's ids (remote/ray_ids.py): the program's, once it has named the call (REF),
        so that the program and the task see the same; a detached actor's calls (no REF)
        are numbered by the link."""
        from . import ray_ids
        folder = self._link.folder
        if not self._link.detached and self._ref.wait(30) and self.ref_id:
            return ray_ids.task_hex(ray_ids.scope_of_folder(folder), self.ref_id,
                                    self._actor_no), 1
        return ray_ids.task_hex("link-%s-%d" % (folder, os.getpid()), self.call_id,
                                self._actor_no), 1

    def __reduce__(self) -> Tuple[Any, Tuple[str, int]]:
        """Pickled (into a call's arguments, a value returned): the program's ref of the
        call, as a WarmFuture pickles."""
        from .warm import call_ref
        if not self._ref.wait(END_WAIT):
            raise WeirError("%s: the program did not name the call" % self.name)
        return (call_ref, (self._link.folder, self.ref_id))

    def __repr__(self) -> str:
        return "<weir.Future %s (%s %d)>" % (self.name, self.what, self.call_id)

    def _wait(self, deadline: Optional[float]) -> None:
        if self._done:
            return
        if deadline is None and _serve_while(lambda: self._done, self._link):
            return
        wait = None if deadline is None else max(0.0, deadline - time.monotonic())
        if not self._event.wait(wait):
            raise GetTimeoutError("%s (%s %d) still running" % (self.name, self.what,
                                                                self.call_id))

    def _wait_any(self, pending: List[Future], timeout: Optional[float]) -> None:
        if timeout is None and _serve_while(lambda: any(f._done for f in pending), self._link):
            return
        with self._link.cond:
            if any(f._done for f in pending):
                return
            self._link.cond.wait(timeout)

    def cancel(self, force: bool = False, recursive: bool = True) -> None:
        """ray.cancel in a task: the program cancels its call as its own (a call that has
        ended is left as it is); a detached actor's call is cancelled by its actor
        (Link.cancel)."""
        if self._done:
            return
        if self._link.detached:
            self._link.cancel(self)
            return
        if not self._ref.wait(END_WAIT) or not self.ref_id:
            raise WeirError("%s: the program did not name the call: it cannot be cancelled"
                            % self.name)
        flags = ("F" if force else "-") + ("R" if recursive else "-")
        got = self._link._send(_w.CANCEL_REF, "cancel(%s)" % self.name,
                               _w.ACTOR_ID.pack(self.ref_id) + flags.encode())
        got._wait(None)
        if got._error is not None:
            raise got._error

    def kill(self) -> None:
        self.cancel(force=False)


class Link:
    """This process's connection to the program that owns the actors (one per program)."""

    def __init__(self, folder: str, key_file: Optional[str] = None,
                 sock_dir: Optional[str] = None) -> None:
        """A link to the program of that folder (its key and socket there); a detached
        actor's (remote/detached.py) has its key file and socket folder apart."""
        self.folder = folder
        self.detached = bool(key_file or sock_dir)
        if key_file or sock_dir:  # a detached actor's: its own socket and key file
            with open(key_file or os.path.join(folder, "key"), "rb") as f:
                key = f.read()
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.connect(os.path.join(sock_dir or folder, "sock"))
        else:
            self.sock, key = _w.connect(folder)  # its Unix socket, or TCP (remote/channel.py)
        self.wlock = threading.Lock()
        self.cond = threading.Condition()
        self.ids = 0
        self.calls: Dict[int, LinkFuture] = {}
        self.ended: Optional[str] = None
        # what the calls in flight are told when the socket closes (a detached actor's)
        self.why_ended: Optional[Callable[[], str]] = None
        # a detached actor's: its max_task_retries, and the link its calls in flight are
        # sent again on when this one ends (remote/detached.py)
        self.task_retries = 0
        self.relink: Optional[Callable[[], "Link"]] = None
        # readable when a call has ended (a waiting worker's loop wakes on it)
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(self.wake_w, False)
        self.sock.sendall(_w.encode(_w.LINK, 0, key + str(os.getpid()).encode()))
        threading.Thread(target=self._read, name="weir-actor-link", daemon=True).start()

    def _send(self, kind: int, name: str, body: bytes, f: Optional[LinkFuture] = None,
              resend: bool = False) -> LinkFuture:
        """Sends a frame for a new future (or f, a call sent again on this link); resend:
        the body is kept, to send it again (_retry)."""
        with self.cond:
            self.ids += 1
            if f is None:
                f = LinkFuture(self, self.ids, name)
                f._resend = body if resend else None
            f._link, f.call_id = self, self.ids
            self.calls[f.call_id] = f
            ended = self.ended
        if ended is None:
            try:
                with self.wlock:
                    self.sock.sendall(_w.encode(kind, f.call_id, body))
                return f
            except OSError as e:
                ended = "the program's socket: %s" % e
        if not self._retry(f):
            self._settle(f, None, ActorDied("%s: %s" % (name, self._why(ended))))
        return f

    def cancel(self, f: LinkFuture) -> None:
        """ray.cancel of a detached actor's call: the actor is sent CANCEL for it (a call
        not begun never runs, an async one's task is cancelled, a sync one runs to its
        end: worker/detached.py); whatever it answers, even a value, and also when the
        actor dies, the call ends cancelled (_settle), never sent again."""
        with self.cond:
            if f._done:
                return
            f._cancel = True
            ended = self.ended
            link = f._link
        if ended is None and link is self:
            try:
                with self.wlock:
                    self.sock.sendall(_w.encode(_w.CANCEL, f.call_id))
            except OSError:
                pass  # the socket's end settles it
        elif link is not self:  # sent again on a newer link (_retry)
            link.cancel(f)

    def _why(self, ended: str) -> str:
        """What a call is told when this link has ended."""
        if self.why_ended is not None:  # a detached actor's: from its entry
            return self.why_ended()
        return "the program has ended (%s)" % ended

    def call(self, actor_id: int, name: str, method: str, data: bytes) -> LinkFuture:
        f = self._send(_w.ACTOR_CALL, "%s.%s" % (name, method),
                       _w.ACTOR_ID.pack(actor_id) + _w.method_body(method, data),
                       resend=True)
        f._actor_no = int(actor_id)
        return f

    def _retry(self, f: LinkFuture) -> bool:
        """A call in flight when this (a detached actor's) link ended, sent again on the
        next link when max_task_retries allows; False when it is not."""
        if f._resend is None or self.relink is None or f._done or f._cancel or not (
                self.task_retries < 0 or f._tries < self.task_retries):
            return False
        f._tries += 1
        try:
            ln = self.relink()
        except ActorDied as e:  # it has ended for good meanwhile
            self._settle(f, None, e)
            return True
        ln._send(_w.ACTOR_CALL, f.name, f._resend, f)
        return True

    def submit(self, target: Any, options: Dict[str, Any], args: Tuple[Any, ...],
               kwargs: Dict[str, Any], name: str) -> LinkFuture:
        """A call of a function (its future), or an actor's creation (answered with the
        actor's handle fields), made by the program for this task."""
        try:
            data = cloudpickle.dumps((target, options, args, kwargs), protocol=5)
        except Exception:
            _objects.dumps_args(args, kwargs, name)  # names the argument that fails
            data = _objects.dumps((target, options, args, kwargs), "the call of %s" % name)
        f = self._send(_w.SUBMIT, name, data)
        f.what = "call"
        return f

    def fetch(self, ref_id: int) -> LinkFuture:
        """The value of the program's call ref_id (a ref handed to this task)."""
        f = self._send(_w.FETCH, "call %d" % ref_id, _w.ACTOR_ID.pack(ref_id))
        f.what, f.ref_id = "call", ref_id
        f._ref.set()
        return f

    def adopt(self, path: str, size: int) -> LinkFuture:
        """The program owns a segment this task put (remote/shm.py) from now on."""
        return self._send(_w.OWN, "put", _w.ACTOR_ID.pack(size) + path.encode())

    def kill(self, actor_id: int, name: str, no_restart: bool) -> None:
        """ray.kill in a task: the program kills the actor as its own."""
        f = self._send(_w.KILL, "ray.kill(%s)" % name,
                       _w.ACTOR_ID.pack(actor_id) + (b"1" if no_restart else b"0"))
        f._wait(None)
        if f._error is not None:
            raise f._error

    def lookup(self, namespace: str, name: str) -> LinkFuture:
        return self._send(_w.LOOKUP, "get_actor(%r)" % name,
                          ("%s\0%s" % (namespace, name)).encode())

    def _settle(self, f: LinkFuture, value: Any, error: Optional[BaseException]) -> None:
        if f._cancel and not (isinstance(error, JobFailed) and
                              error.job.get("state") == "killed"):
            # ray.cancel of a detached actor's call: cancelled, whatever it ended with
            value, error = None, JobFailed("%s was cancelled" % f.name,
                                           {"state": "killed", "tasks": []})
        with self.cond:
            self.calls.pop(f.call_id, None)
            f._value, f._error, f._done = value, error, True
            f._state = "done"
            self.cond.notify_all()
        f._event.set()
        try:
            os.write(self.wake_w, b"x")
        except OSError:
            pass  # full: a wake-up is pending already

    def _read(self) -> None:
        reader = _w.FrameReader()
        try:
            while True:
                data = self.sock.recv(1 << 20)
                if not data:
                    break
                for kind, cid, body in reader.feed(data):
                    with self.cond:
                        f = self.calls.get(cid)
                    if f is None:
                        continue
                    if kind == _w.REF:
                        (f.ref_id,) = _w.ACTOR_ID.unpack_from(body)
                        f._ref.set()
                    elif kind == _w.VALUE:
                        self._settle(f, cloudpickle.loads(body), None)
                    elif kind == _w.SHMVAL:  # a result in shared memory: mapped here
                        try:
                            size, path = _w.parse_shm(body)
                            self._settle(f, _shm.SharedRef(path, size).value(), None)
                        except (OSError, ValueError) as e:
                            self._settle(f, None, WeirError("%s: its result cannot be read: "
                                                            "%s" % (f.name, e)))
                    elif kind == _w.ERROR:
                        _, type_name, message, tb, exc = cloudpickle.loads(body)
                        cause = None
                        if exc:
                            try:
                                cause = cloudpickle.loads(exc)
                            except Exception:
                                cause = None
                        self._settle(f, None, remote_error(type_name, message, tb, cause,
                                                           None))
                    elif kind == _w.CANCELLED:  # a detached actor's call (Link.cancel)
                        f._cancel = True
                        self._settle(f, None, None)
                    elif f.what == "call":  # its worker died, or it was cancelled
                        text = body.decode("utf-8", "replace")
                        self._settle(f, None, JobFailed(text, {
                            "state": "killed" if "cancelled" in text else "failed",
                            "tasks": []}))
                    else:
                        self._settle(f, None, ActorDied(body.decode("utf-8", "replace")))
        except (OSError, _w.FrameError):
            pass
        with self.cond:
            self.ended = "its socket closed"
            left = list(self.calls.values())
        why = self._why("its socket closed")
        for f in sorted(left, key=lambda f: f.call_id):  # sent again in their order
            if not self._retry(f):
                self._settle(f, None, ActorDied("%s: %s" % (f.name, why)))


# the "folder" of a detached actor's handle: this, then its entry (remote/detached.py)
DETACHED = "weir-detached:"
_links: Dict[str, Link] = {}
_links_lock = threading.Lock()


def link_to(folder: str) -> Link:
    """This process's link to the program of that folder (made at its first use)."""
    with _links_lock:
        ln = _links.get(folder)
        if ln is None or ln.ended is not None:
            if folder.startswith(DETACHED):  # a detached actor's own socket
                from . import detached
                ln = _links[folder] = detached.link(folder[len(DETACHED):])
                return ln
            try:
                ln = _links[folder] = Link(folder)
            except OSError as e:
                raise ActorDied("cannot reach the program that holds the actor (%s): %s"
                                % (folder, e)) from None
        return ln


def local_pool(folder: str) -> Optional[Pool]:
    """The pool of this process whose folder is that one (the program's own), or None."""
    from . import warm
    with warm._pools_lock:
        for p in warm._pools.values():
            if p.dir == folder and not p.closed:
                return p
    return None


# ---- the program's side of a link ----------------------------------------------------------

def serve_link(pool: Pool, sock: socket.socket, reader: "_w.FrameReader",
               first: List[Tuple[int, int, bytes]], pid: int = 0) -> None:
    """Serves a task's link until it closes: each ACTOR_CALL made here as the program's
    own call (in the order they come), its answer sent back; each LOOKUP answered with the
    named actor's info."""
    wlock = threading.Lock()

    def send(frame: bytes) -> None:
        try:
            with wlock:
                sock.sendall(frame)
        except OSError:
            pass

    def answer(cid: int) -> Callable[[WarmFuture], None]:
        def done(f: WarmFuture) -> None:
            e = f._error
            ref = getattr(f, "_shm", None)
            if e is None and ref is not None:  # a result in shared memory: its segment,
                # which the task maps (the program holds the call: pool.exported)
                send(_w.encode(_w.SHMVAL, cid, _w.shm_body(ref.size, ref.path)))
                return
            if e is None:
                try:
                    send(_w.encode(_w.VALUE, cid, cloudpickle.dumps(f._value, protocol=5)))
                    return
                except Exception as pe:
                    e = WeirError("the result cannot be pickled: %s" % pe)
            if isinstance(e, RemoteError):
                exc = None
                if e.cause is not None:
                    try:
                        exc = cloudpickle.dumps(e.cause, protocol=5)
                    except Exception:
                        exc = None
                rec = ("error", e.type_name, e.remote_message, e.remote_traceback, exc)
                send(_w.encode(_w.ERROR, cid, cloudpickle.dumps(rec, protocol=5)))
            elif isinstance(e, JobFailed):
                send(_w.encode(_w.DIED, cid, ("%s: %s" % (f.name, e)).encode()))
            else:
                send(_w.encode(_w.DIED, cid, str(e).encode()))
        return done

    def named(cid: int, f: WarmFuture) -> None:
        """The task learns the program's id of its call (its ref pickles to it)."""
        pool.export(f)
        send(_w.encode(_w.REF, cid, _w.ACTOR_ID.pack(f.call_id)))

    def frame(kind: int, cid: int, body: bytes) -> None:
        if kind == _w.ACTOR_CALL:
            (aid,) = _w.ACTOR_ID.unpack_from(body)
            method, data = _w.parse_method(body[_w.ACTOR_ID.size:])
            with pool.lock:
                a = pool.actors.get(aid)
            if a is None:
                send(_w.encode(_w.DIED, cid, ("no actor %d in this program" % aid).encode()))
                return
            args, kwargs = cloudpickle.loads(data)
            f = a.call(method, args, kwargs)
            named(cid, f)
            f.then(answer(cid))
        elif kind == _w.SUBMIT:
            if SUBMIT_HANDLER is None:
                send(_w.encode(_w.DIED, cid, b"this program does not take calls from tasks"))
                return
            # the call that made it: before it is submitted (its worker may take it at once)
            parent = pool.running_on(pid) if pid else None
            try:
                got = SUBMIT_HANDLER(body)
            except Exception as e:  # refused (bad options, a resource the server lacks)
                send(_w.encode(_w.ERROR, cid, cloudpickle.dumps(
                    ("error", "%s.%s" % (type(e).__module__, type(e).__qualname__), str(e),
                     "", _dumps_or_none(e)), protocol=5)))
                return
            if parent is not None and isinstance(got, Future):
                parent._children.append(got)  # ray.cancel(parent, recursive=True)
            if not isinstance(got, Future):
                send(_w.encode(_w.VALUE, cid, cloudpickle.dumps(got, protocol=5)))
            elif isinstance(got, WarmFuture):
                named(cid, got)
                got.then(answer(cid))
            else:  # a job's future (a cold shape): waited for in a thread
                threading.Thread(target=_answer_job, args=(got, answer(cid)),
                                 name="weir-link-job", daemon=True).start()
        elif kind == _w.FETCH:
            (ref,) = _w.ACTOR_ID.unpack_from(body)
            with pool.lock:
                f = pool.exported.get(ref)
            if f is None:
                send(_w.encode(_w.DIED, cid, ("no call %d in this program" % ref).encode()))
            else:
                f.then(answer(cid))
        elif kind == _w.OWN:
            (size,) = _w.ACTOR_ID.unpack_from(body)
            path = body[_w.ACTOR_ID.size:].decode("utf-8", "replace")
            try:
                ref = _shm.adopt(path, size, pool.tag)
            except (OSError, ValueError) as e:
                send(_w.encode(_w.DIED, cid, str(e).encode()))
                return
            with pool.lock:
                pool.adopted.append(ref)
            send(_w.encode(_w.VALUE, cid, cloudpickle.dumps(None, protocol=5)))
        elif kind == _w.KILL:  # ray.kill in a task
            (aid,) = _w.ACTOR_ID.unpack_from(body)
            with pool.lock:
                a = pool.actors.get(aid)
            if a is None:
                send(_w.encode(_w.DIED, cid, ("no actor %d in this program" % aid).encode()))
                return
            a.kill(body[_w.ACTOR_ID.size:] == b"1")
            send(_w.encode(_w.VALUE, cid, cloudpickle.dumps(None, protocol=5)))
        elif kind == _w.CANCEL_REF:  # ray.cancel in a task, of a call it made
            (ref,) = _w.ACTOR_ID.unpack_from(body)
            flags = body[_w.ACTOR_ID.size:]
            with pool.lock:
                f = pool.exported.get(ref)
            if f is None:
                send(_w.encode(_w.DIED, cid, ("no call %d in this program" % ref).encode()))
                return
            f.cancel(force=flags[:1] == b"F", recursive=flags[1:2] == b"R")
            send(_w.encode(_w.VALUE, cid, cloudpickle.dumps(None, protocol=5)))
        elif kind == _w.LOOKUP:
            ns, _, name = body.decode("utf-8", "replace").partition("\0")
            with pool.lock:
                a = pool.named.get((ns, name))
            if a is None or a.dead is not None:
                from . import detached  # a detached actor of that name, in the user's home
                info = detached.find(pool.session.client, ns, name)
                if info is not None:
                    send(_w.encode(_w.VALUE, cid, cloudpickle.dumps(info, protocol=5)))
                    return
                send(_w.encode(_w.DIED, cid, _no_actor(name, ns).encode()))
            else:
                send(_w.encode(_w.VALUE, cid, cloudpickle.dumps(a.info(), protocol=5)))

    try:
        rest = first
        while True:
            for fr in rest:
                frame(*fr)
            data = sock.recv(1 << 20)
            if not data:
                break
            rest = reader.feed(data)
    except (OSError, _w.FrameError, ValueError):
        pass
    try:
        sock.close()
    except OSError:
        pass


# the program's maker of a task's calls (compat/ray/api.py sets it): the SUBMIT frame's
# body in; a Future (the call's) or the value to answer (an actor's handle fields) out
SUBMIT_HANDLER: Optional[Callable[[bytes], Any]] = None


def _dumps_or_none(e: BaseException) -> Optional[bytes]:
    try:
        data: bytes = cloudpickle.dumps(e, protocol=5)
        return data
    except Exception:
        return None


def _answer_job(f: Future, done: Callable[[Any], None]) -> None:
    """Waits for a job's future, then answers it as a warm call's (_value, _error)."""
    try:
        f._value = f.result()
        f._error = None
    except BaseException as e:
        f._value, f._error = None, e
    done(f)


def _no_actor(name: str, namespace: str) -> str:
    return "no actor named %r in namespace %r (named actors live as long as the program " \
        "that made them, detached ones until ray.kill)" % (name, namespace)
