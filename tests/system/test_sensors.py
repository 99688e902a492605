"""Sensors on a real server: each kind waits for the real thing (a file written later,
another DAG's task that succeeds, a time, a real HTTP server in the test's own thread, a
query on SQLite and on a real PostgreSQL), a timeout fails or (soft_fail) skips, and a
sensor in mode reschedule holds no slot and no process while it waits: 1,000 of them wait
while a pool of 2 keeps running other tasks, with the server's memory bounded.
"""

import contextlib
import http.server
import re
import sqlite3
import textwrap
import threading
from datetime import datetime, timezone

from conftest import find_procs, wait_for
from dagtest import make_dags  # noqa: F401  (the fixture)
from stores import pg, pg_db  # noqa: F401


def dag(dag_id, tasks, extra=""):
    return "dag_id: %s\n%stasks:\n%s" % (dag_id, extra, textwrap.indent(textwrap.dedent(tasks), "  "))


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def start(d, name, text):
    d.write(name + ".yaml", text)
    if d.srv.proc is None:
        d.srv.start()
    d.wait_dag(name)


def ti_of(d, dag_id, run_id, task_id):
    return d.tis(dag_id, run_id)[task_id]


def wait_ti(d, dag_id, run_id, task_id, pred, what, timeout=60):
    return wait_for(lambda: (lambda ti: ti if pred(ti) else None)(ti_of(d, dag_id, run_id, task_id)),
                    timeout, what)


def last_poke(text):
    """The number of the latest poke a text records ("poke 3: no file matches ..."), 0 if none."""
    return max((int(n) for n in re.findall(r"\bpoke (\d+):", text or "")), default=0)


def after_next_poke(d, dag_id, run_id, task_id, mode="reschedule"):
    """Waits for a poke that began after this call, and returns the TI then.  The pokes are
    recorded one by one, each after the one before: in the TI's reason in mode reschedule (the
    server pokes), in the try's log in mode poke (the job's process writes it as it pokes). So
    with poke N the last recorded now, poke N+1 looked at the world as it is now.  A sensor that
    stops waiting instead (it succeeded, failed) ends the wait too: the caller's assertion on
    the state tells."""
    waiting = "up_for_reschedule" if mode == "reschedule" else "running"

    def pokes(ti):
        return last_poke(str(ti) if mode == "reschedule" else d.log(dag_id, run_id, task_id))

    seen = pokes(ti_of(d, dag_id, run_id, task_id))

    def moved():
        ti = ti_of(d, dag_id, run_id, task_id)
        return ti if ti["state"] != waiting or pokes(ti) > seen else None
    return wait_for(moved, 30, "poke %d of %s (or its end)" % (seen + 1, task_id))


def test_file_sensor_reschedule_waits_without_a_job_then_succeeds(make_dags):
    d = make_dags(start=False)
    start(d, "fs", dag("fs", """\
        - task_id: wait
          sensor:
            file: {path: "in/*.csv", folder: "%s"}
            poke_interval: 0.2
            mode: reschedule
        - task_id: after
          depends_on: [wait]
          command: echo ok > %s/after
        """ % (d.side, d.side)))
    run = d.trigger("fs")["dag_run_id"]
    ti = wait_ti(d, "fs", run, "wait", lambda t: t["state"] == "up_for_reschedule"
                 and "poke 2" in (t.get("note") or t.get("reason") or str(t)), "two pokes")
    assert ti["start_date"], ti  # waiting since
    (d.side / "in").mkdir()
    (d.side / "in" / "x.txt").write_text("not a csv")
    ti = after_next_poke(d, "fs", run, "wait")
    assert ti["state"] == "up_for_reschedule", ti
    (d.side / "in" / "day.csv").write_text("a,b\n")
    r = d.wait_run("fs", run, timeout=30)
    assert r["state"] == "success", r
    assert d.side_lines("after") == ["ok"]


