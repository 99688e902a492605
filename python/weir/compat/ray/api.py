"""Ray Core's API over weir's remote functions: what `import ray` gives a program that
`weir run` (or `python3 -m weir.run`) starts.

A remote function's call runs on a warm worker (weir/remote/warm.py: a weir job per
worker, the calls sent over a socket), or is one weir job as with @weir.remote where warm
workers are off or the call has a timeout, a queue or Slurm settings: ray.remote maps Ray's
options onto weir's (weir/remote/ray_names.py), `.remote()` returns weir's Future, which
is a ray.ObjectRef here as ray.put's references are; ray.get and ray.wait wait for them
and raise Ray's exceptions (exceptions.py).  ray.remote on a class makes an actor
(actors.py: a warm worker of its own that holds the instance).  docs/ray.md lists what is done, what differs and what is not yet.
"""

import abc
import inspect
import os
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ..._version import __version__ as _weir_version
from ...client import JOB_FINAL
from ...errors import (ActorDied, GetTimeoutError as _WeirTimeout, JobFailed, RemoteError,
                       ResourceError, ServerUnreachable, WeirError)
from ...remote import detached as _detached
from ...remote import futures as _futures
from ...remote import functions as _functions
from ...remote import ray_names as _ray
from ...remote import session as _session
from ...remote import shm as _shm
from ...remote import warm as _warm
from ...remote.warm_future import WarmFuture as _WarmFuture
from ...remote import actors as _actors_mod
from ...worker import warm as _wire
from ...worker.runner import item_path as _runner_item_path
from . import actors as _actors
from . import exceptions
from .actors import ActorClass, ActorHandle, get_actor, kill, method
from . import private as _private
from . import placement as _pg
from .runtime import (RuntimeContext, available_resources, cluster_resources, get_gpu_ids,
                      get_runtime_context, nodes)

__version__ = "2.9.0+weir" + _weir_version

# Ray's defaults for a task that weir's differ from
RAY_DEFAULTS: Dict[str, Any] = {"num_cpus": 1, "num_gpus": 0, "max_retries": 3,
                                "retry_exceptions": False}
# ray.init's arguments that weir accepts and does not use (they size or tune Ray's own
# processes, or a private cluster that weir does not start yet)
_INIT_IGNORED = ("num_cpus", "num_gpus", "resources", "object_store_memory",
                 "include_dashboard", "dashboard_host", "dashboard_port", "log_to_driver",
                 "logging_level", "logging_format", "configure_logging", "_temp_dir",
                 "_system_config", "labels", "local_mode", "job_config", "storage",
                 "_node_ip_address", "_plasma_directory")


class ObjectRef(abc.ABC):
    """What .remote() and ray.put return: weir's Future (a call) or ObjectRef (a put
    value) are both instances of it."""


ObjectRef.register(_futures.Future)
ObjectRef.register(_futures.ObjectRef)

_REFS = (_futures.Future, _futures.ObjectRef)


class _State:
    """What ray.init set up in this process."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.initialized = False
        self.namespace: Optional[str] = None
        self.env_vars: Dict[str, str] = {}
        self.python: Optional[str] = None  # runtime_env's conda interpreter, for every call
        self.address = ""
        self.private: Optional[_private.PrivateServer] = None


_state = _State()


class RayContext:
    """ray.init's answer: the server's address; `with ray.init():` shuts down at the end."""

    def __init__(self, address: str, namespace: Optional[str]) -> None:
        self.address_info = {"address": address, "webui_url": address,
                             "namespace": namespace}
        self.dashboard_url = address

    def __getitem__(self, key: str) -> Any:
        return self.address_info[key]

    def __enter__(self) -> "RayContext":
        return self

    def __exit__(self, *exc: Any) -> None:
        shutdown()


def _server_of(address: Optional[str]) -> Optional[str]:
    """The weir server of ray.init's address: None for the one found as the CLI finds it."""
    if address is None or address in ("", "auto"):
        return None
    if not isinstance(address, str):
        raise TypeError("ray.init: address: expected a str, got %r" % (address,))
    if address == "local":
        return "local"
    if address.startswith("ray://"):
        raise ValueError("ray.init: address %r is a Ray client address; give the weir "
                         "server's URL (http://HOST:PORT) or leave it out" % (address,))
    return address


