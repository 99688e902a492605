#!/usr/bin/env python3
"""`weir db clean` at issue 29's size: a DAG of T tasks with R finished runs (R x T task
instances, default 100 x 1000 = 100,000), each TI run by its own ended job (one task, five
events), written straight into the server's SQLite store as ui_grid.py does, so that the figure
is the clean's and not the time to run 100,000 jobs.  The newest K runs ended now; the others a
day ago.  Figures, not assertions:

- the store's size (weir.db and its WAL; pages in use and on the free list) before and after;
- GET /api/v1/dags/{id}/dagRuns?limit=100 and the UI's grid (?limit=100): median of N reads,
  before and after;
- the server's RSS before and after;
- the clean of what ended more than an hour ago: its time, its batches, and the worst answer
  time of GET /api/v1/health asked every 10 ms meanwhile (how long a batch holds the loop).

    db_clean.py [--tasks 100] [--runs 1000] [--keep 20] [--reads 10]
"""

import argparse
import sqlite3
import threading
import time
import urllib.request

from benchlib import BenchServer, median, ms


def write_history(db_path, dag_id, n_runs, n_tasks, keep):
    db = sqlite3.connect(str(db_path), timeout=30)
    now = int(time.time() * 1000)
    (job_id,) = db.execute("SELECT coalesce(max(id), 0) FROM jobs").fetchone()
    with db:
        for r in range(n_runs):
            run_id = "bench_%05d" % r
            end = now if r >= n_runs - keep else now - 86400_000 + r * 1000
            start = end - 60_000
            db.execute("INSERT INTO dag_runs (dag_id, run_id, state, run_type, logical_date,"
                       " conf, reason, queued_at, start_date, end_date)"
                       " VALUES (?,?,?,?,?,'{}','',?,?,?)",
                       (dag_id, run_id, "success", "manual", start - r, start, start, end))
            jobs, tasks, events, tis = [], [], [], []
            for t in range(n_tasks):
                job_id += 1
                jobs.append((job_id, "%s.%s.t%03d" % (dag_id, run_id, t), start, start, end))
                tasks.append((job_id, start, end))
                events.extend((job_id, start + k, "state", "event %d" % k) for k in range(5))
                tis.append((dag_id, run_id, "t%03d" % t, job_id, start, end))
            db.executemany("INSERT INTO jobs (id, name, spec_json, state, cause, submitted_at,"
                           " started_at, ended_at, exit_code) VALUES"
                           " (?, ?, '{}', 'succeeded', 'exited', ?, ?, ?, 0)", jobs)
            db.executemany("INSERT INTO tasks (job_id, attempt, role, idx, state, cause,"
                           " started_at, ended_at, exit_code) VALUES"
                           " (?, 1, 'worker', 0, 'succeeded', 'exited', ?, ?, 0)", tasks)
            db.executemany("INSERT INTO events (job_id, time, kind, message) VALUES (?,?,?,?)",
                           events)
            db.executemany(
                "INSERT INTO task_instances (dag_id, run_id, task_id, map_index, state,"
                " try_number, max_tries, job_id, pool, pool_slots, priority, start_date,"
                " end_date, rendered_command, reason) VALUES"
                " (?,?,?,-1,'success',1,1,?,'default_pool',1,0,?,?,'true','')", tis)
            db.executemany(
                "INSERT INTO task_instance_tries (dag_id, run_id, task_id, map_index,"
                " try_number, job_id, state, start_date, end_date) VALUES"
                " (?,?,?,-1,1,?,'success',?,?)", tis)
    db.close()


def store_figures(home):
    db = sqlite3.connect(str(home / "weir.db"), timeout=30)
    pages, free, size = (db.execute("PRAGMA %s" % p).fetchone()[0]
                         for p in ("page_count", "freelist_count", "page_size"))
    counts = {t: db.execute("SELECT count(*) FROM %s" % t).fetchone()[0]
              for t in ("dag_runs", "task_instances", "jobs", "events")}
    db.close()
    wal = home / "weir.db-wal"
    return ("weir.db %.1f MiB (%d pages, %d free), WAL %.1f MiB; %s"
            % (pages * size / 1048576, pages, free,
               (wal.stat().st_size if wal.exists() else 0) / 1048576,
               ", ".join("%s %d" % kv for kv in counts.items())))


def timed_get(srv, path):
    req = urllib.request.Request(srv.url + path, headers={"Authorization": "Bearer " + srv.token})
    t0 = time.perf_counter()
    with urllib.request.urlopen(req, timeout=120) as r:
        r.read()
    return time.perf_counter() - t0


def reads(srv, dag_id, n, label):
    for path in ("/api/v1/dags/%s/dagRuns?limit=100" % dag_id,
                 "/api/v1/ui/dags/%s/grid?limit=100" % dag_id):
        timed_get(srv, path)
        times = [timed_get(srv, path) for _ in range(n)]
        print("  %-6s %-44s median %s, worst %s" % (label, path.split("?")[0], ms(median(times)),
                                                     ms(max(times))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=100)
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--keep", type=int, default=20)
    ap.add_argument("--reads", type=int, default=10)
    a = ap.parse_args()
    dag_id = "clean_bench"
    text = "dag_id: %s\ntasks:\n" % dag_id + "".join(
        "  - task_id: t%03d\n    command: \"true\"\n" % t for t in range(a.tasks))
    srv = BenchServer(dags={dag_id: text})
    try:
        t0 = time.perf_counter()
        write_history(srv.home / "weir.db", dag_id, a.runs, a.tasks, a.keep)
        print("%d runs x %d tasks = %d finished TIs (and as many jobs) written in %s"
              % (a.runs, a.tasks, a.runs * a.tasks, ms(time.perf_counter() - t0)))
        print("before: " + store_figures(srv.home))
        reads(srv, dag_id, a.reads, "before")
        print("  before RSS %d KiB" % srv.rss_kb())

        worst = [0.0]
        stop = threading.Event()

        def probe():
            while not stop.is_set():
                t = timed_get(srv, "/api/v1/health")
                worst[0] = max(worst[0], t)
                time.sleep(0.01)

        th = threading.Thread(target=probe)
        th.start()
        t0 = time.perf_counter()
        status, body = srv.api("POST", "/api/v1/weir/dbClean", {"older_than": "1h"})
        assert status == 202, (status, body)
        while body["state"] == "running":
            time.sleep(0.05)
            body = srv.api("GET", "/api/v1/weir/dbClean")[1]
        took = time.perf_counter() - t0
        stop.set()
        th.join()
        print("clean: %s in %s, %d batches; removed %s; worst /health answer meanwhile %s"
              % (body["state"], ms(took), body["batches"], body["removed"], ms(worst[0])))
        print("after:  " + store_figures(srv.home))
        reads(srv, dag_id, a.reads, "after")
        print("  after RSS %d KiB" % srv.rss_kb())
    finally:
        srv.stop()


if __name__ == "__main__":
    main()
