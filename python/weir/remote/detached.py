"""Detached actors: a program's (or a task's) side (docs/internals/calls.md, "Detached
actors"; the actor's process is worker/detached.py).

A detached actor is a weir job of its own that outlives the program that made it: it
listens on a socket of its own, and any program of the user (on the server's machine)
reaches it by its namespace and name through the user's home: HOME/ray/actors/ (0700)
holds per actor an entry, named by a hash of (namespace, name): `ID.json` (the namespace,
the name, the class, its job, its socket's folder, the methods' num_returns), `ID.key`
(0600: the key a connection must send; never in an environment, a log or the API) and,
until the actor has read it, `ID.create` (the class and the constructor's arguments).
A handle's "folder" is DETACHED + the entry's path: its calls go through a Link to the
actor's socket (remote/actors.py), with the program's link frames.
"""

import hashlib
import json
import os
import shlex
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, Optional, Tuple, Union

import cloudpickle

from ..client import JOB_FINAL
from ..errors import ActorDied, WeirError
from ..worker import warm as _w
from . import functions as _functions
from .actors import DETACHED, Link, link_to

HOST = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "worker",
                    "detached.py")


def registry(home: Path) -> Path:
    """The folder of the user's detached actors' entries (made 0700 when missing)."""
    d = Path(home) / "ray" / "actors"
    d.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(d, 0o700)
    return d


def entry_of(home: Path, namespace: str, name: str) -> str:
    """The path (without its extension) of the entry of (namespace, name)."""
    h = hashlib.sha256(("%s\0%s" % (namespace, name)).encode()).hexdigest()[:32]
    return str(registry(home) / h)


def _read(entry: str) -> Optional[Dict[str, Any]]:
    try:
        with open(entry + ".json") as f:
            got: Dict[str, Any] = json.load(f)
            return got
    except (OSError, ValueError):
        return None


def _remove(entry: str) -> None:
    for ext in (".json", ".key", ".create", ".auth", ".died"):
        try:
            os.unlink(entry + ext)
        except OSError:
            pass


def _info(entry: str, rec: Dict[str, Any]) -> Tuple[str, int, str, Dict[str, Union[int, str]]]:
    """What an ActorHandle holds (remote/actors.py, Actor.info())."""
    return (DETACHED + entry, 0, rec["name"], dict(rec.get("num_returns") or {}))


def find(client: Any, namespace: str, name: str) -> Optional[Tuple[str, int, str,
                                                                    Dict[str, Union[int, str]]]]:
    """The handle's fields of the detached actor (namespace, name), or None (an entry
    whose job has ended is removed)."""
    entry = entry_of(client.settings.home, namespace, name)
    rec = _read(entry)
    if rec is None:
        return None
    try:
        state = client.job(int(rec["job"]))["state"]
    except WeirError:
        state = "failed"
    if state in JOB_FINAL:
        _remove(entry)
        return None
    return _info(entry, rec)


