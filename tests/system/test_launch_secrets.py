"""The launch routes and a task's environment (docs/security.md): the launch routes answer a
task's own launcher only (its launch secret), never the API's token or a configured user; a
task finds none of the server's secrets in its own environment or its launcher's (the shim,
the agent); what a task prints of the server's token is masked in its log."""

import base64
import os
import subprocess
import sys

import pytest

from conftest import DEFAULT_CONFIG, WEIR_BIN, spec, wait_for
from dagtest import BASIC_PASSWORD, BASIC_USER, password_hash
from launchtest import attempt_secret, launch_secret

USERS = 'users:\n  - name: %s\n    password_hash: "%s"\n' % (BASIC_USER,
                                                          password_hash(BASIC_PASSWORD))
CONN_PASSWORD = "pw-of-the-server-only-7731"
CONN_URI = "postgres://app:%s@db.example:5432/app" % CONN_PASSWORD
OTHER_SECRET = "another-secret-of-the-server-5521"


def basic_header():
    cred = base64.b64encode(("%s:%s" % (BASIC_USER, BASIC_PASSWORD)).encode()).decode()
    return {"Authorization": "Basic " + cred}


def running_task(server):
    job = server.submit(spec({"worker": {"command": "sleep 60"}}, name="launch-secret"))
    server.wait_running(job["id"])
    task = server.tasks(job["id"])[0]
    assert task["host"] and task["port"], task
    return job["id"], task


def register(server, job, body_extra=None, **auth):
    body = {"job": job, "role": "worker", "index": 0, "attempt": 1, "host": "10.66.66.66",
            "port": 6666, "pid": 1}
    body.update(body_extra or {})
    return server.request("POST", "/api/v1/launch/register", body=body, **auth)


def test_api_principals_are_refused_on_the_launch_routes(make_server):
    server = make_server(config=DEFAULT_CONFIG + USERS)
    job, before = running_task(server)

    # a configured user, the API's token: 403, nothing of the task's answer in the reply
    for auth in ({"token": False, "headers": basic_header()}, {"token": True}):
        st, _, data = register(server, job, **auth)
        assert st == 403, (auth, st, data[:300])
        assert b"launch secret" in data and b"command" not in data, data[:300]
    # none at all, or a secret of another task or attempt: 401
    for token in (False, launch_secret(server.token, job, "worker", 1, 1),
                  launch_secret(server.token, job, "worker", 0, 2),
                  attempt_secret(server.token, job + 1, 1)):
        st, _, data = register(server, job, token=token)
        assert st == 401, (token, st, data[:300])
    # every launch route, with the token
    base = "job=%d&role=worker&index=0&attempt=1" % job
    for method, path, body in (
            ("POST", "/api/v1/launch/started", {"job": job, "role": "worker", "index": 0,
                                                "attempt": 1, "pid": 1}),
            ("POST", "/api/v1/launch/exited", {"job": job, "role": "worker", "index": 0,
                                               "attempt": 1, "exit_code": 0}),
            ("GET", "/api/v1/launch/cluster?%s&wait=0" % base, None),
            ("POST", "/api/v1/launch/log?%s&offset=0" % base, None)):
        st, _, data = server.request(method, path, body=body, token=True,
                                     raw_body=b"x" if path.startswith("/api/v1/launch/log")
                                     else None)
        assert st == 403, (path, st, data[:300])
    after = server.tasks(job)[0]
    assert (after["host"], after["port"], after["state"]) == \
        (before["host"], before["port"], "running"), after

    # the task's own secret is heard, but a running task's address stays what its gang
    # was told
    st, _, data = register(server, job, token=launch_secret(server.token, job, "worker", 0, 1))
    assert st == 200, data[:300]
    after = server.tasks(job)[0]
    assert (after["host"], after["port"]) == (before["host"], before["port"]), after
    st, _, data = server.request("GET", "/api/v1/launch/cluster?job=%d&attempt=1&wait=0" % job,
                                 token=attempt_secret(server.token, job, 1))
    assert st == 200 and b'"ready":true' in data.replace(b" ", b""), data[:300]
    server.api("DELETE", "/api/v1/jobs/%d" % job)


