#!/usr/bin/env python3
"""Time to running of a one-task job with no venv, and with a 200 MB venv.zip the cache already
holds (a second job with the same archive), median of N runs each; the first (cold) job with
the archive is shown too.  The archive is random data (incompressible) stored in a zip.

    venv_start.py [--runs 10] [--size-mb 200]
"""

import argparse
import os
import sys
import time
import zipfile

from benchlib import BenchServer, job_spec, median, ms, parse_time


def make_zip(path, size_mb):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        with z.open("venv/bin/python", "w") as f:
            f.write(b"#!/bin/sh\nexec python3 \"$@\"\n")
        for i in range(size_mb // 8):
            with z.open("venv/lib/blob%03d.bin" % i, "w") as f:
                for _ in range(8):
                    f.write(os.urandom(1 << 20))


def time_to_running(srv, spec):
    t0 = time.time()
    job = srv.submit(spec)
    job = srv.wait(job["id"])
    if job["state"] != "succeeded":
        raise RuntimeError("job %s %s: %s" % (job["id"], job["state"], job.get("reason")))
    return parse_time(job["tasks"][0]["started_at"]) - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--size-mb", type=int, default=200)
    args = ap.parse_args()
    srv = BenchServer()
    try:
        venv = srv.dir / "venv.zip"
        make_zip(venv, args.size_mb)
        size = venv.stat().st_size
        with_venv = job_spec(1, "true", artifacts=[{"path": str(venv), "name": "venv"}])
        plain = job_spec(1, "true")
        time_to_running(srv, plain)  # warm-up
        cold = time_to_running(srv, with_venv)
        no_venv, warm = [], []
        for _ in range(args.runs):
            no_venv.append(time_to_running(srv, plain))
            warm.append(time_to_running(srv, with_venv))
    finally:
        srv.stop()
    print("time to running, one task, median of %d runs (venv.zip: %d MB of random data)"
          % (args.runs, size >> 20))
    print("  no venv                            %s" % ms(median(no_venv)))
    print("  same venv again (cached)           %s   (%+.1f ms)"
          % (ms(median(warm)), (median(warm) - median(no_venv)) * 1000))
    print("  first job with the venv (unpacks)  %s" % ms(cold))
    return 0


if __name__ == "__main__":
    sys.exit(main())
