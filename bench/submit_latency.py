#!/usr/bin/env python3
"""From `weir submit` of an 8-task job of `true` to all tasks running, and to the job's result;
median of N runs, beside the floor (a shell that starts 8 `true` and waits) and, when a local
Slurm answers, `srun -n 8 true`.  Prints the figures and the ratios to the floor.

    submit_latency.py [--runs N] [--tasks 8]
"""

import argparse
import json
import shutil
import subprocess
import sys
import time

from benchlib import BenchServer, WEIR_BIN, median, ms, parse_time


def time_cmd(args, runs, env=None):
    out = []
    for _ in range(runs):
        t0 = time.time()
        try:
            r = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env=env, timeout=30)
        except subprocess.TimeoutExpired:
            return None
        out.append(time.time() - t0)
        if r.returncode != 0:
            return None
    return out


def slurm_answers():
    if not shutil.which("srun") or not shutil.which("sinfo"):
        return False, "no srun on this machine"
    try:
        r = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True,
                           timeout=10)
    except subprocess.TimeoutExpired:
        return False, "sinfo timed out"
    if r.returncode != 0 or "idle" not in r.stdout:
        return False, "no idle local Slurm (sinfo: %s)" % (r.stderr.strip() or r.stdout.strip())
    return True, ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--tasks", type=int, default=8)
    args = ap.parse_args()
    n = args.tasks

    floor = time_cmd(["sh", "-c", " ".join(["true &"] * n) + " wait"], args.runs)
    srv = BenchServer()
    try:
        spec_path = srv.dir / "true8.json"
        spec_path.write_text(json.dumps({
            "name": "true%d" % n, "framework": "none",
            "roles": {"worker": {"instances": n, "memory": "64m", "vcores": 1,
                                 "command": "true"}}}))
        # one warm-up job, not counted (first SQLite pages, first fork of the launcher binary)
        subprocess.run([WEIR_BIN, "submit", str(spec_path)], env=srv.env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
        to_running, to_result, to_ended = [], [], []
        for _ in range(args.runs):
            t0 = time.time()
            r = subprocess.run([WEIR_BIN, "submit", str(spec_path)], env=srv.env,
                               capture_output=True, text=True, timeout=120)
            t1 = time.time()
            if r.returncode != 0:
                print("submit failed (exit %d):\n%s%s" % (r.returncode, r.stdout, r.stderr))
                return 1
            job = srv.api("GET", "/api/v1/jobs?limit=1")[1]["jobs"][0]
            job = srv.job(job["id"])
            starts = [parse_time(t["started_at"]) for t in job["tasks"] if t.get("started_at")]
            if len(starts) != n:
                print("job %s: %d of %d tasks have a start time" % (job["id"], len(starts), n))
                return 1
            to_running.append(max(starts) - t0)
            to_ended.append(parse_time(job["ended_at"]) - t0)
            to_result.append(t1 - t0)
    finally:
        srv.stop()

    f = median(floor)
    print("submit latency, %d tasks of `true`, median of %d runs" % (n, args.runs))
    print("  floor (sh: %d x true &, wait)        %s" % (n, ms(f)))
    print("  weir submit -> all %d running        %s   (%.1fx the floor)"
          % (n, ms(median(to_running)), median(to_running) / f))
    print("  weir submit -> job ended (server)   %s   (%.1fx the floor)"
          % (ms(median(to_ended)), median(to_ended) / f))
    print("  weir submit -> its exit (result)    %s   (%.1fx the floor)"
          % (ms(median(to_result)), median(to_result) / f))
    ok, why = slurm_answers()
    if ok:
        # --overcommit: 8 tasks on fewer CPUs, as the floor and weir (declared vcores) do
        s = time_cmd(["srun", "--overcommit", "-n", str(n), "true"], args.runs)
        if s:
            print("  srun -n %d true                      %s   (%.1fx the floor)"
                  % (n, ms(median(s)), median(s) / f))
        else:
            print("  srun -n %d true                      failed or timed out" % n)
    else:
        print("  srun -n %d true                      skipped: %s" % (n, why))
    return 0


if __name__ == "__main__":
    sys.exit(main())
