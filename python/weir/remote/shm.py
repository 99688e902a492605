"""Put objects in shared memory: written once, mapped read-only by every reader on the node
(docs/internals/calls.md, "Objects in shared memory").

ray.put(value) in a program with warm workers pickles value with protocol 5 and its
out-of-band buffers (a numpy array's data, bytes-like objects that allow it) apart, and
writes one segment file, /dev/shm/weir-obj-TAG-N (0600: the program's user, as its
workers), laid out as:

  b"WEIROBJ1", the count of buffers (u32), the pickle's length (u64), then per buffer its
  offset and length (u64 each); the pickle; each buffer at a 64-byte boundary.

A reader (a warm worker, an actor, the program) maps the file read-only and unpickles with
the buffers as views of the mapping: a numpy array is read where it lies, without a copy
per reader (and read-only, as Ray's are).  The program owns the segment: it counts the
SharedRefs of it alive in its process, and a call holds the refs of its arguments until it
ends; when none is left the file is removed (readers that mapped it keep their mapping
until they drop it).  Past the store's size (WEIR_OBJECT_STORE_MB, ray.init(
object_store_memory=)), a put goes to the object folder instead (spilled), and so does a
ref sent to a call that is a job (another node, Slurm): it is written there as an archive
once, as weir.put's objects are.
"""

import atexit
import os
import threading
from typing import Any, Dict, List, Optional, Tuple

import cloudpickle

from . import objects as _objects
from .futures import ObjectRef
# the segment's layout, shared with the warm workers (re-exported: shm.encode, shm.parse...)
from ..worker.segment import (ALIGN, HEAD, MAGIC, SPAN, ShmFormatError, encode,  # noqa: F401
                              layout, load_segment, parse, write_segment)

SHM_DIR = "/dev/shm"
# the store's size by default: a quarter of /dev/shm's
DEFAULT_FRACTION = 4

# ---- the owner's counts ------------------------------------------------------------------

_lock = threading.Lock()
_live: Dict[str, int] = {}  # path -> SharedRefs of it alive in this process
_owned: Dict[str, int] = {}  # path -> its size, for the segments this process made
_used = 0  # bytes of the segments this process made and has not removed
_ids = iter(range(1, 1 << 62))
_hold = threading.local()


_limit: Optional[int] = None  # set_limit()'s


def set_limit(nbytes: Optional[int]) -> None:
    """The store's size for this process (ray.init(object_store_memory=)); None: the
    default."""
    global _limit
    _limit = nbytes


def store_limit() -> int:
    """The bytes puts may hold in shared memory (set_limit(), else $WEIR_OBJECT_STORE_MB,
    else a quarter of /dev/shm)."""
    if _limit is not None:
        return _limit
    mb = os.environ.get("WEIR_OBJECT_STORE_MB")
    if mb:
        try:
            return max(0, int(float(mb) * (1 << 20)))
        except ValueError:
            raise ValueError("WEIR_OBJECT_STORE_MB: expected a number of MiB, got %r"
                             % mb) from None
    try:
        st = os.statvfs(SHM_DIR)
    except OSError:
        return 0
    return st.f_blocks * st.f_frsize // DEFAULT_FRACTION


def used() -> int:
    """Bytes this process holds in shared memory now."""
    return _used


class SharedRef(ObjectRef):
    """A put object in a shared-memory segment (an ObjectRef: ray.get, a call's
    argument)."""

    __slots__ = ("path", "size", "__weakref__")

    def __init__(self, path: str, size: int) -> None:
        super().__init__("shm:" + os.path.basename(path))
        self.path = path
        self.size = size
        with _lock:
            _live[path] = _live.get(path, 0) + 1

    def __repr__(self) -> str:
        return "ObjectRef(%s)" % os.path.basename(self.path)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SharedRef) and other.path == self.path

    def __hash__(self) -> int:
        return hash(self.path)

    def value(self) -> Any:
        try:
            return load_segment(self.path)
        except FileNotFoundError:
            raise FileNotFoundError("object %s: its segment is gone (the program that put "
                                    "it holds no ref to it any more)" % self.path) from None

    def __reduce__(self) -> Tuple[Any, Tuple[Any, ...]]:  # type: ignore[override]
        if getattr(_objects._collect, "found", None) is not None:
            # into a job's call (another node, Slurm): the object folder's archive
            return spill(self).__reduce__()
        held = getattr(_hold, "refs", None)
        if held is not None:
            held.append(self)  # the call holds it until it ends
        return (SharedRef, (self.path, self.size))

    def __del__(self) -> None:
        global _used
        try:
            with _lock:
                n = _live.get(self.path, 1) - 1
                if n > 0:
                    _live[self.path] = n
                    return
                _live.pop(self.path, None)
                size = _owned.pop(self.path, None)
                if size is None:
                    return
                _used -= size
            os.unlink(self.path)
        except (OSError, TypeError, AttributeError):
            pass  # at the interpreter's end, or removed already