def init(address: Optional[str] = None, *, namespace: Optional[str] = None,
         runtime_env: Optional[Mapping[str, Any]] = None, ignore_reinit_error: bool = False,
         **kwargs: Any) -> RayContext:
    """Connects this program to the weir server: `address` (a URL or HOST:PORT), else the
    one the `weir` CLI finds ($WEIR_SERVER, HOME/token).
    runtime_env={"env_vars": {...}} is the environment of every call.  num_cpus,
    num_gpus, resources and Ray's tuning arguments are accepted and not used."""
    for k in kwargs:
        if k not in _INIT_IGNORED:
            raise TypeError("ray.init() got an unexpected keyword argument %r" % (k,))
    with _state.lock:
        if _state.initialized:
            if ignore_reinit_error:
                return RayContext(_state.address, _state.namespace)
            raise RuntimeError("ray.init: this program is connected already (ray.init was "
                               "called before, or a call connected it); pass "
                               "ignore_reinit_error=True, or call ray.shutdown() first")
        renv = _ray.from_ray({"runtime_env": runtime_env}, "ray.init")
        env = renv.get("env", {})
        if namespace is not None and not isinstance(namespace, str):
            raise TypeError("ray.init: namespace: expected a str, got %r" % (namespace,))
        server = _server_of(address)
        # in a detached actor's process: the server and token of the program that made it
        # (docs/ray.md "Detached actors"), the namespace its program ran in
        made_by = _detached.auth_here() if server is None else None
        if made_by is not None:
            client = _session.init(server=made_by[0], token=made_by[1], home=made_by[2])
            if namespace is None:
                namespace = os.environ.get("WEIR_RAY_NAMESPACE") or None
        else:
            client = _session.init(server=None if server == "local" else server)
        try:
            if server == "local":
                raise ServerUnreachable("a private server was asked for")
            client.health()
        except ServerUnreachable as e:
            # Ray's local mode: none given, none found: a private one for this program
            # address="local" asks a private one whatever the environment names (as Ray
            # starts a local cluster whatever RAY_ADDRESS says)
            if server != "local" and (address is not None or os.environ.get("WEIR_SERVER")
                                      or "WEIR_JOB_ID" in os.environ):
                raise ConnectionError(
                    "ray.init: no weir server answers at %s (%s); start one with `weir "
                    "server`, or give its address (ray.init(address=URL), $WEIR_SERVER)"
                    % (client.server, e)) from None
            client = _start_private(kwargs.get("num_cpus"), kwargs.get("num_gpus"))
        store = kwargs.get("object_store_memory")
        if store is not None:
            if isinstance(store, bool) or not isinstance(store, (int, float)) or store < 0:
                raise ValueError("ray.init: object_store_memory: expected bytes >= 0, got %r"
                                 % (store,))
            _shm.set_limit(int(store))
        _state.initialized = True
        _state.namespace = namespace
        if namespace:  # the tasks' and actors' too (get_actor in a task)
            env = dict(env, WEIR_RAY_NAMESPACE=namespace)
        _state.env_vars = env
        _state.python = renv.get("python")
        _state.address = client.server
        return RayContext(client.server, namespace)


def _start_private(num_cpus: Any, num_gpus: Any) -> Any:
    """Starts the program's private server (private.py) and connects to it."""
    weir = _private.find_weir()
    if weir is None:
        raise ConnectionError("ray.init: no weir server answers at %s, and no `weir` program "
                              "to start a private one (put weir on PATH, or set WEIR_BIN)"
                              % _session._get_session().client.server)
    p = _private.PrivateServer(weir, num_cpus, num_gpus)
    _state.private = p

    def end_calls() -> None:
        s = _session._session
        if s is None:
            return
        _warm.close_pool(s)  # its workers first, and the last calls' records
        ids = s.kill_active("stopping the private server")
        deadline = time.monotonic() + 15
        while ids and time.monotonic() < deadline and any(
                s.client.job(i)["state"] not in JOB_FINAL for i in ids):
            time.sleep(0.1)
    p.on_stop(end_calls)
    # its own token, not $WEIR_TOKEN's (another server's, with address="local")
    token = (Path(p.weir_home) / "token").read_text().strip() or None
    return _session.init(server=p.url, token=token, home=p.weir_home)


def _ensure() -> None:
    """What Ray does on a first call without ray.init: connect with the defaults."""
    if not _state.initialized:
        with _state.lock:
            if not _state.initialized:
                init()


def is_initialized() -> bool:
    """Whether ray.init was called (or a first call connected) and not shut down since."""
    return _state.initialized


