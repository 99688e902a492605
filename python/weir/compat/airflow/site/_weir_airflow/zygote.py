"""Warm interpreters for Airflow DAG files: a Python task's process is forked from a process
that imported its DAG file once, so that it starts in a few milliseconds instead of a Python
start and an import (docs/internals/airflow_warm.md).

Two kinds of process, both of the tasks' user, listening in HOME/airflow-warm (0700) on
sockets of mode 0600:

- the *root* (Root): one per server, user and interpreter, started by the DAG processor
  (start()) in a session of its own; it imported weir's `airflow` and what every task needs,
  no DAG file.  Its socket is `any-HASH.sock`, HASH of "UID\\nPYTHON" (root_name()).
- a file's *zygote* (Zygote): forked by the root at the first task of a file that has none;
  it imports the file and listens on `HASH.sock`, HASH of the file's path, inode, size, mtime
  and ctime, the user and the interpreter (socket_name(), key_text()): a changed file has
  another name.

A task's command runs the client (`weir-launch airflow-warm ...`, src/launch/airflow_warm.h,
which holds the wire format), which is the task's process to weir: in the task's cgroup, its
user, its log, its environment and folder.  It asks the file's zygote, else the root (which
forks the zygote, handing it the request), else runs the task cold.  A zygote forks a child
per task that joins the client's cgroups (WEIR_AIRFLOW_WARM_CGROUP), takes its fds 0-2,
folder, environment and umask, says 'S' and runs the task as run_task does, the file already
imported; the zygote sends the child's end ('E' code or 'K' signal); a 'G' record from the
client is a signal for the child's process group; the client's end closing SIGKILLs it.

A zygote leaves when its file changed or is gone, when its socket file was removed or
replaced, when the server that ran the processor has stopped, or after
WEIR_AIRFLOW_WARM_IDLE_S seconds (default 600) without a task; the root leaves with the server
or its socket.  WEIR_AIRFLOW_WARM_IDLE_S=0 in the server's environment: no root, every task
runs cold.
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
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

MAGIC = 0x314D5257  # "WRM1" (airflow_warm.h's AIRFLOW_WARM_MAGIC)
HEADER = struct.Struct("=IIII")
RECORD = struct.Struct("=c3xi")
CHECK_S = 1.0  # how often the key, the socket, the server and the idle time are looked at


def key_text(path: str, st: os.stat_result, uid: int, python: str) -> str:
    """The text whose hash names a file's zygote's socket (airflow_warm.h)."""
    return "%s\n%d\n%d\n%d\n%d\n%d\n%s" % (path, st.st_ino, st.st_size, st.st_mtime_ns,
                                           st.st_ctime_ns, uid, python)


def _fnv(text: str) -> int:
    h = 0xCBF29CE484222325
    for b in text.encode():
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def socket_name(text: str) -> str:
    """A file's zygote's socket: 64-bit FNV-1a of the key text, 16 hex digits, `.sock`."""
    return "%016x.sock" % _fnv(text)


def root_name(uid: int, python: str) -> str:
    """The root's socket: `any-` and the hash of "UID\\nPYTHON"."""
    return "any-%016x.sock" % _fnv("%d\n%s" % (uid, python))


def idle_seconds() -> float:
    """WEIR_AIRFLOW_WARM_IDLE_S (default 600): how long a zygote waits for a task; 0 or
    less: no warm interpreter (every task runs cold)."""
    try:
        return float(os.environ.get("WEIR_AIRFLOW_WARM_IDLE_S", "600"))
    except ValueError:
        return 600.0


def _same_file(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_ino, a.st_size, a.st_mtime_ns, a.st_ctime_ns) == \
        (b.st_ino, b.st_size, b.st_mtime_ns, b.st_ctime_ns)


