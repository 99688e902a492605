"""A detached actor's job (docs/internals/calls.md, "Detached actors").

A Ray actor made with lifetime="detached" is a weir job of its own, tied to no program's
socket: this script, run twice over.  $WEIR_DETACHED names its entry in the user's home
(HOME/ray/actors/ID: `ID.key`, 0600, 32 random bytes; `ID.create`, the pickle of the class
and the constructor's arguments; `ID.json`, where it listens), never the key itself.

The job's process is the actor's **supervisor**: it reads `ID.create` (and removes it),
listens on the Unix socket in $WEIR_DETACHED_SOCK (a 0700 folder) and starts the actor's
process as its child, handing it the listening socket and the constructor's pickle (on
its stdin, which stays open: the child leaves when its supervisor has gone).  When the
child dies (kill -9, a crash, ray.kill(no_restart=False)) the supervisor starts it again,
up to $WEIR_DETACHED_RESTARTS times (-1: for ever); the constructor runs again, and the
connections that wait meanwhile are taken by the new child.  A constructor that raises,
ray.kill, or no restarts left end the job.

The **actor's process** builds the instance, then serves any program's (or task's)
connection that knows the key, with the frames of a program's link (LINK hello: the key
then the pid; ACTOR_CALL: the actor id then the method's name and arguments; KILL),
answering VALUE, ERROR or DIED as the program does; CANCEL (ray.cancel of a call) is acted
on as a warm actor does: a call not begun never runs (answered CANCELLED at once when it
waits in this process's queue), an async method's task is cancelled, a sync method runs to
its end (its caller's get raises TaskCancelledError all the same: remote/actors.py). A
method that ends the actor (ray.actor.exit_actor(), __ray_terminate__) ends it for good:
its entry removed, that call and every later one answered DIED, the process leaving with
status 0 (no restart) once the calls running beside it have returned. Its method calls run
as a warm actor's do (worker/warm.py's _Worker: one at a time, in threads up to
$WEIR_DETACHED_CONCURRENCY, or on an event loop for `async def` methods).
"""

import hmac
import os
import queue
import socket
import struct
import sys
import threading
import time
from typing import Any, Dict, Optional, Set, Tuple

# the child's exit status when its constructor raised (the supervisor ends, no restart)
CTOR_FAILED = 4
LENGTH = struct.Struct("<Q")
# a process that dies sooner than this after its start, twice in a row or more, is
# restarted after a pause that doubles (0.1 s to 10 s)
QUICK = 5.0


def main() -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    if sys.path and os.path.abspath(sys.path[0]) == here:
        del sys.path[0]  # the package's modules must not shadow the user's
    entry = os.environ["WEIR_DETACHED"]
    folder = os.environ["WEIR_DETACHED_SOCK"]
    fd = os.environ.pop("WEIR_DETACHED_FD", "")
    if not fd:
        return supervise(entry, folder)
    import importlib.util
    spec = importlib.util.spec_from_file_location("_weir_runner",
                                                  os.path.join(here, "runner.py"))
    assert spec is not None and spec.loader is not None
    runner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(runner)
    sys.path.insert(0, os.path.dirname(os.path.dirname(here)))
    return actor(entry, folder, int(fd), runner)


# ---- the supervisor -------------------------------------------------------------------------

def _restarts() -> int:
    raw = os.environ.get("WEIR_DETACHED_RESTARTS", "0")
    try:
        n = int(raw)
    except ValueError:
        n = -2
    if n < -1:
        raise ValueError("WEIR_DETACHED_RESTARTS: a whole number >= -1 expected, got %r" % raw)
    return n