def shutdown() -> None:
    """Disconnects: the calls this program started that have not ended are killed."""
    with _state.lock:
        s = _session._session
        _warm.close_pool(s)  # the warm workers leave at the end of their sockets
        if _state.private is not None:
            _state.private.stop()  # its calls first
            _state.private = None
        elif s is not None:
            s.kill_active("ray.shutdown")
        with _session._session_lock:
            _session._session = None
        _state.initialized = False
        _state.namespace = None
        _state.env_vars = {}
        _state.python = None
        _state.address = ""


def _job_failed(e: JobFailed) -> exceptions.RayError:
    job = e.job or {}
    tasks = job.get("tasks") or []
    if any(t.get("oom_killed") for t in tasks):
        return exceptions.OutOfMemoryError(str(e))
    if job.get("state") == "killed":
        if job.get("force"):
            return exceptions.ForceCancelledError(str(e))
        return exceptions.TaskCancelledError(str(e))
    return exceptions.WorkerCrashedError(str(e))


def _translate(e: BaseException, name: Optional[str] = None) -> BaseException:
    """weir's error as the one Ray raises for it (itself when Ray has none)."""
    if isinstance(e, exceptions.RayError):
        return e
    if isinstance(e, RemoteError):
        return exceptions.from_remote(e, name)
    if isinstance(e, ActorDied):
        return _actors.died(e)
    if isinstance(e, JobFailed):
        return _job_failed(e)
    if isinstance(e, _WeirTimeout):
        return exceptions.GetTimeoutError(str(e))
    return e


