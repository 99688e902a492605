"""Ray's actors over weir's (weir/remote/actors.py): @ray.remote on a class (ActorClass),
the handle it gives (ActorHandle) and its methods (ActorMethod), @ray.method, ray.kill,
ray.get_actor and ray.util.ActorPool.  docs/ray.md says what is done and what differs.
"""

import os
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Tuple, Union

from ...errors import ActorDied, ResourceError, remote_error
from ...remote import actors as _actors
from ...remote import functions as _functions
from ...remote import objects as _objects
from ...remote import ray_ids as _ray_ids
from ...remote import ray_names as _ray
from ...remote import session as _session
from ...remote.actors import LinkFuture
from ...remote.futures import Future, LocalFuture, SettledFuture
from ...worker import warm as _wire
from . import exceptions

# the options of @ray.remote on a class; the resources and runtime_env mean what they mean
# for a function (ray_names.py), the others are the actor's
ACTOR_OPTIONS = ("num_cpus", "num_gpus", "memory", "resources", "runtime_env",
                 "max_concurrency", "max_restarts", "max_task_retries", "lifetime", "name",
                 "namespace", "get_if_exists", "scheduling_strategy", "placement_group",
                 "placement_group_bundle_index", "placement_group_capture_child_tasks",
                 "concurrency_groups")
# those that are a weir job's resources (mapped by ray_names.from_ray)
_JOB_OPTIONS = ("num_cpus", "num_gpus", "memory", "resources", "runtime_env")


def _int_option(options: Mapping[str, Any], key: str, default: int, lo: int) -> int:
    v = options.get(key, default)
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, int) or v < lo:
        raise ValueError("ray.remote: %s: expected a whole number >= %d, got %r" % (key, lo, v))
    return v


def check_options(options: Mapping[str, Any], what: str) -> None:
    """Refuses what weir's actors cannot do, at the decorator (or .options())."""
    for k in options:
        if k not in ACTOR_OPTIONS:
            raise ValueError("%s: %r is not an option of an actor; the options are %s"
                             % (what, k, ", ".join(ACTOR_OPTIONS)))
    lifetime = options.get("lifetime")
    if lifetime not in (None, "non_detached", "detached"):
        raise ValueError("%s: lifetime: expected None, \"detached\" or \"non_detached\", got "
                         "%r" % (what, lifetime))
    if lifetime == "detached" and (options.get("placement_group") or isinstance(
            options.get("scheduling_strategy"), _pg_strategy())):
        raise NotImplementedError("%s: a detached actor in a placement group: weir's groups "
                                  "end with their program; leave one of them out" % what)
    _int_option(options, "max_concurrency", 1, 1)
    groups = options.get("concurrency_groups")
    if groups is not None:
        if not isinstance(groups, dict) or not all(
                isinstance(k, str) and k and isinstance(v, int) and not isinstance(v, bool)
                and v >= 1 for k, v in groups.items()):
            raise ValueError("%s: concurrency_groups: expected a dict of group names to "
                             "whole numbers >= 1, got %r" % (what, groups))
        if lifetime == "detached" and groups:
            raise NotImplementedError("%s: concurrency_groups on a detached actor: not yet "
                                      "on weir (max_concurrency is)" % what)
    _int_option(options, "max_restarts", 0, -1)
    _int_option(options, "max_task_retries", 0, -1)
    for k in ("name", "namespace"):
        if options.get(k) is not None and (not isinstance(options[k], str) or
                                           not options[k]):
            raise ValueError("%s: %s: expected a non-empty str, got %r" % (what, k, options[k]))
    _ray.from_ray({k: v for k, v in options.items() if k in _JOB_OPTIONS}, what)
    from . import placement as _pg
    _pg.strategy_of(options)


def _pg_strategy() -> type:
    from .util.scheduling_strategies import PlacementGroupSchedulingStrategy
    return PlacementGroupSchedulingStrategy


def _has_async(cls: Any) -> bool:
    import inspect
    return any(inspect.iscoroutinefunction(m)
               for _, m in inspect.getmembers(cls, inspect.isfunction))


