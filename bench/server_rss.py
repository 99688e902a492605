#!/usr/bin/env python3
"""The server's resident memory: idle, with N finished jobs recorded, and its growth per
running task (a job of M sleeping tasks).  Reads VmRSS from /proc.

    server_rss.py [--jobs 1000] [--running 32]
"""

import argparse
import collections
import sys
import time

from benchlib import BenchServer, job_spec


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=1000)
    ap.add_argument("--running", type=int, default=32)
    args = ap.parse_args()
    srv = BenchServer(vcores=max(64, args.running), memory="64g")
    try:
        time.sleep(0.5)
        idle = srv.rss_kb()
        # N one-task jobs of `true`, submitted in batches so the queue stays short
        t0 = time.monotonic()
        ids = []
        states = collections.Counter()
        batch = 50
        for start in range(0, args.jobs, batch):
            chunk = [srv.submit(job_spec(1, "true", name="j%d" % i))["id"]
                     for i in range(start, min(start + batch, args.jobs))]
            for jid in chunk:
                states[srv.wait(jid, interval=0.02)["state"]] += 1
            ids += chunk
        took = time.monotonic() - t0
        time.sleep(0.5)
        with_jobs = srv.rss_kb()

        before = srv.rss_kb()
        job = srv.submit(job_spec(args.running, "sleep 120", name="sleepers"))
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            j = srv.job(job["id"])
            if sum(t["state"] == "running" for t in j["tasks"]) == args.running:
                break
            time.sleep(0.1)
        else:
            print("the %d sleeping tasks did not all run" % args.running)
            return 1
        time.sleep(0.5)
        running = srv.rss_kb()
        srv.api("DELETE", "/api/v1/jobs/%s" % job["id"])
        srv.wait(job["id"], timeout=60)
    finally:
        srv.stop()
    print("server resident memory (VmRSS)")
    print("  idle                               %6d KB" % idle)
    print("  with %d finished jobs recorded    %6d KB   (%d jobs ran in %.1f s, %.0f/s; %s)"
          % (args.jobs, with_jobs, args.jobs, took, args.jobs / took,
             ", ".join("%d %s" % (n, st) for st, n in sorted(states.items()))))
    print("  %d running tasks                   %6d KB   (+%.1f KB per running task)"
          % (args.running, running, (running - before) / args.running))
    return 0


if __name__ == "__main__":
    sys.exit(main())
