#!/usr/bin/env python3
"""Ray programs' calls on weir's warm workers (docs/internals/calls.md) side by side with
concurrent.futures.ProcessPoolExecutor(2), in one run on the same machine.  Figures, not
assertions.

- sync: a call, then its result, S times in a row (`ray.get(f.remote(i))`, `pool.submit(f,
  i).result()`): the median and the 95th percentile;
- actor: a synchronous actor method call S times in a row (`ray.get(a.f.remote(i))` on an
  actor of one core), beside the same pool call: the median and the 95th percentile;
- burst: N calls submitted at once, then all results gathered: calls a second;
- rss: a warm worker's resident memory (VmRSS) after the calls, and a pool worker's;
- large: a call that returns a 100 MB numpy array, `ray.get` of it (the median of 5), then
  that ref passed to two tasks that read it, beside the pool's `submit(...).result()` and
  two submits of the array: weir with results in shared memory (the default) and without
  (WEIR_WARM_SHM=0: through the results folder, as before), each a program of its own.
  Skipped when the interpreter has no numpy.

weir's side is a Ray program run by `weir run` against a server of its own that declares 2
vcores (so two warm workers, one core each); the pool runs in this process.  Prints both
and the ratios (weir / pool: over 1 is slower).  --profile prints where the program's time
goes in the sync loop (cProfile, the top functions by cumulative time).

    WEIR_BIN=build/weir /usr/bin/python3 bench/ray_calls.py [--sync 300] [--burst 2000]
"""

import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import time

from benchlib import REPO, WEIR_BIN, BenchServer

PROGRAM = r'''
import json, os, sys, time
import ray

ray.init()

@ray.remote
def f(x):
    return x + 1

@ray.remote
def pid(_):
    return os.getpid()

@ray.remote
class Actor:
    def f(self, x):
        return x + 1

S, N, PROFILE = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "1"
# warm: both workers up (two calls at once), and the function known to each
ray.get([f.remote(i) for i in range(50)])
for i in range(20):
    ray.get(f.remote(i))

def sync():
    out = []
    for i in range(S):
        t0 = time.perf_counter()
        assert ray.get(f.remote(i)) == i + 1
        out.append(time.perf_counter() - t0)
    return out

def profiled(name, run):
    if not PROFILE:
        return run()
    import cProfile, io, pstats
    pr = cProfile.Profile()
    pr.enable()
    got = run()
    pr.disable()
    s = io.StringIO()
    pstats.Stats(pr, stream=s).sort_stats("cumulative").print_stats(25)
    sys.stderr.write("--- %s\n%s" % (name, s.getvalue()))
    return got

lat = profiled("calls", sync)
t0 = time.perf_counter()
refs = [f.remote(i) for i in range(N)]
sub = time.perf_counter() - t0
assert ray.get(refs) == [i + 1 for i in range(N)]
burst = time.perf_counter() - t0
pids = set(ray.get([pid.remote(i) for i in range(20)]))
rss = []
for p in pids:
    with open("/proc/%d/status" % p) as fh:
        rss += [int(l.split()[1]) for l in fh if l.startswith("VmRSS:")]

# the actor last: it holds a core of its own for as long as it lives
actor = Actor.remote()
for i in range(20):
    ray.get(actor.f.remote(i))

def actor_sync():
    out = []
    for i in range(S):
        t0 = time.perf_counter()
        assert ray.get(actor.f.remote(i)) == i + 1
        out.append(time.perf_counter() - t0)
    return out

alat = profiled("actor calls", actor_sync)
print(json.dumps({"sync": lat, "actor": alat, "burst": burst, "submit": sub, "rss_kb": rss,
                  "workers": len(pids)}))
'''


LARGE = r'''
import json, sys, time
import numpy as np
import ray

ray.init()
N, K = int(sys.argv[1]), int(sys.argv[2])

@ray.remote
def big(n):
    return np.ones(n, dtype=np.uint8)

@ray.remote
def total(a):
    return int(a[::4096].sum())

ray.get([big.remote(1000), big.remote(1000)])  # both workers warm
lat = []
for _ in range(K):
    t0 = time.perf_counter()
    a = ray.get(big.remote(N))
    lat.append(time.perf_counter() - t0)
    assert a.nbytes == N
    del a
ref = big.remote(N)
ray.get(ref)
t0 = time.perf_counter()
assert ray.get([total.remote(ref) for _ in range(2)]) == [(N + 4095) // 4096] * 2
readers = time.perf_counter() - t0
print(json.dumps({"large": lat, "readers": readers}))
'''


def one(x):
    return x + 1


def ones(n):
    import numpy as np
    return np.ones(n, dtype=np.uint8)


def total(a):
    return int(a[::4096].sum())


