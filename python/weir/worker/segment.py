"""The layout of a shared-memory object segment, shared by the program (remote/shm.py) and
the warm workers (worker/warm.py, which load this file by its path: it imports cloudpickle and
the standard library only).  docs/internals/calls.md, "Objects in shared memory".

  b"WEIROBJ1", the count of buffers (u32), the pickle's length (u64), then per buffer its
  offset and length (u64 each); the pickle; each buffer at a 64-byte boundary.

A segment is written under NAME.tmp and renamed: a reader never sees half of one (a writer
killed mid-write leaves only the .tmp, which no reader opens).
"""

import mmap
import os
import pickle
import struct
from typing import Any, List, Tuple

import cloudpickle

MAGIC = b"WEIROBJ1"
HEAD = struct.Struct("<8sIQ")
SPAN = struct.Struct("<QQ")
ALIGN = 64


class ShmFormatError(ValueError):
    """A segment that breaks the layout."""


def encode(value: Any) -> Tuple[bytes, List[memoryview]]:
    """(in-band pickle, out-of-band buffers) of value, pickled with protocol 5."""
    bufs: List[pickle.PickleBuffer] = []
    data = cloudpickle.dumps(value, protocol=5, buffer_callback=bufs.append)
    return data, [b.raw() for b in bufs]


def layout(data: bytes, bufs: List[memoryview]) -> Tuple[bytes, List[int], int]:
    """(header, the buffers' offsets, the segment's size) for a pickle and its buffers."""
    head_len = HEAD.size + SPAN.size * len(bufs)
    pos = head_len + len(data)
    offs = []
    for b in bufs:
        pos = (pos + ALIGN - 1) // ALIGN * ALIGN
        offs.append(pos)
        pos += b.nbytes
    head = HEAD.pack(MAGIC, len(bufs), len(data)) + b"".join(
        SPAN.pack(o, b.nbytes) for o, b in zip(offs, bufs))
    return head, offs, pos


def write_segment(path: str, data: bytes, bufs: List[memoryview]) -> int:
    """Writes the segment file (0600, under a temporary name then renamed); its size."""
    head, offs, size = layout(data, bufs)
    tmp = path + ".tmp"
    fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.ftruncate(fd, max(size, 1))
        os.pwrite(fd, head + data, 0)
        for o, b in zip(offs, bufs):
            done = 0
            while done < b.nbytes:
                done += os.pwrite(fd, b[done:], o + done)
        os.rename(tmp, path)
    except BaseException:
        os.close(fd)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    os.close(fd)
    return size


def parse(view: memoryview) -> Tuple[memoryview, List[memoryview]]:
    """(pickle, buffers) of a segment's bytes; ShmFormatError when they break the layout."""
    if len(view) < HEAD.size:
        raise ShmFormatError("object segment: %d bytes, shorter than its head" % len(view))
    magic, n, plen = HEAD.unpack_from(view, 0)
    if magic != MAGIC:
        raise ShmFormatError("object segment: not a weir object (magic %r)" % bytes(magic))
    pos = HEAD.size + SPAN.size * n
    if pos + plen > len(view):
        raise ShmFormatError("object segment: the pickle runs past the end")
    bufs = []
    for i in range(n):
        off, ln = SPAN.unpack_from(view, HEAD.size + SPAN.size * i)
        if off < pos + plen or off + ln > len(view):
            raise ShmFormatError("object segment: buffer %d runs outside the segment" % i)
        bufs.append(view[off:off + ln])
    return view[pos:pos + plen], bufs


def load_segment(path: str) -> Any:
    """The value of a segment, its buffers read where they lie (a read-only mapping)."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        mm = mmap.mmap(f.fileno(), size, prot=mmap.PROT_READ) if size else None
    if mm is None:
        raise ShmFormatError("object segment %s is empty" % path)
    data, bufs = parse(memoryview(mm))
    return pickle.loads(data, buffers=bufs)
