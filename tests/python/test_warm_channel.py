"""The warm workers' TCP channel (weir/remote/channel.py, weir/worker/warm.py's
tcp_channel and connect): what a worker job is given (the key in its mask), what the worker
takes out of its environment, bad input refused naming it, and a listener bound where
$WEIR_WARM_LISTEN says, reached by connect() with the key."""

import os
import sys
import types

import pytest

from weir.errors import WeirError
from weir.remote import channel
from weir.worker import warm


def test_a_worker_job_gets_the_address_and_the_key_listed_in_its_mask():
    key = bytes(range(32))
    env, mask = channel.worker_env("node0.example", 4711, key)
    assert env == {"WEIR_WARM_ADDR": "node0.example:4711", "WEIR_WARM_KEY": key.hex()}
    assert mask == [key.hex()]
    env6, _ = channel.worker_env("::1", 9, key)
    assert env6["WEIR_WARM_ADDR"] == "[::1]:9"


def test_the_worker_takes_the_key_out_of_its_environment(monkeypatch):
    key = os.urandom(32)
    monkeypatch.setenv("WEIR_WARM_ADDR", "[::1]:9")
    monkeypatch.setenv("WEIR_WARM_KEY", key.hex())
    assert warm.tcp_channel("/f") == ("/f", "::1", 9, key)
    assert "WEIR_WARM_KEY" not in os.environ and "WEIR_WARM_ADDR" not in os.environ
    assert warm.tcp_channel("/f") is None  # not given: the Unix socket


@pytest.mark.parametrize("addr,key", [("nohost", "00" * 32), ("h:x", "00" * 32),
                                      ("h:1", "00" * 31), ("h:1", "zz" * 32)])
def test_a_bad_address_or_key_is_refused_naming_them(monkeypatch, addr, key):
    monkeypatch.setenv("WEIR_WARM_ADDR", addr)
    monkeypatch.setenv("WEIR_WARM_KEY", key)
    with pytest.raises(ValueError, match="WEIR_WARM_ADDR/WEIR_WARM_KEY"):
        warm.tcp_channel("/f")


def test_the_channel_asked_is_checked(monkeypatch):
    monkeypatch.setenv("WEIR_WARM_CHANNEL", "udp")
    with pytest.raises(WeirError, match="WEIR_WARM_CHANNEL: expected unix, tcp or auto"):
        channel.mode(None)
    monkeypatch.setenv("WEIR_WARM_CHANNEL", "TCP")
    assert channel.mode(None) == "tcp"
    monkeypatch.setenv("WEIR_WARM_LISTEN", "127.0.0.1:notaport")
    with pytest.raises(WeirError, match="WEIR_WARM_LISTEN: expected HOST or HOST:PORT"):
        channel.listen()
    monkeypatch.setenv("WEIR_WARM_LISTEN", "[::1]x")
    with pytest.raises(WeirError, match=r"WEIR_WARM_LISTEN: expected \[HOST\]"):
        channel.listen()


def test_connect_reaches_a_listener_over_tcp_with_the_key(monkeypatch):
    monkeypatch.setenv("WEIR_WARM_LISTEN", "127.0.0.1")
    ls, host, port = channel.listen()
    key = os.urandom(32)
    cur = types.ModuleType(warm.CURRENT_MODULE)
    cur.channel = ("/program", host, port, key)
    monkeypatch.setitem(sys.modules, warm.CURRENT_MODULE, cur)
    try:
        assert host == "127.0.0.1"
        sock, got = warm.connect("/program")
        peer, _ = ls.accept()
        assert got == key and channel.is_remote(peer)
        sock.sendall(warm.encode(warm.HELLO, 0, warm.hello_body(got, 7, "3")))
        frames = warm.FrameReader().feed(peer.recv(4096))
        assert warm.parse_hello(frames[0][2]) == (key, 7, "3")
        sock.close()
        peer.close()
    finally:
        ls.close()