class RemoteFunction:
    """A function made remote by @ray.remote: f.remote(...) returns an ObjectRef at once;
    f.options(...) changes Ray's options for the calls made through it."""

    def __init__(self, fn: Callable[..., Any], options: Mapping[str, Any]) -> None:
        self._fn = fn
        self._ray_options = dict(options)
        self._returns = _num_returns(self._ray_options, "ray.remote")
        if "num_returns" not in self._ray_options and inspect.isgeneratorfunction(fn):
            self._returns = "streaming"  # Ray 2.8+: a generator function streams
        merged = dict(RAY_DEFAULTS, **self._ray_options)
        merged.pop("num_returns", None)
        self._weir_options = _ray.from_ray(merged, "ray.remote")  # checked here, at once
        _pg.strategy_of(self._ray_options)
        # what runs: a generator's items made a list for num_returns "dynamic"/"streaming"
        self._run = _listing(fn) if isinstance(self._returns, str) else fn
        # (init's env_vars, weir's RemoteFunction) of the last call: made once per init
        self._made: Tuple[Any, Any] = (None, None)
        self.__name__ = getattr(fn, "__name__", "remote")
        self.__qualname__ = getattr(fn, "__qualname__", self.__name__)
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__wrapped__ = fn

    def __repr__(self) -> str:
        return "<ray.remote %s (on weir)>" % self.__qualname__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("%s is a remote function: it cannot be called directly; call "
                        "%s.remote(...)" % (self.__qualname__, self.__name__))

    def options(self, **options: Any) -> "RemoteFunction":
        """The same function with Ray's options changed for the calls made through it."""
        return RemoteFunction(self._fn, dict(self._ray_options, **options))

    def remote(self, *args: Any, **kwargs: Any) -> Any:
        """Starts one call (a weir job) and returns its ObjectRef; ObjectRefs among the
        arguments (at the top level) are the values they stand for in the call.  In a
        task, the program makes the call (nested calls: no token needed here)."""
        return _returns(self._call(args, kwargs), self._returns)

    def _call(self, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Any:
        link = _task_link()
        if link is not None:
            return link.submit(self._fn, _pg.captured(self._ray_options), _resolved(args),
                               _resolved(kwargs), _functions._job_name(self._fn))
        _ensure()
        fn = self._made[1]
        if fn is None or self._made[0] is not _state.env_vars:
            kw = dict(self._weir_options)
            env = dict(_state.env_vars, **kw.get("env", {}))
            kw["env"] = env
            if _state.python and "python" not in kw:
                kw["python"] = _state.python
            fn = _functions.remote(self._fn, **kw)
            assert isinstance(fn, _functions.RemoteFunction)
            self._made = (_state.env_vars, fn)
        try:
            o = fn._options
            placed = _pg.placement_of(self._ray_options, o, "%s.remote()" % self.__name__)
            if placed is not None:  # in a bundle of a placement group: its workers
                o = dict(o, placement=placed)
            if self._ray_options.get("max_calls"):  # a worker leaves after that many
                o = dict(o, max_calls=self._ray_options["max_calls"])
            if _warm.enabled() and _warm.eligible(o):
                s = _session._get_session()
                return _warm.pool_of(s).submit(self._run, args, kwargs, o,
                                               _functions._job_name(self._fn))
            if self._run is not self._fn:
                return _functions._submit(self._run, args, kwargs, o, "call",
                                          extra=_warm._extra(o))
            return fn.remote(*args, **kwargs)
        except ResourceError as e:
            raise ResourceError(e.status, "%s.remote(): the weir server at %s cannot run it "
                                "(%s): %s" % (self.__name__, _state.address,
                                              self._asks(), e.message)) from None
        except (RemoteError, JobFailed) as e:  # an ObjectRef argument's call failed
            raise _translate(e) from None

    def _asks(self) -> str:
        o = dict(RAY_DEFAULTS, **self._ray_options)
        return ", ".join("%s=%r" % (k, o[k]) for k in ("num_cpus", "num_gpus", "memory")
                         if o.get(k) is not None)


def _num_returns(options: Mapping[str, Any], what: str) -> Union[int, str]:
    """num_returns: a whole number >= 0, "dynamic" or "streaming" (1 by default)."""
    n = options.get("num_returns", 1)
    if n is None:
        return 1
    if n in ("dynamic", "streaming"):
        return str(n)
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError("%s: num_returns: expected a whole number >= 0, \"dynamic\" or "
                         "\"streaming\", got %r" % (what, n))
    return n


def _listing(fn: Callable[..., Any]) -> Callable[..., Any]:
    """fn whose generator's items come back as a list (num_returns "dynamic"/"streaming"),
    marked with the generator function itself: a warm worker runs that and sends the items
    one by one as they are yielded (worker/warm.py, stream()); a call that is a job gives
    the list at the end."""
    def items(*args: Any, **kwargs: Any) -> List[Any]:
        got = fn(*args, **kwargs)
        if not inspect.isgenerator(got) and not isinstance(got, (list, tuple)):
            raise TypeError("%s: num_returns=\"dynamic\"/\"streaming\" expects a generator, "
                            "got %s" % (getattr(fn, "__name__", "the function"),
                                        type(got).__name__))
        return list(got)
    items.__name__ = getattr(fn, "__name__", "items")
    items.__qualname__ = getattr(fn, "__qualname__", items.__name__)
    items.__module__ = getattr(fn, "__module__", "__main__")
    setattr(items, _wire.STREAM_ATTR, fn)
    return items


class _Ready(_futures.SettledFuture):
    """A ref whose value is here already (an item of a generator's call), or whose error is
    (the exception the generator raised, at the point it raised it)."""

    def __init__(self, value: Any, name: str, shm: Any = None,
                 error: Optional[BaseException] = None) -> None:
        super().__init__(name, value, error)
        self._shm = shm  # its segment when in shared memory: passed to calls as that


class ObjectRefGenerator:
    """The refs of a generator's items (num_returns="streaming", the default for a generator
    function as in Ray 2.8+: what .remote() returns; "dynamic": the value of the call's
    ref).  On a warm worker each item comes as the worker yields it: next() waits for the
    next one only; an exception the generator raised is the ref after its last item (get
    raises it), then StopIteration.  A call that is a job (or made in a task) gives its
    items when the generator has ended."""

    def __init__(self, call: Any, release: bool = False) -> None:
        self._call = call
        # whether an item taken is let go by the call (the ref given holds it from then:
        # "streaming", where this generator is the call's one reader)
        self._release = release
        self._items: Optional[List[Any]] = None  # the items of a call that does not stream
        self._error: Optional[BaseException] = None
        self._pos = 0
        self._raised = False

    def __repr__(self) -> str:
        return "<ray.ObjectRefGenerator of %s>" % self._call.name

    def _streams(self) -> bool:
        c = self._call
        return isinstance(c, _WarmFuture) and c._items is not None

    def _load(self) -> List[Any]:
        if self._items is None:
            try:
                values = get(self._call)
            except Exception as e:
                values, self._error = [], e
            self._items = [_Ready(v, "%s[%d]" % (self._call.name, i))
                           for i, v in enumerate(values)]
        return self._items

    def _after_last(self) -> Any:
        """The ref of the generator's exception once, then StopIteration."""
        err = self._call._error if self._streams() else self._error
        if err is not None and not self._raised:
            self._raised = True
            self._pos += 1
            return _Ready(None, "%s[%d]" % (self._call.name, self._pos - 1), error=err)
        raise StopIteration

    def _job_item(self) -> Optional[Any]:
        """A call that is a job: the item file its task wrote for the next ref
        (worker/runner.py, item_path), read and removed, or None."""
        c = self._call
        if type(c) is not _futures.Future or c._ranks != 1 or self._items is not None:
            return None
        path = _runner_item_path(str(c._result), self._pos)
        try:
            with open(path, "rb") as f:
                import cloudpickle
                got = cloudpickle.load(f)
        except (OSError, EOFError):
            return None
        try:
            os.unlink(path)
        except OSError:
            pass
        self._pos += 1
        return _Ready(got[1], "%s[%d]" % (c.name, self._pos - 1))

    def _next_job(self, timeout: Optional[float]) -> Any:
        """The next ref of a call that is a job: its task's item file as soon as it is
        there, else, once the job has ended, its value's list."""
        c = self._call
        deadline = None if timeout is None else time.monotonic() + timeout
        pause = 0.01
        while self._items is None:
            got = self._job_item()
            if got is not None:
                return got
            if c.done():
                got = self._job_item()  # written just before the end
                if got is not None:
                    return got
                break
            if deadline is not None and time.monotonic() >= deadline:
                raise exceptions.GetTimeoutError("%s: no item within %ss" % (c.name, timeout))
            time.sleep(pause)
            pause = min(pause * 2, 0.2)
        items = self._load()
        if self._pos >= len(items):
            return self._after_last()
        self._pos += 1
        return items[self._pos - 1]

    def _next(self, timeout: Optional[float]) -> Any:
        if type(self._call) is _futures.Future:
            return self._next_job(timeout)
        if not self._streams():
            if timeout is not None and not self._call.done():
                raise exceptions.GetTimeoutError("%s: no item within %ss" % (
                    self._call.name, timeout))
            items = self._load()
            if self._pos >= len(items):
                return self._after_last()
            self._pos += 1
            return items[self._pos - 1]
        c = self._call
        deadline = None if timeout is None else time.monotonic() + timeout
        with c._pool.cond:
            while len(c._items) <= self._pos and not c._done:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise exceptions.GetTimeoutError("%s: no item within %ss" % (c.name,
                                                                                 timeout))
                c._pool.cond.wait(left)
            got = c._items[self._pos] if self._pos < len(c._items) else None
            if got is not None and self._release:
                c._items[self._pos] = (None, None)  # freed when the ref given is dropped
        if got is None:
            return self._after_last()
        self._pos += 1
        return _Ready(got[0], "%s[%d]" % (c.name, self._pos - 1), shm=got[1])

    def __iter__(self) -> "ObjectRefGenerator":
        return self

    def __next__(self) -> Any:
        return self._next(None)

    def _next_sync(self, timeout_s: Optional[float] = None) -> Any:
        """Ray's: the next ref, waiting at most timeout_s (GetTimeoutError past it)."""
        return self._next(timeout_s)

    def __aiter__(self) -> "ObjectRefGenerator":
        return self

    async def __anext__(self) -> Any:
        import asyncio
        try:
            return await asyncio.get_running_loop().run_in_executor(None, self._next, None)
        except StopIteration:
            raise StopAsyncIteration from None

    def next_ready(self) -> bool:
        """Whether next() has a ref (or the end) at once, without waiting."""
        c = self._call
        if type(c) is _futures.Future and c._ranks == 1 and self._items is None and \
                os.path.exists(_runner_item_path(str(c._result), self._pos)):
            return True  # a job's item file
        if not self._streams():
            return bool(self._call.done())
        c = self._call
        with c._pool.cond:
            return len(c._items) > self._pos or c._done

    def is_finished(self) -> bool:
        """Whether the generator has ended and every ref was taken."""
        if not self._streams():
            return bool(self._call.done()) and self._pos >= len(self._load()) + (
                1 if self._error is not None else 0)
        c = self._call
        return c._done and self._pos >= len(c._items) + (1 if c._error is not None else 0)

    def completed(self) -> Any:
        """A ref ready when the generator has ended (its value None, as in Ray)."""
        return _Completed(self._call)

    def __len__(self) -> int:
        """The count of items: waits for the generator's end."""
        if self._streams():
            self._call._event.wait()
            if self._streams():
                return len(self._call._items)
        return len(self._load())


class _Dynamic(_actors.DerivedFuture):
    """num_returns="dynamic": a ref whose value is the ObjectRefGenerator of the items."""

    def __init__(self, call: Any) -> None:
        super().__init__(call, call.name)

    def __repr__(self) -> str:
        return "<weir.Future %s (dynamic)>" % self.name

    def _derive(self, value: Any) -> None:
        self._value = ObjectRefGenerator(self._call)


class _Completed(_actors.DerivedFuture):
    """ObjectRefGenerator.completed(): ready at the generator's end, its value None."""

    def __init__(self, call: Any) -> None:
        super().__init__(call, call.name)

    def _derive(self, value: Any) -> None:
        self._value = None


def _returns(call: Any, n: Union[int, str]) -> Any:
    """What .remote() gives for num_returns n: the call's ref (1), None (0), a list of n
    refs, an ObjectRefGenerator ("streaming") or a ref to one ("dynamic")."""
    if n == 1:
        return call
    if n == 0:
        return None
    if n == "streaming":
        return ObjectRefGenerator(call, release=True)
    if n == "dynamic":
        return _Dynamic(call)
    assert isinstance(n, int)
    return [_actors._Part(call, i, n) for i in range(n)]


def _task_link() -> Optional[_actors_mod.Link]:
    """In a task on a warm worker (or an actor): the link to the program that owns it,
    which makes the task's calls and actors (docs/internals/calls.md, "Nested calls");
    None in the program itself."""
    folder = os.environ.get("WEIR_WARM_DIR")
    if not folder or _actors_mod.local_pool(folder) is not None:
        return None
    return _actors_mod.link_to(folder)


def _in_task() -> bool:
    """Whether this process is a task of a program (a warm worker, an actor)."""
    folder = os.environ.get("WEIR_WARM_DIR")
    return bool(folder) and _actors_mod.local_pool(folder or "") is None


def _resolved(args: Any) -> Any:
    """A task's call arguments with the top-level refs of its own calls waited for (the
    program's refs pickle as they are)."""
    def one(a: Any) -> Any:
        if isinstance(a, _actors_mod.LinkFuture):
            return get(a)
        return a
    if isinstance(args, dict):
        return {k: one(v) for k, v in args.items()}
    return tuple(one(a) for a in args)


def _serve_submit(body: bytes) -> Any:
    """The program's side of a task's call (SUBMIT): made here, as the program's own: a
    function's call returns its future; an actor's creation its handle's fields."""
    import cloudpickle
    target, options, args, kwargs = cloudpickle.loads(body)
    if inspect.isclass(target):
        h = ActorClass(target, options).remote(*args, **kwargs)
        assert h._actor is not None  # made here, in the program
        return h._actor.info()
    return RemoteFunction(target, options)._call(args, kwargs)  # its returns made there


_actors_mod.SUBMIT_HANDLER = _serve_submit
_futures.RESOLVE = lambda ref: get(ref)  # ref.future(), `await ref`: Ray's errors


def remote(*args: Any, **options: Any) -> Any:
    """@ray.remote, @ray.remote(num_cpus=..., ...) or ray.remote(fn): a remote function.
    On a class: an actor class (actors.py)."""
    if args and options:
        raise TypeError("ray.remote: give the function alone (@ray.remote) or options alone "
                        "(@ray.remote(num_cpus=2)), not both")
    if len(args) > 1:
        raise TypeError("ray.remote: expected one function, got %d arguments" % len(args))

    def make(target: Any) -> Any:
        if inspect.isclass(target):
            return ActorClass(target, options)
        if not callable(target):
            raise TypeError("ray.remote: expected a function or a class, got %r" % (target,))
        opts = dict(options)
        gpus = opts.get("num_gpus")
        if isinstance(gpus, (int, float)) and not isinstance(gpus, bool) and gpus > 0 and \
                opts.get("max_calls") is None:
            # Ray's default for a GPU function: a worker per call, so that what the call
            # held on the GPU (a framework's cache) is given back when it ends
            opts["max_calls"] = 1
        return RemoteFunction(target, opts)

    if args:
        return make(args[0])
    # bad options fail at the decorator (a class's are checked by ActorClass)
    if any(k in options for k in _actors.ACTOR_OPTIONS if k not in _actors._JOB_OPTIONS
           and k not in _ray.RAY_FUNCTION_OPTIONS):
        _actors.check_options(options, "ray.remote")
    else:
        _num_returns(options, "ray.remote")
        _ray.from_ray({k: v for k, v in options.items() if k != "num_returns"}, "ray.remote")
    return make


def _check_refs(refs: Any, what: str) -> Tuple[bool, List[Any]]:
    if isinstance(refs, _REFS):
        return True, [refs]
    if isinstance(refs, (list, tuple)):
        for r in refs:
            if not isinstance(r, _REFS):
                raise TypeError("%s: expected ObjectRefs, got %r in the list" % (what, r))
        return False, list(refs)
    # Ray's class for it: a ValueError (a value in the list that is no ref: TypeError)
    raise ValueError("%s: expected an ObjectRef or a list of them, got %r" % (what, refs))


def get(object_refs: Any, *, timeout: Optional[float] = None) -> Any:
    """The value of an ObjectRef, or of each in a list (in order).  Raises RayTaskError
    (also the function's exception class) when a call raised, WorkerCrashedError when its
    process ended without a result, GetTimeoutError after `timeout` seconds."""
    single, items = _check_refs(object_refs, "ray.get")
    if not _in_task() and (not all(r._local for r in items if isinstance(r, _futures.Future))
                           or not any(isinstance(r, _futures.Future) for r in items)):
        _ensure()  # (a task's actor calls are waited for without a server)
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(
            timeout, (int, float)) or timeout < 0):
        raise ValueError("ray.get: timeout: expected seconds >= 0 or None, got %r"
                         % (timeout,))
    try:
        out = _futures.get(items, timeout=timeout)
    except WeirError as e:  # first: weir's GetTimeoutError is a TimeoutError, an OSError
        # RayTaskError.function_name: the call's function, as Ray names it
        err = _translate(e, next((r.name for r in items if getattr(r, "_error", None) is e),
                                 None))
        if err is e:
            raise
        raise err from None
    except (OSError, EOFError) as e:
        raise exceptions.ObjectLostError("ray.get: an object is gone from the object "
                                         "folder: %s" % (e,)) from e
    return out[0] if single else out


