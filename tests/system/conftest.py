"""System test fixtures: a real `weir server` on a free loopback port in a temporary home.

Everything here drives the real binary ($WEIR_BIN, default ./weir at the repository root)
through its HTTP API and its CLI; nothing is mocked.  Every wait has a finite timeout so that
no test can hang, and no test asserts how fast something was.

At teardown every server started by a test is stopped (SIGTERM, then SIGKILL) and every process
left behind by its jobs is killed: we find them by the marker put in the server's environment
(inherited by launchers and tasks) and by a working directory under the server's home.
"""

import json
import os
import pwd
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
WEIR_BIN = os.environ.get("WEIR_BIN") or str(REPO / "weir")
EXAMPLES = REPO / "examples"
FINAL_STATES = ("succeeded", "failed", "killed")
MARK_VAR = "WEIR_SYSTEST_MARK"
# The tests run as root and write into pytest's folders (0700, root's): their servers run
# tasks as the server's own user, the documented shared mode (docs/security.md), unless a
# test asks for the default (Server.shared_task_user = False: tests/system/test_task_user.py).
SERVER_USER = pwd.getpwuid(os.geteuid()).pw_name


def with_task_user(text, user=SERVER_USER):
    """The configuration's text with `task_user: USER` added when it names none."""
    text = text or ""
    if re.search(r"^task_user\s*:", text, re.M):
        return text
    if text.strip():
        text = text.rstrip("\n") + "\n"
    return text + "task_user: %s\n" % user


