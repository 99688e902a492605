"""A detached actor's process (weir/worker/detached.py) and a bundle host
(weir/worker/bundle.py) against sockets of this test, without a server: the detached actor
builds its instance from its entry, answers a link that knows the key (values, a method
that raises, the calls in order) and drops one that does not, and ray.kill removes its
entry and ends it; a constructor that raises leaves why in the entry; a bundle host says
hello with its job and bundle, starts what it is asked to as its child, and reports its
end."""

import json
import os
import socket
import subprocess
import sys
import tempfile
import time

import cloudpickle
import pytest

from weir.errors import RemoteError
from weir.remote.actors import Link
from weir.worker import warm

from test_warm_frames import _recv_frames

WORKER_DIR = os.path.join(os.path.dirname(warm.__file__))


class Shelf:
    def __init__(self, items):
        self.items = list(items)

    def add(self, x):
        self.items.append(x)
        return len(self.items)

    def take(self):
        return self.items.pop(0)


def _entry(tmp_path, cls, args):
    entry = str(tmp_path / "entry")
    with open(entry + ".key", "wb") as f:
        f.write(os.urandom(warm.KEY_BYTES))
    with open(entry + ".create", "wb") as f:
        f.write(cloudpickle.dumps((cls, args, {})))
    with open(entry + ".json", "w") as f:
        json.dump({"name": "shelf"}, f)
    sock_dir = tempfile.mkdtemp(prefix="weir-test-actor-")
    env = dict(os.environ, WEIR_DETACHED=entry, WEIR_DETACHED_SOCK=sock_dir,
               PYTHONPATH=os.pathsep.join((os.path.dirname(os.path.dirname(WORKER_DIR)),
                                           os.path.dirname(os.path.abspath(__file__)))))
    p = subprocess.Popen([sys.executable, os.path.join(WORKER_DIR, "detached.py")], env=env,
                         stderr=subprocess.PIPE)
    return entry, sock_dir, p


def _wait_sock(sock_dir, p):
    path = os.path.join(sock_dir, "sock")
    while not os.path.exists(path):
        assert p.poll() is None, p.stderr.read()
        time.sleep(0.01)  # polls for its socket
    return path


def test_a_detached_actor_serves_a_link_that_knows_its_key_until_killed(tmp_path):
    entry, sock_dir, p = _entry(tmp_path, Shelf, (["a"],))
    try:
        path = _wait_sock(sock_dir, p)
        assert not os.path.exists(entry + ".create")  # read, then removed
        # a connection without the key is dropped
        bad = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        bad.connect(path)
        bad.sendall(warm.encode(warm.LINK, 0, b"x" * warm.KEY_BYTES + b"1"))
        assert bad.recv(10) == b""
        link = Link(entry, key_file=entry + ".key", sock_dir=sock_dir)
        calls = [link.call(0, "Shelf", "add", cloudpickle.dumps(((x,), {})))
                 for x in "bcd"]
        for f in calls:
            f._wait(None)
        assert [f._value for f in calls] == [2, 3, 4]
        took = link.call(0, "Shelf", "take", cloudpickle.dumps(((), {})))
        took._wait(None)
        assert took._value == "a"
        wrong = link.call(0, "Shelf", "add", cloudpickle.dumps(((), {})))
        wrong._wait(None)
        assert isinstance(wrong._error, RemoteError) and "add()" in str(wrong._error)
        link.kill(0, "Shelf", True)
        assert p.wait(timeout=60) == 0
        assert not any(os.path.exists(entry + e) for e in (".json", ".key"))
        assert not os.path.exists(sock_dir)
    finally:
        if p.poll() is None:
            p.kill()


class Broken:
    def __init__(self):
        raise ValueError("no shelf")


def test_a_detached_actor_whose_constructor_raises_says_why_in_its_entry(tmp_path):
    entry, sock_dir, p = _entry(tmp_path, Broken, ())
    assert p.wait(timeout=60) == 1
    with open(entry + ".died") as f:
        assert "ValueError: no shelf" in f.read()
    assert not os.path.exists(entry + ".json") and not os.path.exists(entry + ".key")
    os.rmdir(sock_dir)


def test_a_bundle_host_starts_its_children_and_reports_their_end(tmp_path):
    folder = tempfile.mkdtemp(prefix="weir-test-warm-")
    key = os.urandom(warm.KEY_BYTES)
    with open(os.path.join(folder, "key"), "wb") as f:
        f.write(key)
    lst = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    lst.bind(os.path.join(folder, "sock"))
    lst.listen(1)
    env = dict(os.environ, WEIR_WARM_DIR=folder, WEIR_JOB_ID="42", WEIR_ROLE="bundle3",
               PYTHONPATH=os.path.dirname(os.path.dirname(WORKER_DIR)))
    p = subprocess.Popen([sys.executable, os.path.join(WORKER_DIR, "bundle.py")], env=env,
                         stderr=subprocess.PIPE)
    try:
        conn, _ = lst.accept()
        reader = warm.FrameReader()
        ((kind, _, body),) = _recv_frames(conn, reader, 1)
        assert kind == warm.BUNDLE and body[:warm.KEY_BYTES] == key
        pid, job, index = body[warm.KEY_BYTES:].decode().split()
        assert (int(pid), job, index) == (p.pid, "42", "3")
        out = tmp_path / "child"
        what = {"argv": [sys.executable, "-c", "import os, sys; open(sys.argv[1], 'w').write("
                         "os.environ['SLOT'] + ' ' + str(os.getppid())); sys.exit(5)",
                         str(out)], "env": {"SLOT": "s7"}}
        conn.sendall(warm.encode(warm.SPAWN, 7, json.dumps(what).encode()))
        ((kind, slot, body),) = _recv_frames(conn, reader, 1)
        assert (kind, slot, body) == (warm.EXITED, 7, b"5")
        assert out.read_text() == "s7 %d" % p.pid  # its child, with the environment asked
        conn.close()  # the program's end: the host leaves
        assert p.wait(timeout=60) == 0
    finally:
        if p.poll() is None:
            p.kill()
        lst.close()


if __name__ == "__main__":
    sys.exit(pytest.main([__file__]))
