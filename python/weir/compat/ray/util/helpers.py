"""ray.util.as_completed and ray.util.map_unordered: the results of calls as they end, a
chunk at a time (ray.wait's num_returns), the second keeping at most backpressure_size
calls in flight (Ray's "limit pending tasks" pattern, as Ray 2.x's helpers do)."""

from typing import Any, Iterable, Iterator, List, Optional, Sequence, Tuple

from .. import api


def _chunk(refs: List[Any], chunk_size: int, yield_obj_refs: bool,
           kwargs: Any) -> Tuple[List[Any], List[Any]]:
    """(the values, or refs, of a chunk of ended calls; the calls left)."""
    ready, left = api.wait(refs, num_returns=min(chunk_size, len(refs)), **kwargs)
    return (list(ready) if yield_obj_refs else list(api.get(list(ready)))), list(left)


def _check_chunk(chunk_size: Any) -> None:
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise ValueError("chunk_size: expected a whole number >= 1, got %r" % (chunk_size,))


def as_completed(refs: Sequence[Any], *, chunk_size: int = 10, yield_obj_refs: bool = False,
                 **kwargs: Any) -> Iterator[Any]:
    """The values of refs (the refs themselves with yield_obj_refs) as their calls end,
    chunk_size at a time (the last chunk smaller); kwargs go to ray.wait (timeout=,
    fetch_local=).  Raises what a call raised, when its chunk comes."""
    _check_chunk(chunk_size)
    left = list(refs)

    def values() -> Iterator[Any]:
        nonlocal left
        while left:
            got, left = _chunk(left, chunk_size, yield_obj_refs, kwargs)
            if not got:  # ray.wait's timeout passed with none ended
                return
            yield from got
    return values()


def map_unordered(fn: Any, items: Iterable[Any], *, backpressure_size: Optional[int] = 100,
                  chunk_size: int = 10, yield_obj_refs: bool = False,
                  **kwargs: Any) -> Iterator[Any]:
    """fn.remote(item) for each item, at most backpressure_size in flight (None: no bound),
    and their values as they end, a chunk at a time."""
    _check_chunk(chunk_size)
    if backpressure_size is not None and (isinstance(backpressure_size, bool) or
                                          not isinstance(backpressure_size, int) or
                                          backpressure_size < 1):
        raise ValueError("backpressure_size: expected a whole number >= 1 or None, got %r"
                         % (backpressure_size,))
    if not hasattr(fn, "remote"):
        raise TypeError("map_unordered: expected a remote function (@ray.remote), got %r"
                        % (fn,))

    def values() -> Iterator[Any]:
        pending: List[Any] = []
        for item in items:
            if backpressure_size is not None and len(pending) >= backpressure_size:
                got, pending = _chunk(pending, chunk_size, yield_obj_refs, kwargs)
                yield from got
            pending.append(fn.remote(item))
        yield from as_completed(pending, chunk_size=chunk_size,
                                yield_obj_refs=yield_obj_refs, **kwargs)
    return values()


__all__ = ["as_completed", "map_unordered"]
