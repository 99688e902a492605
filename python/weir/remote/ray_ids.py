"""Ray's ids for weir's programs, calls, actors and nodes (docs/ray.md, "ids").

Ray 2.x shows its ids as hex of fixed lengths, nested as Ray nests them: a job 4 bytes (8
hex digits), an actor 16 (12 of its own, then its job's), a task 24 (8 of its own, then its
actor's, or for a task of no actor 12 bytes of 0xff and its job's), an object 28 (its
task's, then its index among the task's returns, u32 little-endian, from 1), a node 28.
weir's own ids are a program's tag (its warm folder's), a call's number in the program, an
actor's number, a host name: each Ray id here is a digest of those, so that the program and
its tasks, given the same weir ids, compute the same Ray ids without asking anyone.
"""

import hashlib
import struct
from typing import Any, Optional

JOB_BYTES = 4
ACTOR_BYTES = 16
TASK_BYTES = 24
OBJECT_BYTES = 28
NODE_BYTES = 28
_INDEX = struct.Struct("<I")


def _digest(n: int, *parts: str) -> bytes:
    return hashlib.sha256("\0".join(parts).encode()).digest()[:n]


def job_hex(scope: str) -> str:
    """The job (Ray's: the program) of scope, a program's tag."""
    return _digest(JOB_BYTES, "job", scope).hex()


def actor_hex(scope: str, actor: int) -> str:
    """Actor number `actor` of the program scope."""
    return (_digest(ACTOR_BYTES - JOB_BYTES, "actor", scope, str(actor)) +
            bytes.fromhex(job_hex(scope))).hex()


def task_hex(scope: str, call: int, actor: Optional[int] = None) -> str:
    """Call number `call` of the program scope (a method's of actor number `actor`)."""
    own = _digest(TASK_BYTES - ACTOR_BYTES, "task", scope, str(call))
    if actor is not None:
        return own.hex() + actor_hex(scope, actor)
    return own.hex() + "ff" * (ACTOR_BYTES - JOB_BYTES) + job_hex(scope)


def object_hex(task: str, index: int = 1) -> str:
    """The object a task returns at index (from 1), as Ray numbers a task's returns."""
    return task + _INDEX.pack(index).hex()


def put_hex(key: str) -> str:
    """A ray.put value's object, from what names it (its content's hash, its path)."""
    return object_hex(_digest(TASK_BYTES, "put", key).hex(), 1)


def node_hex(host: str) -> str:
    """The node of a host name."""
    return hashlib.sha224(("node\0" + host).encode()).digest()[:NODE_BYTES].hex()


def scope_of_folder(folder: str) -> str:
    """The program's tag of a warm folder (/tmp/weir-warm-TAG), or the folder itself."""
    import os
    base = os.path.basename(folder.rstrip("/"))
    return base[len("weir-warm-"):] if base.startswith("weir-warm-") else folder


class BaseID:
    """An id as Ray's classes show one: .hex(), .binary(), .is_nil(); it equals its hex
    string too (weir's runtime context gives both forms)."""

    SIZE = 0

    def __init__(self, hex_id: str) -> None:
        self._hex = hex_id

    def hex(self) -> str:
        return self._hex

    def binary(self) -> bytes:
        return bytes.fromhex(self._hex)

    def is_nil(self) -> bool:
        return set(self._hex) <= {"f"}

    def size(self) -> int:
        return len(self._hex) // 2

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, BaseID):
            return type(other) is type(self) and other._hex == self._hex
        return isinstance(other, str) and other == self._hex

    def __hash__(self) -> int:
        return hash(self._hex)

    def __str__(self) -> str:
        return self._hex

    def __repr__(self) -> str:
        return "%s(%s)" % (type(self).__name__, self._hex)


class JobID(BaseID):
    SIZE = JOB_BYTES


class ActorID(BaseID):
    SIZE = ACTOR_BYTES


class TaskID(BaseID):
    SIZE = TASK_BYTES


class ObjectID(BaseID):
    SIZE = OBJECT_BYTES


class NodeID(BaseID):
    SIZE = NODE_BYTES


class ActorNumber(int):
    """An actor handle's `_actor_id`: weir's number of the actor (what the frames carry),
    which also answers Ray's `handle._actor_id.hex()`."""

    _scope = ""

    def __new__(cls, number: int, scope: str) -> "ActorNumber":
        self = super().__new__(cls, number)
        self._scope = scope
        return self

    def hex(self) -> str:
        return actor_hex(self._scope, int(self))

    def binary(self) -> bytes:
        return bytes.fromhex(self.hex())

    def __reduce__(self) -> Any:
        return (ActorNumber, (int(self), self._scope))
