"""The warm DAG processor: `python3 -m _weir_airflow.warm_processor DAGS_FOLDER` imports
weir's `airflow` modules once, then forks one child per DAG file the server asks for, so a
file costs a fork and its own import instead of an interpreter's start and Airflow's modules.

The server writes one request a line on standard input:

    {"id": N, "file": PATH, "timeout_ms": T, "max_bytes": B, "drain_ms": D,
     "last_runs": {DAG_ID: {logical, start, end}},   (last_runs: a custom timetable's, may
                                                      be absent: timetable_runs.py)
     "variables": {"values": {KEY: TEXT}, "refused": [KEY]}}   (the parse's: parse_vars.py)

and reads one answer a line on standard output, in the order the children end:

    {"id": N, "status": S, "signal": G, "timed_out": bool, "too_much": bool, "out": TEXT}

A child does what `python3 -m _weir_airflow.processor PATH DAGS_FOLDER` does (its TEXT is
that process's output: the answer is its last line) in a session of its own, its fd 0 on
/dev/null and its fd 1 and 2 on a pipe to this process; it never sees this process's own
pipes.  This process keeps each child's limits as the server keeps a cold processor's: the
child's session is killed at T ms (`timed_out`) or past B bytes of output (`too_much`) and
at its exit (the file's forks); what is still in the pipe is read for at most D ms after the
exit.  The end of standard input ends this process and its children
(docs/internals/airflow.md, "The warm processor").
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import sys
import time
from typing import Any, Dict, List, Optional

# What DAG files import, and what the processor imports as it turns a DAG into weir's
# document, imported once here before any fork (a module missing here costs its import in
# every child, nothing else).
PRELOAD = ("airflow", "airflow.models", "airflow.models.baseoperator", "airflow.decorators",
           "airflow.operators.bash", "airflow.operators.python", "airflow.operators.empty",
           "airflow.utils.dates", "airflow.utils.task_group", "airflow.datasets",
           "airflow.sensors.base", "airflow.sensors.external_task", "airflow.sensors.filesystem",
           "airflow.providers.common.sql.sensors.sql", "airflow.providers.http.sensors.http",
           "airflow.timetables.datasets", "airflow.timetables.interval", "pendulum",
           "_weir_airflow.spec", "_weir_airflow.processor", "_weir_airflow.operators",
           "_weir_airflow.sensors", "_weir_airflow.mapping", "_weir_airflow.callbacks",
           "_weir_airflow.dag_callback", "_weir_airflow.group_mapping", "airflow.timetables.base",
           "_weir_airflow.datasets", "_weir_airflow.timetable_runs", "_weir_airflow.parse_vars",
           "ast", "inspect", "glob", "fnmatch", "zlib")
# How often children are polled for their exit where pidfds are not to be had.
POLL_S = 0.05


class Child:
    """One file's child process: its pipe, what it wrote, its limits and its end."""

    def __init__(self, req: Dict[str, Any], pid: int, fd: int) -> None:
        self.id = req["id"]
        self.pid = pid
        self.fd: Optional[int] = fd
        self.pidfd: Optional[int] = None
        self.max_bytes = int(req.get("max_bytes") or 8 << 20)
        self.drain_s = int(req.get("drain_ms") or 1000) / 1000.0
        timeout_s = int(req.get("timeout_ms") or 30000) / 1000.0
        self.deadline: float = time.monotonic() + timeout_s
        self.drain_until = 0.0
        self.out = bytearray()
        self.status = 0
        self.signal = 0
        self.exited = False
        self.timed_out = False
        self.too_much = False

    def kill(self) -> None:
        """Kills the child's session: the child and whatever the file forked."""
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except OSError:
            pass

    def answer(self) -> str:
        """The answer line for the server."""
        return json.dumps({"id": self.id, "status": self.status, "signal": self.signal,
                           "timed_out": self.timed_out, "too_much": self.too_much,
                           "out": self.out.decode("utf-8", "replace")}) + "\n"


def _child(path: str, folder: str, fd: int, last_runs: Any = None,
           variables: Any = None) -> None:
    """In the forked child: the processor's run on `path`, its output on `fd`; never returns.
    `last_runs`: the request's, the processor's WEIR_AIRFLOW_LAST_RUNS (timetable_runs.py);
    `variables`: the request's, the parse's variables (parse_vars.py: kept in this process,
    never in its environment)."""
    rc = 70
    try:
        if last_runs is not None:
            os.environ["WEIR_AIRFLOW_LAST_RUNS"] = json.dumps(last_runs)
        if variables is not None:
            from _weir_airflow import parse_vars

            parse_vars.give(variables)
        os.setsid()
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.closerange(3, 65536)  # the parent's pipes and selector: not the file's
        from _weir_airflow import processor

        # the tasks' warm root is this process's to start (main()): a child that started
        # one too would race it for the socket
        os.environ.pop("WEIR_AIRFLOW_WARM_DIR", None)
        sys.argv = [processor.__file__, path, folder]
        rc = processor.main(sys.argv)
    except BaseException:  # noqa: B902 - whatever happens, the child ends here
        pass
    os._exit(rc)


