"""The warm workers' frames (weir/worker/warm.py): encoded, read back from a stream cut
anywhere, the call's body and the hello parsed, bad input refused with what was wrong; and a
worker run against a socket pair in this test (no server)."""

import os
import shutil
import socket
import subprocess
import sys
import tempfile

import cloudpickle
import pytest

from weir.worker import warm


def test_frames_read_back_from_a_stream_cut_anywhere():
    frames = [(warm.CALL, 1, b"abc"), (warm.VALUE, 2**63, b""), (warm.ERROR, 7, b"x" * 70000),
              (warm.BYE, 0, b"")]
    data = b"".join(warm.encode(*f) for f in frames)
    for step in (1, 5, 13, 14, 4096, len(data)):
        r = warm.FrameReader()
        got = []
        for i in range(0, len(data), step):
            got += r.feed(data[i:i + step])
        assert got == frames, step
        assert r.pending() == 0


def test_a_header_out_of_the_format_is_refused():
    with pytest.raises(warm.FrameError, match="unknown kind"):
        warm.encode(ord("Z"), 1, b"")
    with pytest.raises(warm.FrameError, match="unknown kind 90"):
        warm.FrameReader().feed(warm.HEADER.pack(0, ord("Z"), 1))
    with pytest.raises(warm.FrameError, match="over the most"):
        warm.FrameReader().feed(warm.HEADER.pack(warm.MAX_BODY + 1, warm.CALL, 1))


def test_a_calls_body_with_and_without_its_function():
    h = bytes(range(32))
    body = warm.call_body(h, b"FN", b"ARGS")
    assert warm.parse_call(body) == (h, b"FN", b"ARGS")
    assert warm.parse_call(warm.call_body(h, None, b"ARGS")) == (h, None, b"ARGS")
    with pytest.raises(warm.FrameError, match="32 bytes"):
        warm.call_body(b"short", None, b"")
    with pytest.raises(warm.FrameError, match="shorter than its head"):
        warm.parse_call(b"x" * 10)
    with pytest.raises(warm.FrameError, match="runs past"):
        warm.parse_call(h + warm.FN_LEN.pack(100) + b"FN")


def test_a_hello_and_a_bad_one():
    key = os.urandom(warm.KEY_BYTES)
    assert warm.parse_hello(warm.hello_body(key, 123, "45")) == (key, 123, "45")
    with pytest.raises(warm.FrameError, match="too short"):
        warm.parse_hello(key)
    with pytest.raises(warm.FrameError, match="PID JOB"):
        warm.parse_hello(key + b"nopid")


def test_an_item_and_a_shared_value_body_and_bad_ones():
    assert warm.parse_shm(warm.shm_body(123, "/dev/shm/weir-obj-t-1-r1")) == (
        123, "/dev/shm/weir-obj-t-1-r1")
    with pytest.raises(warm.FrameError, match="names no path"):
        warm.parse_shm(warm.SIZE.pack(5))
    assert warm.parse_item(warm.item_body(7, warm.VALUE, b"PKL")) == (7, warm.VALUE, b"PKL")
    with pytest.raises(warm.FrameError, match="must be R or Q"):
        warm.item_body(0, warm.ERROR, b"")
    with pytest.raises(warm.FrameError, match="unknown kind of value"):
        warm.parse_item(warm.ITEM_HEAD.pack(0, warm.ERROR))
    with pytest.raises(warm.FrameError, match="shorter than its head"):
        warm.parse_item(b"x")


def _recv_frames(sock, reader, n):
    out = []
    while len(out) < n:
        data = sock.recv(1 << 16)
        assert data, "the worker closed its socket early: %r" % out
        out += reader.feed(data)
    return out


