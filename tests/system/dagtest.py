"""Workflow (DAG) test helpers: a real `weir server` whose DAG folder is HOME/dags, the DAG
files of tests/system/dags/ installed into it, and the Airflow REST calls the tests make.

Imported by the test_dags_*.py files (conftest.py is shared, so the fixture lives here).
Every wait has a finite timeout; nothing is mocked.
"""

import hashlib
import json
import os
import time
from pathlib import Path

import pytest

from conftest import DEFAULT_CONFIG, wait_for

DAGS_SRC = Path(__file__).resolve().parent / "dags"
RUN_FINAL = ("success", "failed")

# A user for Basic auth, with the password stored as the server's configuration wants it:
# "pbkdf2-sha256$ITER$SALT_HEX$HASH_HEX" (src/api/basic_auth.h).
BASIC_USER = "ops"
BASIC_PASSWORD = "s3cret pass:word"


def password_hash(password, iterations=1000, salt=b"weir-systest-salt"):
    key = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations, 32)
    return "pbkdf2-sha256$%d$%s$%s" % (iterations, salt.hex(), key.hex())


def dag_config(pools=None, users=False):
    text = DEFAULT_CONFIG
    if pools:
        text += "pools:\n" + "".join("  %s: %d\n" % kv for kv in pools.items())
    if users:
        text += ("users:\n  - name: %s\n    password_hash: \"%s\"\n"
                 % (BASIC_USER, password_hash(BASIC_PASSWORD)))
    return text


class Dags:
    """One server with a DAG folder, and a folder `side` where tasks leave their traces."""

    def __init__(self, srv, tmp):
        self.srv = srv
        self.dir = srv.home / "dags"
        self.side = Path(tmp) / ("side-%d" % srv.port)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.side.mkdir(parents=True, exist_ok=True)

    # -- files ---------------------------------------------------------------------------
    def text(self, name, **subs):
        """tests/system/dags/NAME with @SIDE@ and @KEY@ replaced."""
        text = (DAGS_SRC / name).read_text()
        subs.setdefault("SIDE", str(self.side))
        for k, v in subs.items():
            text = text.replace("@%s@" % k, str(v))
        return text

    def write(self, name, text):
        """Writes a DAG file whole (a rename), so the server never reads half of it."""
        tmp = self.dir / (".%s.tmp" % name)
        tmp.write_text(text)
        os.replace(tmp, self.dir / name)

    def install(self, name, **subs):
        self.write(name, self.text(name, **subs))

    def side_lines(self, name):
        try:
            return (self.side / name).read_text().splitlines()
        except FileNotFoundError:
            return []

    # -- REST ----------------------------------------------------------------------------
    def get(self, path):
        status, body = self.srv.api("GET", "/api/v1" + path)
        assert status == 200, "GET %s -> %s %r" % (path, status, body)
        return body

    def wait_dag(self, dag_id, timeout=30, pred=None):
        """The DAG object once the server has loaded it (and pred(dag) holds)."""
        def loaded():
            status, body = self.srv.api("GET", "/api/v1/dags/%s" % dag_id)
            if status == 200 and (pred is None or pred(body)):
                return body
            return None
        return wait_for(loaded, timeout, "DAG %s loaded" % dag_id)

    def trigger(self, dag_id, conf=None, run_id=None, logical_date=None):
        body = {}
        if conf is not None:
            body["conf"] = conf
        if run_id:
            body["dag_run_id"] = run_id
        if logical_date:
            body["logical_date"] = logical_date
        status, run = self.srv.api("POST", "/api/v1/dags/%s/dagRuns" % dag_id, body)
        assert status == 200, "trigger %s -> %s %r\n%s" % (dag_id, status, run,
                                                          self.srv.log_text())
        return run

    def run(self, dag_id, run_id):
        return self.get("/dags/%s/dagRuns/%s" % (dag_id, run_id))

    def wait_run(self, dag_id, run_id, timeout=60, states=RUN_FINAL):
        deadline = time.monotonic() + timeout
        run = None
        while time.monotonic() < deadline:
            try:
                status, run = self.srv.api("GET", "/api/v1/dags/%s/dagRuns/%s" % (dag_id, run_id))
            except OSError:
                status, run = 0, None  # a server being restarted by the test
            if status == 200 and run["state"] in states:
                return run
            time.sleep(0.2)
        pytest.fail("run %s of %s not in %s after %ss; last: %r\ntask instances: %s\n"
                    "server log:\n%s" % (run_id, dag_id, states, timeout, run,
                                         json.dumps(self.tis_or_none(dag_id, run_id), indent=1),
                                         self.srv.log_text()))

    def tis_or_none(self, dag_id, run_id):
        try:
            status, body = self.srv.api(
                "GET", "/api/v1/dags/%s/dagRuns/%s/taskInstances" % (dag_id, run_id))
        except OSError:
            return None
        return body if status == 200 else None

    def tis(self, dag_id, run_id):
        """{name: TI}, name "task" or "task[i]" for a foreach instance."""
        body = self.get("/dags/%s/dagRuns/%s/taskInstances" % (dag_id, run_id))
        out = {}
        for ti in body["task_instances"]:
            name = ti["task_id"]
            if ti.get("map_index", -1) is not None and ti.get("map_index", -1) >= 0:
                name += "[%d]" % ti["map_index"]
            out[name] = ti
        return out

    def log(self, dag_id, run_id, task_id, try_number=1):
        status, _, data = self.srv.request(
            "GET", "/api/v1/dags/%s/dagRuns/%s/taskInstances/%s/logs/%d?full_content=true"
            % (dag_id, run_id, task_id, try_number), headers={"Accept": "text/plain"})
        assert status == 200, "log of %s try %d -> %s %r" % (task_id, try_number, status,
                                                            data[:300])
        return data.decode(errors="replace")


@pytest.fixture
def make_dags(make_server, tmp_path):
    """Factory: make_dags(pools=None, users=False, files=(), start=True) -> Dags, with the
    files of tests/system/dags/ named in `files` installed before the server starts."""
    def make(pools=None, users=False, files=(), start=True, **subs):
        srv = make_server(config=dag_config(pools, users), start=False)
        d = Dags(srv, tmp_path)
        for name in files:
            d.install(name, **subs)
        if start:
            srv.start()
        return d
    return make
