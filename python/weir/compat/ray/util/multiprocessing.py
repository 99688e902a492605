"""ray.util.multiprocessing: Pool, the standard library's multiprocessing.Pool API over
actors, as Ray's is: each of the pool's processes is an actor (1 core), whose constructor
runs the initializer; map's items go to the actors in chunks, in turn (docs/ray.md)."""

import builtins
import multiprocessing as _mp
import threading
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple

from .. import api


class TimeoutError(_mp.TimeoutError, builtins.TimeoutError):
    """AsyncResult.get(timeout=) found the calls not ended: multiprocessing's class, also
    Python's TimeoutError."""


class _PoolActor:
    """One process of a pool."""

    def __init__(self, initializer: Optional[Callable[..., Any]],
                 initargs: Tuple[Any, ...]) -> None:
        if initializer is not None:
            initializer(*initargs)

    def run(self, fn: Callable[..., Any], chunk: List[Any], star: bool) -> List[Any]:
        return [fn(*a) if star else fn(a) for a in chunk]

    def apply(self, fn: Callable[..., Any], args: Tuple[Any, ...],
              kwds: Dict[str, Any]) -> Any:
        return fn(*args, **kwds)


class AsyncResult:
    """What the *_async methods return: get(timeout), wait(timeout), ready(),
    successful(); callback (with the value) or error_callback (with the exception) is
    called in a thread of this process once the calls have ended."""

    def __init__(self, refs: List[Any], single: bool,
                 callback: Optional[Callable[[Any], Any]] = None,
                 error_callback: Optional[Callable[[BaseException], Any]] = None) -> None:
        self._refs = refs
        self._single = single
        if callback is not None or error_callback is not None:
            threading.Thread(target=self._call_back, args=(callback, error_callback),
                             name="weir-pool-callback", daemon=True).start()

    def _call_back(self, callback: Optional[Callable[[Any], Any]],
                   error_callback: Optional[Callable[[BaseException], Any]]) -> None:
        try:
            value = self.get()
        except Exception as e:
            if error_callback is not None:
                error_callback(e)
            return
        if callback is not None:
            callback(value)

    def get(self, timeout: Optional[float] = None) -> Any:
        """The value (apply's), or the list of values in order (map's); raises what the
        function raised (RayTaskError, also an instance of its class), TimeoutError."""
        try:
            got = api.get(self._refs, timeout=timeout)
        except api.exceptions.GetTimeoutError:
            raise TimeoutError("the pool's calls have not ended after %s s" % timeout) \
                from None
        if self._single:
            return got[0]
        return [v for chunk in got for v in chunk]

    def wait(self, timeout: Optional[float] = None) -> None:
        api.wait(self._refs, num_returns=len(self._refs), timeout=timeout)

    def ready(self) -> bool:
        done, _ = api.wait(self._refs, num_returns=len(self._refs), timeout=0)
        return len(done) == len(self._refs)

    def successful(self) -> bool:
        if not self.ready():
            raise ValueError("%r not ready" % self)
        try:
            self.get()
        except Exception:
            return False
        return True


