"""The object folder: pickled arguments, results and `weir.put` objects as files.

Layout under the folder (weir._config: HOME/objects unless told otherwise):

  OBJ/<sha256>.tar        a `weir.put` object (or a large argument): an uncompressed tar
                          holding `value.pkl`, named by the sha256 of the pickle.  A job
                          lists it as an archive artifact: weir unpacks it once per content
                          hash into its cache (per node on Slurm, after shipping it to the
                          shared folder) and links it into every task that uses it.
  OBJ/calls/<sha256>.pkl  one call: (function, arguments) pickled with cloudpickle; linked
                          into the task as a plain file (`weir-call.pkl`).
  OBJ/results/<id>.pkl    what one call returned or raised, written by the task.

Every file is written under a temporary name and renamed, so a reader never sees half of
one, and a file that is already there (same content, same name) is not written again.
"""

import hashlib
import io
import os
import tarfile
import tempfile
import threading
from pathlib import Path
from typing import IO, Any, Callable, Optional, Set, Tuple

import cloudpickle

from ..errors import SerializationError

VALUE_MEMBER = "value.pkl"
PROTOCOL = 5

_collect = threading.local()


def dumps(obj: Any, what: str) -> bytes:
    """cloudpickle.dumps, with a clear error naming what could not be pickled."""
    try:
        data: bytes = cloudpickle.dumps(obj, protocol=PROTOCOL)
        return data
    except Exception as e:  # pickling raises TypeError, PicklingError, AttributeError...
        raise SerializationError("%s cannot be pickled: %s: %s" % (what, type(e).__name__, e)) \
            from e


def dumps_args(args: Any, kwargs: Any, name: str) -> bytes:
    """The pickle of a call's (args, kwargs); what cannot be pickled is named in the error
    (SerializationError, a TypeError, as Ray's): the argument, its position or keyword."""
    try:
        data: bytes = cloudpickle.dumps((args, kwargs), protocol=PROTOCOL)
        return data
    except Exception as e:
        for where, a in [("argument %d" % i, a) for i, a in enumerate(args)] + \
                [("argument %s=" % k, a) for k, a in kwargs.items()]:
            try:
                cloudpickle.dumps(a, protocol=PROTOCOL)
            except Exception as ae:
                r = repr(a)
                raise SerializationError(
                    "%s(): %s (%s) cannot be pickled: %s: %s; the call was not made"
                    % (name, where, r if len(r) <= 80 else r[:77] + "...",
                       type(ae).__name__, ae)) from ae
        raise SerializationError("the arguments of %s cannot be pickled: %s: %s"
                                 % (name, type(e).__name__, e)) from e


def digest(data: bytes) -> str:
    """The name of data in the folder: its sha256, in hex."""
    return hashlib.sha256(data).hexdigest()


def _write_atomic(path: Path, write: Callable[[IO[bytes]], Any], replace: bool = False) -> bool:
    """Writes path by write(fileobj) under a temporary name, then renames; False when path
    was already there (nothing written) unless replace."""
    if not replace and path.exists():
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=str(path.parent))
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.chmod(tmp, 0o644)
        os.rename(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return True


def write_archive(objects_dir: Path, data: bytes) -> str:
    """OBJ/<sha>.tar holding data as value.pkl (once); returns the sha."""
    sha = digest(data)

    def write(f: IO[bytes]) -> None:
        with tarfile.open(fileobj=f, mode="w", format=tarfile.PAX_FORMAT) as tar:
            info = tarfile.TarInfo(VALUE_MEMBER)
            info.size = len(data)
            info.mode = 0o444
            tar.addfile(info, io.BytesIO(data))
    _write_atomic(archive_path(objects_dir, sha), write)
    return sha


def archive_path(objects_dir: Path, sha: str) -> Path:
    """OBJ/<sha>.tar."""
    return Path(objects_dir) / (sha + ".tar")


def artifact_name(sha: str) -> str:
    """The name a put object has in a task's working directory."""
    return "weir-obj-" + sha[:32]


def write_call(objects_dir: Path, data: bytes) -> Tuple[Path, bool]:
    """OBJ/calls/<sha>.pkl (once): (the path, whether this call wrote it)."""
    path = Path(objects_dir) / "calls" / (digest(data) + ".pkl")
    return path, _write_atomic(path, lambda f: f.write(data))


def result_path(objects_dir: Path, call_id: str) -> Path:
    """OBJ/results/<id>.pkl: where the task writes what one call returned or raised."""
    return Path(objects_dir) / "results" / (call_id + ".pkl")


def write_result(path: Path, data: bytes) -> None:
    """Writes (or replaces) a result file."""
    _write_atomic(path, lambda f: f.write(data), replace=True)


def read_archive_value(objects_dir: Optional[Path], sha: str,
                       workdir: Path = Path(".")) -> Any:
    """The object of sha: from the task's linked copy when there is one, else the archive."""
    linked = workdir / artifact_name(sha) / VALUE_MEMBER
    try:
        with open(linked, "rb") as f:
            return cloudpickle.load(f)
    except FileNotFoundError:
        pass
    if objects_dir is None:
        raise FileNotFoundError("object %s: not linked here and no object folder" % sha)
    with tarfile.open(archive_path(objects_dir, sha)) as tar:
        member = tar.extractfile(VALUE_MEMBER)
        return cloudpickle.load(member)


class collecting:
    """While active, ObjectRefs pickled in this thread add their sha to `.found`."""

    def __enter__(self) -> "collecting":
        self.prev = getattr(_collect, "found", None)
        self.found: Set[str] = set()
        _collect.found = self.found
        return self

    def __exit__(self, *exc: Any) -> None:
        _collect.found = self.prev


def note_ref(sha: str) -> None:
    """An ObjectRef of sha is being pickled: noted when a `collecting` is active."""
    found = getattr(_collect, "found", None)
    if found is not None:
        found.add(sha)