def supervise(entry: str, folder: str) -> int:
    """Runs the actor's process, again after each death while restarts are left; the job's
    exit status: 0 after ray.kill, 1 when the actor has ended otherwise."""
    import shutil
    import subprocess
    try:
        most = _restarts()
        with open(entry + ".create", "rb") as f:
            create = f.read()
        os.unlink(entry + ".create")
    except (OSError, ValueError) as e:
        return _end(entry, folder, "it could not start: %s" % e)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    path = os.path.join(folder, "sock")
    try:
        os.unlink(path + ".new")  # a socket left by an earlier try of the job
    except OSError:
        pass
    listener.bind(path + ".new")
    listener.listen(64)  # connections made while the constructor runs wait here
    os.rename(path + ".new", path)  # the path appears listening: never "refused"
    done = 0
    quick = 0  # deaths in a row of a process that lived less than QUICK seconds
    while True:
        started = time.monotonic()
        env = dict(os.environ, WEIR_DETACHED_FD=str(listener.fileno()),
                   WEIR_WARM_ACTOR_RESTARTS=str(done))  # was_current_actor_reconstructed
        child = subprocess.Popen([sys.executable, os.path.abspath(__file__)], env=env,
                                 stdin=subprocess.PIPE, pass_fds=(listener.fileno(),))
        assert child.stdin is not None
        try:
            child.stdin.write(LENGTH.pack(len(create)) + create)
            child.stdin.flush()
        except OSError:
            pass  # it died at once: its status says how
        status = child.wait()
        if status == 0:  # ray.kill: the child removed the entry and the folder
            shutil.rmtree(folder, ignore_errors=True)
            return 0
        try:
            child.stdin.close()
        except OSError:
            pass
        if status == CTOR_FAILED:
            shutil.rmtree(folder, ignore_errors=True)
            return 1
        how = ("signal %d" % -status) if status < 0 else ("exit status %d" % status)
        if most >= 0 and done >= most:
            return _end(entry, folder, "its process died (%s), and it has no restarts left "
                        "(max_restarts=%d)" % (how, most))
        done += 1
        sys.stderr.write("weir detached actor: its process died (%s); restart %d of %s\n"
                         % (how, done, "unlimited" if most < 0 else most))
        sys.stderr.flush()
        quick = quick + 1 if time.monotonic() - started < QUICK else 0
        if quick > 1:  # one that dies as it starts is not restarted in a busy loop
            time.sleep(min(0.1 * 2 ** (quick - 2), 10.0))


def _end(entry: str, folder: str, why: str) -> int:
    """The actor has ended for good: its entry removed, `ID.died` says why (its callers
    are told), its socket's folder removed."""
    import shutil
    with open(entry + ".died", "w") as out:  # first: a caller that finds no entry reads it
        out.write(why)
    _remove(entry)
    shutil.rmtree(folder, ignore_errors=True)
    sys.stderr.write("weir detached actor: %s\n" % why)
    sys.stderr.flush()
    return 1


def _remove(entry: str) -> None:
    for ext in (".json", ".key", ".create", ".auth"):
        try:
            os.unlink(entry + ext)
        except OSError:
            pass


# ---- the actor's process --------------------------------------------------------------------

def _read_exactly(fd: int, n: int) -> bytes:
    out = b""
    while len(out) < n:
        got = os.read(fd, n - len(out))
        if not got:
            raise EOFError("its supervisor sent %d bytes of %d" % (len(out), n))
        out += got
    return out


def _watch_supervisor(fd: int) -> None:
    """Ends this process when its supervisor has gone (its end of the pipe closed).  The
    pipe is read unbuffered: a thread blocked in a buffered read would abort the
    interpreter's exit."""
    while os.read(fd, 4096):
        pass
    os._exit(1)


