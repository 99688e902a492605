"""A detached actor's process (docs/internals/calls.md, "Detached actors").

A Ray actor made with lifetime="detached" is a weir job of its own, tied to no program's
socket: this script.  $WEIR_DETACHED names its entry in the user's home
(HOME/ray/actors/ID: `ID.key`, 0600, 32 random bytes; `ID.create`, the pickle of the class
and the constructor's arguments, removed once read; `ID.json`, where it listens), never
the key itself.  It builds the instance, listens on the Unix socket in $WEIR_DETACHED_SOCK
(a 0700 folder), and serves any program's (or task's) connection that knows the key,
with the frames of a program's link (LINK hello: the key then the pid; ACTOR_CALL: the
actor id then the method's name and arguments; KILL), answering VALUE, ERROR or DIED as
the program does.  Calls run one at a time in the order they arrive (a coroutine method
runs on one event loop).  ray.kill (KILL) removes the entry and ends the process.
"""

import hmac
import os
import queue
import socket
import sys
import threading
from typing import Any, Tuple


def main() -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    if sys.path and os.path.abspath(sys.path[0]) == here:
        del sys.path[0]  # the package's modules must not shadow the user's
    import importlib.util
    import cloudpickle
    spec = importlib.util.spec_from_file_location("_weir_runner",
                                                  os.path.join(here, "runner.py"))
    assert spec is not None and spec.loader is not None
    runner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(runner)
    sys.path.insert(0, os.path.dirname(os.path.dirname(here)))
    from weir.worker import warm as _w

    entry = os.environ["WEIR_DETACHED"]
    folder = os.environ["WEIR_DETACHED_SOCK"]
    with open(entry + ".key", "rb") as f:
        key = f.read()
    runner.apply_runtime_env()
    try:
        with open(entry + ".create", "rb") as f:
            cls, args, kwargs = cloudpickle.loads(f.read())
        os.unlink(entry + ".create")
        instance = cls(*args, **kwargs)
    except BaseException as e:
        rec = runner._error_record(e)
        sys.stderr.write(rec[3])
        _remove(entry)
        why = "its constructor raised %s: %s" % (rec[1], rec[2])
        with open(entry + ".died", "w") as out:  # what its callers are told
            out.write(why)
        sys.stderr.write("weir detached actor: %s\n" % why)
        return 1
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(os.path.join(folder, "sock"))
    listener.listen(64)
    sys.stderr.write("weir detached actor %s: ready\n" % type(instance).__name__)
    sys.stderr.flush()
    calls: "queue.Queue[Tuple[Any, Any, int, str, bytes]]" = queue.Queue()
    loop: Any = None
    ended = threading.Event()  # exit_actor() or __ray_terminate__: the process leaves

    def run() -> None:
        nonlocal loop
        import inspect
        while True:
            sock, wlock, cid, method, data = calls.get()
            try:
                a, kw = cloudpickle.loads(data)
                fn = _w._terminate if method == _w.TERMINATE else getattr(instance, method)
                value = fn(*a, **kw)
                if inspect.isawaitable(value):
                    import asyncio
                    if loop is None:
                        loop = asyncio.new_event_loop()
                    value = loop.run_until_complete(value)
                frame = _w.encode(_w.VALUE, cid, cloudpickle.dumps(value, protocol=5))
            except BaseException as e:
                if _w.ends_actor(e):  # the actor ends itself: gracefully, for good
                    _remove(entry)
                    why = "the actor %s has ended: it ended itself (%s)" % (
                        type(instance).__name__, "__ray_terminate__"
                        if method == _w.TERMINATE else "ray.actor.exit_actor()")
                    sys.stderr.write("weir detached actor: %s\n" % why)
                    try:
                        with wlock:
                            sock.sendall(_w.encode(_w.DIED, cid, why.encode()))
                    except OSError:
                        pass
                    ended.set()
                    listener.shutdown(socket.SHUT_RDWR)  # wakes the main thread's accept
                    return
                rec = runner._error_record(e)
                sys.stderr.write(rec[3])
                frame = _w.encode(_w.ERROR, cid, cloudpickle.dumps(rec, protocol=5))
            sys.stderr.write("weir-call %d %s.%s\n" % (cid, type(instance).__name__, method))
            sys.stderr.flush()
            try:
                with wlock:
                    sock.sendall(frame)
            except OSError:
                pass  # its caller has gone

    threading.Thread(target=run, daemon=True).start()

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
                        method, args = _w.parse_method(body[_w.ACTOR_ID.size:])
                        calls.put((sock, wlock, cid, method, args))
                    elif kind == _w.KILL:
                        _remove(entry)
                        with wlock:
                            sock.sendall(_w.encode(_w.VALUE, cid,
                                                   cloudpickle.dumps(None, protocol=5)))
                        import shutil
                        shutil.rmtree(folder, ignore_errors=True)
                        sys.stderr.write("weir detached actor: killed by ray.kill()\n")
                        sys.stderr.flush()
                        os._exit(0)
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
            if ended.is_set():  # exits as Python does: the actor's atexit handlers run
                import shutil
                shutil.rmtree(folder, ignore_errors=True)
                return 0
            raise
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


def _remove(entry: str) -> None:
    for ext in (".json", ".key", ".create"):
        try:
            os.unlink(entry + ext)
        except OSError:
            pass


if __name__ == "__main__":
    sys.exit(main())
