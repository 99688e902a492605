"""Shared helpers of the benchmarks: a real `weir server` in a temporary home on a free port,
its API, and timing.  Standard library only; not a test (nothing here asserts a speed)."""

import datetime
import json
import os
import pwd
import re
import shutil
import signal
import socket
import statistics
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WEIR_BIN = os.environ.get("WEIR_BIN") or str(REPO / "weir")
FINAL = ("succeeded", "failed", "killed")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def parse_time(text):
    """Seconds since the epoch of an API timestamp ("2026-11-30T12:00:00.123Z")."""
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def ms(x):
    return "%.1f ms" % (x * 1000.0)


class BenchServer:
    """A weir server in a temporary home.  `config`: its weir.yaml text (default: the given
    resources); `dags`: {dag_id: DAG file text} for a DAG folder, all loaded before this
    returns; `prefix`: the temporary folder's name.  The server runs in that folder (the
    Slurm backend's sbatch and squeue write there)."""

    def __init__(self, vcores=64, memory="32g", gpus=0, config=None, dags=None,
                 prefix="weir-bench."):
        self.dir = Path(tempfile.mkdtemp(prefix=prefix))
        self.home = self.dir / "home"
        self.home.mkdir()
        self.port = free_port()
        self.url = "http://127.0.0.1:%d" % self.port
        cfg = self.dir / "config.yaml"
        text = (config if config is not None else
                "resources:\n  vcores: %d\n  memory: %s\n  gpus: %d\n"
                "kill_grace_seconds: 1\n" % (vcores, memory, gpus))
        # tasks as the server's own user (docs/security.md: the shared mode): the home is in
        # a folder of mkdtemp's (0700) that no other user could enter, and tasks write beside
        if not re.search(r"^task_user\s*:", text, re.M):
            text = text.rstrip("\n") + "\ntask_user: %s\n" % pwd.getpwuid(os.geteuid()).pw_name
        cfg.write_text(text)
        args = [WEIR_BIN, "server", "--listen", "127.0.0.1:%d" % self.port, "--home",
                str(self.home), "--config", str(cfg)]
        if dags is not None:
            self.dags = self.home / "dags"
            self.dags.mkdir()
            for dag_id, text in dags.items():
                (self.dags / (dag_id + ".yaml")).write_text(text)
            args += ["--dags", str(self.dags)]
        self.log = open(self.dir / "server.log", "wb")
        self.token = None
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True,
                                     cwd=self.dir)
        deadline = time.monotonic() + 30
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError("weir server exited: " + (self.dir / "server.log").read_text())
            try:
                if self.api("GET", "/api/v1/health", auth=False)[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("weir server did not come up")
            time.sleep(0.05)
        self.token = (self.home / "token").read_text().strip()
        self.env = dict(os.environ, WEIR_SERVER=self.url, WEIR_TOKEN=self.token,
                        WEIR_HOME=str(self.home))
        for dag_id in dags or {}:
            while self.api("GET", "/api/v1/dags/%s" % dag_id)[0] != 200:
                if time.monotonic() > deadline:
                    raise RuntimeError("DAG %s not loaded" % dag_id)
                time.sleep(0.05)

    def api(self, method, path, body=None, auth=True, timeout=60):
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json"} if data else {}
        if auth:
            headers["Authorization"] = "Bearer " + self.token
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, json.loads(r.read() or b"null")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"null")

    def submit(self, spec):
        status, job = self.api("POST", "/api/v1/jobs", spec)
        if status != 201:
            raise RuntimeError("submit: %s %r" % (status, job))
        return job

    def job(self, job_id):
        return self.api("GET", "/api/v1/jobs/%s" % job_id)[1]

    def wait(self, job_id, states=FINAL, timeout=300, interval=0.01):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            job = self.job(job_id)
            if job["state"] in states:
                return job
            time.sleep(interval)
        raise RuntimeError("job %s not in %s after %ss" % (job_id, states, timeout))

    def cpu_s(self):
        """The server process's CPU time so far (user + system), in seconds."""
        with open("/proc/%d/stat" % self.proc.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss_kb(self):
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.log.close()
        # kill whatever a job left behind (its working directory is under our home)
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    if os.readlink("/proc/%s/cwd" % pid).startswith(str(self.home)):
                        os.kill(int(pid), signal.SIGKILL)
                except OSError:
                    pass
        shutil.rmtree(self.dir, ignore_errors=True)


def job_spec(n_tasks, command, name="bench", **extra):
    spec = {"name": name, "framework": "none",
            "roles": {"worker": {"instances": n_tasks, "memory": "64m", "vcores": 1,
                                 "command": command}}}
    spec.update(extra)
    return spec
