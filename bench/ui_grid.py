#!/usr/bin/env python3
"""The web UI's grid route at the size of issue 4's benchmark: a DAG of 50 tasks with 100 runs,
read with GET /api/v1/ui/dags/{dag_id}/grid?limit=100 (and /stats, /ui/dags) from a real weir
server.  The runs are written straight into the server's SQLite store (finished runs in mixed
states, each with its 50 task instances) so that the figure is the route's, not the time to
run 5,000 jobs; the DAG itself is a real file the server loaded.  Median and worst of R reads.

    ui_grid.py [--runs 100] [--tasks 50] [--reads 30]
"""

import argparse
import sqlite3
import time
import urllib.request

from benchlib import BenchServer, median, ms

STATES = ("success", "success", "success", "failed", "upstream_failed", "skipped")


def write_runs(db_path, dag_id, n_runs, n_tasks):
    db = sqlite3.connect(str(db_path), timeout=30)
    now = int(time.time() * 1000)
    with db:
        for r in range(n_runs):
            run_id = "bench_%04d" % r
            start = now - (n_runs - r) * 3600_000
            end = start + 60_000 + r * 100
            db.execute("INSERT INTO dag_runs (dag_id, run_id, state, run_type, logical_date,"
                       " conf, reason, queued_at, start_date, end_date)"
                       " VALUES (?,?,?,?,?,'{}','',?,?,?)",
                       (dag_id, run_id, "failed" if r % 7 == 0 else "success", "manual",
                        start, start, start, end))
            db.executemany(
                "INSERT INTO task_instances (dag_id, run_id, task_id, map_index, state,"
                " try_number, max_tries, pool, pool_slots, priority, queued_at, start_date,"
                " end_date, rendered_command, outputs, reason)"
                " VALUES (?,?,?,-1,?,1,1,'default_pool',1,0,?,?,?,'true',NULL,'')",
                [(dag_id, run_id, "t%03d" % t,
                  STATES[(r + t) % len(STATES)] if r % 7 == 0 else "success",
                  start, start + t * 100, start + t * 100 + 50) for t in range(n_tasks)])
    db.close()


def timed_get(srv, path):
    req = urllib.request.Request(srv.url + path,
                                 headers={"Authorization": "Bearer " + srv.token})
    t0 = time.perf_counter()
    with urllib.request.urlopen(req, timeout=60) as r:
        body = r.read()
    return time.perf_counter() - t0, len(body)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--tasks", type=int, default=50)
    ap.add_argument("--reads", type=int, default=30)
    a = ap.parse_args()
    srv = BenchServer()
    try:
        dags = srv.home / "dags"
        dags.mkdir(parents=True, exist_ok=True)
        text = "dag_id: grid_bench\ntasks:\n" + "".join(
            "  - task_id: t%03d\n    command: \"true\"\n" % t for t in range(a.tasks))
        (dags / "grid_bench.yaml").write_text(text)
        deadline = time.monotonic() + 30
        while srv.api("GET", "/api/v1/dags/grid_bench")[0] != 200:
            if time.monotonic() > deadline:
                raise RuntimeError("the DAG did not load")
            time.sleep(0.1)
        write_runs(srv.home / "weir.db", "grid_bench", a.runs, a.tasks)
        for path in ("/api/v1/ui/dags/grid_bench/grid?limit=%d" % a.runs,
                     "/api/v1/ui/dags/grid_bench/stats?limit=%d" % a.runs, "/api/v1/ui/dags"):
            timed_get(srv, path)  # warm the statement cache
            times, size = [], 0
            for _ in range(a.reads):
                t, size = timed_get(srv, path)
                times.append(t)
            print("%-48s %d runs x %d tasks: median %s, worst %s, %d bytes"
                  % (path.split("?")[0], a.runs, a.tasks, ms(median(times)), ms(max(times)),
                     size))
    finally:
        srv.stop()


if __name__ == "__main__":
    main()
