"""An Airflow DAG file's warm interpreter (the *zygote*): a Python process that imported the
file once and forks each of its Python tasks' processes, so that a task starts in a few
milliseconds instead of a Python start and an import (docs/internals/airflow_warm.md).

The DAG processor starts one (start()) after it read a file, in a session of its own; it
listens on HOME/airflow-warm/KEY.sock (mode 0600, its folder 0700), KEY naming the file as
it is now (its path, inode, size, mtime and ctime), the user and the interpreter
(socket_name(), the same hash as src/launch/airflow_warm.c).  A task's command runs the
client (`weir-launch airflow-warm ...`), which is the task's process to weir: in the task's
cgroup, its user, its log, its environment and folder.  The client hands over its fds 0, 1
and 2 and its folder (SCM_RIGHTS), its arguments, environment and umask; the zygote forks
a child that joins the client's cgroups (WEIR_AIRFLOW_WARM_CGROUP, its pid written to each
cgroup.procs), takes those fds, folder, environment and umask, says 'S' to the client and
runs the task as run_task does, the file already imported.  The zygote sends the child's end
('E' code or 'K' signal); a 'G' record from the client is a signal for the child's process
group; the client's end closing SIGKILLs the group.  The wire format is in
src/launch/airflow_warm.h.

The zygote leaves when the file changed or is gone (its key is not the file's any more), when
its socket file was removed or replaced (a newer zygote of the same key, the home removed),
when the server that ran its processor has stopped (a server started again processes its files
again, and starts theirs), or after WEIR_AIRFLOW_WARM_IDLE_S seconds (default 600) without a task (0: no zygote at all).
"""

from __future__ import annotations

import errno
import gc
import os
import selectors
import signal
import socket
import struct
import sys
import time
import traceback
from typing import Any, Dict, List, Optional, Tuple

MAGIC = 0x314D5257  # "WRM1" (airflow_warm.h's AIRFLOW_WARM_MAGIC)
HEADER = struct.Struct("=IIII")
RECORD = struct.Struct("=c3xi")
CHECK_S = 1.0  # how often the key, the socket and the idle time are looked at


def key_text(path: str, st: os.stat_result, uid: int, python: str) -> str:
    """The text whose hash names the socket (airflow_warm.h)."""
    return "%s\n%d\n%d\n%d\n%d\n%d\n%s" % (path, st.st_ino, st.st_size, st.st_mtime_ns,
                                           st.st_ctime_ns, uid, python)


def socket_name(text: str) -> str:
    """The socket's file name: 64-bit FNV-1a of the key text, 16 hex digits, `.sock`."""
    h = 0xCBF29CE484222325
    for b in text.encode():
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return "%016x.sock" % h


def idle_seconds() -> float:
    """WEIR_AIRFLOW_WARM_IDLE_S (default 600): how long a zygote waits for a task; 0 or
    less: no zygote (every task runs cold)."""
    try:
        return float(os.environ.get("WEIR_AIRFLOW_WARM_IDLE_S", "600"))
    except ValueError:
        return 600.0


def _same_file(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_ino, a.st_size, a.st_mtime_ns, a.st_ctime_ns) == \
        (b.st_ino, b.st_size, b.st_mtime_ns, b.st_ctime_ns)


def start(path: str, folder: Optional[str]) -> None:
    """Starts the zygote of `path` in the background (the processor calls it before its own
    import), where WEIR_AIRFLOW_WARM_DIR says where: a grandchild in a session of its own
    with no fd of ours, so the processor's end and its session's kill leave it be."""
    run_dir = os.environ.get("WEIR_AIRFLOW_WARM_DIR")
    if not run_dir or idle_seconds() <= 0:
        return
    server = _started(os.getppid())
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        os.waitpid(pid, 0)
        return
    try:
        os.setsid()
        if os.fork():
            os._exit(0)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.closerange(3, 65536)
        # sys.stdout and sys.stderr stay on fds 1 and 2: a task's are its client's
        Zygote(path, folder, run_dir, server).serve()
    except BaseException:  # noqa: B902 - a zygote that cannot start: its tasks run cold
        pass
    os._exit(0)