_spilled: Dict[str, str] = {}  # segment path -> the sha of its archive


def spill(ref: SharedRef) -> ObjectRef:
    """The object folder's archive of a segment (written once): its plain ObjectRef."""
    from .session import _get_session
    sha = _spilled.get(ref.path)
    if sha is None:
        s = _get_session()
        s.objects_dir.mkdir(parents=True, exist_ok=True)
        sha = _objects.write_archive(s.objects_dir, _objects.dumps(ref.value(), "a put object"))
        _spilled[ref.path] = sha
    return ObjectRef(sha)


def put(value: Any, tag: str) -> Optional[SharedRef]:
    """value in a new segment, or None when the store has no room for it (or there is no
    /dev/shm): the caller writes it to the object folder."""
    global _used
    data, bufs = encode(value)
    _, _, size = layout(data, bufs)
    limit = store_limit()
    with _lock:
        if _used + size > limit:
            return None
        _used += size
    path = os.path.join(SHM_DIR, "weir-obj-%s-%d-%d" % (tag, os.getpid(), next(_ids)))
    try:
        write_segment(path, data, bufs)
    except OSError:
        with _lock:
            _used -= size
        return None
    with _lock:
        _owned[path] = size
    return SharedRef(path, size)


def adopt(path: str, size: int, tag: str) -> SharedRef:
    """A segment a task of this program wrote (its put): this process owns it from now
    on; ValueError when path is not one of this program's segments."""
    global _used
    base = os.path.basename(path)
    if os.path.dirname(path) != SHM_DIR or not base.startswith("weir-obj-%s-" % tag) or \
            base.endswith(".tmp"):
        raise ValueError("not a segment of this program: %r" % path)
    st = os.lstat(path)
    import stat
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid():
        raise ValueError("not a segment of this program: %r" % path)
    with _lock:
        if path not in _owned:
            _owned[path] = st.st_size
            _used += st.st_size
    return SharedRef(path, size)


def own_file(path: str) -> SharedRef:
    """A file out of /dev/shm that this process owns from now on (a result spilled to the
    object folder): removed when no ref to it is left, not counted in the store's size."""
    with _lock:
        _owned[path] = 0
    return SharedRef(path, os.path.getsize(path))


def owns(path: str) -> bool:
    """Whether this process owns the segment at path."""
    with _lock:
        return path in _owned


def disown(path: str) -> None:
    """This process no longer owns path (the program has adopted it)."""
    global _used
    with _lock:
        size = _owned.pop(path, None)
        if size is not None:
            _used -= size


def sweep(tmp: str) -> int:
    """Removes the segments of this user's programs that have ended (their warm folder,
    TMP/weir-warm-TAG, is gone: a program killed with -9 leaves its segments); their
    count."""
    n = 0
    try:
        names = os.listdir(SHM_DIR)
    except OSError:
        return 0
    for name in names:
        if not name.startswith("weir-obj-"):
            continue
        tag = name[len("weir-obj-"):].split("-", 1)[0]
        path = os.path.join(SHM_DIR, name)
        try:
            if os.lstat(path).st_uid != os.getuid() or \
                    os.path.exists(os.path.join(tmp, "weir-warm-" + tag)):
                continue
            os.unlink(path)
            n += 1
        except OSError:
            pass
    return n


@atexit.register
def _at_exit() -> None:
    """The segments this process owns go with it."""
    with _lock:
        paths = list(_owned)
        _owned.clear()
    for p in paths:
        try:
            os.unlink(p)
        except OSError:
            pass


class holding:
    """While active, the SharedRefs pickled in this thread are kept in `.refs` (a call
    holds the objects of its arguments until it ends)."""

    def __enter__(self) -> "holding":
        self.prev = getattr(_hold, "refs", None)
        self.refs: List[SharedRef] = []
        _hold.refs = self.refs
        return self

    def __exit__(self, *exc: Any) -> None:
        _hold.refs = self.prev