class ActorClass:
    """A class made remote by @ray.remote: Cls.remote(...) starts an actor (a weir job
    holding an instance) and returns its handle."""

    def __init__(self, cls: type, options: Mapping[str, Any]) -> None:
        check_options(options, "ray.remote")
        self._cls = cls
        self._ray_options = dict(options)
        self.__name__ = cls.__name__
        self.__qualname__ = cls.__qualname__
        self.__doc__ = cls.__doc__
        self.__wrapped__ = cls

    def __repr__(self) -> str:
        return "<ray.remote actor class %s (on weir)>" % self.__qualname__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("%s is an actor class: it cannot be instantiated directly; call "
                        "%s.remote(...)" % (self.__qualname__, self.__name__))

    def options(self, **options: Any) -> "ActorClass":
        """The same class with Ray's options changed for the actors made through it."""
        return ActorClass(self._cls, dict(self._ray_options, **options))

    def remote(self, *args: Any, **kwargs: Any) -> "ActorHandle":
        """Starts the actor: its worker job is submitted now (a refusal is raised here);
        the constructor runs there with these arguments."""
        from . import api
        link = api._task_link()
        if link is not None:  # in a task: the program makes it
            from . import placement as _pg
            f = link.submit(self._cls, _pg.captured(self._ray_options), api._resolved(args),
                            api._resolved(kwargs), "%s.remote()" % self.__name__)
            return _rebuild(*api.get(f))
        api._ensure()
        o = self._ray_options
        kw = _ray.from_ray(dict({"num_cpus": 1}, **{k: v for k, v in o.items()
                                                    if k in _JOB_OPTIONS}), "ray.remote")
        kw["env"] = dict(api._state.env_vars, **kw.get("env", {}))
        made = _functions.remote(_noop, **kw)
        assert isinstance(made, _functions.RemoteFunction)
        from . import placement as _pg
        placed = _pg.placement_of(o, made._options, "%s.remote()" % self.__name__)
        if placed is not None:  # its worker started in a bundle of the group
            made._options = dict(made._options, placement=placed)
        concurrency = _int_option(o, "max_concurrency", 1000 if _has_async(self._cls) else 1,
                                  1)
        groups = _groups_of(self._cls, o.get("concurrency_groups") or {})
        label = o.get("name")
        ns = o.get("namespace") or api._state.namespace or ""
        if o.get("lifetime") == "detached":
            return _detached(self, made._options, label, ns, args, kwargs, concurrency)
        try:
            a = _actors.create(self._cls, args, kwargs, made._options, label or self.__name__,
                               label, ns, concurrency, _int_option(o, "max_restarts", 0, -1),
                               _int_option(o, "max_task_retries", 0, -1),
                               bool(o.get("get_if_exists")), groups)
        except ResourceError as e:
            raise ResourceError(e.status, "%s.remote(): the weir server at %s cannot start "
                                    "the actor: %s" % (self.__name__, api._state.address,
                                                       e.message)) from None
        return ActorHandle(*a.info(), actor=a)


def _noop() -> None:
    return None


def _groups_of(cls: type, groups: Dict[str, int]) -> Dict[str, int]:
    """The actor's concurrency groups; ValueError when a method names one it lacks (Ray
    refuses it at the actor's creation)."""
    for k in dir(cls):
        g = getattr(getattr(cls, k, None), _wire.GROUP_ATTR, None)
        if g is not None and g not in groups:
            raise ValueError("%s.%s: @ray.method(concurrency_group=%r): the actor class has "
                             "no such group (concurrency_groups=%r)" % (cls.__name__, k, g,
                                                                        groups))
    return dict(groups)


