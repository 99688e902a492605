"""The server's front door: health, the token, where it listens, how it stops."""

import os
import socket
import stat
import subprocess

import pytest

from conftest import WEIR_BIN, cli_describe, free_port


def test_health_needs_no_token(server):
    status, body = server.api("GET", "/api/v1/health", token=False)
    assert status == 200, body
    assert body["status"] == "ok"
    assert "version" in body


def test_health_tells_the_truth(server):
    """The heartbeat is the scheduler's last pass, not the request's time, and a
    store that cannot answer makes the metadatabase unhealthy."""
    import datetime
    import sqlite3
    import time

    def heartbeat(body):
        return datetime.datetime.fromisoformat(
            body["scheduler"]["latest_scheduler_heartbeat"].replace("Z", "+00:00"))

    status, body = server.api("GET", "/api/v1/health", token=False)
    assert status == 200, body
    assert body["metadatabase"] == {"status": "healthy"}
    assert body["scheduler"]["status"] == "healthy"
    first = heartbeat(body)
    # two asks within one pass see the same heartbeat, and it is in the past
    status, body = server.api("GET", "/api/v1/health", token=False)
    now = datetime.datetime.now(datetime.timezone.utc)
    assert heartbeat(body) <= now
    assert (now - heartbeat(body)).total_seconds() < 30
    # the passes go on (every 2 s): a later ask sees a later one
    deadline = time.time() + 10
    while heartbeat(body) == first and time.time() < deadline:
        time.sleep(0.3)
        body = server.api("GET", "/api/v1/health", token=False)[1]
    assert heartbeat(body) > first, body

    db = sqlite3.connect(str(server.home / "weir.db"), timeout=10)
    db.execute("DROP TABLE meta")
    db.commit()
    db.close()
    status, body = server.api("GET", "/api/v1/health", token=False)
    assert status == 200, body
    assert body["metadatabase"] == {"status": "unhealthy"}, body


@pytest.mark.parametrize("token", [False, "not-the-token"])
def test_api_refuses_without_the_right_token(server, token):
    status, body = server.api("GET", "/api/v1/jobs", token=token)
    assert status == 401, body
    assert isinstance(body, dict) and body.get("error"), body
    # the same route with the token works, so the 401 is about the token
    status, body = server.api("GET", "/api/v1/jobs")
    assert status == 200, body
    assert body["jobs"] == []


def test_submit_refused_without_token(server):
    body = {"name": "x", "framework": "none",
            "roles": {"worker": {"instances": 1, "memory": "64m", "vcores": 1,
                                 "command": "true"}}}
    status, resp = server.api("POST", "/api/v1/jobs", body, token="wrong")
    assert status == 401, resp
    status, resp = server.api("GET", "/api/v1/jobs")
    assert resp["jobs"] == [], "a refused submission must not create a job"


def test_token_file_is_private(server):
    path = server.home / "token"
    mode = stat.S_IMODE(os.stat(path).st_mode)
    assert mode == 0o600, "token mode is %o" % mode
    assert len(server.token) >= 16, "a token this short can be guessed"


def test_token_survives_a_restart(server):
    before = server.token
    assert server.terminate() == 0
    server._token = None
    server.start()
    assert server.token == before
    status, _ = server.api("GET", "/api/v1/jobs")
    assert status == 200


def _listening_addresses(port):
    """Local addresses of listening TCP sockets on `port` (from /proc/net/tcp{,6})."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                lines = f.read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            addr, hexport = fields[1].rsplit(":", 1)
            if int(hexport, 16) == port and fields[3] == "0A":  # 0A: LISTEN
                found.append(addr)
    return found


def test_listens_on_loopback_by_default(make_server):
    """Without --listen the server binds 127.0.0.1:8270 (docs/api.md), never all interfaces."""
    with socket.socket() as s:
        if s.connect_ex(("127.0.0.1", 8270)) == 0:
            pytest.skip("port 8270 is in use here; cannot start a server on the default")
    srv = make_server(port=8270, start=False)
    srv.start(listen=False)
    addrs = _listening_addresses(8270)
    assert addrs, "nothing listens on 8270"
    loopback = ("0100007F", "00000000000000000000000001000000")
    assert all(a in loopback for a in addrs), "listening on %r, expected loopback only" % addrs


def test_sigterm_exits_zero(server):
    assert server.terminate() == 0, server.log_text()
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", server.port)) != 0, "still accepting after SIGTERM"


def test_home_is_created_with_its_store(make_server, tmp_path):
    home = tmp_path / "fresh" / "home"
    srv = make_server(home=home)
    assert (home / "token").exists()
    assert (home / "weir.db").exists()
    assert srv.api("GET", "/api/v1/health", token=False)[0] == 200


def test_cli_exit_3_when_server_unreachable(tmp_path):
    env = dict(os.environ, WEIR_SERVER="http://127.0.0.1:%d" % free_port(), WEIR_TOKEN="x",
               WEIR_HOME=str(tmp_path))
    r = subprocess.run([WEIR_BIN, "jobs", "list"], capture_output=True, text=True, env=env,
                       timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 3, cli_describe(r)
    assert r.stderr.strip(), "no message says what went wrong"


def test_cli_lists_jobs_with_token_from_env(server):
    job = server.submit({"name": "listed", "framework": "none",
                         "roles": {"worker": {"instances": 1, "memory": "64m", "vcores": 1,
                                              "command": "true"}}})
    server.wait_job(job["id"], timeout=60)
    r = server.cli("jobs", "list")
    assert r.returncode == 0, cli_describe(r)
    assert "listed" in r.stdout and str(job["id"]) in r.stdout, cli_describe(r)
    r = server.cli("jobs", "show", job["id"])
    assert r.returncode == 0, cli_describe(r)
    assert "succeeded" in r.stdout, cli_describe(r)