def put(value: Any) -> Any:
    """Stores value once in weir's object folder; its ObjectRef can be passed to calls."""
    if isinstance(value, _REFS):
        raise TypeError("ray.put: the value is an ObjectRef already; pass it as it is")
    link = _task_link()
    if link is not None:  # in a task: a segment the program adopts, else the folder
        ref = _shm.put(value, os.environ.get("WEIR_WARM_TAG", "x"))
        if ref is not None:
            got = link.adopt(ref.path, ref.size)
            get(got)
            _shm.disown(ref.path)
            return ref
        objs = os.environ.get("WEIR_PY_OBJECTS")
        if objs:
            from ...remote import objects as _objects
            return _futures.ObjectRef(_objects.write_archive(
                Path(objs), _objects.dumps(value, "the value given to ray.put")))
    _ensure()
    if _warm.enabled():
        ref = _warm.pool_of(_session._get_session()).put(value)
        if ref is not None:
            return ref
    return _functions.put(value)  # past the store's size: spilled to the object folder


def wait(object_refs: Sequence[Any], *, num_returns: int = 1,
         timeout: Optional[float] = None, fetch_local: bool = True
         ) -> Tuple[List[Any], List[Any]]:
    """(ready, not_ready): returns once num_returns of the refs are ready, or after timeout
    seconds; each list in the order given.  A ray.put reference is always ready."""
    if not isinstance(object_refs, (list, tuple)):
        raise TypeError("ray.wait: expected a list of ObjectRefs, got %r" % (object_refs,))
    if not object_refs:
        return [], []  # as Ray: before num_returns is checked
    if any(isinstance(r, ObjectRefGenerator) for r in object_refs):
        return _wait_generators(list(object_refs), num_returns, timeout)
    if not _in_task() and not all(getattr(r, "_local", False) for r in object_refs):
        _ensure()
    refs = _check_refs(list(object_refs), "ray.wait")[1]
    if len(set(id(r) for r in refs)) != len(refs):
        raise ValueError("ray.wait: the list holds the same ObjectRef twice")
    if isinstance(num_returns, bool) or not isinstance(num_returns, int) or \
            not 1 <= num_returns <= max(1, len(refs)):
        raise ValueError("ray.wait: num_returns: expected 1 to %d (the refs given), got %r"
                         % (len(refs), num_returns))
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(
            timeout, (int, float)) or timeout < 0):
        raise ValueError("ray.wait: timeout: expected seconds >= 0 or None, got %r"
                         % (timeout,))
    calls = [r for r in refs if isinstance(r, _futures.Future)]
    need = max(0, min(len(calls), num_returns - (len(refs) - len(calls))))
    if need:
        _futures.wait(calls, num_returns=need, timeout=timeout)
    done = [r for r in refs if not isinstance(r, _futures.Future) or r._done]
    ready = done[:num_returns]
    return ready, [r for r in refs if all(r is not x for x in ready)]