def _detached(ac: ActorClass, o: Dict[str, Any], label: Optional[str], ns: str,
              args: Tuple[Any, ...], kwargs: Dict[str, Any], concurrency: int
              ) -> "ActorHandle":
    """A detached actor (remote/detached.py): a job of its own, found by (namespace, name)
    in the user's home by any program; get_if_exists gives the one alive."""
    from . import api
    from ...remote import detached as _det
    if not label:
        raise ValueError("%s.options(lifetime=\"detached\"): give it a name= (a detached "
                         "actor is found by its name in a later program)" % ac.__name__)
    s = _session._get_session()
    with _actors.pool_of(s).lock:
        mine = _actors.pool_of(s).named.get((ns, label))
    found = _det.find(s.client, ns, label)
    if found is not None or (mine is not None and mine.dead is None):
        if ac._ray_options.get("get_if_exists"):
            if found is not None:
                return _rebuild(*found)
            assert mine is not None
            folder, aid, aname, returns = mine.info()
            return ActorHandle(folder, aid, aname, returns, actor=mine)
        raise ValueError("an actor named %r exists already in namespace %r" % (label, ns))
    try:
        info = _det.create(s.client, ac._cls, api._resolved(args), api._resolved(kwargs), o,
                           ns, label, _actors._num_returns(ac._cls), str(s.objects_dir),
                           concurrency, _int_option(ac._ray_options, "max_restarts", 0, -1),
                           _int_option(ac._ray_options, "max_task_retries", 0, -1))
    except ResourceError as e:
        raise ResourceError(e.status, "%s.remote(): the weir server at %s cannot start "
                            "the actor: %s" % (ac.__name__, api._state.address,
                                               e.message)) from None
    return _rebuild(*info)


class ActorHandle:
    """An actor: handle.method.remote(...) calls it.  It can be passed to tasks and other
    actors: it pickles to the program's folder and the actor's id, and calls through the
    program from there."""

    def __init__(self, folder: str, actor_id: int, name: str,
                 num_returns: Dict[str, Union[int, str]],
                 actor: Optional[_actors.Actor] = None) -> None:
        self._folder = folder
        # weir's number of the actor, which also answers Ray's _actor_id.hex()
        self._actor_id = _ray_ids.ActorNumber(actor_id, _ray_ids.scope_of_folder(folder))
        self._name = name
        self._num_returns = dict(num_returns)
        self._actor = actor  # in the program: the actor itself; elsewhere None (a link)

    def __repr__(self) -> str:
        return "Actor(%s, %d)" % (self._name, self._actor_id)

    def __reduce__(self) -> Tuple[Any, Tuple[Any, ...]]:
        return (_rebuild, (self._folder, int(self._actor_id), self._name,
                           self._num_returns))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ActorHandle) and (other._folder, other._actor_id) == (
            self._folder, self._actor_id)

    def __hash__(self) -> int:
        return hash((self._folder, self._actor_id))

    @property
    def __ray_terminate__(self) -> "ActorMethod":
        """Ray's way to end an actor gracefully: a method call queued after those made
        before it, which ends the actor when its turn comes (as exit_actor() would)."""
        return ActorMethod(self, _wire.TERMINATE, 1)

    def __getattr__(self, name: str) -> "ActorMethod":
        if name.startswith("__") or name in ("_folder", "_actor_id", "_name",
                                             "_num_returns", "_actor"):
            raise AttributeError(name)
        return ActorMethod(self, name, self._num_returns.get(name, 1))

    def _call(self, method: str, args: Tuple[Any, ...], kwargs: Dict[str, Any],
              num_returns: Union[int, str]) -> Any:
        if isinstance(num_returns, str):  # a generator's: its items one by one
            method = _wire.STREAM_MARK + method
        if self._actor is not None:
            f: Future = self._actor.call(method, args, kwargs)
        else:
            data = _objects.dumps_args(args, kwargs, "%s.%s" % (self._name, method))
            try:
                f = _actors.link_to(self._folder).call(self._actor_id, self._name, method,
                                                       data)
            except ActorDied as e:  # a detached actor that has ended: its get raises it
                if not self._folder.startswith(_actors.DETACHED):
                    raise
                f = SettledFuture("%s.%s" % (self._name, method), error=e)
        from .api import _returns  # (api imports this module)
        return _returns(f, num_returns)


