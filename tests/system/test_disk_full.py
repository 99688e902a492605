"""A full disk under a running server (issue 30, "Nothing lost under faults"): the home on a
small tmpfs that the test fills while a DAG run and a job run, then frees.

While the disk is full the server answers reads, refuses writes with a 503 problem that names
the cause, logs the cause once (not once a request), and a task whose log cannot be written
goes on: its log says it was truncated and its state is its program's outcome. Once space
returns everything resumes by itself and the run and the job complete; the store's
`PRAGMA integrity_check` is clean and every change the API acknowledged is there
(docs/internals/recovery.md, "A full disk").
"""

import errno
import os
import sqlite3
import subprocess

import pytest

from conftest import DEFAULT_CONFIG, spec, wait_for
from dagtest import Dags

SIZE_MB = 24

DAG = """\
dag_id: full
tasks:
  - task_id: a
    command: |
      echo a-before-the-fill
      while [ ! -e @SIDE@/gate ]; do sleep 0.05; done
      echo a-done >> @SIDE@/a
  - task_id: b
    depends_on: [a]
    command: echo b-ran >> @SIDE@/b
"""

# The job's task writes while the disk is full, then waits for space to return and writes
# again: its log keeps what came before, the marker where bytes were lost, and what came after.
JOB = """\
echo job-before-the-fill
while [ ! -e %(side)s/gate ]; do sleep 0.05; done
i=0
while [ $i -lt 3000 ]; do
  echo "job-while-full $i .............................................................."
  i=$((i+1))
done
touch %(side)s/job-wrote
while [ ! -e %(side)s/gate2 ]; do sleep 0.05; done
echo job-after-the-fill
"""

MARKER = "[weir launch: log truncated:"


def refused_writes(srv):
    """weir_store_disk_full_writes_total on the metrics page (a read)."""
    status, _, data = srv.request("GET", "/metrics")
    assert status == 200, (status, data[:300])
    for line in data.decode().splitlines():
        if line.startswith("weir_store_disk_full_writes_total "):
            return int(line.split()[1])
    pytest.fail("no weir_store_disk_full_writes_total on /metrics")


@pytest.fixture
def tmpfs_home(tmp_path):
    """A tmpfs of SIZE_MB mounted for the test (unmounted at teardown, after the servers)."""
    home = tmp_path / "home"
    home.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%dm,mode=0700" % SIZE_MB, "tmpfs",
                        str(home)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip("mounting a tmpfs is not permitted here (mount: %s)" % r.stderr.strip())
    yield home
    r = subprocess.run(["umount", str(home)], capture_output=True, text=True)
    if r.returncode != 0:
        subprocess.run(["umount", "-l", str(home)], capture_output=True)


