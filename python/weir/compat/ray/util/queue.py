"""ray.util.queue: Queue, a FIFO shared by the program and its tasks: an async actor
holding an asyncio.Queue (a get or put that waits does not hold the actor), as Ray's is.
Empty and Full are raised as Ray raises them."""

import asyncio
import queue as _stdqueue
from typing import Any, Dict, List, Optional

from .. import api


class Empty(_stdqueue.Empty):
    """get(block=False), or get(timeout=) that found nothing."""


class Full(_stdqueue.Full):
    """put(block=False), or put(timeout=) that found no room."""


class _QueueActor:
    def __init__(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self.queue: "asyncio.Queue[Any]" = asyncio.Queue(maxsize)

    def qsize(self) -> int:
        return self.queue.qsize()

    async def put(self, item: Any, timeout: Optional[float] = None) -> bool:
        try:
            await asyncio.wait_for(self.queue.put(item), timeout)
            return True
        except asyncio.TimeoutError:
            return False

    async def get(self, timeout: Optional[float] = None) -> Any:
        try:
            return True, await asyncio.wait_for(self.queue.get(), timeout)
        except asyncio.TimeoutError:
            return False, None

    def put_nowait(self, item: Any) -> bool:
        try:
            self.queue.put_nowait(item)
            return True
        except asyncio.QueueFull:
            return False

    def put_nowait_batch(self, items: List[Any]) -> bool:
        if self.maxsize > 0 and len(items) + self.qsize() > self.maxsize:
            return False
        for it in items:
            self.queue.put_nowait(it)
        return True

    def get_nowait(self) -> Any:
        try:
            return True, self.queue.get_nowait()
        except asyncio.QueueEmpty:
            return False, None

    def get_nowait_batch(self, n: int) -> Any:
        if n > self.qsize():
            return False, []
        return True, [self.queue.get_nowait() for _ in range(n)]


class Queue:
    """A queue of items shared by the program, its tasks and actors (pass it as an
    argument): put(item, block=True, timeout=None), get(block=True, timeout=None),
    put_nowait, get_nowait, the batch forms, qsize/size, empty, full, shutdown."""

    def __init__(self, maxsize: int = 0, actor_options: Optional[Dict[str, Any]] = None
                 ) -> None:
        if isinstance(maxsize, bool) or not isinstance(maxsize, int) or maxsize < 0:
            raise ValueError("Queue: maxsize: expected a whole number >= 0, got %r"
                             % (maxsize,))
        self.maxsize = maxsize
        opts = dict({"num_cpus": 1}, **(actor_options or {}))
        self.actor = api.remote(**opts)(_QueueActor).remote(maxsize)

    def __len__(self) -> int:
        return self.size()

    def size(self) -> int:
        return int(api.get(self.actor.qsize.remote()))

    qsize = size

    def empty(self) -> bool:
        return self.size() == 0

    def full(self) -> bool:
        return self.maxsize > 0 and self.size() >= self.maxsize

    def put(self, item: Any, block: bool = True, timeout: Optional[float] = None) -> None:
        if timeout is not None and timeout < 0:
            raise ValueError("Queue.put: timeout: expected seconds >= 0, got %r" % (timeout,))
        if not block:
            return self.put_nowait(item)
        if not api.get(self.actor.put.remote(item, timeout)):
            raise Full
        return None

    def get(self, block: bool = True, timeout: Optional[float] = None) -> Any:
        if timeout is not None and timeout < 0:
            raise ValueError("Queue.get: timeout: expected seconds >= 0, got %r" % (timeout,))
        if not block:
            return self.get_nowait()
        ok, item = api.get(self.actor.get.remote(timeout))
        if not ok:
            raise Empty
        return item

    async def put_async(self, item: Any, block: bool = True,
                        timeout: Optional[float] = None) -> None:
        """put() in a coroutine: the event loop runs on while it waits for room."""
        if timeout is not None and timeout < 0:
            raise ValueError("Queue.put_async: timeout: expected seconds >= 0, got %r"
                             % (timeout,))
        ok = await (self.actor.put.remote(item, timeout) if block
                    else self.actor.put_nowait.remote(item))
        if not ok:
            raise Full

    async def get_async(self, block: bool = True, timeout: Optional[float] = None) -> Any:
        """get() in a coroutine: the event loop runs on while it waits for an item."""
        if timeout is not None and timeout < 0:
            raise ValueError("Queue.get_async: timeout: expected seconds >= 0, got %r"
                             % (timeout,))
        ok, item = await (self.actor.get.remote(timeout) if block
                          else self.actor.get_nowait.remote())
        if not ok:
            raise Empty
        return item

    def put_nowait(self, item: Any) -> None:
        if not api.get(self.actor.put_nowait.remote(item)):
            raise Full

    def put_nowait_batch(self, items: List[Any]) -> None:
        if not isinstance(items, (list, tuple)):
            raise TypeError("Queue.put_nowait_batch: expected a list, got %r" % (items,))
        if not api.get(self.actor.put_nowait_batch.remote(list(items))):
            raise Full("Queue.put_nowait_batch: %d items do not fit" % len(items))

    def get_nowait(self) -> Any:
        ok, item = api.get(self.actor.get_nowait.remote())
        if not ok:
            raise Empty
        return item

    def get_nowait_batch(self, num_items: int) -> List[Any]:
        if isinstance(num_items, bool) or not isinstance(num_items, int) or num_items < 0:
            raise ValueError("Queue.get_nowait_batch: expected a whole number >= 0, got %r"
                             % (num_items,))
        ok, items = api.get(self.actor.get_nowait_batch.remote(num_items))
        if not ok:
            raise Empty("Queue.get_nowait_batch: fewer than %d items" % num_items)
        return list(items)

    def shutdown(self, force: bool = False, grace_period_s: int = 5) -> None:
        """Ends the queue's actor."""
        if self.actor is not None:
            api.kill(self.actor)
        self.actor = None


__all__ = ["Queue", "Empty", "Full"]
