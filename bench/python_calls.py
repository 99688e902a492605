#!/usr/bin/env python3
"""200 remote calls of a trivial function, 2 at a time, through the `weir` Python package,
beside two floors measured in the same run on the same machine:

- fresh: a new `python3` process per call (2 at a time) that imports cloudpickle, unpickles
  the function and its argument from a file and writes the pickled result to a file, which
  the caller reads: what one job per call must at least pay;
- pool: concurrent.futures.ProcessPoolExecutor(2): warm workers, nothing recorded.

weir's calls ask 1 CPU each on a server that declares 2 vcores, so 2 run at a time; every call
is a job in the store with its own log.  Prints the time to all results, per call, the ratios,
and where a weir call's time goes (medians, from the API's timestamps and the client's).

    WEIR_BIN=build/weir PYTHONPATH=python /usr/bin/python3 bench/python_calls.py [--calls 200]
"""

import argparse
import concurrent.futures
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import cloudpickle

from benchlib import REPO, BenchServer, median, ms, parse_time

sys.path.insert(0, str(REPO / "python"))
import weir  # noqa: E402
from weir.remote import functions as _remote  # noqa: E402  (where a call is submitted)

FLOOR_CHILD = r"""
import sys, cloudpickle
with open(sys.argv[1], "rb") as f:
    fn, arg = cloudpickle.load(f)
with open(sys.argv[2], "wb") as f:
    f.write(cloudpickle.dumps(fn(arg)))
"""


def trivial(x):
    return x + 1


def stamped(x):
    import time as t
    return x + 1, t.time()


def run_fresh(n, par, py):
    d = Path(tempfile.mkdtemp(prefix="weir-bench-fresh."))
    child = d / "child.py"
    child.write_text(FLOOR_CHILD)

    def one(i):
        call, res = d / ("call%d.pkl" % i), d / ("res%d.pkl" % i)
        call.write_bytes(cloudpickle.dumps((trivial, i)))
        subprocess.run([py, str(child), str(call), str(res)], check=True)
        return cloudpickle.loads(res.read_bytes())

    return _timed_map(concurrent.futures.ThreadPoolExecutor, par, one, n)


def run_pool(n, par):
    return _timed_map(concurrent.futures.ProcessPoolExecutor, par, trivial, n)


def _timed_map(executor, par, fn, n):
    """Seconds for executor(par).map(fn, range(n)), its results checked."""
    t0 = time.monotonic()
    with executor(par) as ex:
        out = list(ex.map(fn, range(n)))
    wall = time.monotonic() - t0
    assert out == [i + 1 for i in range(n)]
    return wall


def run_weir(srv, n):
    weir.init(server=srv.url, token=srv.token, home=str(srv.home))
    f = weir.remote(cpus=1, memory="128m", name="trivial")(stamped)
    submit_s = []
    real_submit = _remote._submit

    def timed_submit(*a, **kw):
        t = time.monotonic()
        try:
            return real_submit(*a, **kw)
        finally:
            submit_s.append(time.monotonic() - t)
    _remote._submit = timed_submit
    t0 = time.monotonic()
    try:
        futures = [f.remote(i) for i in range(n)]
    finally:
        _remote._submit = real_submit
    got_at = []
    values = []
    for fut in futures:
        values.append(weir.get(fut))
        got_at.append(time.time())
    wall = time.monotonic() - t0
    assert [v[0] for v in values] == [i + 1 for i in range(n)]
    return wall, futures, values, got_at, submit_s


def breakdown(srv, futures, values, got_at, submit_s):
    jobs = [srv.job(f.job_id) for f in futures]
    ends = sorted(parse_time(j["ended_at"]) for j in jobs)
    rows = {"client submit (pickle, files, POST)": submit_s}
    queue, launch, start, after, read = [], [], [], [], []
    for j, v, got in zip(jobs, values, got_at):
        t = j["tasks"][0]
        sub, jst = parse_time(j["submitted_at"]), parse_time(j["started_at"])
        tst, tend = parse_time(t["started_at"]), parse_time(t["ended_at"])
        freed = max([e for e in ends if e <= jst] or [sub])
        queue.append(max(0.0, jst - max(sub, freed)))  # the slot free, the job not started
        launch.append(tst - jst)        # launcher: spawn, register, gang, fork+exec
        start.append(v[1] - tst)        # python start, import, unpickle: to the call
        after.append(tend - v[1])       # result written, exit, the launcher's report
        read.append(got - max(tend, parse_time(j["ended_at"])))  # ended -> value in hand
    rows.update({"queue (a slot free -> job started)": queue,
                 "launch (job started -> program running)": launch,
                 "python start + unpickle (program -> function)": start,
                 "result write + exit + report (function -> task ended)": after,
                 "result read (job ended -> value in the caller)": read})
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=200)
    a = ap.parse_args()
    n, par = a.calls, 2
    py = sys.executable
    print("load before: %s" % open("/proc/loadavg").read().strip())
    srv = BenchServer(vcores=2, memory="8g")
    try:
        # one warm-up of each, so that no side pays for a cold page cache
        run_fresh(4, par, py)
        run_pool(4, par)
        run_weir(srv, 4)
        fresh = run_fresh(n, par, py)
        pool = run_pool(n, par)
        srv_cpu, my_cpu = srv.cpu_s(), time.process_time()
        wall, futures, values, got_at, submit_s = run_weir(srv, n)
        srv_cpu, my_cpu = srv.cpu_s() - srv_cpu, time.process_time() - my_cpu
        rows = breakdown(srv, futures, values, got_at, submit_s)
        listed = len(srv.api("GET", "/api/v1/jobs?limit=100000")[1]["jobs"])
    finally:
        srv.stop()
    print("%d calls of a trivial function, %d at a time (weir: 1 CPU each on a server of 2 "
          "vcores; %d jobs recorded)" % (n, par, listed))
    print("%-44s %10s %12s %8s" % ("", "all", "per call", "ratio"))
    for name, w in (("fresh python3 per call (floor)", fresh),
                    ("ProcessPoolExecutor(2) (warm, unrecorded)", pool),
                    ("weir.remote + weir.get", wall)):
        print("%-44s %9.2fs %12s %7.2fx" % (name, w, ms(w / n), w / fresh))
    print("weir's overhead over the fresh process: %s per call (wall / calls); one call's "
          "own latency, medians:" % ms((wall - fresh) / n))
    for name, xs in rows.items():
        print("  %-58s %10s" % (name, ms(median(xs))))
    print("CPU per call beside the task's own: the server %s, the caller %s (on %d cores)"
          % (ms(srv_cpu / n), ms(my_cpu / n), os.cpu_count()))
    print("load after: %s" % open("/proc/loadavg").read().strip())


if __name__ == "__main__":
    main()