# Walks from the program up its ancestors: its shim and the agent (the agent's parent is the
# server, whose own environment is its user's: docs/security.md, "Tasks and the server's
# user"), or its launcher process.  Every environment read is searched for the server's
# secrets.  Prints one line per process read, and LEAK lines.
WALK = r'''
import os, sys
secrets = sys.argv[1:]
pid = os.getpid()
while pid > 1:
    try:
        env = open("/proc/%d/environ" % pid, "rb").read().decode(errors="replace")
        cmd = open("/proc/%d/cmdline" % pid, "rb").read().replace(b"\0", b" ").decode()
        comm = open("/proc/%d/comm" % pid).read().strip()
    except OSError as e:
        print("unreadable", pid, e)
        break
    print("read", pid, comm, cmd.strip()[:80])
    for entry in env.split("\0"):
        name, _, value = entry.partition("=")
        if name.startswith(("WEIR_CONN_", "AIRFLOW_CONN_")) or name in (
                "WEIR_TOKEN", "MY_API_TOKEN"):
            print("LEAK name", pid, name)
        # a launcher process's own secret: wiped where /proc shows it
        if name == "WEIR_LAUNCH_SECRET" and value.strip("x"):
            print("LEAK launch secret", pid)
    for s in secrets:
        if s in env:
            print("LEAK value", pid, s[:6])
    words = cmd.split()
    if comm != "weir-shim" and ("agent" in words or "--job" in words):
        print("top", comm, "agent" if "agent" in words else "launcher")
        break
    pid = int(open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[1])
print("walked")
'''


@pytest.mark.parametrize("agent", ["1", "0"])
def test_task_finds_no_server_secret_in_its_environment(make_server, tmp_path, agent):
    walk = tmp_path / "walk.py"
    walk.write_text(WALK)
    server = make_server(start=False)
    server.extra_env.update(WEIR_AGENT=agent, WEIR_CONN_LEAKED=CONN_URI,
                            AIRFLOW_CONN_ALSO=CONN_URI, MY_API_TOKEN=OTHER_SECRET,
                            WEIR_TOKEN="not-the-token-but-a-token")
    server.start()
    token = server.token
    job = server.submit(spec({"worker": {
        "command": "%s %s %s %s %s" % (sys.executable, walk, token, CONN_PASSWORD,
                                       OTHER_SECRET)}}, name="env-walk"))
    done = server.wait_job(job["id"], timeout=60)
    log = server.log(job["id"])
    assert done["state"] == "succeeded", (done, log)
    assert "walked" in log, log
    # the program, its shim and the agent; or the program and its launcher
    assert ("top" in log and log.count("read ") >= (3 if agent == "1" else 2)), log
    assert ("agent" if agent == "1" else "launcher") in log.split("top", 1)[1], log
    assert "LEAK" not in log, log


@pytest.mark.parametrize("agent", ["1", "0"])
def test_task_printing_the_token_shows_stars(make_server, agent):
    server = make_server(start=False)
    server.extra_env["WEIR_AGENT"] = agent
    server.start()
    token = server.token
    # the shared-uid case: the task reads the home's token (docs/security.md)
    job = server.submit(spec({"worker": {
        "command": "cat %s/token; echo; echo \"inline=$(cat %s/token)=end\"" %
                   (server.home, server.home)}}, name="print-token"))
    done = server.wait_job(job["id"], timeout=60)
    log = server.log(job["id"])
    assert done["state"] == "succeeded", (done, log)
    assert token not in log, log
    assert "inline=***=end" in log, log
    assert token not in server.log_text()
    agent_log = server.home / "agent.log"
    assert not agent_log.exists() or token not in agent_log.read_text(errors="replace")


def test_agent_started_by_hand_drops_the_servers_secrets(tmp_path):
    """`weir agent` started from a shell that holds the token and connections runs itself
    again without them: its /proc/PID/environ (which its shims' show too) has none."""
    home = tmp_path / "home"
    home.mkdir()
    env = dict(os.environ, WEIR_TOKEN="tok-" + OTHER_SECRET, WEIR_CONN_LEAKED=CONN_URI,
               MY_API_TOKEN=OTHER_SECRET, WEIR_AGENT_IDLE_S="1")
    proc = subprocess.Popen([WEIR_BIN, "agent", "--home", str(home)], env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        # the socket is made after the agent's start (and its run again, the same pid)
        wait_for(lambda: (home / "agent.sock").exists() or proc.poll() is not None, 30,
                 "the agent's socket")
        environ = open("/proc/%d/environ" % proc.pid, "rb").read().decode(errors="replace")
    finally:
        proc.kill()
        proc.wait(timeout=30)
    assert "PATH=" in environ
    for leak in ("WEIR_TOKEN=", "WEIR_CONN_LEAKED=", "MY_API_TOKEN=", CONN_PASSWORD,
                 OTHER_SECRET):
        assert leak not in environ, leak
