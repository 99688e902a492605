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
from weir.remote import detached
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


def _entry(tmp_path, cls, args, **env_extra):
    entry = str(tmp_path / "entry")
    with open(entry + ".key", "wb") as f:
        f.write(os.urandom(warm.KEY_BYTES))
    with open(entry + ".create", "wb") as f:
        f.write(cloudpickle.dumps((cls, args, {})))
    sock_dir = tempfile.mkdtemp(prefix="weir-test-actor-")
    with open(entry + ".json", "w") as f:
        json.dump({"name": "shelf", "sock": sock_dir}, f)
    env = dict(os.environ, WEIR_DETACHED=entry, WEIR_DETACHED_SOCK=sock_dir,
               PYTHONPATH=os.pathsep.join((os.path.dirname(os.path.dirname(WORKER_DIR)),
                                           os.path.dirname(os.path.abspath(__file__)))),
               **env_extra)
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


class Slow:
    def __init__(self):
        self.pid = os.getpid()

    def wait_for(self, path):  # returns once the file exists: two at once end together
        open(path + "." + str(os.getpid()) + "." + str(time.monotonic_ns()), "w").close()
        while not os.path.exists(path):
            time.sleep(0.01)  # polls for the file the test makes
        return self.pid

    def whoami(self):
        return self.pid


class Loop:
    async def hold(self, ev_path):
        import asyncio
        while not os.path.exists(ev_path):
            await asyncio.sleep(0.01)  # polls for the file the test makes
        return "held"

    async def ping(self):
        return "pong"


def _call(link, method, *args):
    return link.call(0, "A", method, cloudpickle.dumps((args, {})))


def test_a_detached_actor_runs_calls_at_once_up_to_max_concurrency(tmp_path):
    entry, sock_dir, p = _entry(tmp_path, Slow, (), WEIR_DETACHED_CONCURRENCY="2")
    try:
        _wait_sock(sock_dir, p)
        link = Link(entry, key_file=entry + ".key", sock_dir=sock_dir)
        gate = str(tmp_path / "gate")
        a, b = _call(link, "wait_for", gate), _call(link, "wait_for", gate)
        # both have started before either may end: two threads (one at a time, the
        # second would never start: the guard fails the test instead of hanging)
        guard = time.monotonic() + 120
        while len([f for f in os.listdir(tmp_path) if f.startswith("gate.")]) < 2:
            assert p.poll() is None and time.monotonic() < guard, "one call at a time"
            time.sleep(0.01)  # polls for the calls' marks
        open(gate, "w").close()
        a._wait(None)
        b._wait(None)
        assert a._value == b._value != p.pid  # its process, the supervisor's child
    finally:
        p.kill()
        p.wait()


def test_a_detached_actor_with_async_methods_runs_them_on_its_loop(tmp_path):
    entry, sock_dir, p = _entry(tmp_path, Loop, ())
    try:
        _wait_sock(sock_dir, p)
        link = Link(entry, key_file=entry + ".key", sock_dir=sock_dir)
        gate = str(tmp_path / "gate")
        held = _call(link, "hold", gate)
        pong = _call(link, "ping")
        pong._wait(time.monotonic() + 120)  # answered while hold() awaits
        assert pong._value == "pong" and not held._done
        open(gate, "w").close()
        held._wait(None)
        assert held._value == "held"
    finally:
        p.kill()
        p.wait()


def test_a_detached_actor_is_restarted_after_kill_9_until_its_restarts_are_spent(tmp_path):
    entry, sock_dir, p = _entry(tmp_path, Slow, (), WEIR_DETACHED_RESTARTS="1")
    try:
        _wait_sock(sock_dir, p)
        link = detached.link(entry)
        first = _call(link, "whoami")
        first._wait(None)
        pid = first._value
        assert pid != p.pid  # the supervisor's child
        stuck = _call(link, "wait_for", str(tmp_path / "never"))
        os.kill(pid, 9)
        stuck._wait(None)  # the call in flight fails
        assert "process died" in str(stuck._error), stuck._error
        again = detached.link(entry)  # a handle's next call: a new link
        second = _call(again, "whoami")
        second._wait(None)  # the constructor ran again, in a new process
        assert second._value not in (None, pid), second._error
        os.kill(second._value, 9)  # no restart left: it ends, and says why
        assert p.wait(timeout=60) == 1
        with open(entry + ".died") as f:
            assert "no restarts left" in f.read()
        assert not os.path.exists(entry + ".key") and not os.path.exists(sock_dir)
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
    assert not os.path.exists(sock_dir)  # its socket's folder is removed with it


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
