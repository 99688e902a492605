#!/usr/bin/env python3
"""Datasets: the time from a dataset event to the first task of the run it starts running,
beside the time from a plain API trigger to its run's first task running (the floor: the
same run start and task start, without the dataset path).

Three paths, each N times on one weir server (median and spread):

- rest:    POST /api/v1/datasets/events for the URI a DAG is scheduled on; from the event's
           timestamp to the dependent run's task's start_date;
- outlet:  a producer DAG's task with outlets: [URI] succeeds; from that event's timestamp
           (GET /datasets/events?source_run_id=...) to the dependent run's task's start_date;
- trigger: POST /api/v1/dags/{dag_id}/dagRuns; from the run's queued_at to its task's
           start_date.

Every time is the server's own clock (the API's timestamps), so the client's polling adds
nothing.  start_date is when the task's program started (its launcher's report).  The API's
times are whole milliseconds, so the means are printed beside the medians, and each path's
mean as a ratio to the floor's.

    datasets.py [--runs N]
"""

import argparse
import statistics
import sys
import time

from benchlib import BenchServer, median, ms, parse_time

URI = "s3://bench/orders"
PRODUCER = 'dag_id: producer\ntasks:\n  - {task_id: make, command: "true", outlets: ["%s"]}\n' % URI
CONSUMER = 'dag_id: consumer\nschedule: ["%s"]\ntasks:\n  - {task_id: use, command: "true"}\n' % URI
PLAIN = 'dag_id: plain\ntasks:\n  - {task_id: use, command: "true"}\n'


def wait(pred, what, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(0.01)
    raise RuntimeError("timed out waiting for " + what)


class Bench:
    def __init__(self, srv):
        self.srv = srv

    def get(self, path):
        status, body = self.srv.api("GET", "/api/v1" + path)
        if status != 200:
            raise RuntimeError("GET %s: %s %r" % (path, status, body))
        return body

    def runs(self, dag_id):
        return self.get("/dags/%s/dagRuns?limit=1000" % dag_id)["dag_runs"]

    def task_start(self, dag_id, run_id, task_id="use"):
        """The task's start_date once it ended (its start is then final)."""
        def ended():
            ti = self.get("/dags/%s/dagRuns/%s/taskInstances/%s" % (dag_id, run_id, task_id))
            return ti if ti["state"] in ("success", "failed") else None
        ti = wait(ended, "task %s of %s %s" % (task_id, dag_id, run_id))
        if ti["state"] != "success":
            raise RuntimeError("task %s of %s %s: %s" % (task_id, dag_id, run_id, ti["state"]))
        return parse_time(ti["start_date"])

    def new_consumer_run(self, seen):
        def fresh():
            got = [r for r in self.runs("consumer") if r["dag_run_id"] not in seen]
            return got[0] if got else None
        run = wait(fresh, "a dataset-triggered run of consumer")
        seen.add(run["dag_run_id"])
        return run["dag_run_id"]

    def rest(self, seen):
        status, ev = self.srv.api("POST", "/api/v1/datasets/events", {"dataset_uri": URI})
        if status != 200:
            raise RuntimeError("POST /datasets/events: %s %r" % (status, ev))
        rid = self.new_consumer_run(seen)
        return self.task_start("consumer", rid) - parse_time(ev["timestamp"])

    def outlet(self, seen, i):
        rid = "p%d" % i
        status, run = self.srv.api("POST", "/api/v1/dags/producer/dagRuns", {"dag_run_id": rid})
        if status != 200:
            raise RuntimeError("trigger producer: %s %r" % (status, run))
        crid = self.new_consumer_run(seen)
        ev = wait(lambda: self.get("/datasets/events?source_run_id=%s" % rid)["dataset_events"],
                  "the producer's event")[0]
        return self.task_start("consumer", crid) - parse_time(ev["timestamp"])

    def trigger(self, i):
        status, run = self.srv.api("POST", "/api/v1/dags/plain/dagRuns", {"dag_run_id": "t%d" % i})
        if status != 200:
            raise RuntimeError("trigger plain: %s %r" % (status, run))
        return self.task_start("plain", "t%d" % i) - parse_time(run["queued_at"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    srv = BenchServer(vcores=2, memory="8g",
                      dags={"producer": PRODUCER, "consumer": CONSUMER, "plain": PLAIN},
                      prefix="weir-bench-datasets.")
    b = Bench(srv)
    out = {"rest": [], "outlet": [], "trigger": []}
    try:
        seen = set()
        for i in range(args.runs):
            # interleaved, so that a busy moment of the machine falls on all three
            out["trigger"].append(b.trigger(i))
            out["rest"].append(b.rest(seen))
            out["outlet"].append(b.outlet(seen, i))
    finally:
        srv.stop()
    # the API's times are whole milliseconds: the mean says more than the median here
    floor = statistics.mean(out["trigger"])
    print("event (or trigger) to the run's first task running, %d runs each "
          "(the server's clock, 1 ms resolution):" % args.runs)
    print("  %-28s %9s %9s %9s %9s  %s" % ("", "mean", "median", "min", "max", "mean/floor"))
    for name, label in (("trigger", "plain API trigger (floor)"),
                        ("rest", "POST /datasets/events"), ("outlet", "a task's outlet")):
        xs = out[name]
        print("  %-28s %9s %9s %9s %9s  %.2fx"
              % (label, ms(statistics.mean(xs)), ms(median(xs)), ms(min(xs)), ms(max(xs)),
                 statistics.mean(xs) / floor if floor > 0 else float("nan")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