def create(client: Any, cls: Any, args: Tuple[Any, ...], kwargs: Dict[str, Any],
           o: Dict[str, Any], namespace: str, name: str, num_returns: Dict[str, Union[int, str]],
           objects_dir: str, concurrency: int = 1, max_restarts: int = 0,
           max_task_retries: int = 0) -> Tuple[str, int, str, Dict[str, Union[int, str]]]:
    """Submits the detached actor's job (its entry written first: the key, the class and
    the arguments, and where its own Ray calls go: this client's server and token); the
    handle's fields."""
    entry = entry_of(client.settings.home, namespace, name)
    sock_dir = tempfile.mkdtemp(prefix="weir-actor-")  # 0700; a socket's path is short
    auth = {"server": client.server, "token": client.settings.token,
            "home": str(client.settings.home)}
    try:
        os.unlink(entry + ".died")  # an earlier actor's of that name
    except OSError:
        pass
    for ext, data in ((".key", os.urandom(_w.KEY_BYTES)),
                      (".create", cloudpickle.dumps((cls, args, kwargs), protocol=5)),
                      (".auth", json.dumps(auth).encode())):
        try:
            os.unlink(entry + ext)
        except OSError:
            pass
        fd = os.open(entry + ext, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
    role: Dict[str, Any] = {"instances": 1, "vcores": o["cpus"], "gpus": o["gpus"],
                            "command": "%s %s" % (shlex.quote(o["python"]),
                                                  shlex.quote(HOST))}
    if o["memory"] is not None:
        role["memory"] = o["memory"]
    env = {"PYTHONPATH": _functions._task_path(), "WEIR_PY_OBJECTS": objects_dir,
           "WEIR_DETACHED": entry, "WEIR_DETACHED_SOCK": sock_dir,
           "WEIR_WARM_ACTOR": "detached-" + os.path.basename(entry),
           "WEIR_DETACHED_CONCURRENCY": str(int(concurrency)),
           "WEIR_DETACHED_RESTARTS": str(int(max_restarts))}
    env.update({str(k): str(v) for k, v in o["env"].items()})
    try:
        job = client.submit({"name": name, "framework": "none", "roles": {"worker": role},
                             "env": env})
    except BaseException:
        _remove(entry)
        raise
    rec = {"namespace": namespace, "name": name, "class": getattr(cls, "__qualname__", "?"),
           "job": int(job["id"]), "sock": sock_dir, "num_returns": num_returns,
           "max_task_retries": int(max_task_retries)}
    tmp = entry + ".json.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(rec, f)
    os.rename(tmp, entry + ".json")
    return _info(entry, rec)


def auth_here() -> Optional[Tuple[str, Optional[str], str]]:
    """In a detached actor's process: (server, token, home) of the program that made it,
    from its entry's `ID.auth` (0600), which its own Ray calls use; None elsewhere."""
    entry = os.environ.get("WEIR_DETACHED")
    if not entry:
        return None
    try:
        with open(entry + ".auth") as f:
            got = json.load(f)
        return str(got["server"]), got.get("token") or None, str(got["home"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise WeirError("this detached actor cannot make Ray calls: its entry's %s.auth "
                        "cannot be read (%s)" % (entry, e)) from None


def _why_ended(entry: str) -> str:
    """What a detached actor's callers are told when its socket closes mid-call."""
    try:
        with open(entry + ".died") as f:
            return "the detached actor has ended: %s" % f.read()
    except OSError:
        pass
    if _read(entry) is None:
        return "the detached actor has ended: ray.kill, or its job ended"
    return "the detached actor's process died (it is restarted when it has restarts left)"


def link(entry: str) -> Link:
    """A link to the detached actor of that entry: once its process listens (its
    constructor has run); ActorDied when its entry is gone (killed, or its constructor
    raised) or nothing listens at its socket (its process died)."""
    checked = time.monotonic()
    while True:
        rec = _read(entry)
        if rec is None:
            raise ActorDied(_why_ended(entry))
        sock = os.path.join(rec["sock"], "sock")
        if os.path.exists(sock):
            try:
                ln = Link(entry, key_file=entry + ".key", sock_dir=rec["sock"])
                ln.why_ended = lambda: _why_ended(entry)
                ln.task_retries = int(rec.get("max_task_retries") or 0)
                ln.relink = lambda: link_to(DETACHED + entry)
                return ln
            except OSError as e:
                if _read(entry) is None:
                    continue  # it has just ended: ID.died says why
                raise ActorDied("the detached actor %s has ended: %s" % (rec["name"], e))
        waited = time.monotonic()
        if waited - checked > 1.0:  # in a program: its job may have ended before it listened
            checked = waited
            from . import session
            if session._session is not None:
                try:
                    state = session._session.client.job(int(rec["job"]))["state"]
                except WeirError:
                    state = ""
                if state in JOB_FINAL:
                    _remove(entry)
                    raise ActorDied("the detached actor %s has ended: its job %s ended (%s)"
                                    % (rec["name"], rec["job"], state))
        time.sleep(0.02)  # its process starts, or runs its constructor