def _started(pid: int) -> Tuple[int, str]:
    """A process's pid and start time (/proc/PID/stat's 22nd field); "" when it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return pid, f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return pid, ""


def start(folder: Optional[str]) -> None:
    """Starts the root in the background where WEIR_AIRFLOW_WARM_DIR says and none answers
    there (the processor calls it before its own import): a grandchild in a session of its
    own with no fd of ours, so the processor's end and its session's kill leave it be."""
    run_dir = os.environ.get("WEIR_AIRFLOW_WARM_DIR")
    if not run_dir or idle_seconds() <= 0:
        return
    name = root_name(os.getuid(), sys.executable)
    if _answers(run_dir, name):
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
        Root(folder, run_dir, name, server).serve()
    except BaseException:  # noqa: B902 - no root: the tasks run cold
        pass
    os._exit(0)


def _answers(run_dir: str, name: str) -> bool:
    """Whether something listens on RUN_DIR/NAME."""
    try:
        dfd = os.open(run_dir, os.O_PATH | os.O_DIRECTORY)
    except OSError:
        return False
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect("/proc/self/fd/%d/%s" % (dfd, name))
        return True
    except OSError:
        return False
    finally:
        probe.close()
        os.close(dfd)


class Request(NamedTuple):
    """A client's request: FILE DAG TASK and the socket name it asked for, its environment,
    its fds 0, 1, 2 and folder, its umask."""
    args: List[str]
    env: List[str]
    fds: List[int]
    umask: int


def read_request(conn: socket.socket) -> Optional[Request]:
    """The request on a connection just accepted; None (its fds closed) when it is not one
    or comes from another user."""
    conn.settimeout(5.0)
    cred = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    if struct.unpack("3i", cred)[1] != os.getuid():
        return None
    fds: List[int] = []
    data, anc, _, _ = conn.recvmsg(HEADER.size, socket.CMSG_SPACE(4 * 4))
    for level, kind, payload in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.extend(struct.unpack("%di" % (len(payload) // 4),
                                     payload[:len(payload) - len(payload) % 4]))
    ok = False
    try:
        while len(data) < HEADER.size:
            more = conn.recv(HEADER.size - len(data))
            if not more:
                return None
            data += more
        magic, length, nargs, umask = HEADER.unpack(data)
        if magic != MAGIC or len(fds) != 4 or length > (64 << 20) or nargs != 4:
            return None
        body = bytearray()
        while len(body) < length:
            more = conn.recv(min(1 << 20, length - len(body)))
            if not more:
                return None
            body += more
        words = [w.decode("utf-8", "surrogateescape") for w in bytes(body).split(b"\0")[:-1]]
        ok = len(words) >= nargs
        return Request(words[:nargs], words[nargs:], fds, umask) if ok else None
    finally:
        if not ok:
            _close_all(fds)


def _close_all(fds: List[int]) -> None:
    for fd in fds:
        if fd >= 0:
            try:
                os.close(fd)
            except OSError:
                pass


def _refuse(conn: socket.socket) -> None:
    """'C': the client runs its task cold."""
    try:
        conn.sendall(RECORD.pack(b"C", 0))
    except OSError:
        pass
    conn.close()


def _import_common() -> None:
    """What every task imports, so that no task pays for it."""
    import _weir_airflow.context  # noqa: F401
    import _weir_airflow.run_task  # noqa: F401
    import _weir_airflow.templating  # noqa: F401
    import airflow.operators.python  # noqa: F401


class Loop:
    """A listening socket of ours in the run folder and one selector loop over it, a SIGCHLD
    wake-up pipe and the server's pidfd; `keep`: the fds a forked child closes."""

    def __init__(self, run_dir: str, name: str, server: Tuple[int, str]) -> None:
        self.dir = run_dir
        self.name = name
        self.server = server  # (pid, start time): we leave with it
        self.lsock: Optional[socket.socket] = None
        self.sel = selectors.DefaultSelector()
        self.keep: List[int] = []
        self.last = time.monotonic()
        self.idle_s = idle_seconds()

    def bind(self) -> bool:
        """Listens on RUN_DIR/NAME; False when a live one answers there already."""
        os.makedirs(self.dir, mode=0o700, exist_ok=True)
        if _answers(self.dir, self.name):
            return False
        self.dfd = os.open(self.dir, os.O_PATH | os.O_DIRECTORY)
        try:
            os.unlink(self.name, dir_fd=self.dfd)
        except FileNotFoundError:
            pass
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o077)
        try:
            s.bind("/proc/self/fd/%d/%s" % (self.dfd, self.name))
        finally:
            os.umask(old)
        s.listen(64)
        self.sock_ino = os.stat(self.name, dir_fd=self.dfd).st_ino
        self.lsock = s
        return True

    def setup(self) -> None:
        """The loop's descriptors and handlers (after bind(), or without a socket: a zygote
        that serves the one task it was made for)."""
        self.rfd, wfd = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.set_wakeup_fd(wfd)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        self.sel.register(self.rfd, selectors.EVENT_READ, "wake")
        self.keep = [self.rfd, wfd, getattr(self.sel, "fileno", lambda: -1)()]
        if self.lsock is not None:
            self.sel.register(self.lsock, selectors.EVENT_READ, "listen")
            self.keep += [self.lsock.fileno(), self.dfd]
        try:  # the server's end, at once (alive() looks again each second anyway)
            self.pidfd = os.pidfd_open(self.server[0])
            self.sel.register(self.pidfd, selectors.EVENT_READ, "server")
            self.keep.append(self.pidfd)
        except (OSError, AttributeError):
            self.pidfd = -1

    def alive(self) -> bool:
        """Whether the socket file is still ours and the server still there."""
        if self.lsock is None:
            return False
        try:
            return (os.stat(self.name, dir_fd=self.dfd).st_ino == self.sock_ino
                    and _started(self.server[0]) == self.server)
        except OSError:
            return False

    def child_closes(self) -> None:
        """In a forked child: the loop's descriptors closed, the handlers the default's."""
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        _close_all(self.keep)

    def unbind(self) -> None:
        if self.lsock is None:
            return
        try:
            if os.stat(self.name, dir_fd=self.dfd).st_ino == self.sock_ino:
                os.unlink(self.name, dir_fd=self.dfd)
        except OSError:
            pass

    def accept(self, lsock: socket.socket) -> None:
        """A client's connection: its request to _take(), or a refusal ('C')."""
        try:
            conn, _ = lsock.accept()
        except OSError:
            return
        try:
            req = read_request(conn)
        except Exception:  # noqa: BLE001 - a bad request: that client runs its task cold
            req = None
        if req is None:
            _refuse(conn)
            return
        self._take(conn, req)

    def _take(self, conn: socket.socket, req: Request) -> None:
        raise NotImplementedError

    def events(self) -> List[Tuple[Any, str]]:
        """One wait of the loop: (file object, kind) of each event but the wake-up's."""
        out = []
        for key, _ in self.sel.select(CHECK_S):
            if key.data == "server":
                self.sel.unregister(self.pidfd)
                self.server = (self.server[0], "")  # gone: alive() says so
            elif key.data == "wake":
                try:
                    os.read(self.rfd, 512)
                except BlockingIOError:
                    pass
            else:
                out.append((key.fileobj, key.data))
        return out