class Pool:
    """multiprocessing.Pool over actors: Pool(processes=None, initializer=None,
    initargs=None, maxtasksperchild=None, context=None, ray_address=None,
    ray_remote_args=None).  processes: the cluster's CPUs by default; context is ignored,
    as in Ray; ray_remote_args: the actors' options (num_cpus, memory, ...)."""

    def __init__(self, processes: Optional[int] = None,
                 initializer: Optional[Callable[..., Any]] = None,
                 initargs: Optional[Iterable[Any]] = None,
                 maxtasksperchild: Optional[int] = None, context: Any = None,
                 ray_address: Optional[str] = None,
                 ray_remote_args: Optional[Dict[str, Any]] = None) -> None:
        if processes is not None and (isinstance(processes, bool) or
                                      not isinstance(processes, int) or processes < 1):
            raise ValueError("Pool: processes: expected a whole number >= 1, got %r"
                             % (processes,))
        if initializer is not None and not callable(initializer):
            raise TypeError("Pool: initializer must be a callable")
        if maxtasksperchild is not None and (not isinstance(maxtasksperchild, int) or
                                             maxtasksperchild < 1):
            raise ValueError("Pool: maxtasksperchild: expected a whole number >= 1, got %r"
                             % (maxtasksperchild,))
        if ray_address is not None:
            api.init(address=ray_address, ignore_reinit_error=True)
        elif not api.is_initialized():
            api.init()
        if processes is None:
            processes = max(1, int(api.cluster_resources().get("CPU", 1)))
        # maxtasksperchild: a process's calls are its actor's; Ray restarts it after N
        # tasks, weir does not (accepted)
        opts = dict({"num_cpus": 1}, **(ray_remote_args or {}))
        cls = api.remote(**opts)(_PoolActor)
        args = tuple(initargs or ())
        self._actors = [cls.remote(initializer, args) for _ in range(processes)]
        self._turn = 0
        self._state = "RUN"
        self._sent: List[Any] = []  # the calls made, for join()
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return "<ray.util.multiprocessing.Pool state=%s processes=%d>" % (
            self._state, len(self._actors))

    def __enter__(self) -> "Pool":
        self._check()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.terminate()

    def _check(self) -> None:
        if self._state != "RUN":
            raise ValueError("Pool not running")

    def _next_actor(self) -> Any:
        with self._lock:
            a = self._actors[self._turn % len(self._actors)]
            self._turn += 1
        return a

    def _chunks(self, func: Callable[..., Any], iterable: Iterable[Any],
                chunksize: Optional[int], star: bool) -> List[Any]:
        self._check()
        items = list(iterable)
        if chunksize is None:  # multiprocessing's: about four chunks a process
            chunksize, extra = divmod(len(items), len(self._actors) * 4)
            chunksize += 1 if extra else 0
        if not isinstance(chunksize, int) or isinstance(chunksize, bool) or chunksize < 1:
            if chunksize == 0 and not items:
                chunksize = 1
            else:
                raise ValueError("Chunksize must be 1+, not %r" % (chunksize,))
        refs = [self._next_actor().run.remote(func, items[i:i + chunksize], star)
                for i in range(0, len(items), chunksize)]
        with self._lock:
            self._sent.extend(refs)
        return refs

    # ---- one call ------------------------------------------------------------------------
    def apply(self, func: Callable[..., Any], args: Iterable[Any] = (),
              kwds: Optional[Dict[str, Any]] = None) -> Any:
        return self.apply_async(func, args, kwds).get()

    def apply_async(self, func: Callable[..., Any], args: Iterable[Any] = (),
                    kwds: Optional[Dict[str, Any]] = None,
                    callback: Optional[Callable[[Any], Any]] = None,
                    error_callback: Optional[Callable[[BaseException], Any]] = None
                    ) -> AsyncResult:
        self._check()
        ref = self._next_actor().apply.remote(func, tuple(args), dict(kwds or {}))
        with self._lock:
            self._sent.append(ref)
        return AsyncResult([ref], True, callback, error_callback)

    # ---- many ----------------------------------------------------------------------------
    def map(self, func: Callable[[Any], Any], iterable: Iterable[Any],
            chunksize: Optional[int] = None) -> List[Any]:
        return self.map_async(func, iterable, chunksize).get()  # type: ignore[no-any-return]

    def map_async(self, func: Callable[[Any], Any], iterable: Iterable[Any],
                  chunksize: Optional[int] = None,
                  callback: Optional[Callable[[Any], Any]] = None,
                  error_callback: Optional[Callable[[BaseException], Any]] = None
                  ) -> AsyncResult:
        return AsyncResult(self._chunks(func, iterable, chunksize, False), False, callback,
                           error_callback)

    def starmap(self, func: Callable[..., Any], iterable: Iterable[Iterable[Any]],
                chunksize: Optional[int] = None) -> List[Any]:
        return self.starmap_async(func, iterable, chunksize).get()  # type: ignore

    def starmap_async(self, func: Callable[..., Any], iterable: Iterable[Iterable[Any]],
                      chunksize: Optional[int] = None,
                      callback: Optional[Callable[[Any], Any]] = None,
                      error_callback: Optional[Callable[[BaseException], Any]] = None
                      ) -> AsyncResult:
        return AsyncResult(self._chunks(func, [tuple(a) for a in iterable], chunksize,
                                        True), False, callback, error_callback)

    def imap(self, func: Callable[[Any], Any], iterable: Iterable[Any],
             chunksize: int = 1) -> Iterator[Any]:
        """The values in order, each as soon as it and those before it have ended."""
        refs = self._chunks(func, iterable, chunksize, False)

        def values() -> Iterator[Any]:
            for r in refs:
                yield from api.get(r)
        return values()

    def imap_unordered(self, func: Callable[[Any], Any], iterable: Iterable[Any],
                       chunksize: int = 1) -> Iterator[Any]:
        """The values in the order their chunks end."""
        refs = self._chunks(func, iterable, chunksize, False)

        def values() -> Iterator[Any]:
            left = list(refs)
            while left:
                done, left = api.wait(left, num_returns=1)
                yield from api.get(done[0])
        return values()

    # ---- its end -------------------------------------------------------------------------
    def close(self) -> None:
        """No more calls; those made run on (join() waits for them)."""
        if self._state == "RUN":
            self._state = "CLOSE"

    def terminate(self) -> None:
        """Ends the pool's processes now (ray.kill of its actors)."""
        self._state = "TERMINATE"
        for a in self._actors:
            try:
                api.kill(a)
            except Exception:
                pass

    def join(self) -> None:
        """Waits for the calls made (after close() or terminate())."""
        if self._state == "RUN":
            raise ValueError("Pool is still running")
        if self._state == "CLOSE":
            with self._lock:
                sent = list(self._sent)
            if sent:
                api.wait(sent, num_returns=len(sent))


__all__ = ["Pool", "AsyncResult", "TimeoutError"]