def test_a_command_sensor_runs_its_command_again_when_due(make_dags):
    """A command task with sensor: options: its command is the poke (97: not yet); the TI
    waits up_for_reschedule between the pokes' jobs, in one try, and ends when it exits 0."""
    d = make_dags(start=False)
    start(d, "cs", dag("cs", """\
        - task_id: wait
          command: "echo poking; echo $$ >> %s/pokes; test -e %s/go || exit 97"
          sensor: {poke_interval: 0.2, mode: reschedule}
        - task_id: after
          depends_on: [wait]
          command: echo ok > %s/after
        """ % (d.side, d.side, d.side)))
    run = d.trigger("cs")["dag_run_id"]
    ti = wait_ti(d, "cs", run, "wait", lambda t: t["state"] == "up_for_reschedule"
                 and "poke 2" in str(t), "two pokes")
    assert "not yet (the command exited 97)" in str(ti), ti
    assert len(set(d.side_lines("pokes"))) >= 2  # a process a poke
    assert "poking" in d.log("cs", run, "wait")  # the try's log is its latest poke's
    (d.side / "go").write_text("")
    assert d.wait_run("cs", run, timeout=30)["state"] == "success"
    assert ti_of(d, "cs", run, "wait")["try_number"] == 1
    assert d.side_lines("after") == ["ok"]


def test_file_sensor_refuses_a_path_that_escapes(make_dags):
    d = make_dags()
    d.write("bad.yaml", dag("bad", """\
        - task_id: wait
          sensor: {file: {path: "../etc/passwd"}}
        """))
    errs = wait_for(lambda: d.get("/importErrors")["import_errors"] or None, 30, "import error")
    assert "tasks[0].sensor.file.path" in errs[0]["stack_trace"] and ".." in errs[0]["stack_trace"], errs


def test_file_sensor_poke_mode_runs_a_process_that_waits(make_dags):
    d = make_dags(start=False)
    start(d, "fp", dag("fp", """\
        - task_id: wait
          sensor:
            file: {path: "ready", folder: "%s"}
            poke_interval: 0.2
        """ % d.side))
    run = d.trigger("fp")["dag_run_id"]
    wait_ti(d, "fp", run, "wait", lambda t: t["state"] == "running", "the poking job runs")
    wait_for(lambda: find_procs("task-sensor") or None, 30, "a weir task-sensor process")
    (d.side / "ready").write_text("")
    r = d.wait_run("fp", run, timeout=30)
    assert r["state"] == "success", r
    assert "poke" in d.log("fp", run, "wait")


def test_external_task_sensor_waits_for_another_dags_task(make_dags):
    d = make_dags(start=False)
    d.write("up.yaml", dag("up", """\
        - task_id: produce
          command: "true"
        """))
    start(d, "down", dag("down", """\
        - task_id: wait
          sensor:
            external_task: {dag_id: up, task_id: produce}
            poke_interval: 0.2
            mode: reschedule
        """))
    d.wait_dag("up")
    when = "2026-03-01T00:00:00+00:00"
    run = d.trigger("down", logical_date=when)["dag_run_id"]
    wait_ti(d, "down", run, "wait", lambda t: t["state"] == "up_for_reschedule"
            and "poke 2" in str(t), "waiting for up")
    # another logical date does not count
    other = d.trigger("up", logical_date="2026-03-02T00:00:00+00:00")["dag_run_id"]
    assert d.wait_run("up", other)["state"] == "success"
    ti = after_next_poke(d, "down", run, "wait")
    assert ti["state"] == "up_for_reschedule", ti
    up = d.trigger("up", logical_date=when)["dag_run_id"]
    assert d.wait_run("up", up)["state"] == "success"
    assert d.wait_run("down", run, timeout=30)["state"] == "success"


def test_delta_sensor_waits_after_the_logical_date(make_dags):
    d = make_dags(start=False)
    start(d, "dl", dag("dl", """\
        - task_id: wait
          sensor: {delta: 2, poke_interval: 0.2, mode: reschedule}
        """))
    now = datetime.now(timezone.utc).replace(microsecond=0)
    run = d.trigger("dl", logical_date=now.isoformat())["dag_run_id"]
    wait_ti(d, "dl", run, "wait", lambda t: t["state"] == "up_for_reschedule", "waiting")
    r = d.wait_run("dl", run, timeout=30)
    assert r["state"] == "success", r
    ended = datetime.fromisoformat(ti_of(d, "dl", run, "wait")["end_date"])
    assert ended.timestamp() >= now.timestamp() + 2  # not a wall-clock bound: a causal one