def actor(entry: str, folder: str, fd: int, runner: Any) -> int:
    import cloudpickle
    from weir.worker import warm as _w

    with open(entry + ".key", "rb") as f:
        key = f.read()
    stdin = sys.stdin.fileno()
    (n,) = LENGTH.unpack(_read_exactly(stdin, LENGTH.size))
    create = _read_exactly(stdin, n)
    threading.Thread(target=_watch_supervisor, args=(stdin,), daemon=True).start()
    runner.apply_runtime_env()
    try:
        cls, args, kwargs = cloudpickle.loads(create)
        instance = cls(*args, **kwargs)
    except BaseException as e:
        rec = runner._error_record(e)
        sys.stderr.write(rec[3])
        _end(entry, folder, "its constructor raised %s: %s" % (rec[1], rec[2]))
        return CTOR_FAILED
    listener = socket.socket(fileno=fd)
    server = _served(_w)(cloudpickle, runner)
    server.ending = (entry, folder, listener)
    # max_concurrency; none given: 1, or 1000 for an async actor (as Ray)
    server.concurrency = int(os.environ.get("WEIR_DETACHED_CONCURRENCY") or 0)
    server.created(instance)
    sys.stderr.write("weir detached actor %s: ready\n" % type(instance).__name__)
    sys.stderr.flush()
    calls: "queue.Queue[Tuple[int, bytes]]" = queue.Queue()

    def run() -> None:  # in the order they arrive; to threads or the loop when concurrent
        while True:
            iid, body = calls.get()
            server.taken(iid)
            server.dispatch(_w.METHOD, iid, body)

    threading.Thread(target=run, name="weir-detached-calls", daemon=True).start()

    def serve(sock: socket.socket) -> None:
        reader = _w.FrameReader()
        wlock = threading.Lock()
        hello = False
        try:
            while True:
                data = sock.recv(1 << 20)
                if not data:
                    break
                for kind, cid, body in reader.feed(data):
                    if not hello:
                        if kind != _w.LINK or not hmac.compare_digest(body[:_w.KEY_BYTES],
                                                                      key):
                            sock.close()
                            return
                        hello = True
                    elif kind == _w.ACTOR_CALL:
                        calls.put((server.route(sock, wlock, cid),
                                   body[_w.ACTOR_ID.size:]))
                    elif kind == _w.CANCEL:
                        server.cancel_from(sock, cid)
                    elif kind == _w.KILL:
                        restart = body[_w.ACTOR_ID.size:] != b"1"
                        if not restart:
                            _remove(entry)
                        with wlock:
                            sock.sendall(_w.encode(_w.VALUE, cid,
                                                   cloudpickle.dumps(None, protocol=5)))
                        sys.stderr.write("weir detached actor: killed by ray.kill()%s\n"
                                         % (" (no_restart=False)" if restart else ""))
                        sys.stderr.flush()
                        _leave(restart, folder)
                    else:
                        with wlock:
                            sock.sendall(_w.encode(_w.DIED, cid, b"a detached actor takes "
                                                   b"its method calls and ray.kill only"))
        except (OSError, _w.FrameError):
            pass
        sock.close()

    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            if server.exiting:  # exit_actor(), __ray_terminate__: Python's own exit, so
                return 0        # the actor's atexit handlers run (status 0: no restart)
            raise
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


def _leave(restart: bool, folder: str) -> None:
    """Ends this process at ray.kill: its own Ray calls' workers first (when its methods
    made some); killed as by a crash when it may restart, else with status 0."""
    api = sys.modules.get("weir.compat.ray.api")
    if api is not None:
        try:
            api.shutdown()
        except Exception:
            pass
    if restart:
        import signal
        os.kill(os.getpid(), signal.SIGKILL)
    import shutil
    shutil.rmtree(folder, ignore_errors=True)
    os._exit(0)