def _wait_generators(refs: List[Any], num_returns: int, timeout: Optional[float]
                     ) -> Tuple[List[Any], List[Any]]:
    """ray.wait over refs among which ObjectRefGenerators are: one is ready when its next
    ref (or its end) is there (Ray 2.x's meaning)."""
    _check_refs([r for r in refs if not isinstance(r, ObjectRefGenerator)], "ray.wait")
    if isinstance(num_returns, bool) or not isinstance(num_returns, int) or \
            not 1 <= num_returns <= len(refs):
        raise ValueError("ray.wait: num_returns: expected 1 to %d (the refs given), got %r"
                         % (len(refs), num_returns))

    def ready(r: Any) -> bool:
        if isinstance(r, ObjectRefGenerator):
            return r.next_ready()
        return not isinstance(r, _futures.Future) or r.done()

    pools = {id(c._pool): c._pool for c in
             (r._call if isinstance(r, ObjectRefGenerator) else r for r in refs)
             if isinstance(c, _WarmFuture)}
    deadline = None if timeout is None else time.monotonic() + timeout
    pause = 0.01
    def progress() -> List[Tuple[int, bool]]:
        calls = [r._call if isinstance(r, ObjectRefGenerator) else r for r in refs]
        return [(len(getattr(c, "_items", None) or ()), bool(c._done)) for c in calls]

    while True:
        seen = progress()
        done = [r for r in refs if ready(r)]
        left = None if deadline is None else deadline - time.monotonic()
        if len(done) >= num_returns or (left is not None and left <= 0):
            break
        if len(pools) == 1 and all(getattr(r._call if isinstance(r, ObjectRefGenerator)
                                           else r, "_local", False) for r in refs):
            pool = next(iter(pools.values()))
            with pool.cond:  # woken by an item or a call's end (read here under its lock)
                if progress() == seen:
                    pool.cond.wait(0.5 if left is None else min(left, 0.5))
            continue
        time.sleep(pause if left is None else max(0.0, min(pause, left)))
        pause = min(pause * 2, 0.5)
    ready_list = done[:num_returns]
    return ready_list, [r for r in refs if all(r is not x for x in ready_list)]


