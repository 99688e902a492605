#!/usr/bin/env python3
"""A long run under a steady load (issue 30, "a week of runs"): DAGs on schedules, manual
triggers from a loop and plain jobs through one real weir server for --minutes (default 30:
about 20,000 DAG task instances and 2,000 jobs), everything submitted through the REST API.

The load, per minute (sizes scale with --minutes; --rate scales them all):
- three DAGs on `* * * * *`, each a start task, 48 `true` beside each other and an end task
  (150 task instances a minute);
- a DAG of 25 tasks (start, 23 beside each other, of which one `sleep 0.2`, end) triggered
  20 times (500);
- 67 one-task jobs of `true`.

Every minute it samples the server's resident memory (VmRSS) and open files (/proc/PID/fd),
the store's size (weir.db with its -wal), the answer times of `GET /api/v1/dags/{id}/dagRuns
?limit=100&order_by=-execution_date` (the Airflow client's listing, newest first) and of the
UI's grid (`GET /api/v1/ui/dags/{id}/grid?limit=25`, the UI's default), both for the
triggered DAG, whose history grows fastest: median and p95 of --reads reads each; and the
counts so far (read from the store, read-only).  One line a minute, and one more once all
that was submitted has finished (not counted below: the load has stopped); then a summary:

- memory and open files are *flat* when what the least-squares slope of the second half's
  samples adds over the second half is at most 5 % of the first sample after the warm-up
  (open files: at most 5 % or 2 descriptors, whichever is more; a sample catches the
  sockets and pipes of the moment); the slope an hour is printed beside it;
- each answer time's median over the first third of the samples after the warm-up beside the
  last third's, with the DAG's run count at each (an index lookup grows as log n: a few per
  cent over this range, where a scan grows with n).

Figures, not assertions: docs/benchmarks.md keeps them.

With --history N, N finished runs of the triggered DAG are written into the store before the
load (a week of its triggers is 201,600): the answer times on top of a long history.

    soak.py [--minutes 30] [--warmup M] [--reads 7] [--rate 1.0] [--history N]
"""

import argparse
import datetime
import math
import os
import sqlite3
import sys
import time
import urllib.request

from benchlib import BenchServer, job_spec, median

SCHEDULED = ("soak_sched_a", "soak_sched_b", "soak_sched_c")
MANUAL = "soak_manual"
SCHED_WIDTH = 48  # tasks beside each other in a scheduled DAG (plus start and end)
MANUAL_WIDTH = 23
TRIGGERS_PER_MIN = 20.0
JOBS_PER_MIN = 2000.0 / 30.0
ROUTES = (("dagRuns", "/api/v1/dags/%s/dagRuns?limit=100&order_by=-execution_date" % MANUAL),
          ("grid", "/api/v1/ui/dags/%s/grid?limit=25" % MANUAL))
TI_DONE = ("success", "failed", "upstream_failed", "skipped", "removed")


def dag_text(dag_id, width, schedule, slow=0):
    start = (datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=1))
    lines = ["dag_id: %s" % dag_id, "schedule: \"%s\"" % schedule]
    if schedule != "none":
        lines += ["start_date: %s" % start.strftime("%Y-%m-%dT00:00"), "catchup: false"]
    lines += ["max_active_runs: 16", "max_active_tasks: 32", "tasks:",
              "  - task_id: start", "    command: \"true\""]
    for i in range(width):
        lines += ["  - task_id: t%02d" % i, "    depends_on: [start]",
                  "    command: \"%s\"" % ("sleep 0.2" if i < slow else "true")]
    lines += ["  - task_id: end", "    trigger_rule: all_done",
              "    depends_on: [%s]" % ", ".join("t%02d" % i for i in range(width)),
              "    command: \"true\""]
    return "\n".join(lines) + "\n"