def _rebuild(folder: str, actor_id: int, name: str, num_returns: Dict[str, Union[int, str]]
             ) -> ActorHandle:
    """A handle unpickled: the actor itself in its program, a link's elsewhere."""
    pool = _actors.local_pool(folder)
    actor = pool.actors.get(actor_id) if pool is not None else None
    return ActorHandle(folder, actor_id, name, num_returns, actor=actor)


class ActorMethod:
    """handle.method: .remote(...) calls it; .options(num_returns=N) changes its returns."""

    def __init__(self, handle: ActorHandle, name: str, num_returns: Union[int, str]) -> None:
        self._handle = handle
        self._name = name
        self._n = num_returns
        self._group: Optional[str] = None  # .options(concurrency_group=)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("%s is an actor's method: it cannot be called directly; call "
                        "%s.remote(...)" % (self._name, self._name))

    def options(self, **options: Any) -> "ActorMethod":
        n = _check_method_options(options, "%s.options" % self._name)
        m = ActorMethod(self._handle, self._name, self._n if n is None else n)
        m._group = options.get("concurrency_group") or self._group
        return m

    def remote(self, *args: Any, **kwargs: Any) -> Any:
        """The call, sent to the actor in the order of this program's calls; its ObjectRef
        (a list of num_returns of them when more than one)."""
        name = self._name + (_wire.GROUP_MARK + self._group if self._group else "")
        return self._handle._call(name, args, kwargs, self._n)


def _check_method_options(options: Mapping[str, Any], what: str) -> Optional[Union[int, str]]:
    for k in options:
        if k not in ("num_returns", "concurrency_group"):
            raise NotImplementedError("%s: %r is not supported by weir's actors (num_returns "
                                      "and concurrency_group are)" % (what, k))
    g = options.get("concurrency_group")
    if g is not None and (not isinstance(g, str) or not g or _wire.GROUP_MARK in g):
        raise ValueError("%s: concurrency_group: expected a group's name, got %r" % (what, g))
    n = options.get("num_returns")
    if n in ("streaming", "dynamic"):
        return str(n)
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 0):
        raise ValueError("%s: num_returns: expected a whole number >= 0, \"streaming\" or "
                         "\"dynamic\", got %r" % (what, n))
    return n


class DerivedFuture(LocalFuture):
    """A ref whose value is made from another call's when that call ends (a method's N
    values, a dynamic generator): done with it, waited on through it."""

    def __init__(self, call: Future, name: str) -> None:
        super().__init__(name)
        self._call = call

    @property  # type: ignore[override]
    def _done(self) -> bool:
        return bool(self._call._done)

    def _wait(self, deadline: Optional[float]) -> None:
        self._call._wait(deadline)
        self._error = self._call._error
        if self._error is None:
            self._derive(self._call._value)

    def _derive(self, value: Any) -> None:
        """Sets self._value (or self._error) from the call's value."""
        raise NotImplementedError

    def _ray_task(self) -> Tuple[str, int]:
        """Ray's ids: its call's task, its own index (a _Part's) among the returns."""
        task, _ = self._call._ray_task()
        return task, getattr(self, "_index", 0) + 1

    def _wait_any(self, pending: List[Future], timeout: Optional[float]) -> None:
        self._call._wait_any(pending, timeout)  # type: ignore[attr-defined]


class _Part(DerivedFuture):
    """One of the values of a method with num_returns > 1: the item of its call's tuple."""

    def __init__(self, call: Future, index: int, n: int) -> None:
        super().__init__(call, "%s[%d]" % (call.name, index))
        self._index = index
        self._n = n

    def _derive(self, value: Any) -> None:
        if not isinstance(value, (tuple, list)) or len(value) != self._n:
            # Ray's error: the task's own (RayTaskError, also a ValueError), its words
            got = len(value) if isinstance(value, (tuple, list)) else "1 (%s)" % (
                type(value).__name__)
            msg = "Task returned %s objects, but num_returns=%d." % (got, self._n)
            self._error = exceptions.from_remote(
                remote_error("ValueError", msg, "", ValueError(msg),
                             self._call.job_id), self._call.name)
            return
        self._value = value[self._index]


