"""The session of a process that makes remote calls: one client, the object folder, the call
files in use, and the jobs it started and has not seen end, killed on Ctrl-C and at exit."""

import atexit
import signal
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import Any, Dict, List, Optional

from .. import _config
from ..client import Client
from ..errors import WeirError


class _Session:
    """What one process's remote calls share (weir.init makes it, the first call else)."""

    def __init__(self, server: Optional[str] = None, token: Optional[str] = None,
                 home: Optional[str] = None, objects_dir: Optional[str] = None) -> None:
        self.client = Client(server, token, home)
        s = _config.settings(server, token, home, objects_dir)
        self.objects_dir = s.objects_dir
        self.active: Dict[int, str] = {}
        self.calls: Dict[Path, int] = {}  # call files this process wrote: in-flight users
        self.lock = threading.Lock()
        self._handler_installed = False

    def track(self, job_id: int, name: str) -> None:
        """A job to kill on Ctrl-C or at exit until forget(job_id)."""
        with self.lock:
            self.active[job_id] = name
        if not self._handler_installed:
            _install_sigint()
            self._handler_installed = True

    def forget(self, job_id: int) -> None:
        with self.lock:
            self.active.pop(job_id, None)

    def hold_call(self, path: Path, new: bool) -> None:
        """One more call in flight uses the call file (one this process wrote)."""
        with self.lock:
            if new or path in self.calls:
                self.calls[path] = self.calls.get(path, 0) + 1

    def release_call(self, path: Path) -> None:
        """One call less uses it: the last one removes the file."""
        with self.lock:
            n = self.calls.get(path)
            if n is None:
                return
            if n > 1:
                self.calls[path] = n - 1
                return
            del self.calls[path]
        try:
            path.unlink()
        except OSError:
            pass

    def kill_active(self, why: str) -> List[int]:
        """Kills the jobs not seen to end; their ids."""
        with self.lock:
            ids = sorted(self.active)
            self.active.clear()
        if not ids:
            return ids
        # a client of its own: the interrupted thread may be in the middle of a request
        killer = Client(self.client.server, self.client.settings.token,
                        self.client.settings.home, timeout=10)
        sys.stderr.write("weir: %s: killing job%s %s\n" % (why, "s" if len(ids) > 1 else "",
                                                          ", ".join(map(str, ids))))
        for i in ids:
            try:
                killer.kill(i)
            except WeirError:
                pass  # ended meanwhile (409), or the server is gone
        return ids


_session: Optional[_Session] = None
_session_lock = threading.Lock()
_prev_sigint: Any = None


def init(server: Optional[str] = None, token: Optional[str] = None,
         home: Optional[str] = None, objects_dir: Optional[str] = None) -> Client:
    """Connects this process to a weir server (optional: the first call connects with the
    defaults).  `objects_dir` is where arguments, results and weir.put objects are written:
    a folder every task reads (default $WEIR_OBJECTS, else HOME/objects)."""
    global _session
    with _session_lock:
        _session = _Session(server, token, home, objects_dir)
        return _session.client


def _get_session() -> _Session:
    global _session
    with _session_lock:
        if _session is None:
            _session = _Session()
        return _session


def _on_sigint(signum: int, frame: Optional[FrameType]) -> Any:
    s = _session
    if s is not None:
        s.kill_active("interrupted")
    prev = _prev_sigint
    if callable(prev) and prev is not _on_sigint:
        return prev(signum, frame)
    raise KeyboardInterrupt


def _install_sigint() -> None:
    global _prev_sigint
    if threading.current_thread() is not threading.main_thread():
        return
    cur = signal.getsignal(signal.SIGINT)
    if cur is _on_sigint or cur in (signal.SIG_IGN, None):
        return
    _prev_sigint = cur if callable(cur) else None
    signal.signal(signal.SIGINT, _on_sigint)


@atexit.register
def _at_exit() -> None:
    s = _session
    if s is not None:
        s.kill_active("exiting")


