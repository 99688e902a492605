"""Actors' frames and handles (weir/worker/warm.py, weir/remote/actors.py,
weir/compat/ray/actors.py), without a server: a method call's body and a bad one; an actor's
worker against a socket of this test (the constructor, then methods in order; a constructor
that raises ends the worker; a threaded actor runs calls at once); a handle pickles to the
program's folder and the actor's id and comes back as the same actor."""

import os
import pickle
import shutil
import socket
import subprocess
import sys
import tempfile
import threading

import cloudpickle
import pytest

from weir.compat import ray
from weir.compat.ray import actors as ray_actors
from weir.worker import warm

from test_warm_frames import _recv_frames


def test_a_method_calls_body_and_a_bad_one():
    body = warm.method_body("incr", b"ARGS")
    assert warm.parse_method(body) == ("incr", b"ARGS")
    assert warm.parse_method(warm.method_body("é", b"")) == ("é", b"")
    with pytest.raises(warm.FrameError, match="1 to 65535"):
        warm.method_body("", b"")
    with pytest.raises(warm.FrameError, match="shorter than its head"):
        warm.parse_method(b"x")
    with pytest.raises(warm.FrameError, match="runs past"):
        warm.parse_method(warm.NAME_LEN.pack(10) + b"abc")
    for kind in (warm.CREATE, warm.METHOD, warm.LINK, warm.ACTOR_CALL, warm.LOOKUP, warm.DIED):
        assert warm.FrameReader().feed(warm.encode(kind, 3, b"b")) == [(kind, 3, b"b")]


class _Actor:
    """An actor's worker (worker/warm.py) against a socket of this test."""

    def __init__(self, tmp_path):
        self.folder = tempfile.mkdtemp(prefix="weir-warm-")
        key = os.urandom(warm.KEY_BYTES)
        with open(os.path.join(self.folder, "key"), "wb") as f:
            f.write(key)
        self.lst = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.lst.bind(os.path.join(self.folder, "sock"))
        self.lst.listen(1)
        env = dict(os.environ, WEIR_WARM_DIR=self.folder, WEIR_JOB_ID="9", WEIR_WARM_IDLE="0",
                   WEIR_WARM_RESULTS=str(tmp_path), WEIR_WARM_TAG="t", WEIR_WARM_ACTOR="t-1")
        self.p = subprocess.Popen([sys.executable, warm.__file__], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.conn, _ = self.lst.accept()
        self.r = warm.FrameReader()
        (hello,) = _recv_frames(self.conn, self.r, 1)
        assert hello[0] == warm.HELLO

    def create(self, cls, args, concurrency=1):
        # the test's module is not on the worker's path: its classes go by value
        cloudpickle.register_pickle_by_value(sys.modules[__name__])
        body = cloudpickle.dumps((args, {}, concurrency))
        self.conn.sendall(warm.encode(warm.CREATE, 1, warm.call_body(
            b"c" * 32, cloudpickle.dumps(cls), body)))

    def call(self, cid, name, *args):
        self.conn.sendall(warm.encode(warm.METHOD, cid, warm.method_body(
            name, cloudpickle.dumps((args, {})))))

    def frames(self, n):
        return _recv_frames(self.conn, self.r, n)

    def close(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()
        self.lst.close()
        shutil.rmtree(self.folder, ignore_errors=True)


class Counter:
    def __init__(self, n):
        self.n = n

    def incr(self, by):
        self.n += by
        return self.n


def test_an_actors_worker_runs_its_constructor_then_methods_in_order(tmp_path):
    a = _Actor(tmp_path)
    try:
        a.create(Counter, (10,))
        for i in range(2, 52):
            a.call(i, "incr", i)
        a.call(52, "nope")
        got = a.frames(52)
        assert [(k, c) for k, c, _ in got[:51]] == [(warm.VALUE, i) for i in range(1, 52)]
        assert [cloudpickle.loads(b) for _, _, b in got[1:51]] == [
            10 + sum(range(2, i + 1)) for i in range(2, 52)]
        assert got[51][:2] == (warm.ERROR, 52)
        assert "nope" in cloudpickle.loads(got[51][2])[2]
        # an actor's worker never leaves idle: only at its socket's end
        a.conn.close()
        out, err = a.p.communicate(timeout=30)
        assert a.p.returncode == 0, err
        assert "weir-call 2 Counter.incr succeeded" in out, out
    finally:
        a.close()


class Bad:
    def __init__(self):
        raise ValueError("no")


def test_a_constructor_that_raises_ends_the_worker(tmp_path):
    a = _Actor(tmp_path)
    try:
        a.create(Bad, ())
        a.call(2, "f")
        ((kind, cid, body),) = a.frames(1)
        assert (kind, cid) == (warm.ERROR, 1)
        assert cloudpickle.loads(body)[1] == "ValueError"
        out, err = a.p.communicate(timeout=30)
        assert a.p.returncode == 1, err
    finally:
        a.close()


class Gate:
    def __init__(self):
        self.event = threading.Event()

    def wait(self):
        return self.event.wait(30)

    def open(self):
        self.event.set()
        return "opened"


def test_a_threaded_actor_runs_a_call_while_another_waits(tmp_path):
    a = _Actor(tmp_path)
    try:
        a.create(Gate, (), concurrency=2)
        a.call(2, "wait")
        a.call(3, "open")
        got = a.frames(3)
        # the second call answered first: the first waited for it
        assert [(k, c) for k, c, _ in got] == [(warm.VALUE, 1), (warm.VALUE, 3),
                                               (warm.VALUE, 2)]
        assert cloudpickle.loads(got[2][2]) is True
    finally:
        a.close()


def test_a_handle_pickles_to_the_folder_and_id_and_its_methods_returns():
    class Two:
        @ray.method(num_returns=2)
        def pair(self):
            return 1, 2
    h = ray_actors.ActorHandle("/nowhere/weir-warm-x", 7, "Two",
                               ray_actors._actors._num_returns(Two))
    assert h._num_returns == {"pair": 2}
    back = pickle.loads(cloudpickle.dumps(h))
    assert back == h and hash(back) == hash(h)
    assert (back._folder, back._actor_id, back._name, back._num_returns) == (
        "/nowhere/weir-warm-x", 7, "Two", {"pair": 2})
    assert back._actor is None  # no program of this process holds it: calls go by a link
    assert back.pair._n == 2 and back.other._n == 1
    assert back.pair.options(num_returns=3)._n == 3
    with pytest.raises(TypeError, match="remote"):
        back.pair()
    # calls from a process that cannot reach the program fail as the actor's end
    with pytest.raises(Exception, match="cannot reach the program"):
        back.other.remote()


def test_actor_pool_refuses_an_actor_twice():
    pool = ray.util.ActorPool(["a", "b"])
    assert not pool.has_next() and pool.has_free()
    with pytest.raises(ValueError, match="already belongs"):
        pool.push("a")
