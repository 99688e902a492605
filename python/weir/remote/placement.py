"""Placement groups: the program's side (docs/internals/calls.md, "Placement groups").

A group is one weir job with a role per bundle (`bundle0`, `bundle1`, ...: one task each,
the bundle's cores, GPUs and memory): the server starts a job's tasks as a gang, so the
bundles are held together, and no other job can take what they hold.  Each task runs
worker/bundle.py, which connects to the program's socket (BUNDLE hello) and starts, as its
own children, the warm workers and actors the program places in its bundle (SPAWN): they
run inside the bundle's reservation and limits, and count nothing more against the node.
A bundle's cores and GPUs are shared out among the workers alive in it (a worker holds its
shape's until it leaves); a call that finds no room waits in its shape's queue, an actor
in the group's list, until a worker leaves.  Removing the group kills its job: the bundle
hosts kill their children, the calls in flight fail, the actors end.
"""

import itertools
import json
import os
import signal
import threading
from typing import Any, Callable, Dict, List, Optional, Tuple

from ..errors import JobFailed, WeirError
from ..worker import warm as _w
from .futures import Future, LocalFuture
from .warm import WORKER, Pool, _Shape, _Worker

BUNDLE_HOST = os.path.join(os.path.dirname(WORKER), "bundle.py")

_ids = itertools.count(1)


class Bundle:
    """One bundle: what it holds, its host once connected, the workers alive in it."""

    def __init__(self, index: int, cpus: int, gpus: int, memory: Optional[str]) -> None:
        self.index = index
        self.cpus = cpus
        self.gpus = gpus
        self.memory = memory
        self.free_cpus = cpus
        self.free_gpus = gpus
        self.sock: Any = None
        self.wlock = threading.Lock()
        self.workers: Dict[int, _Worker] = {}  # slot -> worker

    def fits(self, cpus: int, gpus: int) -> bool:
        """Whether a worker of that shape could ever run in it."""
        return cpus <= self.cpus and gpus <= self.gpus


class Group:
    """A placement group of the program: its job, its bundles, its state."""

    def __init__(self, pool: Pool, bundles: List[Bundle], strategy: str,
                 name: str) -> None:
        self.pool = pool
        self.id = next(_ids)
        self.bundles = bundles
        self.strategy = strategy
        self.name = name
        self.job_id = 0
        self.state = "PENDING"  # CREATED when every bundle's host said hello; REMOVED
        self.ended: Optional[str] = None  # why it can place nothing (removed, its job ended)
        self.waiting: List[Callable[[], bool]] = []  # actors waiting for room: start()
        self.actors: List[Any] = []  # the actors placed in it (remote/actors.py)
        self.created = False  # whether every bundle was held once

    def ready(self) -> bool:
        return self.created


def create(pool: Pool, bundles: List[Tuple[int, int, Optional[str]]], strategy: str,
           name: str, python: str, env: Dict[str, str]) -> Group:
    """Submits the group's job (a refusal, a bundle larger than the node, is raised here)."""
    g = Group(pool, [Bundle(i, c, gp, m) for i, (c, gp, m) in enumerate(bundles)], strategy,
              name)
    roles: Dict[str, Any] = {}
    spec: Dict[str, Any] = {}
    for b in g.bundles:
        o = {"cpus": b.cpus, "gpus": b.gpus, "memory": b.memory, "python": python, "env": env}
        spec = pool._spec(o, name or "placement-group", {"WEIR_WARM_IDLE": "0"})
        role = spec["roles"]["worker"]
        role["command"] = role["command"].replace(WORKER, BUNDLE_HOST)
        roles["bundle%d" % b.index] = role
    spec["roles"] = roles
    job = pool.session.client.submit(spec)
    g.job_id = int(job["id"])
    pool.session.track(g.job_id, name or "placement-group")  # killed at the program's end
    with pool.lock:
        pool.groups[g.id] = g
    threading.Thread(target=_watch, args=(g,), daemon=True,
                     name="weir-pg-job-%d" % g.job_id).start()
    return g


def _watch(g: Group) -> None:
    """Waits for the group's job to end: then nothing more is placed in it."""
    from ..client import Client
    s = g.pool.session.client.settings
    client = Client(g.pool.session.client.server, s.token, s.home)
    while True:
        try:
            job = client.wait(g.job_id)
            break
        except WeirError:
            if g.pool.closed:
                return
            threading.Event().wait(0.5)
    g.pool.session.forget(g.job_id)
    _end(g, "its placement group was removed" if g.state == "REMOVED" else
         "its placement group's job %d ended (%s)" % (g.job_id, job.get("state")))