class Root(Loop):
    """The root: makes a file's zygote at its first task (a fork that imports the file)."""

    def __init__(self, folder: Optional[str], run_dir: str, name: str,
                 server: Tuple[int, str]) -> None:
        super().__init__(run_dir, name, server)
        from _weir_airflow.processor import prepare_path

        self.folder = folder
        prepare_path(os.path.join(folder or os.getcwd(), "x"), folder)
        _import_common()
        self.libc = _libc()
        self.zygotes: Dict[int, bool] = {}

    def serve(self) -> None:
        if not self.bind():
            return
        self.setup()
        gc.collect()
        gc.freeze()  # the zygotes share what the imports made, untouched by their gc
        try:
            while self.alive():
                for obj, kind in self.events():
                    if kind == "listen":
                        self.accept(obj)
                while True:
                    try:
                        pid, _ = os.waitpid(-1, os.WNOHANG)
                    except ChildProcessError:
                        break
                    if pid == 0:
                        break
                    self.zygotes.pop(pid, None)
        finally:
            self.unbind()

    def _take(self, conn: socket.socket, req: Request) -> None:
        """Forks the request's file's zygote, which takes the request."""
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            pid = os.fork()
        except OSError:
            pid = -1
        if pid == 0:
            self._become_zygote(conn, req)  # never returns
        _close_all(req.fds)
        if pid < 0:
            _refuse(conn)
            return
        conn.close()
        self.zygotes[pid] = True

    def _become_zygote(self, conn: socket.socket, req: Request) -> None:
        """In the root's fork: the zygote of the request's file, its first task this one."""
        try:
            # no PR_SET_PDEATHSIG: a zygote outlives the root while its tasks run
            self.child_closes()
            z = Zygote(os.path.abspath(req.args[0]), self.folder, self.dir, self.server,
                       self.libc)
            if z.name != req.args[3]:
                raise RuntimeError("not this request's zygote")
            # a file's first tasks at once: each asked the root, one fork binds; the others
            # serve the task they were made for, then leave
            z.bind()
        except BaseException:  # noqa: B902 - no zygote: the client runs its task cold
            _close_all(req.fds)
            _refuse(conn)
            os._exit(0)
        try:
            z.serve(conn, req)
        finally:
            os._exit(0)