def cancel(object_ref: Any, *, force: bool = False, recursive: bool = True) -> None:
    """Stops a call: its job is killed (SIGTERM, then SIGKILL after the server's grace,
    force or not); ray.get on it then raises TaskCancelledError.  A call that has ended
    is left as it is."""
    if isinstance(object_ref, ObjectRefGenerator):  # its call: the generator stops
        object_ref = object_ref._call
    if not isinstance(object_ref, _futures.Future):
        raise TypeError("ray.cancel: expected the ObjectRef of a call, got %r" % (object_ref,))
    while isinstance(object_ref, _actors.DerivedFuture):  # one of a call's num_returns refs
        object_ref = object_ref._call
    if force and (getattr(object_ref, "_method", None) is not None or
                  getattr(object_ref, "_actor_no", None) is not None):
        # Ray's rule: force would kill the actor's process, and with it the actor
        raise ValueError("ray.cancel: force=True is not supported for actor tasks (%s); "
                         "cancel without force, or ray.kill() the actor" % object_ref.name)
    if isinstance(object_ref, _WarmFuture):
        object_ref.cancel(force=force, recursive=bool(recursive))
        return
    if isinstance(object_ref, _actors_mod.LinkFuture):  # in a task: the program cancels it
        object_ref.cancel(force=force, recursive=bool(recursive))
        return
    object_ref.kill()


__all__ = ["init", "shutdown", "is_initialized", "remote", "method", "get", "put", "wait",
           "cancel", "kill", "get_actor", "ActorClass", "ActorHandle",
           "get_runtime_context", "get_gpu_ids", "available_resources", "cluster_resources",
           "nodes", "ObjectRef", "ObjectRefGenerator", "RemoteFunction", "RayContext",
           "RuntimeContext", "exceptions", "__version__"]