def pool_large(n, k):
    with concurrent.futures.ProcessPoolExecutor(2) as pool:
        list(pool.map(one, range(4)))
        lat = []
        for _ in range(k):
            t0 = time.perf_counter()
            a = pool.submit(ones, n).result()
            lat.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        assert [f.result() for f in [pool.submit(total, a) for _ in range(2)]] == \
            [(n + 4095) // 4096] * 2
        return {"large": lat, "readers": time.perf_counter() - t0}


def run_program(srv, d, name, text, args, env_more=None):
    prog = os.path.join(d, name)
    with open(prog, "w") as fh:
        fh.write(text)
    env = dict(srv.env, WEIR_RAY_WARM="1", WEIR_RUN_PYTHON=sys.executable, **(env_more or {}))
    env.pop("PYTHONPATH", None)
    r = subprocess.run([WEIR_BIN, "run", prog] + [str(x) for x in args], capture_output=True,
                       text=True, env=env, cwd=d, timeout=600)
    if r.returncode != 0:
        sys.exit("the program failed (exit %d):\n%s\n%s" % (r.returncode, r.stdout, r.stderr))
    return json.loads(r.stdout.strip().splitlines()[-1]), r.stderr


def pool_pid(_):
    return os.getpid()


def pool_side(s, n):
    with concurrent.futures.ProcessPoolExecutor(2) as pool:
        list(pool.map(one, range(50)))
        lat = []
        for i in range(s):
            t0 = time.perf_counter()
            assert pool.submit(one, i).result() == i + 1
            lat.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        futs = [pool.submit(one, i) for i in range(n)]
        assert [f.result() for f in futs] == [i + 1 for i in range(n)]
        burst = time.perf_counter() - t0
        pids = set(pool.map(pool_pid, range(20)))
        rss = []
        for p in pids:
            with open("/proc/%d/status" % p) as fh:
                rss += [int(ln.split()[1]) for ln in fh if ln.startswith("VmRSS:")]
    return {"sync": lat, "burst": burst, "rss_kb": rss}


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sync", type=int, default=300)
    ap.add_argument("--burst", type=int, default=2000)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--large-mb", type=int, default=100)
    a = ap.parse_args()
    try:
        import numpy  # noqa: F401
        large = True
    except ImportError:
        large = False
    n_large = a.large_mb * 1000 * 1000
    with open("/proc/loadavg") as fh:
        load = fh.read().split()[:3]
    print("load average before: %s; %d CPUs" % (" ".join(load), os.cpu_count()))
    srv = BenchServer(vcores=2, memory="8g")
    try:
        with tempfile.TemporaryDirectory() as d:
            w, err = run_program(srv, d, "calls.py", PROGRAM, [a.sync, a.burst,
                                                               "1" if a.profile else "0"])
            if a.profile:
                print(err)
            if large:
                wl = run_program(srv, d, "large.py", LARGE, [n_large, 5])[0]
                wc = run_program(srv, d, "large.py", LARGE, [n_large, 5],
                                 {"WEIR_WARM_SHM": "0"})[0]
    finally:
        srv.stop()
    p = pool_side(a.sync, a.burst)
    pl = pool_large(n_large, 5) if large else None
    with open("/proc/loadavg") as fh:
        load = fh.read().split()[:3]
    rows = [("sync call, median (ms)", pct(w["sync"], 0.5) * 1e3, pct(p["sync"], 0.5) * 1e3,
             "<= 2"),
            ("sync call, p95 (ms)", pct(w["sync"], 0.95) * 1e3, pct(p["sync"], 0.95) * 1e3,
             ""),
            ("sync actor call, median (ms)", pct(w["actor"], 0.5) * 1e3,
             pct(p["sync"], 0.5) * 1e3, "<= 1"),
            ("sync actor call, p95 (ms)", pct(w["actor"], 0.95) * 1e3,
             pct(p["sync"], 0.95) * 1e3, ""),
            ("%d calls at once (calls/s)" % a.burst, a.burst / w["burst"],
             a.burst / p["burst"], ">= 2000"),
            ("worker RSS, largest (MB)", max(w["rss_kb"]) / 1024.0,
             max(p["rss_kb"]) / 1024.0, "<= 30")]
    if pl is not None:
        rows += [("%d MB result, median (ms)" % a.large_mb, pct(wl["large"], 0.5) * 1e3,
                  pct(pl["large"], 0.5) * 1e3, ""),
                 ("  without shm (ms)", pct(wc["large"], 0.5) * 1e3,
                  pct(pl["large"], 0.5) * 1e3, ""),
                 ("  read by 2 tasks (ms)", wl["readers"] * 1e3, pl["readers"] * 1e3, ""),
                 ("  by 2 tasks, no shm (ms)", wc["readers"] * 1e3, pl["readers"] * 1e3,
                  "")]
    print("%-28s %10s %10s %8s %8s" % ("", "weir", "pool(2)", "ratio", "target"))
    for name, wv, pv, target in rows:
        print("%-28s %10.2f %10.2f %8.2f %8s" % (name, wv, pv, wv / pv, target))
    print("weir: %d warm workers; the burst's submissions took %.1f ms"
          % (w["workers"], w["submit"] * 1e3))
    print("load average after: %s" % " ".join(load))


if __name__ == "__main__":
    sys.path.insert(0, str(REPO / "python"))
    main()