def method(*args: Any, **options: Any) -> Any:
    """@ray.method(num_returns=N) on an actor's method: its call gives N ObjectRefs."""
    if args:
        raise TypeError("ray.method: give its options (@ray.method(num_returns=2))")
    n = _check_method_options(options, "ray.method")

    def mark(fn: Callable[..., Any]) -> Callable[..., Any]:
        if n is not None:
            fn.__weir_num_returns__ = n  # type: ignore[attr-defined]
        if options.get("concurrency_group") is not None:
            setattr(fn, _wire.GROUP_ATTR, options["concurrency_group"])
        return fn
    return mark


def exit_actor() -> None:
    """ray.actor.exit_actor(), in an actor's method: the actor ends gracefully once the
    calls running beside this one have returned (its process exits as Python does: atexit
    handlers run); this call's caller and the calls not begun get RayActorError; no restart.
    Raises AsyncioActorExit in an async actor, a SystemExit elsewhere, as Ray does (the
    worker reads either); TypeError outside an actor."""
    import sys
    if os.environ.get("WEIR_DETACHED"):  # a detached actor's process (worker/detached.py)
        raise _wire.ActorExit("ray.actor.exit_actor() was called")
    worker = getattr(sys.modules.get(_wire.CURRENT_MODULE), "worker", None)
    if worker is None or getattr(worker, "instance", None) is None:
        raise TypeError("ray.actor.exit_actor(): this is not an actor's method (it is called "
                        "in an actor, after its constructor); ray.kill(handle) ends an actor "
                        "from outside")
    if getattr(worker, "aloop", None) is not None:
        raise exceptions.AsyncioActorExit("ray.actor.exit_actor() was called")
    raise _wire.ActorExit("ray.actor.exit_actor() was called")


def kill(actor: Any, *, no_restart: bool = True) -> None:
    """Ends an actor at once (its worker SIGKILLed): its calls not ended raise
    RayActorError; restarted when no_restart=False and it has restarts left."""
    if not isinstance(actor, ActorHandle):
        raise ValueError("ray.kill: expected an actor handle, got %r (ray.cancel stops a "
                         "call)" % (actor,))
    if actor._actor is None:  # in a task: the program kills it (docs/ray.md "Nested calls")
        try:
            _actors.link_to(actor._folder).kill(actor._actor_id, actor._name,
                                                bool(no_restart))
        except ActorDied as e:
            raise ValueError("ray.kill: %s" % e) from None
        return
    actor._actor.kill(bool(no_restart))


def get_actor(name: str, namespace: Optional[str] = None) -> ActorHandle:
    """The named actor (name= at its creation) of this program, in namespace (else the
    program's).  ValueError when there is none."""
    from . import api
    if not isinstance(name, str) or not name:
        raise ValueError("ray.get_actor: name: expected a non-empty str, got %r" % (name,))
    folder = os.environ.get("WEIR_WARM_DIR")
    if folder and _actors.local_pool(folder) is None:  # in a task: ask the program
        ns = namespace if namespace is not None else os.environ.get("WEIR_RAY_NAMESPACE", "")
        f = _actors.link_to(folder).lookup(ns, name)
        f._wait(None)
        if f._error is not None:
            raise ValueError("ray.get_actor: %s" % (f._error,))
        return _rebuild(*f._value)
    api._ensure()
    ns = namespace if namespace is not None else (api._state.namespace or "")
    pool = _actors.pool_of(_session._get_session())
    with pool.lock:
        a: Optional[_actors.Actor] = pool.named.get((ns, name))
    if a is None or a.dead is not None:
        from ...remote import detached as _det  # a detached actor, made by any program
        found = _det.find(_session._get_session().client, ns, name)
        if found is not None:
            return _rebuild(*found)
        raise ValueError("ray.get_actor: %s" % _actors._no_actor(name, ns))
    return ActorHandle(*a.info(), actor=a)