@contextlib.contextmanager
def http_server(handler):
    """A real HTTP server on a free loopback port, in a thread of the test; yields its port."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield httpd.server_address[1]
    finally:
        httpd.shutdown()


class Quiet(http.server.BaseHTTPRequestHandler):
    """A handler that answers with reply() and logs nothing."""

    def reply(self, code, body):
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


class Flaky(Quiet):
    hits = []

    def do_GET(self):
        Flaky.hits.append(self.path)
        code, body = (503, b"starting") if len(Flaky.hits) <= 2 else (200, b"status: ready\n")
        if len(Flaky.hits) == 3:
            body = b"status: warming\n"  # 200 but the body does not match yet
        self.reply(code, body)


def test_http_sensor_waits_through_503_for_a_body_that_matches(make_dags):
    Flaky.hits = []
    with http_server(Flaky) as port:
        d = make_dags(start=False)
        start(d, "hs", dag("hs", """\
            - task_id: wait
              sensor:
                http: {url: "http://127.0.0.1:%d/health", match: "status: ready"}
                poke_interval: 0.2
                mode: reschedule
            """ % port))
        run = d.trigger("hs")["dag_run_id"]
        r = d.wait_run("hs", run, timeout=30)
        assert r["state"] == "success", r
        assert len(Flaky.hits) >= 4 and set(Flaky.hits) == {"/health"}, Flaky.hits


def sql_dag(conn, query):
    return dag("sq", """\
        - task_id: wait
          sensor:
            sql: {conn: %s, query: "%s", parameters: {want: 1}}
            poke_interval: 0.2
            mode: reschedule
        """ % (conn, query))


def test_sql_sensor_on_sqlite(make_dags, tmp_path):
    db = tmp_path / "flags.db"
    c = sqlite3.connect(db)
    c.execute("CREATE TABLE flags (done int)")
    c.commit()
    d = make_dags(start=False)
    d.srv.extra_env["WEIR_CONN_LITE"] = "sqlite:///%s" % db
    start(d, "sq", sql_dag("lite", "SELECT count(*) FROM flags WHERE done = :want"))
    run = d.trigger("sq")["dag_run_id"]
    wait_ti(d, "sq", run, "wait", lambda t: "returned 0" in str(t), "a false first cell")
    c.execute("INSERT INTO flags VALUES (1)")
    c.commit()
    assert d.wait_run("sq", run, timeout=30)["state"] == "success"


def test_sql_sensor_on_postgres(make_dags, pg, pg_db):
    pg.query(pg_db, "CREATE TABLE flags (done boolean)")
    d = make_dags(start=False)
    d.srv.extra_env["WEIR_CONN_PG"] = pg.uri(pg_db)
    start(d, "sq", sql_dag("pg", "SELECT bool_or(done) FROM flags"))
    run = d.trigger("sq")["dag_run_id"]
    wait_ti(d, "sq", run, "wait", lambda t: "poke 2" in str(t), "two pokes")
    pg.query(pg_db, "INSERT INTO flags VALUES (false)")
    ti = after_next_poke(d, "sq", run, "wait")
    assert ti["state"] == "up_for_reschedule", ti
    pg.query(pg_db, "INSERT INTO flags VALUES (true)")
    assert d.wait_run("sq", run, timeout=30)["state"] == "success"


def test_sql_sensor_with_a_bad_query_fails(make_dags, tmp_path):
    d = make_dags(start=False)
    d.srv.extra_env["WEIR_CONN_LITE"] = "sqlite:///%s" % (tmp_path / "e.db")
    start(d, "sq", sql_dag("lite", "SELECT nope FROM nothing"))
    run = d.trigger("sq")["dag_run_id"]
    r = d.wait_run("sq", run, timeout=30)
    assert r["state"] == "failed"
    assert "nothing" in str(ti_of(d, "sq", run, "wait")), ti_of(d, "sq", run, "wait")


def test_timeout_fails_and_soft_fail_skips(make_dags):
    d = make_dags(start=False)
    start(d, "to", dag("to", """\
        - task_id: hard
          retries: 3
          sensor: {file: {path: never, folder: "%s"}, poke_interval: 0.2, timeout: 1, mode: reschedule}
        - task_id: soft
          sensor: {file: {path: never, folder: "%s"}, poke_interval: 0.2, timeout: 1, soft_fail: true, mode: reschedule}
        - task_id: soft_poke
          sensor: {file: {path: never, folder: "%s"}, poke_interval: 0.2, timeout: 1, soft_fail: true}
        """ % (d.side, d.side, d.side)))
    run = d.trigger("to")["dag_run_id"]
    r = d.wait_run("to", run, timeout=60)
    tis = d.tis("to", run)
    assert tis["hard"]["state"] == "failed" and tis["hard"]["try_number"] == 1, tis["hard"]
    assert "timed out" in str(tis["hard"])
    assert tis["soft"]["state"] == "skipped", tis["soft"]
    assert tis["soft_poke"]["state"] == "skipped", tis["soft_poke"]
    assert r["state"] == "failed"


def test_reschedule_frees_the_slot(make_dags):
    d = make_dags(pools={"one": 1}, start=False)
    start(d, "fr", dag("fr", """\
        - task_id: wait
          pool: one
          sensor: {file: {path: go, folder: "%s"}, poke_interval: 0.2, mode: reschedule}
        - task_id: work
          pool: one
          command: echo ran > %s/work
        """ % (d.side, d.side)))
    run = d.trigger("fr")["dag_run_id"]
    # the other task of the one-slot pool runs while the sensor waits
    wait_ti(d, "fr", run, "work", lambda t: t["state"] == "success", "work ran")
    assert ti_of(d, "fr", run, "wait")["state"] == "up_for_reschedule"
    (d.side / "go").write_text("")
    assert d.wait_run("fr", run, timeout=30)["state"] == "success"


def test_a_thousand_rescheduling_sensors_leave_a_pool_of_two_to_other_tasks(make_dags):
    n = 1000
    d = make_dags(pools={"two": 2}, start=False)
    sensors = "".join(
        "- task_id: s%d\n  pool: two\n  sensor: {file: {path: go, folder: \"%s\"},"
        " poke_interval: 1, mode: reschedule}\n" % (i, d.side) for i in range(n))
    start(d, "many", dag("many", sensors, extra="max_active_tasks: 16\n"))
    d.write("work.yaml", dag("work", "".join(
        "- task_id: w%d\n  pool: two\n  command: echo %d >> %s/work\n" % (i, i, d.side)
        for i in range(20))))
    d.wait_dag("work")
    run = d.trigger("many")["dag_run_id"]

    def waiting():
        tis = d.get("/dags/many/dagRuns/%s/taskInstances?limit=%d" % (run, n))["task_instances"]
        w = [t for t in tis if t["state"] == "up_for_reschedule"]
        return w if len(w) == n else None
    wait_for(waiting, 120, "all sensors waiting")
    pid = d.srv.proc.pid
    before = rss_kb(pid)
    # while they wait, the pool of two runs a DAG of other tasks to the end
    wr = d.trigger("work")["dag_run_id"]
    assert d.wait_run("work", wr, timeout=120)["state"] == "success"
    assert len(d.side_lines("work")) == 20
    # they poked meanwhile (each at least twice more), holding no slot and no process
    wait_for(lambda: all("poke 3" in str(t) or "poke 4" in str(t) or "poke 5" in str(t)
                         or "poke 6" in str(t) for t in waiting() or []) or None,
             120, "every sensor poked 3 times")
    assert not find_procs("task-sensor")
    after = rss_kb(pid)
    assert after - before < 32 * 1024, (before, after)  # bounded: not a per-poke growth
    tis = d.get("/dags/many/dagRuns/%s/taskInstances?limit=%d" % (run, n))["task_instances"]
    assert not [t for t in tis if t["state"] in ("queued", "running")]  # no slot held
    (d.side / "go").write_text("")
    assert d.wait_run("many", run, timeout=180)["state"] == "success"