def quantile(xs, q):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    k = (len(xs) - 1) * q
    lo, hi = int(math.floor(k)), int(math.ceil(k))
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def slope(points):
    """Least-squares slope of (x, y) points; 0 with fewer than 2."""
    if len(points) < 2:
        return 0.0
    mx = sum(x for x, _ in points) / len(points)
    my = sum(y for _, y in points) / len(points)
    sxx = sum((x - mx) ** 2 for x, _ in points)
    return sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else 0.0


class Soak:
    def __init__(self, args):
        self.args = args
        dags = {d: dag_text(d, SCHED_WIDTH, "* * * * *") for d in SCHEDULED}
        dags[MANUAL] = dag_text(MANUAL, MANUAL_WIDTH, "none", slow=1)
        self.srv = BenchServer(
            vcores=64, memory="64g", dags=dags, prefix="weir-bench-soak.",
            config="resources:\n  vcores: 64\n  memory: 64g\n  gpus: 0\n"
                   "kill_grace_seconds: 1\npools:\n  default_pool: 64\n")
        self.db = self.srv.home / "weir.db"
        self.triggers = self.jobs = self.refused = 0
        self.samples = []
        if args.history:
            self.seed_history(args.history)

    def seed_history(self, n):
        """n finished runs of the triggered DAG, written straight into the store before the
        load (as bench/ui_grid.py does): the history of a longer soak (a week of the
        triggers is 201,600), one every 3 s before now.  Without their task instances: the
        grid shows the newest runs, which the load makes."""
        db = sqlite3.connect(str(self.db), timeout=60)
        now = int(time.time() * 1000)
        with db:
            db.executemany(
                "INSERT INTO dag_runs (dag_id, run_id, state, run_type, logical_date, conf,"
                " reason, queued_at, start_date, end_date) VALUES (?,?,?,'manual',?,'{}','',"
                "?,?,?)",
                ((MANUAL, "history__%06d" % i, "failed" if i % 50 == 0 else "success", t, t,
                  t, t + 2000) for i, t in ((i, now - (n - i) * 3000) for i in range(n))))
        db.close()

    # -- the load -----------------------------------------------------------------------------
    def submit_due(self, elapsed_min):
        rate = self.args.rate
        while self.triggers < int(elapsed_min * TRIGGERS_PER_MIN * rate):
            status, _ = self.srv.api("POST", "/api/v1/dags/%s/dagRuns" % MANUAL, {})
            self.triggers += 1
            self.refused += status != 200
        while self.jobs < int(elapsed_min * JOBS_PER_MIN * rate):
            self.srv.submit(job_spec(1, "true", name="soak-job-%d" % self.jobs))
            self.jobs += 1

    # -- what is measured ---------------------------------------------------------------------
    def proc_figures(self):
        pid = self.srv.proc.pid
        rss = self.srv.rss_kb()
        fds = len(os.listdir("/proc/%d/fd" % pid))
        store = sum(os.path.getsize(str(self.db) + s) for s in ("", "-wal")
                    if os.path.exists(str(self.db) + s))
        return rss, fds, store

    def counts(self):
        """What the store holds so far: task instances (all, finished, failed), plain jobs
        (all, finished, failed) and runs (the triggered DAG's, all DAGs', unfinished)."""
        db = sqlite3.connect("file:%s?mode=ro" % self.db, uri=True, timeout=30)
        try:
            ti = db.execute("SELECT count(*), coalesce(sum(state IN (%s)), 0),"
                            " coalesce(sum(state IN ('failed', 'upstream_failed')), 0)"
                            " FROM task_instances" % ",".join("'%s'" % s for s in TI_DONE)
                            ).fetchone()
            jobs = db.execute("SELECT count(*), coalesce(sum(state IN ('succeeded', 'failed',"
                              " 'killed')), 0), coalesce(sum(state <> 'succeeded' AND state IN"
                              " ('failed', 'killed')), 0) FROM jobs"
                              " WHERE name LIKE 'soak-job-%'").fetchone()
            runs = db.execute("SELECT coalesce(sum(dag_id = ?), 0), count(*),"
                              " coalesce(sum(state IN ('queued', 'running')), 0)"
                              " FROM dag_runs", (MANUAL,)).fetchone()
        finally:
            db.close()
        return ti, jobs, runs

    def timed_get(self, path):
        req = urllib.request.Request(self.srv.url + path,
                                     headers={"Authorization": "Bearer " + self.srv.token})
        t0 = time.perf_counter()
        with urllib.request.urlopen(req, timeout=60) as r:
            body = r.read()
        return time.perf_counter() - t0, len(body)

    def sample(self, minute):
        rss, fds, store = self.proc_figures()
        times = {name: [] for name, _ in ROUTES}
        size = {}
        for _ in range(self.args.reads):  # the routes alternated, so load changes hit both
            for name, path in ROUTES:
                t, size[name] = self.timed_get(path)
                times[name].append(t)
        ti, jobs, runs = self.counts()
        s = {"minute": minute, "rss": rss, "fds": fds, "store": store, "ti": ti, "jobs": jobs,
             "runs": runs, "size": size,
             "med": {n: median(ts) for n, ts in times.items()},
             "p95": {n: quantile(ts, 0.95) for n, ts in times.items()}}
        self.samples.append(s)
        print("%5.1f  %7d KB %4d fds %7.1f MB  TIs %6d (%6d done)  jobs %5d (%5d done)  "
              "runs %4d  dagRuns %6.1f / %6.1f ms  grid %6.1f / %6.1f ms"
              % (minute, rss, fds, store / 1e6, ti[0], ti[1], jobs[0], jobs[1], runs[0],
                 s["med"]["dagRuns"] * 1e3, s["p95"]["dagRuns"] * 1e3,
                 s["med"]["grid"] * 1e3, s["p95"]["grid"] * 1e3), flush=True)
        return s

    # -- the run ------------------------------------------------------------------------------
    def run(self):
        a = self.args
        print("soak: %g minutes, warm-up %g, %d runs of history; per minute %.0f triggers of "
              "%s (%d tasks), %d scheduled DAGs of %d tasks on * * * * *, %.0f one-task jobs; "
              "%d reads a route a sample"
              % (a.minutes, a.warmup, a.history, TRIGGERS_PER_MIN * a.rate, MANUAL,
                 MANUAL_WIDTH + 2, len(SCHEDULED), SCHED_WIDTH + 2, JOBS_PER_MIN * a.rate,
                 a.reads))
        print("  min      VmRSS  fds  store       task instances         plain jobs         "
              "runs  dagRuns med / p95       grid med / p95")
        t0 = time.monotonic()
        self.sample(0.0)
        next_sample = 1
        while True:
            elapsed = (time.monotonic() - t0) / 60.0
            if elapsed >= a.minutes:
                break
            self.submit_due(elapsed)
            if elapsed >= next_sample:
                self.sample(elapsed)
                next_sample += 1
            time.sleep(0.2)
        # the load stops (the schedules go on); wait for what was submitted to finish
        print("load stopped after %.1f min: %d triggers (%d refused), %d jobs; waiting for "
              "them to finish" % ((time.monotonic() - t0) / 60.0, self.triggers, self.refused,
                                  self.jobs), flush=True)
        deadline = time.monotonic() + a.drain * 60
        while time.monotonic() < deadline:
            ti, jobs, runs = self.counts()
            if jobs[1] >= self.jobs and runs[2] == 0 and ti[1] == ti[0]:
                break
            time.sleep(2)
        time.sleep(2)  # the last writes behind, the last closes
        self.sample((time.monotonic() - t0) / 60.0)
        return self.summary(time.monotonic() - t0)

    def under_load(self):
        """The samples after the warm-up and before the load stopped."""
        return [s for s in self.samples[:-1] if s["minute"] >= self.args.warmup]

    def flat(self, key, floor):
        """(first value after the warm-up, the second half's slope a minute, flat?)"""
        a = self.args
        after = self.under_load()
        if len(after) < 3:
            return None
        first = after[0][key]
        half = [s for s in after if s["minute"] >= a.minutes / 2.0] or after[len(after) // 2:]
        k = slope([(s["minute"], s[key]) for s in half])
        span = max(half[-1]["minute"] - half[0]["minute"], 1.0)
        return first, k, k * span, k * span <= max(0.05 * first, floor)

    def summary(self, took):
        a = self.args
        last = self.samples[-1]
        ti, jobs, runs = last["ti"], last["jobs"], last["runs"]
        print()
        print("ran %.1f min (load %g min): %d task instances (%d failed), %d plain jobs (%d "
              "failed), %d runs (%d of %s), %d triggers refused; store %.1f MB; once all "
              "had finished: %d KB resident, %d open files"
              % (took / 60.0, a.minutes, ti[0], ti[2], jobs[0], jobs[2], runs[1], runs[0],
                 MANUAL, self.refused, last["store"] / 1e6, last["rss"], last["fds"]))
        print("flat: what the second half's least-squares slope adds over the second half at "
              "most 5 %% of the first sample after the warm-up (%g min; open files: or 2)"
              % a.warmup)
        for key, unit, floor in (("rss", "KB", 0), ("fds", "fds", 2)):
            f = self.flat(key, floor)
            if f is None:
                print("  %-4s too few samples after the warm-up" % key)
                continue
            first, k, grew, ok = f
            print("  %-4s first after warm-up %d %s, last under load %d %s; second half %+.2f "
                  "%s/min: %+.1f over it (%+.1f %% of the first), %+.0f an hour: %s"
                  % (key, first, unit, self.under_load()[-1][key], unit, k, unit, grew,
                     100.0 * grew / first if first else 0.0, k * 60,
                     "flat" if ok else "GROWS"))
        after = self.under_load()
        n = max(1, len(after) // 3)
        early, late = after[:n], after[-n:]
        if not early:
            return 0
        print("answer times, median of the samples' medians (first third after the warm-up "
              "beside the last third) against the DAG's runs:")
        r0 = median([s["runs"][0] for s in early])
        r1 = median([s["runs"][0] for s in late])
        for name, path in ROUTES:
            m0 = median([s["med"][name] for s in early])
            m1 = median([s["med"][name] for s in late])
            p0 = median([s["p95"][name] for s in early])
            p1 = median([s["p95"][name] for s in late])
            print("  %-8s %s\n           %5.0f runs: median %.1f ms, p95 %.1f ms, %d bytes;"
                  " %5.0f runs: median %.1f ms, p95 %.1f ms, %d bytes; x%.2f for x%.2f runs "
                  "(log n: x%.2f)"
                  % (name, path, r0, m0 * 1e3, p0 * 1e3, early[0]["size"][name], r1, m1 * 1e3,
                     p1 * 1e3, late[-1]["size"][name], m1 / m0 if m0 else float("nan"),
                     r1 / r0 if r0 else float("nan"),
                     math.log(max(r1, 2)) / math.log(max(r0, 2))))
        return 0

    def stop(self):
        self.srv.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=30.0)
    ap.add_argument("--warmup", type=float, default=None,
                    help="minutes not counted in the flatness (default: a fifth, at least 1)")
    ap.add_argument("--reads", type=int, default=7)
    ap.add_argument("--rate", type=float, default=1.0, help="scales the load a minute")
    ap.add_argument("--history", type=int, default=0,
                    help="finished runs of the triggered DAG written into the store first")
    ap.add_argument("--drain", type=float, default=10.0,
                    help="minutes to wait at the end for what was submitted")
    a = ap.parse_args()
    if a.warmup is None:
        a.warmup = max(1.0, round(a.minutes / 5.0))
    soak = Soak(a)
    try:
        return soak.run()
    finally:
        soak.stop()


if __name__ == "__main__":
    sys.exit(main())
