"""The program's side of what warm workers send back beyond a plain value
(docs/internals/calls.md, "Streaming generators" and "Results in shared memory"):

- a result in shared memory (SHMVAL): the segment a worker wrote to /dev/shm (protocol 5,
  its out-of-band buffers apart, worker/segment.py's layout) is adopted by the program as a
  put of its own (remote/shm.py): the call's future holds its SharedRef, so the value is
  mapped where it lies, by the program and by every task the future is passed to, and the
  file goes when the future does (the program's refs dropped, or its end).  Past the store's
  size it is spilled: copied to the object folder's results/ and mapped from there.
- a generator's item (ITEM): kept on the call's future in order as it comes, for the
  ObjectRefGenerator (compat/ray/api.py) that waits on the pool's condition.
"""

import glob
import os
import shutil
from typing import Any, Optional, Tuple

import cloudpickle

from . import shm as _shm
from ..worker import warm as _w


def adopt(pool: Any, body: bytes) -> Tuple[Any, Any]:
    """(the value, its SharedRef) of a SHMVAL body: the segment adopted (or spilled past
    the store's size).  Raises OSError or ValueError for a segment that is not the
    program's, ShmFormatError for one that breaks the layout."""
    size, path = _w.parse_shm(body)
    ref = _shm.adopt(path, size, pool.tag)
    if _shm.used() > _shm.store_limit():
        dest = os.path.join(pool.results, "warm-%s.obj" % os.path.basename(path))
        tmp = dest + ".tmp"
        shutil.copyfile(path, tmp)
        os.chmod(tmp, 0o600)
        os.rename(tmp, dest)
        ref = _shm.own_file(dest)  # the segment's ref dropped: its file removed
    return ref.value(), ref


def value_of(pool: Any, kind: int, body: bytes) -> Tuple[Any, Optional[Any]]:
    """(value, SharedRef or None) of a VALUE or SHMVAL body."""
    if kind == _w.SHMVAL:
        return adopt(pool, body)
    return cloudpickle.loads(body), None


def item(pool: Any, f: Any, body: bytes) -> None:
    """An item of f's generator: kept when it is the next one (a retried call sends its
    items again from the first: those already here are skipped)."""
    index, kind, vbody = _w.parse_item(body)
    if f._items is None or index != len(f._items):
        return
    got = value_of(pool, kind, vbody)
    with pool.cond:
        if index == len(f._items):
            f._items.append(got)
        pool.cond.notify_all()


def worker_gone(tag: str, pid: int) -> None:
    """Removes the segments a worker that ended left unsent: half-written (.tmp) or
    written and not adopted (killed before it sent their frame)."""
    for path in glob.glob(os.path.join(_shm.SHM_DIR, "weir-obj-%s-%d-r*" % (tag, pid))):
        if not _shm.owns(path):
            try:
                os.unlink(path)
            except OSError:
                pass