class Zygote:
    """One DAG file's warm interpreter."""

    def __init__(self, path: str, folder: Optional[str], run_dir: str,
                 server: Tuple[int, str]) -> None:
        from _weir_airflow.processor import import_file, prepare_path

        self.path = path
        self.dir = run_dir
        self.server = server  # (pid, start time) of the server: the zygote leaves with it
        before = os.stat(path)
        self.stat = before
        self.name = socket_name(key_text(path, before, os.getuid(), sys.executable))
        prepare_path(path, folder)
        # what every task imports, so that no task pays for it
        import _weir_airflow.run_task  # noqa: F401
        import _weir_airflow.context  # noqa: F401
        import _weir_airflow.templating  # noqa: F401
        import airflow.operators.python  # noqa: F401
        self.module = import_file(path)
        if not _same_file(before, os.stat(path)):
            raise RuntimeError("the file changed while it was imported")
        self.libc = _libc()
        self.idle_s = idle_seconds()
        self.cwd_at = sys.path.index(os.getcwd()) if os.getcwd() in sys.path else 1
        self.children: Dict[int, socket.socket] = {}  # task pid -> its client's socket
        self.conns: Dict[socket.socket, int] = {}
        self.last = time.monotonic()

    def _bind(self) -> Optional[socket.socket]:
        """The listening socket; None when a live zygote of the same key answers there."""
        os.makedirs(self.dir, mode=0o700, exist_ok=True)
        dfd = os.open(self.dir, os.O_PATH | os.O_DIRECTORY)
        addr = "/proc/self/fd/%d/%s" % (dfd, self.name)
        try:
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                probe.connect(addr)
                return None  # one serves this key already
            except OSError:
                pass
            finally:
                probe.close()
            try:
                os.unlink(self.name, dir_fd=dfd)
            except FileNotFoundError:
                pass
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            old = os.umask(0o077)
            try:
                s.bind(addr)
            finally:
                os.umask(old)
            s.listen(64)
            self.sock_ino = os.stat(self.name, dir_fd=dfd).st_ino
            self.dfd = dfd
            return s
        except BaseException:
            os.close(dfd)
            raise

    def _mine(self) -> bool:
        """Whether the socket file is still ours and the file still the one imported."""
        try:
            if os.stat(self.name, dir_fd=self.dfd).st_ino != self.sock_ino:
                return False
            if _started(self.server[0]) != self.server:
                return False
            return _same_file(self.stat, os.stat(self.path))
        except OSError:
            return False

    def serve(self) -> None:
        """Serves tasks until the zygote has to leave."""
        lsock = self._bind()
        if lsock is None:
            return
        rfd, wfd = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.set_wakeup_fd(wfd)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        sel = selectors.DefaultSelector()
        sel.register(lsock, selectors.EVENT_READ, "listen")
        sel.register(rfd, selectors.EVENT_READ, "wake")
        try:  # the server's end, at once (_mine() looks again each second anyway)
            pidfd = os.pidfd_open(self.server[0])
            sel.register(pidfd, selectors.EVENT_READ, "server")
        except (OSError, AttributeError):
            pidfd = -1
        gc.collect()
        gc.freeze()  # the children share what the import made, untouched by their gc
        # what a task's process closes (the epoll selector's own fd too)
        self.keep = [lsock.fileno(), rfd, wfd, self.dfd, getattr(sel, "fileno", lambda: -1)()]
        if pidfd >= 0:
            self.keep.append(pidfd)
        try:
            while True:
                for key, _ in sel.select(CHECK_S):
                    if key.data == "server":
                        sel.unregister(pidfd)
                        self.server = (self.server[0], "")  # gone: _mine() says so
                    elif key.data == "listen":
                        self._accept(lsock, sel)
                    elif key.data == "wake":
                        try:
                            os.read(rfd, 512)
                        except BlockingIOError:
                            pass
                    else:
                        self._from_client(key.fileobj, sel)  # type: ignore[arg-type]
                self._reap(sel)
                if self.children:
                    self.last = time.monotonic()
                elif not self._mine() or time.monotonic() - self.last > self.idle_s:
                    break
        finally:
            try:
                if os.stat(self.name, dir_fd=self.dfd).st_ino == self.sock_ino:
                    os.unlink(self.name, dir_fd=self.dfd)
            except OSError:
                pass
            for pid in list(self.children):
                _kill_group(pid, signal.SIGKILL)

    def _accept(self, lsock: socket.socket, sel: selectors.BaseSelector) -> None:
        try:
            conn, _ = lsock.accept()
        except OSError:
            return
        try:
            pid = self._start(conn)
        except Exception:  # noqa: BLE001 - a bad request: that client runs its task cold
            pid = 0
        if not pid:
            try:
                conn.sendall(RECORD.pack(b"C", 0))
            except OSError:
                pass
            conn.close()
            return
        self.children[pid] = conn
        self.conns[conn] = pid
        sel.register(conn, selectors.EVENT_READ, "client")

    def _start(self, conn: socket.socket) -> int:
        """Reads a request and forks its task's process; its pid, or 0 on a bad request."""
        conn.settimeout(5.0)
        cred = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        _, uid, _ = struct.unpack("3i", cred)
        if uid != os.getuid():
            return 0
        fds: List[int] = []
        data, anc, _, _ = conn.recvmsg(HEADER.size, socket.CMSG_SPACE(4 * 4))
        for level, kind, payload in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.extend(struct.unpack("%di" % (len(payload) // 4),
                                         payload[:len(payload) - len(payload) % 4]))
        try:
            while len(data) < HEADER.size:
                more = conn.recv(HEADER.size - len(data))
                if not more:
                    return 0
                data += more
            magic, length, nargs, umask = HEADER.unpack(data)
            if magic != MAGIC or len(fds) != 4 or length > (64 << 20):
                return 0
            body = bytearray()
            while len(body) < length:
                more = conn.recv(min(1 << 20, length - len(body)))
                if not more:
                    return 0
                body += more
            words = [w.decode("utf-8", "surrogateescape") for w in bytes(body).split(b"\0")[:-1]]
            args, env = words[:nargs], words[nargs:]
            if len(args) != 3 or os.path.abspath(args[0]) != self.path:
                return 0
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                self._child(conn, args, env, fds, umask)  # never returns
            return pid
        finally:
            for fd in fds:
                os.close(fd)

    def _child(self, conn: socket.socket, args: List[str], env: List[str], fds: List[int],
               umask: int) -> None:
        """The task's process: joins the client's cgroups, takes its fds, folder, environment
        and umask, says 'S' and runs the task (run_task's run(), the file imported)."""
        rc = 1
        try:
            conn.settimeout(None)
            signal.set_wakeup_fd(-1)
            for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
                signal.signal(sig, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.default_int_handler)
            if self.libc is not None:  # PR_SET_PDEATHSIG: no task runs on unwatched
                self.libc.prctl(1, signal.SIGKILL, 0, 0, 0)
            for fd in self.keep:
                if fd >= 0:
                    os.close(fd)
            for other in self.conns:
                other.close()
            os.setpgid(0, 0)
            environ = dict(e.split("=", 1) for e in env if "=" in e)
            for procs in filter(None, environ.get("WEIR_AIRFLOW_WARM_CGROUP", "").split("\n")):
                fd = os.open(procs, os.O_WRONLY)
                try:
                    os.write(fd, b"0")
                finally:
                    os.close(fd)
            for i in range(3):
                os.dup2(fds[i], i)
            os.fchdir(fds[3])
            for fd in fds:
                if fd > 2:
                    os.close(fd)
            os.umask(umask)
            os.environ.clear()
            os.environ.update(environ)
            # as `python -m` puts it: the task's folder where the zygote had its own
            if os.getcwd() not in sys.path:
                sys.path.insert(self.cwd_at, os.getcwd())
            for p in reversed(environ.get("PYTHONPATH", "").split(":")):
                if p and p not in sys.path:
                    sys.path.insert(1, p)
            sys.argv = [sys.argv[0]] + args
            conn.sendall(RECORD.pack(b"S", os.getpid()))
        except BaseException:  # noqa: B902 - not started: the client runs it cold
            try:
                conn.sendall(RECORD.pack(b"C", 0))
            except OSError:
                pass
            os._exit(1)
        conn.close()
        try:
            from _weir_airflow.run_task import run

            rc = run(args, os.environ, self.module)
        except SystemExit as exc:  # run() lets sys.exit(0) through, as a success
            rc = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:  # noqa: B902
            traceback.print_exc()
            rc = 1
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(rc)

    def _from_client(self, conn: socket.socket, sel: selectors.BaseSelector) -> None:
        pid = self.conns.get(conn)
        try:
            data = conn.recv(RECORD.size * 16)
        except OSError:
            data = b""
        if not data:  # the client is gone (killed): so is its task
            sel.unregister(conn)
            del self.conns[conn]
            if pid is not None and pid in self.children:
                _kill_group(pid, signal.SIGKILL)
                self.children[pid] = None  # type: ignore[assignment]
            conn.close()
            return
        for i in range(0, len(data) - len(data) % RECORD.size, RECORD.size):
            kind, value = RECORD.unpack_from(data, i)
            if kind == b"G" and pid is not None and 0 < value < 65:
                _kill_group(pid, value)

    def _reap(self, sel: selectors.BaseSelector) -> None:
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            conn = self.children.pop(pid, None)
            _kill_group(pid, signal.SIGKILL)  # what the task left behind, as the launcher
            if conn is None:
                continue
            if os.WIFSIGNALED(status):
                rec = RECORD.pack(b"K", os.WTERMSIG(status))
            else:
                rec = RECORD.pack(b"E", os.waitstatus_to_exitcode(status))
            try:
                conn.sendall(rec)
            except OSError:
                pass
            if conn in self.conns:
                sel.unregister(conn)
                del self.conns[conn]
            conn.close()


def _kill_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except OSError as exc:
        if exc.errno not in (errno.ESRCH, errno.EPERM):
            raise


def _started(pid: int) -> Tuple[int, str]:
    """A process's pid and start time (/proc/PID/stat's 22nd field); "" when it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return pid, f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return pid, ""


def _libc() -> Any:
    """The C library (for prctl), or None."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True)
    except (OSError, AttributeError):
        return None
