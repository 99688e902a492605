"""SIGINT, the program's cancel, in a warm worker (weir/worker/warm.py, _on_sigint), against
the moments it used to lose: the worker is driven in this process (its main thread, a socket
pair for the program's end) and the signal is made to land exactly there with
_thread.interrupt_main(), whose handler runs when the main thread next runs Python code."""

import _thread
import os
import platform
import signal
import socket
import threading
import time

import cloudpickle
import pytest

from weir.worker import runner
from weir.worker import warm

from test_warm_frames import _recv_frames

# the numbers of select() and pselect6() in /proc/TID/syscall while a thread waits there
SELECT_CALLS = {"x86_64": ("23", "270"), "aarch64": ("72",)}

_RAN = []  # what _child ran (by reference: the same list when the worker runs it here)
_PEER = []  # the program's end of the socket, for _Trigger


def _child():
    _RAN.append(1)
    return "child"


def _fire():
    """Unpickled with a call's arguments: the call's cancel reaches the socket, then its
    SIGINT, while the worker is still reading the call (not yet running its code)."""
    _PEER[0].sendall(warm.encode(warm.CANCEL, 5))
    _thread.interrupt_main()
    return "trigger"


class _Trigger:
    def __reduce__(self):
        return (_fire, ())


def _never(x):
    return "ran"


@pytest.fixture
def worker():
    a, b = socket.socketpair()
    w = warm._Worker(a, cloudpickle, runner)
    old = signal.signal(signal.SIGINT, warm._on_sigint(w))
    try:
        yield w, b
    finally:
        signal.signal(signal.SIGINT, old)
        a.close()
        b.close()


def _in_select(tid):
    try:
        with open("/proc/self/task/%d/syscall" % tid) as f:
            return f.read().split()[0] in SELECT_CALLS[platform.machine()]
    except OSError:
        return False


@pytest.mark.skipif(platform.machine() not in SELECT_CALLS, reason="select's number here")
def test_a_sigint_while_a_call_waits_leaves_the_socket_to_the_wait(worker):
    """A call that waits (serve_while, in a task's ray.get) reads the program's frames
    itself: a SIGINT whose handler ran between its select() and its recv() used to read the
    frames first, and the recv then waited for ever (a task's ray.cancel of a call it made,
    run on top of it, hung: tests/system/test_ray_detached.py)."""
    w, peer = worker
    w.running, w.current = True, 1  # call 1 runs, and waits
    tid = threading.get_native_id()
    rfd, wfd = os.pipe()
    got = []

    def program():
        r = warm.FrameReader()
        got.extend(_recv_frames(peer, r, 1))  # BLOCKED: the worker takes calls now
        while not _in_select(tid):  # the event: the main thread waits in select()
            time.sleep(0.001)
        _thread.interrupt_main()  # handled once select() returns: before its recv()
        peer.sendall(warm.encode(warm.CALL, 2, warm.call_body(
            b"h" * 32, cloudpickle.dumps(_child), cloudpickle.dumps(((), {})))))
        peer.settimeout(60)
        try:
            got.extend(_recv_frames(peer, r, 2))  # call 2's value, then UNBLOCKED
        except (socket.timeout, AssertionError):
            peer.shutdown(socket.SHUT_RDWR)  # the worker hung: its recv ends
    t = threading.Thread(target=program)
    t.start()
    try:
        assert w.serve_while(lambda: bool(_RAN), rfd) is True
    finally:
        t.join()
        os.close(rfd)
        os.close(wfd)
    assert _RAN == [1]
    assert [(k, c) for k, c, _ in got] == [(warm.BLOCKED, 1), (warm.VALUE, 2),
                                           (warm.UNBLOCKED, 1)]
    assert cloudpickle.loads(got[1][2]) == "child"


def test_a_sigint_before_a_calls_code_runs_cancels_it_when_it_does(worker):
    """A cancel whose SIGINT lands while the worker reads the call (before its code runs)
    used to be lost, and the call ran to its end; now the call starts cancelled."""
    w, peer = worker
    _PEER[:] = [peer]
    w.run_one(5, warm.call_body(b"n" * 32, cloudpickle.dumps(_never),
                                cloudpickle.dumps(((_Trigger(),), {}))))
    ((kind, cid, _),) = _recv_frames(peer, warm.FrameReader(), 1)
    assert (kind, cid) == (warm.CANCELLED, 5)
    assert w.lines[-1].endswith("cancelled\n"), w.lines