class ActorPool:
    """ray.util.ActorPool: tasks spread over a fixed set of actors, each actor given one
    task at a time."""

    def __init__(self, actors: List[Any]) -> None:
        self._idle = list(actors)
        self._future_to_actor: Dict[Any, Tuple[int, Any]] = {}
        self._index_to_future: Dict[int, Any] = {}
        self._next_task_index = 0
        self._next_return_index = 0
        self._pending_submits: List[Tuple[Callable[..., Any], Any]] = []

    def map(self, fn: Callable[[Any, Any], Any], values: Any) -> Iterator[Any]:
        """fn(actor, value) for each value, the results in the order of values."""
        while self.has_next():
            self.get_next_unordered()  # what an earlier map left
        for v in values:
            self.submit(fn, v)
        while self.has_next():
            yield self.get_next()

    def map_unordered(self, fn: Callable[[Any, Any], Any], values: Any) -> Iterator[Any]:
        """As map, the results as they come."""
        while self.has_next():
            self.get_next_unordered()
        for v in values:
            self.submit(fn, v)
        while self.has_next():
            yield self.get_next_unordered()

    def submit(self, fn: Callable[[Any, Any], Any], value: Any) -> None:
        """fn(actor, value) on an idle actor, or when one is free."""
        if self._idle:
            actor = self._idle.pop()
            future = fn(actor, value)
            self._future_to_actor[future] = (self._next_task_index, actor)
            self._index_to_future[self._next_task_index] = future
            self._next_task_index += 1
        else:
            self._pending_submits.append((fn, value))

    def has_next(self) -> bool:
        """Whether results are still to be got."""
        return bool(self._future_to_actor)

    def get_next(self, timeout: Optional[float] = None, ignore_if_timedout: bool = False
                 ) -> Any:
        """The next result in the order submitted; TimeoutError after timeout."""
        from . import api
        if not self.has_next():
            raise StopIteration("No more results to get")
        if self._next_return_index >= self._next_task_index:
            raise ValueError("It is not allowed to call get_next() after "
                             "get_next_unordered().")
        future = self._index_to_future[self._next_return_index]
        if timeout is not None:
            ready, _ = api.wait([future], timeout=timeout)
            if not ready:
                if ignore_if_timedout:
                    self._next_return_index += 1
                    self._index_to_future.pop(self._next_return_index - 1, None)
                    self._return(self._future_to_actor.pop(future)[1])
                raise TimeoutError("Timed out waiting for result")
        del self._index_to_future[self._next_return_index]
        self._next_return_index += 1
        _, actor = self._future_to_actor.pop(future)
        self._return(actor)
        return api.get(future)

    def get_next_unordered(self, timeout: Optional[float] = None,
                           ignore_if_timedout: bool = False) -> Any:
        """Whichever result is ready first; TimeoutError after timeout."""
        from . import api
        if not self.has_next():
            raise StopIteration("No more results to get")
        ready, _ = api.wait(list(self._future_to_actor), num_returns=1, timeout=timeout)
        if not ready:
            raise TimeoutError("Timed out waiting for result")
        future = ready[0]
        i, actor = self._future_to_actor.pop(future)
        self._return(actor)
        del self._index_to_future[i]
        self._next_return_index = max(self._next_return_index, i + 1)
        return api.get(future)

    def _return(self, actor: Any) -> None:
        self._idle.append(actor)
        if self._pending_submits:
            self.submit(*self._pending_submits.pop(0))

    def has_free(self) -> bool:
        """Whether an actor is idle (and no submit waits for one)."""
        return bool(self._idle) and not self._pending_submits

    def pop_idle(self) -> Optional[Any]:
        """An idle actor taken out of the pool, or None."""
        return self._idle.pop() if self.has_free() else None

    def push(self, actor: Any) -> None:
        """Adds an actor to the pool."""
        busy = [a for _, a in self._future_to_actor.values()]
        if actor in self._idle or actor in busy:
            raise ValueError("Actor already belongs to current ActorPool")
        self._return(actor)


def died(e: ActorDied) -> BaseException:
    """weir's ActorDied as Ray's RayActorError."""
    err = exceptions.RayActorError(str(e))
    err.cause = e.cause  # type: ignore[assignment]
    return err