def _served(_w: Any) -> Any:
    """The class of the actor's server: a warm actor's _Worker whose answers go to the
    connection each call came from (the calls of all connections share one numbering
    here; each answer is sent with its caller's own id)."""

    class _Lines(list):  # type: ignore[type-arg]
        """A call's log line, written at once (no loop here flushes them)."""

        def append(self, line: Any) -> None:
            sys.stdout.write(line)
            sys.stdout.flush()

    class Served(_w._Worker):  # type: ignore[misc]
        FINAL = frozenset((_w.VALUE, _w.ERROR, _w.CANCELLED, _w.PATHVAL, _w.SHMVAL,
                           _w.DIED))

        def __init__(self, cloudpickle: Any, runner: Any) -> None:
            super().__init__(None, cloudpickle, runner)
            self.lines = _Lines()
            self.routes: Dict[int, Tuple[socket.socket, Any, int]] = {}
            self.rlock = threading.Lock()
            self.ids = 0
            self.waiting: Set[int] = set()  # calls routed, not yet taken to run
            self.ending: Tuple[str, str, Any] = ("", "", None)  # entry, folder, listener
            self.why = ""  # why the actor ended itself, for the calls after

        def exit_actor(self, cid: int, name: str, t0: float, e: BaseException) -> None:
            """The call ended the actor (ray.actor.exit_actor(), __ray_terminate__): for
            good, as a warm actor's end (no restart): its entry removed (ID.died says why),
            its caller and the calls after told DIED, the process leaving once the calls
            running beside it have returned."""
            entry, folder, listener = self.ending
            self.why = "the actor %s has ended: it ended itself (%s)" % (
                type(self.instance).__name__, "__ray_terminate__"
                if name.endswith("." + _w.TERMINATE) else "ray.actor.exit_actor()")
            self.exiting = True
            _end(entry, folder, self.why)
            self.send(_w.encode(_w.DIED, cid, self.why.encode()))
            self.lines.append("weir-call %d %s ended the actor (%s)\n"
                              % (cid, name, type(e).__name__))

            def wind_up() -> None:
                self.finish()
                listener.shutdown(socket.SHUT_RDWR)  # wakes the main thread's accept
            threading.Thread(target=wind_up, name="weir-detached-exit", daemon=True).start()

        def after_exit(self, cid: int) -> None:
            self.send(_w.encode(_w.DIED, cid, self.why.encode()))  # no program tells it

        def route(self, sock: socket.socket, wlock: Any, cid: int) -> int:
            """This process's id of a call that came on sock with the caller's id cid."""
            with self.rlock:
                self.ids += 1
                self.routes[self.ids] = (sock, wlock, cid)
                self.waiting.add(self.ids)
                return int(self.ids)

        def taken(self, iid: int) -> None:
            """The call iid leaves the queue to run (its cancel from now on: run_one's)."""
            with self.rlock:
                self.waiting.discard(iid)

        def cancel_from(self, sock: socket.socket, cid: int) -> None:
            """ray.cancel of the call cid that came on sock (none when it has ended): the
            worker acts on it (cancel_call); one still queued is answered now."""
            with self.rlock:
                iid = next((i for i, r in self.routes.items() if r[0] is sock and r[2] == cid),
                           0)
                if not iid:
                    return
                self.cancel_call(iid)  # under the lock: once taken(), run_one sees it
                queued = iid in self.waiting
            if queued:  # run_one drops it when its turn comes
                self.send(_w.encode(_w.CANCELLED, iid))

        def drain(self) -> None:
            return None  # nothing to read: the calls come through route()

        def flush_lines(self) -> None:
            return None  # written as they come (_Lines)

        # a generator method's items: all of them in the call's value, when it has ended
        # (a link takes no ITEM frames; ObjectRefGenerator reads such a list)
        def stream(self, cid: int, gen: Any) -> Any:
            return list(gen)

        async def _stream_async(self, cid: int, agen: Any) -> Any:
            return [item async for item in agen]

        def send(self, data: bytes) -> None:
            n, kind, iid = _w.HEADER.unpack_from(data)
            with self.rlock:
                got: Optional[Tuple[socket.socket, Any, int]] = (
                    self.routes.pop(iid, None) if kind in self.FINAL
                    else self.routes.get(iid))
            if got is None:
                return
            sock, wlock, cid = got
            try:
                with wlock:
                    sock.sendall(_w.HEADER.pack(n, kind, cid) +
                                 memoryview(data)[_w.HEADER.size:])
            except OSError:
                pass  # its caller has gone

    return Served


if __name__ == "__main__":
    sys.exit(main())