class Zygote(Loop):
    """A DAG file's warm interpreter."""

    def __init__(self, path: str, folder: Optional[str], run_dir: str,
                 server: Tuple[int, str], libc: Any) -> None:
        from _weir_airflow.processor import import_file, prepare_path

        before = os.stat(path)
        super().__init__(run_dir, socket_name(key_text(path, before, os.getuid(),
                                                       sys.executable)), server)
        self.path = path
        self.stat = before
        self.libc = libc
        prepare_path(path, folder)
        self.module = import_file(path)
        from _weir_airflow import parse_vars

        if parse_vars.TOUCHED:
            # its module holds what the variables were here, not at each try: its tasks
            # import the file cold, with their own values
            raise RuntimeError("the file reads variables at its top level")
        if not _same_file(before, os.stat(path)):
            raise RuntimeError("the file changed while it was imported")
        self.cwd_at = sys.path.index(os.getcwd()) if os.getcwd() in sys.path else 1
        self.children: Dict[int, Optional[socket.socket]] = {}  # task pid -> its client
        self.conns: Dict[socket.socket, int] = {}

    def alive(self) -> bool:
        try:
            return super().alive() and _same_file(self.stat, os.stat(self.path))
        except OSError:
            return False

    def serve(self, conn: socket.socket, req: Request) -> None:
        """Runs the first task, then serves the file's tasks until the zygote has to leave."""
        self.setup()
        gc.collect()
        gc.freeze()  # the tasks share what the import made, untouched by their gc
        try:
            self._take(conn, req)
            while True:
                for obj, kind in self.events():
                    if kind == "listen":
                        self.accept(obj)
                    else:
                        self._from_client(obj)
                self._reap()
                if self.children:
                    self.last = time.monotonic()
                elif not self.alive() or time.monotonic() - self.last > self.idle_s:
                    break
        finally:
            self.unbind()
            for pid in list(self.children):
                _kill_group(pid, signal.SIGKILL)

    def _take(self, conn: socket.socket, req: Request) -> None:
        """Forks the request's task's process (a request for another file or key: 'C')."""
        try:
            if os.path.abspath(req.args[0]) != self.path or req.args[3] != self.name:
                _refuse(conn)
                return
            sys.stdout.flush()
            sys.stderr.flush()
            try:
                pid = os.fork()
            except OSError:
                _refuse(conn)
                return
            if pid == 0:
                self._child(conn, req.args[:3], req.env, req.fds, req.umask)  # never returns
        finally:
            _close_all(req.fds)
        self.children[pid] = conn
        self.conns[conn] = pid
        self.sel.register(conn, selectors.EVENT_READ, "client")

    def _child(self, conn: socket.socket, args: List[str], env: List[str], fds: List[int],
               umask: int) -> None:
        """The task's process: joins the client's cgroups, takes its fds, folder, environment
        and umask, says 'S' and runs the task (run_task's run(), the file imported)."""
        rc = 1
        try:
            conn.settimeout(None)
            self.child_closes()
            if self.libc is not None:  # PR_SET_PDEATHSIG: no task runs on unwatched
                self.libc.prctl(1, signal.SIGKILL, 0, 0, 0)
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

    def _from_client(self, conn: socket.socket) -> None:
        pid = self.conns.get(conn)
        try:
            data = conn.recv(RECORD.size * 16)
        except OSError:
            data = b""
        if not data:  # the client is gone (killed): so is its task
            self.sel.unregister(conn)
            del self.conns[conn]
            if pid is not None and pid in self.children:
                _kill_group(pid, signal.SIGKILL)
                self.children[pid] = None
            conn.close()
            return
        for i in range(0, len(data) - len(data) % RECORD.size, RECORD.size):
            kind, value = RECORD.unpack_from(data, i)
            if kind == b"G" and pid is not None and 0 < value < 65:
                _kill_group(pid, value)

    def _reap(self) -> None:
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
                self.sel.unregister(conn)
                del self.conns[conn]
            conn.close()


def _kill_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except OSError as exc:
        if exc.errno not in (errno.ESRCH, errno.EPERM):
            raise


def _libc() -> Any:
    """The C library (for prctl), or None."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True)
    except (OSError, AttributeError):
        return None
