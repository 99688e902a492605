"""Where warm workers reach their program: its Unix socket, or a TCP port for workers on
other nodes (Slurm) (docs/internals/calls.md, "The TCP channel").

The Unix socket lives in the program's 0700 folder beside the key file, so only a process
of the program's user on the program's machine reaches it.  A worker that Slurm starts on
another node cannot: for those the program also listens on a TCP port, and the worker job
is given the address (WEIR_WARM_ADDR) and the key (WEIR_WARM_KEY, hex), the key listed in
the job's `mask` so that the job's spec, as the API and the UI show it, and the task's log
have `***` in its place; the worker takes it out of its environment at once.  A connection
that does not send the key in its first frame is closed, as on the Unix socket.

Which: $WEIR_WARM_CHANNEL: `unix`, `tcp`, or `auto` (the default): TCP when the server sends
its jobs to Slurm (its `executor`), else the Unix socket.  Where the port is bound:
$WEIR_WARM_LISTEN, `HOST` or `HOST:PORT` (the address the Slurm nodes reach this machine
at); by default every interface, announced as this machine's name.
"""

import os
import socket
from typing import Any, Dict, List, Optional, Tuple

from ..errors import ServerUnreachable, WeirError
from .patience import patiently

# the most bytes a connection may send before its first frame is complete (the hello is
# about 60): a peer that does not know the key cannot make the program buffer more
HELLO_MAX = 4096


def mode(client: Any) -> str:
    """"unix" or "tcp": $WEIR_WARM_CHANNEL, or (auto) TCP when the server's executor is
    slurm.  A server that does not say (an older one, a token that may not read its
    configuration) counts as local."""
    want = os.environ.get("WEIR_WARM_CHANNEL", "auto").strip().lower() or "auto"
    if want not in ("auto", "unix", "tcp"):
        raise WeirError("WEIR_WARM_CHANNEL: expected unix, tcp or auto, got %r" % want)
    if want != "auto":
        return want
    try:
        sec: Dict[str, Any] = patiently(
            "the server's configuration",
            lambda: dict(client.request("GET", "/config", params={"section": "core"})))
    except ServerUnreachable:
        raise
    except WeirError:
        return "unix"
    opts = {o["key"]: o["value"] for s in sec.get("sections", []) for o in s["options"]}
    return "tcp" if str(opts.get("executor", "local")) == "slurm" else "unix"


def listen() -> Tuple[socket.socket, str, int]:
    """A TCP listener per $WEIR_WARM_LISTEN: (the socket, the host workers are told, the
    port)."""
    raw = os.environ.get("WEIR_WARM_LISTEN", "").strip()
    host, port = raw, 0
    if raw.count(":") == 1:
        host, p = raw.split(":")
        if not p.isdigit() or int(p) > 65535:
            raise WeirError("WEIR_WARM_LISTEN: expected HOST or HOST:PORT, got %r" % raw)
        port = int(p)
    elif raw.startswith("["):  # [v6] or [v6]:port
        host, _, p = raw[1:].partition("]")
        if p and (not p.startswith(":") or not p[1:].isdigit() or int(p[1:]) > 65535):
            raise WeirError("WEIR_WARM_LISTEN: expected [HOST] or [HOST]:PORT, got %r" % raw)
        port = int(p[1:]) if p else 0
    try:
        infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
        family, _, _, _, addr = infos[0]
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(addr)
        sock.listen(64)
    except OSError as e:
        raise WeirError("warm workers' TCP channel: cannot listen on %s: %s (set "
                        "WEIR_WARM_LISTEN to HOST or HOST:PORT of this machine that the "
                        "nodes reach)" % (raw or "every interface", e)) from e
    told = host or socket.getfqdn()
    return sock, told, sock.getsockname()[1]


def tune(sock: socket.socket) -> None:
    """A TCP connection's options: no Nagle delay (a call is one small frame each way),
    keep-alive (a peer whose machine vanished is noticed)."""
    if sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)


def worker_env(host: str, port: int, key: bytes) -> Tuple[Dict[str, str], List[str]]:
    """What a worker job needs to reach the program over TCP: (its environment, the job's
    `mask`: the key, so that no view of the job nor its log shows it)."""
    hexkey = key.hex()
    addr = "[%s]:%d" % (host, port) if ":" in host else "%s:%d" % (host, port)
    return {"WEIR_WARM_ADDR": addr, "WEIR_WARM_KEY": hexkey}, [hexkey]


def is_remote(sock: Optional[socket.socket]) -> bool:
    """Whether a worker's connection came over TCP (its pid is then another node's: it is
    signalled through its job, never with kill())."""
    return sock is not None and sock.family != socket.AF_UNIX
