"""A placement group's bundle host (docs/internals/calls.md, "Placement groups").

Each bundle of a Ray placement group is one task of the group's weir job (a gang: the
server starts every bundle together, holding each bundle's cores, GPUs and memory).  This
script is that task's process: it connects to the program's socket in $WEIR_WARM_DIR,
says hello (BUNDLE: the key, then "PID JOB INDEX"), then starts the program's warm
workers and actors placed in its bundle as its own children (SPAWN: the argv and the
environment to add, as JSON), so they run inside the bundle's reservation and limits and
count nothing more against the node.  It reports each child's end (EXITED: the exit
status as text; minus the signal for a signal).  When the program's socket closes, or the
group is removed (its job killed: SIGTERM), it kills its children and leaves.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import threading
from typing import Dict, List, Optional


def main() -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    if sys.path and os.path.abspath(sys.path[0]) == here:
        del sys.path[0]  # the package's modules must not shadow the user's
    sys.path.insert(0, os.path.dirname(os.path.dirname(here)))
    from weir.worker import warm as _w  # the frames

    folder = os.environ["WEIR_WARM_DIR"]
    try:
        with open(os.path.join(folder, "key"), "rb") as f:
            key = f.read()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(os.path.join(folder, "sock"))
    except OSError as e:
        if not os.path.exists(folder):
            sys.stderr.write("weir bundle: the program has ended (%s is gone)\n" % folder)
            return 0
        sys.stderr.write("weir bundle: cannot reach the program at %s: %s\n" % (folder, e))
        return 3
    children: Dict[int, "subprocess.Popen[bytes]"] = {}
    lock = threading.Lock()
    wlock = threading.Lock()

    def end(*_: object) -> None:
        with lock:
            procs: List["subprocess.Popen[bytes]"] = list(children.values())
        for p in procs:
            try:
                p.kill()
            except OSError:
                pass
        os._exit(0)

    signal.signal(signal.SIGTERM, end)

    def send(kind: int, cid: int, body: bytes) -> None:
        try:
            with wlock:
                sock.sendall(_w.encode(kind, cid, body))
        except OSError:
            pass

    def reap(slot: int, p: "subprocess.Popen[bytes]") -> None:
        code = p.wait()
        with lock:
            children.pop(slot, None)
        send(_w.EXITED, slot, str(code).encode())

    index = os.environ.get("WEIR_TASK_INDEX", "0")
    role = os.environ.get("WEIR_ROLE", "bundle0")
    send(_w.BUNDLE, 0, key + ("%d %s %s" % (os.getpid(), os.environ.get("WEIR_JOB_ID", "-"),
                                           role[len("bundle"):] or index)).encode())
    sys.stderr.write("weir bundle %s: holding its resources for the program's calls\n"
                     % role)
    sys.stderr.flush()
    reader = _w.FrameReader()
    while True:
        try:
            data = sock.recv(1 << 20)
        except OSError:
            data = b""
        if not data:
            break
        for kind, cid, body in reader.feed(data):
            if kind != _w.SPAWN:
                continue
            what = json.loads(body.decode("utf-8"))
            env = dict(os.environ)
            env.update({str(k): str(v) for k, v in what["env"].items()})
            p: Optional["subprocess.Popen[bytes]"] = None
            try:
                p = subprocess.Popen(what["argv"], env=env)
            except OSError as e:
                sys.stderr.write("weir bundle: cannot start %s: %s\n" % (what["argv"], e))
                send(_w.EXITED, cid, b"127")
                continue
            with lock:
                children[cid] = p
            threading.Thread(target=reap, args=(cid, p), daemon=True).start()
    sys.stderr.write("weir bundle %s: the program has ended; leaving\n" % role)
    end()
    return 0


if __name__ == "__main__":
    sys.exit(main())