def test_a_worker_runs_calls_caches_the_function_and_leaves_at_the_end(tmp_path):
    """worker/warm.py as a job runs it, against a listening socket of this test."""
    folder = tempfile.mkdtemp(prefix="weir-warm-")
    key = os.urandom(warm.KEY_BYTES)
    with open(os.path.join(folder, "key"), "wb") as f:
        f.write(key)
    lst = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    lst.bind(os.path.join(folder, "sock"))
    lst.listen(1)
    # without /dev/shm (WEIR_WARM_SHM=0): a large value goes through the results folder
    env = dict(os.environ, WEIR_WARM_DIR=folder, WEIR_JOB_ID="9", WEIR_WARM_IDLE="60",
               WEIR_WARM_RESULTS=str(tmp_path), WEIR_WARM_TAG="t", WEIR_WARM_SHM="0")
    p = subprocess.Popen([sys.executable, warm.__file__], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        conn, _ = lst.accept()
        r = warm.FrameReader()
        (hello,) = _recv_frames(conn, r, 1)
        assert hello[0] == warm.HELLO
        assert warm.parse_hello(hello[2]) == (key, p.pid, "9")

        def double(x):
            return x * 2
        fn = cloudpickle.dumps(double)
        h = b"h" * 32
        conn.sendall(warm.encode(warm.CALL, 1, warm.call_body(h, fn, cloudpickle.dumps(
            ((21,), {})))))
        # the function is known now: the next call sends its hash alone
        conn.sendall(warm.encode(warm.CALL, 2, warm.call_body(h, None, cloudpickle.dumps(
            (("ab",), {})))))
        # a value too large for a frame comes through the results folder
        conn.sendall(warm.encode(warm.CALL, 3, warm.call_body(h, None, cloudpickle.dumps(
            ((b"x" * (warm.INLINE_VALUE + 1),), {})))))
        got = _recv_frames(conn, r, 3)
        assert [(k, c) for k, c, _ in got] == [(warm.VALUE, 1), (warm.VALUE, 2),
                                               (warm.PATHVAL, 3)]
        assert cloudpickle.loads(got[0][2]) == 42 and cloudpickle.loads(got[1][2]) == "abab"
        with open(warm.result_file(str(tmp_path), "t", 3), "rb") as f:
            assert len(cloudpickle.load(f)) == 2 * (warm.INLINE_VALUE + 1)
        # an unknown function's hash is an error of that call, not the worker's end
        conn.sendall(warm.encode(warm.CALL, 4, warm.call_body(b"u" * 32, None,
                                                              cloudpickle.dumps(((), {})))))
        ((kind, cid, body),) = _recv_frames(conn, r, 1)
        assert (kind, cid) == (warm.ERROR, 4)
        assert "is not known here" in cloudpickle.loads(body)[2]
        conn.close()
        out, err = p.communicate(timeout=30)
        assert p.returncode == 0, err
        assert "weir-call 1 test_a_worker_runs_calls_caches_the_function_and_leaves_at_the_end" \
            ".<locals>.double succeeded" in out, out
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        lst.close()
        shutil.rmtree(folder, ignore_errors=True)


def test_a_worker_streams_items_and_writes_a_large_value_to_shared_memory(tmp_path):
    """Items of a generator's call, one frame each as they are yielded, then the count; a
    value over SHM_VALUE in a segment of /dev/shm that parses back (worker/segment.py)."""
    from weir.worker import segment
    folder = tempfile.mkdtemp(prefix="weir-warm-")
    tag = os.path.basename(folder)[len("weir-warm-"):]
    with open(os.path.join(folder, "key"), "wb") as f:
        f.write(os.urandom(warm.KEY_BYTES))
    lst = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    lst.bind(os.path.join(folder, "sock"))
    lst.listen(1)
    env = dict(os.environ, WEIR_WARM_DIR=folder, WEIR_JOB_ID="9", WEIR_WARM_IDLE="60",
               WEIR_WARM_RESULTS=str(tmp_path), WEIR_WARM_TAG=tag)
    p = subprocess.Popen([sys.executable, warm.__file__], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    paths = []
    try:
        conn, _ = lst.accept()
        r = warm.FrameReader()
        _recv_frames(conn, r, 1)  # hello

        def gen(n):
            for i in range(n):
                yield i

        def items(n):
            return list(gen(n))
        setattr(items, warm.STREAM_ATTR, gen)

        def big(n):
            return bytearray(n)
        conn.sendall(warm.encode(warm.CALL, 1, warm.call_body(b"g" * 32, cloudpickle.dumps(
            items), cloudpickle.dumps(((3,), {})))))
        got = _recv_frames(conn, r, 4)
        assert [(k, c) for k, c, _ in got] == [(warm.ITEM, 1)] * 3 + [(warm.VALUE, 1)]
        for i, (_, _, body) in enumerate(got[:3]):
            index, kind, vbody = warm.parse_item(body)
            assert (index, kind, cloudpickle.loads(vbody)) == (i, warm.VALUE, i)
        assert cloudpickle.loads(got[3][2]) == 3  # the count
        conn.sendall(warm.encode(warm.CALL, 2, warm.call_body(b"b" * 32, cloudpickle.dumps(
            big), cloudpickle.dumps(((warm.SHM_VALUE + 1,), {})))))
        ((kind, cid, body),) = _recv_frames(conn, r, 1)
        assert (kind, cid) == (warm.SHMVAL, 2)
        size, path = warm.parse_shm(body)
        paths.append(path)
        assert path.startswith("/dev/shm/weir-obj-%s-%d-r" % (tag, p.pid))
        assert os.path.getsize(path) == size and os.stat(path).st_mode & 0o777 == 0o600
        assert segment.load_segment(path) == bytearray(warm.SHM_VALUE + 1)
        conn.close()
        p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        lst.close()
        shutil.rmtree(folder, ignore_errors=True)
        for path in paths:
            os.unlink(path)