def _end(g: Group, why: str) -> None:
    """The group can place nothing more: its workers are ended, its waiting actors fail."""
    pool = g.pool
    with pool.lock:
        if g.ended is not None:
            return
        g.ended = why
        if g.state != "REMOVED":
            g.state = "REMOVED"
        workers = [w for b in g.bundles for w in b.workers.values()]
        waiting, g.waiting = g.waiting, []
        pool.cond.notify_all()
    for w in workers:
        _exited(pool, w, {"id": g.job_id, "state": "killed", "reason": why, "tasks": []})
    for retry in waiting:
        retry()  # each fails now: the group has ended
    if not pool.closed:
        for shape in list(pool.shapes.values()):
            if (shape.o.get("placement") or (0,))[0] == g.id:
                _drop_queued(pool, shape, why)


def _drop_queued(pool: Pool, shape: _Shape, why: str) -> None:
    """The calls queued in a shape of an ended group fail as cancelled, saying why."""
    with pool.lock:
        queued = list(shape.queue)
        shape.queue.clear()
    for f in queued:
        pool._settle(f, error=JobFailed("%s (call %d) was not run: %s"
                                        % (f.name, f.call_id, why),
                                        {"state": "killed", "tasks": []}))


def remove(g: Group) -> None:
    """remove_placement_group: its job killed; its actors end for good."""
    why = "its placement group was removed"
    with g.pool.lock:
        if g.state == "REMOVED":
            return
        g.state = "REMOVED"
        actors = list(g.actors)
        pids = [w.pid for b in g.bundles for w in b.workers.values() if w.pid]
    for a in actors:  # their calls fail from now on, and none is sent to them
        with a.lock:
            a.no_restart = True
            a.killing = why
            a.dead = a.dead or why
    for pid in pids:  # nothing runs in the group once this returns
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    try:
        g.pool.session.client.kill(g.job_id)
    except WeirError:
        pass
    _end(g, "its placement group was removed")


def _choose(g: Group, index: int, cpus: int, gpus: int) -> Optional[Bundle]:
    """The bundle with room for a worker of that shape (the caller holds the lock): the
    one asked, or the one with the most cores free."""
    cands = g.bundles if index < 0 else [g.bundles[index]]
    room = [b for b in cands if b.sock is not None and b.free_cpus >= cpus and
            b.free_gpus >= gpus]
    return max(room, key=lambda b: (b.free_cpus, b.free_gpus)) if room else None


def _spawn(pool: Pool, g: Group, b: Bundle, w: _Worker, o: Dict[str, Any],
           env_more: Dict[str, str]) -> None:
    """Asks b's host to start w's process (the caller holds the lock)."""
    slot = next(pool.ids)
    w.slot = "s%d" % slot  # type: ignore[attr-defined]
    w.bundle = (b, o["cpus"], o["gpus"])  # type: ignore[attr-defined]
    b.free_cpus -= o["cpus"]
    b.free_gpus -= o["gpus"]
    b.workers[slot] = w
    pool.slots[w.slot] = w  # type: ignore[attr-defined]
    env = pool._spec(o, "bundle", env_more)["env"]
    env.update({"WEIR_WARM_SLOT": w.slot, "WEIR_RAY_PG": str(g.id),  # type: ignore
                "WEIR_RAY_PG_CAPTURE": "1" if o["placement"][3] else "0",
                "WEIR_RAY_PG_INFO": json.dumps({"bundles": getattr(g, "specs", []),
                                                "strategy": g.strategy, "name": g.name})})
    body = json.dumps({"argv": [o["python"], WORKER], "env": env}).encode()
    try:
        with b.wlock:
            b.sock.sendall(_w.encode(_w.SPAWN, slot, body))
    except OSError:
        pass  # the host is gone: _end() settles the worker


def start_worker(pool: Pool, shape: _Shape) -> None:
    """Pool._start_worker for a shape placed in a group: a worker started by a bundle's
    host when one has room, else none now (retried when a worker of the group leaves)."""
    gid, index = shape.o["placement"][:2]
    with pool.lock:
        shape.starting -= 1
        g = pool.groups.get(gid)
        ended = (g.ended if g is not None else "its placement group was removed") \
            if g is None or g.ended is not None else None
    if g is None or ended is not None:  # a call sent back after the group's end
        _drop_queued(pool, shape, ended or "")
        return
    with pool.lock:
        b = _choose(g, index, shape.o["cpus"], shape.o["gpus"])
        if b is None:
            return
        w = _Worker(shape, g.job_id)
        shape.workers.append(w)
        _spawn(pool, g, b, w, shape.o, {})


def start_actor(actor: Any) -> None:
    """Actor.start() for an actor placed in a group: its worker started by a bundle's host
    now, or when one has room (the actor's calls wait meanwhile, as for any actor)."""
    pool = actor.pool
    gid, index = actor.o["placement"][:2]

    def attempt() -> bool:
        with pool.lock:
            g = pool.groups.get(gid)
            if g is None or g.ended is not None:
                ended = "its placement group was removed" if g is None else g.ended
            else:
                ended = None
                b = _choose(g, index, actor.o["cpus"], actor.o["gpus"])
                if b is None:
                    g.waiting.append(attempt)
                    return False
                w = _Worker(None, g.job_id, actor)
                actor.worker = w
                if actor not in g.actors:
                    g.actors.append(actor)
                _spawn(pool, g, b, w, actor.o, actor.worker_env())
        if ended is not None:
            with actor.lock:
                actor.no_restart = True
                actor.killing = ended
            w = _Worker(None, 0, actor)
            w.final = {"state": "killed", "reason": ended, "tasks": []}
            w.ended.set()
            actor.worker = w
            threading.Thread(target=actor.gone, args=(w,), daemon=True).start()
        return True
    attempt()