def _fork(req: Dict[str, Any], folder: str) -> Child:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        _child(str(req["file"]), folder, w, req.get("last_runs"), req.get("variables"))
    os.close(w)
    return Child(req, pid, r)


class Server:
    """The loop: requests in, children forked, answers out."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.sel = selectors.DefaultSelector()
        self.children: List[Child] = []
        self.pending = b""
        self.pidfds = hasattr(os, "pidfd_open")

    def start(self, line: bytes) -> None:
        try:
            req = json.loads(line)
            if not isinstance(req, dict) or "id" not in req or "file" not in req:
                raise ValueError("expected {id, file, ...}")
        except ValueError as exc:
            # not the line: a request may hold variables' values
            print("weir warm processor: a bad request of %d bytes: %s" % (len(line), exc),
                  file=sys.stderr)
            return
        c = _fork(req, self.folder)
        self.children.append(c)
        os.set_blocking(c.fd, False)  # type: ignore[arg-type]
        self.sel.register(c.fd, selectors.EVENT_READ, ("out", c))  # type: ignore[arg-type]
        if self.pidfds:
            try:
                c.pidfd = os.pidfd_open(c.pid)
                self.sel.register(c.pidfd, selectors.EVENT_READ, ("exit", c))
            except OSError:
                self.pidfds = False

    def close_pipe(self, c: Child) -> None:
        if c.fd is not None:
            self.sel.unregister(c.fd)
            os.close(c.fd)
            c.fd = None

    def read(self, c: Child) -> None:
        try:
            chunk = os.read(c.fd, 65536)  # type: ignore[arg-type]
        except BlockingIOError:
            return
        if not chunk:
            self.close_pipe(c)
            return
        if c.too_much:
            return
        c.out += chunk
        if len(c.out) > c.max_bytes:
            c.too_much = True
            c.out = bytearray()
            c.kill()

    def reap(self, c: Child) -> bool:
        """Whether the child has exited (its status taken)."""
        try:
            pid, status = os.waitpid(c.pid, os.WNOHANG)
        except ChildProcessError:
            pid, status = c.pid, 0
        if pid == 0:
            return False
        c.exited = True
        if os.WIFSIGNALED(status):
            c.signal = os.WTERMSIG(status)
        else:
            c.status = os.waitstatus_to_exitcode(status)
        c.kill()  # what the file left behind in its session
        c.drain_until = time.monotonic() + c.drain_s
        if c.pidfd is not None:
            self.sel.unregister(c.pidfd)
            os.close(c.pidfd)
            c.pidfd = None
        return True

    def timeout(self) -> Optional[float]:
        if not self.children:
            return None
        now = time.monotonic()
        ends: List[float] = [c.drain_until if c.exited else c.deadline for c in self.children]
        left: float = max(0.0, min(ends) - now)
        return min(left, POLL_S) if not self.pidfds else left

    def settle(self) -> None:
        """Deadlines kept, ended children answered."""
        now = time.monotonic()
        for c in list(self.children):
            if not c.exited and (not self.pidfds or c.pidfd is None):
                self.reap(c)
            if not c.exited and now >= c.deadline and not c.timed_out:
                c.timed_out = True
                c.kill()
            if c.exited and c.fd is not None and now >= c.drain_until:
                self.close_pipe(c)  # its forks still hold the pipe: what came is the answer
            if c.exited and c.fd is None:
                self.children.remove(c)
                sys.stdout.write(c.answer())
                sys.stdout.flush()

    def run(self) -> int:
        os.set_blocking(0, False)
        self.sel.register(0, selectors.EVENT_READ, ("in", None))
        while True:
            for key, _ in self.sel.select(self.timeout()):
                kind, c = key.data
                if kind == "in":
                    try:
                        data = os.read(0, 65536)
                    except BlockingIOError:
                        continue
                    if not data:
                        for child in self.children:
                            child.kill()
                        return 0
                    self.pending += data
                    *lines, self.pending = self.pending.split(b"\n")
                    for line in lines:
                        if line.strip():
                            self.start(line)
                elif kind == "out":
                    self.read(c)
                elif not c.exited:
                    self.reap(c)
            self.settle()


def main(argv: List[str]) -> int:
    """Entry point: preloads, then serves until standard input ends."""
    if len(argv) != 2:
        print("usage: python3 -m _weir_airflow.warm_processor DAGS_FOLDER", file=sys.stderr)
        return 2
    if os.environ.get("WEIR_AIRFLOW_WARM_DIR"):
        # the root of the tasks' warm interpreters, watching the server (our parent) as a
        # cold processor's would, forked before the preload as from a processor's start;
        # started here only (the children do not: roots started at once race for the
        # socket and leave, and every task then runs cold)
        from _weir_airflow import zygote

        zygote.start(argv[1])
    for name in PRELOAD:
        try:
            __import__(name)
        except Exception as exc:  # noqa: B902 - a module that fails here fails in the file too
            print("weir warm processor: %s: %s" % (name, exc), file=sys.stderr)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # the server went away: so do we
    return Server(argv[1]).run()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