def fill(path):
    """Writes `path` until the file system has no byte left; returns its size."""
    fd = os.open(str(path), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    chunk = b"\0" * (1 << 20)
    size = 0
    try:
        while True:
            try:
                n = os.write(fd, chunk if len(chunk) else b"\0")
            except OSError as e:
                if e.errno != errno.ENOSPC:
                    raise
                if len(chunk) == 1:
                    return size
                chunk = chunk[:len(chunk) // 2]
                continue
            size += n
    finally:
        os.close(fd)


def full_lines(srv):
    """The server's log lines that say the disk is full, or that space returned."""
    text = srv.log_path.read_text(errors="replace")
    lost = [ln for ln in text.splitlines() if "disk is full" in ln]
    back = [ln for ln in text.splitlines() if "space returned" in ln]
    return lost, back


def test_full_disk_refuses_writes_keeps_reads_and_resumes(tmpfs_home, make_server, tmp_path):
    srv = make_server(config=DEFAULT_CONFIG, home=tmpfs_home, start=False)
    d = Dags(srv, tmp_path)
    d.write("full.yaml", DAG.replace("@SIDE@", str(d.side)))
    srv.start()
    d.wait_dag("full")

    # work accepted before the fill, running when it comes
    run = d.trigger("full", run_id="before")
    job = srv.submit(spec({"worker": {"command": JOB % {"side": d.side}}}, name="writer"))
    wait_for(lambda: d.tis("full", "before")["a"]["state"] == "running", 30, "task a running")
    srv.wait_running(job["id"])
    accepted_jobs = [job["id"]]
    accepted_runs = ["before"]

    filler = tmpfs_home / "filler"
    fill(filler)
    try:
        # reads answer
        for path in ("/api/v1/health", "/api/v1/jobs", "/api/v1/jobs/%s" % job["id"],
                     "/api/v1/dags/full", "/api/v1/dags/full/dagRuns/before/taskInstances"):
            status, body = srv.api("GET", path)
            assert status == 200, "GET %s while the disk is full -> %s %r" % (path, status, body)

        # new work is refused with a clear error, and nothing of it is stored; a write that
        # found room (the WAL may hold a little) is acknowledged and must be kept
        refused = None
        for i in range(50):
            status, body = srv.api("POST", "/api/v1/jobs",
                                   spec({"worker": {"command": "true"}}, name="late-%d" % i))
            if status == 201:
                accepted_jobs.append(body["id"])
                continue
            refused = (status, body)
            break
        assert refused, "50 jobs accepted on a full disk"
        status, body = refused
        assert status == 503 and "disk is full" in body["error"], refused
        late = [j["id"] for j in srv.api("GET", "/api/v1/jobs")[1]["jobs"]
                if j["name"].startswith("late-")]
        assert sorted(late) == sorted(accepted_jobs[1:]), (late, accepted_jobs)

        status, body = srv.api("POST", "/api/v1/dags/full/dagRuns", {"dag_run_id": "during"})
        if status == 200:
            accepted_runs.append("during")
        else:
            # an Airflow route: a problem whose detail names the cause
            assert status == 503 and "disk is full" in body["detail"], (status, body)

        # task a ends while the disk is full: its end cannot be stored, and is told again
        # (each try a refused write) rather than lost; the job's task writes its log meanwhile
        (d.side / "gate").touch()
        wait_for(lambda: (d.side / "a").exists() and (d.side / "job-wrote").exists(), 60,
                 "both tasks past their writes")
        seen = refused_writes(srv)
        wait_for(lambda: refused_writes(srv) >= seen + 2, 30, "task a's end tried again")
        assert d.tis("full", "before")["a"]["state"] == "running"
        status, body = srv.api("GET", "/metrics")
        assert status == 200 and "weir_store_disk_full 1" in body, body

        lost, back = full_lines(srv)
        assert len(lost) == 1, "the full disk logged %d times:\n%s" % (len(lost), srv.log_text())
    finally:
        filler.unlink()

    # space returned: the run completes (task b after a's end, told again), the job too
    (d.side / "gate2").touch()
    for run_id in accepted_runs:
        done = d.wait_run("full", run_id, timeout=90)
        assert done["state"] == "success", (run_id, done, d.tis("full", run_id))
    for job_id in accepted_jobs:
        assert srv.wait_job(job_id, timeout=90)["state"] == "succeeded", job_id
    assert d.side_lines("b") == ["b-ran"] * len(accepted_runs)
    assert d.side_lines("a") == ["a-done"] * len(accepted_runs)

    # the job's log: before, the marker where bytes were lost, after
    log = srv.log(job["id"])
    assert "job-before-the-fill" in log
    assert MARKER in log, log[-2000:]
    assert log.index(MARKER) < log.index("job-after-the-fill"), log[-2000:]

    # the task that ended while the disk was full lost nothing of its log
    a_log = d.log("full", "before", "a")
    assert "a-before-the-fill" in a_log and MARKER not in a_log, a_log[-2000:]

    # the next work goes through, and the logs say once that space returned
    run2 = d.trigger("full", run_id="after")
    assert d.wait_run("full", run2["dag_run_id"], timeout=60)["state"] == "success"
    lost, back = full_lines(srv)
    assert len(lost) == 1 and len(back) == 1, srv.log_text()

    assert srv.terminate() == 0
    db = sqlite3.connect("file:%s?mode=ro" % (srv.home / "weir.db"), uri=True)
    try:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        ids = {r[0] for r in db.execute("SELECT id FROM jobs")}
        assert set(accepted_jobs) <= ids, (accepted_jobs, ids)
        runs = {r[0] for r in db.execute("SELECT run_id FROM dag_runs WHERE dag_id = 'full'")}
        assert set(accepted_runs) | {"after"} <= runs, runs
    finally:
        db.close()
    assert run["dag_run_id"] == "before"
