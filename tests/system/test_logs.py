"""Task logs: live with --follow, from an offset, stdout and stderr together."""

import subprocess
import threading
import time

from conftest import FINAL_STATES, WEIR_BIN, cli_describe, spec

SLOW = "for i in 1 2 3 4 5 6; do echo line-$i; echo err-$i >&2; sleep 0.5; done"


def test_follow_shows_lines_while_the_task_runs(server):
    job = server.submit(spec({"worker": {"command": "sleep 1; " + SLOW}}, name="follow"))
    server.wait_running(job["id"])
    p = subprocess.Popen([WEIR_BIN, "logs", str(job["id"]), "--role", "worker", "--index", "0",
                          "--follow"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=server.cli_env(), stdin=subprocess.DEVNULL)
    # a watchdog instead of communicate(): communicate() would skip what readline() buffered
    watchdog = threading.Timer(30, p.kill)
    watchdog.start()
    try:
        first = p.stdout.readline()
        state_at_first_line = server.job(job["id"])["state"]
        rest = p.stdout.read()
        err = p.stderr.read()
        p.wait(10)
    finally:
        watchdog.cancel()
        if p.poll() is None:
            p.kill()
            p.wait(10)
    assert p.returncode == 0, ("killed after 30 s: --follow did not end with the task"
                               if p.returncode == -9 else p.returncode, err)
    assert first.strip() in ("line-1", "err-1"), first
    assert state_at_first_line == "running", "the first line came only after the task ended"
    out = (first + rest).split()
    want = ["line-%d" % i for i in range(1, 7)]
    assert [w for w in out if w.startswith("line-")] == want, out
    assert len([w for w in out if w.startswith("err-")]) == 6, out
    assert server.job(job["id"])["state"] in FINAL_STATES


def test_follow_over_http_streams_and_ends(server):
    job = server.submit(spec({"worker": {"command": SLOW}}, name="follow-http"))
    server.wait_running(job["id"])
    import urllib.request
    req = urllib.request.Request(
        server.url + "/api/v1/jobs/%s/tasks/worker/0/logs?follow=true" % job["id"],
        headers={"Authorization": "Bearer " + server.token})
    chunks = []
    with urllib.request.urlopen(req, timeout=30) as r:
        assert r.status == 200
        first = r.readline()
        chunks.append(first)
        running = server.job(job["id"])["state"] == "running"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            line = r.readline()
            if not line:
                break
            chunks.append(line)
    text = b"".join(chunks).decode()
    assert running, "the stream gave its first line only after the task ended"
    assert "line-6" in text and "err-6" in text, text


def test_offset_and_size_header(server):
    job = server.submit(spec({"worker": {"command": "echo 0123456789; echo abcdef"}},
                             name="offset"))
    job = server.wait_job(job["id"], timeout=60)
    assert job["state"] == "succeeded", job
    status, headers, full = server.request(
        "GET", "/api/v1/jobs/%s/tasks/worker/0/logs" % job["id"])
    assert status == 200
    text = full.decode()
    # the launcher may add lines of its own; the program's come in order
    assert "0123456789\nabcdef\n" in text, text
    size = {k.lower(): v for k, v in headers.items()}.get("x-weir-log-size")
    assert size is not None and int(size) == len(full), headers
    mid = text.index("abcdef")
    for offset in (0, 1, mid, len(full) - 1, len(full)):
        assert server.log(job["id"], offset=offset) == text[offset:], offset
    r = server.cli("logs", job["id"], "--role", "worker", "--index", "0", timeout=60)
    assert r.returncode == 0, cli_describe(r)
    assert r.stdout == text, cli_describe(r)


def test_logs_of_unknown_task_is_404(server):
    job = server.submit(spec({"worker": {"command": "true"}}, name="x"))
    server.wait_job(job["id"], timeout=60)
    status, body = server.api("GET", "/api/v1/jobs/%s/tasks/chief/0/logs" % job["id"])
    assert status == 404, body
    status, body = server.api("GET", "/api/v1/jobs/%s/tasks/worker/7/logs" % job["id"])
    assert status == 404, body


def test_a_task_log_sits_beside_its_folder_and_an_earlier_layout_still_reads(server):
    from pathlib import Path
    job = server.submit(spec({"worker": {"command": "echo beside"}}, name="layout"))
    assert server.wait_job(job["id"], timeout=60)["state"] == "succeeded"
    jobdir = Path(server.home) / "jobs" / str(job["id"])
    log = jobdir / "worker-0.1.log"
    assert (jobdir / "worker-0.1").is_dir(), sorted(p.name for p in jobdir.iterdir())
    assert "beside" in log.read_text(), sorted(p.name for p in jobdir.iterdir())
    assert not (jobdir / "logs").exists(), "a logs/ folder made for a local task"
    # a job of an earlier version kept its logs in jobs/ID/logs/
    (jobdir / "logs").mkdir()
    log.rename(jobdir / "logs" / "worker-0.1.log")
    assert "beside" in server.log(job["id"])
    r = server.cli("logs", job["id"], "--role", "worker", "--index", "0", timeout=60)
    assert r.returncode == 0 and "beside" in r.stdout, cli_describe(r)