def _python_with(module):
    """An interpreter that can import `module`: this one, else Debian's (python3-torch lives there)."""
    for cand in (sys.executable, "/usr/bin/python3", "python3"):
        try:
            r = subprocess.run([cand, "-c", "import " + module], capture_output=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if r.returncode == 0:
            return cand
    return None


# The interpreter the tasks run: absolute, so that it does not depend on the task's PATH.
TASK_PY = sys.executable


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: takes more than a few seconds (real training)")


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _proc_info(pid):
    """(state, cmdline, environ, cwd) of a process, or None if it is gone or unreadable."""
    base = "/proc/%d" % pid
    try:
        with open(base + "/stat", "rb") as f:
            stat = f.read().decode(errors="replace")
        state = stat[stat.rindex(")") + 2:].split()[0]
        with open(base + "/cmdline", "rb") as f:
            cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
        try:
            with open(base + "/environ", "rb") as f:
                environ = f.read().decode(errors="replace")
        except OSError:
            environ = ""
        try:
            cwd = os.readlink(base + "/cwd")
        except OSError:
            cwd = ""
    except (OSError, ValueError):
        return None
    return state, cmdline, environ, cwd


def find_procs(marker=None, cwd_prefix=None):
    """Live (not zombie) processes whose command line or environment holds `marker`, or
    whose working directory is under `cwd_prefix`.  Returns {pid: cmdline}."""
    found = {}
    me = os.getpid()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        pid = int(name)
        if pid == me:
            continue
        info = _proc_info(pid)
        if info is None:
            continue
        state, cmdline, environ, cwd = info
        if state in ("Z", "X"):
            continue
        hit = False
        if marker and (marker in cmdline or marker in environ):
            hit = True
        if cwd_prefix and (cwd == cwd_prefix or cwd.startswith(cwd_prefix.rstrip("/") + "/")):
            hit = True
        if hit:
            found[pid] = cmdline
    return found


def wait_no_procs(marker=None, cwd_prefix=None, timeout=30):
    """Waits until no process matches; returns what still matches at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        left = find_procs(marker, cwd_prefix)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.2)


def wait_for(pred, timeout, what, interval=0.2):
    """Polls pred() until it returns something truthy; fails the test naming `what`."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = pred()
        if last:
            return last
        time.sleep(interval)
    pytest.fail("timed out after %ss waiting for %s (last: %r)" % (timeout, what, last))


def kill_pids(pids):
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


class Server:
    """One `weir server` process on a home directory and a port."""

    def __init__(self, home, port, config=None, extra_env=None, name="server"):
        self.home = Path(home)
        self.port = port
        self.config = config
        self.extra_env = extra_env or {}
        self.name = name
        self.proc = None
        self.mark = "weir-systest-" + uuid.uuid4().hex
        self.url = "http://127.0.0.1:%d" % port
        self.ssl_context = None  # an https:// url's verification (tests/system/test_tls.py)
        self.log_path = self.home.parent / ("%s-%d.log" % (name, port))
        self._log = None
        self._token = None
        self.starts = 0
        self.shared_task_user = True

    # -- process ---------------------------------------------------------------------------
    def start(self, listen=True, wait=True, timeout=30):
        self.home.mkdir(parents=True, exist_ok=True)
        args = [WEIR_BIN, "server", "--home", str(self.home)]
        if listen:
            args += ["--listen", "127.0.0.1:%d" % self.port]
        config = self.config
        if self.shared_task_user:
            if config is None and (self.home / "weir.yaml").exists():
                config = (self.home / "weir.yaml").read_text()
            config = with_task_user(config)
        if config is not None:
            cfg = self.home.parent / ("%s-config.yaml" % self.name)
            cfg.write_text(config)
            args += ["--config", str(cfg)]
        env = dict(os.environ)
        env.pop("WEIR_TOKEN", None)
        env.pop("WEIR_SERVER", None)
        env[MARK_VAR] = self.mark
        env.update(self.extra_env)
        self._log = open(self.log_path, "ab")
        self._log.write(b"=== start %d: %s\n" % (self.starts, " ".join(args).encode()))
        self._log.flush()
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=self._log,
                                     stderr=subprocess.STDOUT, env=env, start_new_session=True)
        self.starts += 1
        if wait:
            self.wait_healthy(timeout)
        return self

    def wait_healthy(self, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail("weir server exited with %s before it was healthy:\n%s"
                            % (self.proc.returncode, self.log_text()))
            try:
                status, body = self.api("GET", "/api/v1/health", token=False, timeout=2)
                if status == 200:
                    return body
            except OSError:
                pass
            time.sleep(0.1)
        pytest.fail("weir server not healthy after %ss:\n%s" % (timeout, self.log_text()))

    def terminate(self, timeout=15):
        """SIGTERM; returns the exit status (None if it had to be killed)."""
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
            return None

    def kill9(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def log_text(self):
        try:
            return self.log_path.read_text(errors="replace")[-8000:]
        except OSError:
            return ""

    def leftovers(self):
        return find_procs(self.mark, str(self.home))

    def cleanup(self):
        self.terminate()
        left = self.leftovers()
        kill_pids(left)
        if self._log:
            self._log.close()
        return left

    # -- token and HTTP ----------------------------------------------------------------------
    @property
    def token(self):
        if self._token is None:
            self._token = (self.home / "token").read_text().strip()
        return self._token

    def request(self, method, path, body=None, token=True, timeout=30, headers=None,
                raw_body=None):
        """(status, headers, bytes).  token: True (the server's), False (none) or a string."""
        data = None
        hdrs = dict(headers or {})
        if raw_body is not None:
            data = raw_body if isinstance(raw_body, bytes) else raw_body.encode()
            hdrs.setdefault("Content-Type", "application/json")
        elif body is not None:
            data = json.dumps(body).encode()
            hdrs["Content-Type"] = "application/json"
        if token is True:
            hdrs["Authorization"] = "Bearer " + self.token
        elif token:
            hdrs["Authorization"] = "Bearer " + token
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=hdrs)
        try:
            with urllib.request.urlopen(req, timeout=timeout, context=self.ssl_context) as r:
                return r.status, dict(r.headers), r.read()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read()

    def api(self, method, path, body=None, **kw):
        """(status, parsed JSON or text)."""
        status, _, data = self.request(method, path, body, **kw)
        try:
            return status, json.loads(data.decode() or "null")
        except ValueError:
            return status, data.decode(errors="replace")

    # -- jobs --------------------------------------------------------------------------------
    def submit(self, spec):
        status, job = self.api("POST", "/api/v1/jobs", spec)
        assert status == 201, "POST /api/v1/jobs -> %s %r\n%s" % (status, job, self.log_text())
        return job

    def job(self, job_id):
        status, job = self.api("GET", "/api/v1/jobs/%s" % job_id)
        assert status == 200, "GET job %s -> %s %r" % (job_id, status, job)
        return job

    def tasks(self, job_id, attempt=None):
        q = "" if attempt is None else "?attempt=%s" % attempt
        status, body = self.api("GET", "/api/v1/jobs/%s/tasks%s" % (job_id, q))
        assert status == 200, "GET tasks of %s -> %s %r" % (job_id, status, body)
        return body["tasks"]

    def events(self, job_id):
        status, body = self.api("GET", "/api/v1/jobs/%s/events" % job_id)
        assert status == 200, "GET events of %s -> %s %r" % (job_id, status, body)
        return body["events"]

    def wait_job(self, job_id, timeout=120, states=FINAL_STATES):
        deadline = time.monotonic() + timeout
        job = None
        while time.monotonic() < deadline:
            try:
                job = self.job(job_id)
            except OSError:
                job = None  # a server being restarted by the test
            if job and job["state"] in states:
                return job
            time.sleep(0.2)
        pytest.fail("job %s not in %s after %ss; last: %s\nserver log:\n%s"
                    % (job_id, states, timeout, json.dumps(job, indent=1), self.log_text()))

    def wait_tasks_ended(self, job_id, timeout=30):
        """The current attempt's tasks, once every one of them has an end time."""
        def ended():
            tasks = self.job(job_id)["tasks"]
            return tasks if tasks and all(t.get("ended_at") for t in tasks) else None
        return wait_for(ended, timeout, "every task of job %s to end" % job_id)

    def wait_running(self, job_id, timeout=60, tasks=None):
        """Waits until the job and all its tasks (or `tasks` of them) are running."""
        def ready():
            job = self.job(job_id)
            if job["state"] in FINAL_STATES:
                pytest.fail("job %s ended while waiting for it to run: %s"
                            % (job_id, json.dumps(job, indent=1)))
            running = [t for t in job.get("tasks", []) if t["state"] == "running"]
            want = len(job.get("tasks", [])) if tasks is None else tasks
            return job if job["state"] == "running" and want and len(running) >= want else None
        return wait_for(ready, timeout, "job %s running" % job_id)

    def log(self, job_id, role="worker", index=0, attempt=None, offset=None):
        q = []
        if attempt is not None:
            q.append("attempt=%s" % attempt)
        if offset is not None:
            q.append("offset=%s" % offset)
        path = "/api/v1/jobs/%s/tasks/%s/%s/logs" % (job_id, role, index)
        if q:
            path += "?" + "&".join(q)
        status, _, data = self.request("GET", path)
        assert status == 200, "GET %s -> %s %r" % (path, status, data[:500])
        return data.decode(errors="replace")

    # -- CLI ---------------------------------------------------------------------------------
    def cli_env(self, extra=None):
        env = dict(os.environ)
        env["WEIR_SERVER"] = self.url
        env["WEIR_TOKEN"] = self.token
        env["WEIR_HOME"] = str(self.home)
        env.update(extra or {})
        return env

    def cli(self, *args, timeout=180, env=None, cwd=None):
        r = subprocess.run([WEIR_BIN] + [str(a) for a in args], capture_output=True,
                           text=True, env=self.cli_env(env), timeout=timeout, cwd=cwd,
                           stdin=subprocess.DEVNULL)
        return r


def cli_describe(r):
    return "exit %s\n--- stdout\n%s\n--- stderr\n%s" % (r.returncode, r.stdout[-4000:],
                                                        r.stderr[-4000:])


DEFAULT_CONFIG = """\
# Declared resources, so that the tests do not depend on this machine's size.
resources:
  vcores: 16
  memory: 16g
  gpus: 3
kill_grace_seconds: 2
"""


@pytest.fixture
def make_server(tmp_path):
    """Factory: make_server(config=DEFAULT_CONFIG, home=None, port=None, start=True)."""
    if not os.access(WEIR_BIN, os.X_OK):
        pytest.fail("no weir binary at %s (build it with make, or set WEIR_BIN)" % WEIR_BIN)
    servers = []

    def make(config=DEFAULT_CONFIG, home=None, port=None, start=True, name=None):
        name = name or "server%d" % len(servers)
        srv = Server(home or (tmp_path / (name + "-home")), port or free_port(), config,
                     name=name)
        servers.append(srv)
        if start:
            srv.start()
        return srv

    yield make
    leftovers = {}
    for srv in servers:
        leftovers.update(srv.cleanup())
    if leftovers:
        print("killed processes left behind: %r" % leftovers)
    for srv in servers:
        print("--- %s log (tail):\n%s" % (srv.name, srv.log_text()))


@pytest.fixture
def server(make_server):
    return make_server()


def spec(roles, **job):
    """A native job spec (the JSON body of POST /api/v1/jobs).  roles: {name: {...}};
    each role gets memory 256m and 1 vcore unless it says otherwise."""
    out = {"name": job.pop("name", "systest"), "framework": job.pop("framework", "none")}
    out["roles"] = {}
    for name, role in roles.items():
        r = {"instances": 1, "memory": "256m", "vcores": 1}
        r.update(role)
        out["roles"][name] = r
    out.update(job)
    return out


def write_venv_zip(path, marker_text="from-the-venv", prefix=""):
    """A small venv.zip whose bin/python runs TASK_PY (exporting VENV_WRAPPER=1 first) and
    which holds marker.txt.  prefix: a top-level folder inside the zip (TonY users zip
    `venv/`)."""
    import zipfile
    script = "#!/bin/sh\nVENV_WRAPPER=1\nexport VENV_WRAPPER\nexec %s \"$@\"\n" % TASK_PY
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        info = zipfile.ZipInfo(prefix + "bin/python")
        info.external_attr = (0o100755 << 16)
        info.create_system = 3
        z.writestr(info, script)
        info = zipfile.ZipInfo(prefix + "marker.txt")
        info.external_attr = (0o100644 << 16)
        info.create_system = 3
        z.writestr(info, marker_text + "\n")
    return path