def _exited(pool: Pool, w: _Worker, final: Dict[str, Any]) -> None:
    """A worker placed in a group ended: its room goes back to its bundle, what waits for
    room is tried again; a worker that never reached the program is gone now."""
    b, cpus, gpus = w.bundle  # type: ignore[attr-defined]
    with pool.lock:
        if w.final is not None:
            return
        w.final = final
        slot = int(w.slot[1:])  # type: ignore[attr-defined]
        if b.workers.pop(slot, None) is not None:
            b.free_cpus += cpus
            b.free_gpus += gpus
        pool.slots.pop(w.slot, None)  # type: ignore[attr-defined]
        connected = w.sock is not None
    w.ended.set()
    if not connected:
        if w.actor is not None:
            w.actor.gone(w)
        else:
            with pool.lock:
                if w.shape is not None and w in w.shape.workers:
                    w.shape.workers.remove(w)
    _retry(pool)


def _retry(pool: Pool) -> None:
    """Room may have come back (a worker left, a bundle connected): the waiting actors and
    the placed shapes' queued calls get it."""
    with pool.lock:
        waiting = [f for g in pool.groups.values() for f in g.waiting]
        for g in pool.groups.values():
            g.waiting = []
        shapes = [s for s in pool.shapes.values() if s.o.get("placement") is not None]
    for attempt in waiting:
        attempt()
    for shape in shapes:
        with pool.lock:
            grow = bool(shape.queue) and pool._wants_worker(shape)
        if grow:
            start_worker(pool, shape)
        pool._pump(shape)


def serve_bundle(pool: Pool, sock: Any, reader: Any, first: List[Tuple[int, int, bytes]],
                 hello: bytes) -> None:
    """A bundle host's socket: its hello (checked by the caller's key), then its EXITED
    frames until it ends (the group's job ended)."""
    text = hello[_w.KEY_BYTES:].decode("ascii", "replace").split()
    g: Optional[Group] = None
    b: Optional[Bundle] = None
    if len(text) == 3 and text[1].isdigit() and text[2].isdigit():
        with pool.lock:
            g = next((x for x in pool.groups.values() if x.job_id == int(text[1])), None)
            if g is not None and int(text[2]) < len(g.bundles):
                b = g.bundles[int(text[2])]
                b.sock = sock
                if all(x.sock is not None for x in g.bundles) and g.state == "PENDING":
                    g.state = "CREATED"
                    g.created = True
                pool.cond.notify_all()
    if g is None or b is None:
        sock.close()
        return
    _retry(pool)
    try:
        rest = first
        while True:
            for kind, cid, body in rest:
                if kind == _w.EXITED:
                    with pool.lock:
                        w = b.workers.get(cid)
                    if w is not None:
                        code = body.decode("ascii", "replace")
                        why = ("killed by signal %s" % code[1:]) if code.startswith("-") \
                            else "exit code %s" % code
                        _exited(pool, w, {"id": g.job_id, "state": "succeeded" if code == "0"
                                          else "failed", "exit_code": code, "reason": why,
                                          "tasks": []})
            data = sock.recv(1 << 16)
            if not data:
                break
            rest = reader.feed(data)
    except (OSError, _w.FrameError):
        pass
    with pool.lock:
        b.sock = None
    if not pool.closed:
        _end(g, "its placement group was removed" if g.state == "REMOVED" else
             "its placement group's bundle %d ended" % b.index)


class ReadyRef(LocalFuture):
    """pg.ready(): an ObjectRef whose value is True once every bundle is held (the gang
    started); it raises when the group ended before."""

    def __init__(self, g: Group) -> None:
        super().__init__("placement group %s ready" % (g.name or g.id), g.job_id)
        self._g = g

    @property  # type: ignore[override]
    def _done(self) -> bool:
        return self._g.ready() or self._g.ended is not None

    def _wait(self, deadline: Optional[float]) -> None:
        import time
        from ..errors import GetTimeoutError
        pool = self._g.pool
        with pool.cond:
            while not self._done:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise GetTimeoutError("%s: not yet (its job %d waits for room)"
                                          % (self.name, self._g.job_id))
                pool.cond.wait(left)
        if self._g.ready() or self._g.ended is None:
            self._value, self._error = True, None
        else:
            self._error = JobFailed("%s: %s" % (self.name, self._g.ended),
                                    {"state": "killed", "tasks": []})

    def _wait_any(self, pending: List[Future], timeout: Optional[float]) -> None:
        with self._g.pool.cond:
            if any(f._done for f in pending):
                return
            self._g.pool.cond.wait(timeout)
