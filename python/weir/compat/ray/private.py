"""A private weir server for a program that found none: what Ray does when ray.init()
starts a cluster on the laptop.

ray.init() with no address, no $WEIR_SERVER and nothing answering at the default address
starts `weir server` in a temporary home on a free loopback port, with the resources
ray.init was given (num_cpus, num_gpus; else the machine's), tasks run as this program's
user; the program's calls go there.  At ray.shutdown() or the program's exit the calls
still running are killed, the server is stopped, its agent leaves (idle at once) and the
home is removed.
"""

import atexit
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, List, Optional

from ...remote.ray_names import whole_cpus, whole_gpus

PACKAGE_PARENT = Path(__file__).resolve().parents[3]


def find_weir() -> Optional[str]:
    """The `weir` program: $WEIR_BIN (weir run sets it), else `weir` on PATH, else the
    build tree's (beside this package's folder)."""
    cands: List[Optional[str]] = [os.environ.get("WEIR_BIN"), shutil.which("weir")]
    cands += [str(PACKAGE_PARENT.parent / "build" / "weir"), str(PACKAGE_PARENT.parent / "weir")]
    for c in cands:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def config_text(num_cpus: Any = None, num_gpus: Any = None) -> str:
    """The private server's configuration: its resources, and tasks run as this user."""
    lines = []
    if num_cpus is not None or num_gpus is not None:
        lines.append("resources:")
        if num_cpus is not None:
            lines.append("  vcores: %d" % whole_cpus(num_cpus, "ray.init: num_cpus"))
        if num_gpus is not None:
            lines.append("  gpus: %d" % whole_gpus(num_gpus, "ray.init: num_gpus"))
    lines.append("task_user: %s" % pwd.getpwuid(os.geteuid()).pw_name)
    lines.append("kill_grace_seconds: 2")
    return "\n".join(lines) + "\n"


class PrivateServer:
    """One `weir server` this program started; stop() ends it and removes its home."""

    def __init__(self, weir: str, num_cpus: Any = None, num_gpus: Any = None,
                 timeout: float = 30) -> None:
        self.home = Path(tempfile.mkdtemp(prefix="weir-ray-"))
        self.url = "http://127.0.0.1:%d" % _free_port()
        cfg = self.home / "private.yaml"
        cfg.write_text(config_text(num_cpus, num_gpus))
        self.log = self.home / "server.log"
        env = dict(os.environ, WEIR_AGENT_IDLE_S="0")  # its agent leaves with it
        for k in ("WEIR_SERVER", "WEIR_TOKEN", "WEIR_HOME"):
            env.pop(k, None)
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(
                [weir, "server", "--home", str(self.home / "home"), "--listen",
                 self.url[len("http://"):], "--config", str(cfg)],
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env,
                start_new_session=True)
        self._before_stop: Optional[Callable[[], None]] = None
        atexit.register(self.stop)
        self._wait_healthy(timeout)

    def _wait_healthy(self, timeout: float) -> None:
        from ...client import Client
        from ...errors import WeirError
        deadline = time.monotonic() + timeout
        probe = Client(self.url, "-", str(self.home / "home"), timeout=2)
        while True:
            if self.proc.poll() is not None:
                break
            try:
                probe.health()
                if (self.home / "home" / "token").exists():
                    return
            except WeirError:
                pass
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
        tail = self.log.read_text(errors="replace")[-2000:]
        self.stop()
        raise ConnectionError("ray.init: the private weir server did not start:\n" + tail)

    @property
    def weir_home(self) -> str:
        return str(self.home / "home")

    def on_stop(self, fn: Callable[[], None]) -> None:
        """fn() runs first at stop(): the calls still running are killed through it."""
        self._before_stop = fn

    def stop(self) -> None:
        """Kills what runs, stops the server (SIGTERM, then SIGKILL) and removes the home."""
        if self.proc is None:
            return
        if self._before_stop is not None:
            try:
                self._before_stop()
            except Exception:
                pass
        proc, self.proc = self.proc, None  # type: ignore[assignment]
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        atexit.unregister(self.stop)
        shutil.rmtree(self.home, ignore_errors=True)
