#!/usr/bin/env python3
"""A Ray program's synchronous call on Slurm: on a warm worker (a Slurm job that reaches the
program over its TCP channel, docs/internals/calls.md) beside a weir job a call
(`WEIR_RAY_WARM=0`: each call a Slurm job of its own), on the project's throw-away local
cluster (tests/slurm/start.sh: slurmctld, 2 slurmd of 4 CPUs, munge, all on loopback;
stopped at the end, also on failure).  And the same warm call over the Unix socket on a
server that runs its jobs locally, for the channel's own cost.  Figures, not assertions.

- warm: `ray.get(f.remote(i))` S times in a row after the workers are up: median and p95;
- a job a call: the same J times (each a Slurm job: sbatch, slurmctld's pass, srun, the
  launcher, a fresh python3): median and p95.

    WEIR_BIN=build/weir /usr/bin/python3 bench/ray_slurm.py [--sync 300] [--jobs 8]

Needs root (slurmd and munged run as root) and Debian's slurmctld, slurmd, slurm-client, munge.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

from benchlib import WEIR_BIN, BenchServer
from slurm import start_cluster, stop_cluster

PROGRAM = r'''
import json, sys, time
import ray

@ray.remote
def f(x):
    return x + 1

S = int(sys.argv[1])
ray.get([f.remote(i) for i in range(10)])  # the worker up, the function known to it
out = []
for i in range(S):
    t0 = time.perf_counter()
    assert ray.get(f.remote(i)) == i + 1
    out.append(time.perf_counter() - t0)
print(json.dumps(out))
'''


def run(srv, prog, n, env_more):
    env = dict(srv.env, **env_more)
    env.pop("PYTHONPATH", None)
    r = subprocess.run([WEIR_BIN, "run", prog, str(n)], capture_output=True, text=True,
                       env=env, cwd=os.path.dirname(prog), timeout=1800)
    if r.returncode != 0:
        sys.exit("the program failed (exit %d):\n%s\n%s" % (r.returncode, r.stdout, r.stderr))
    return json.loads(r.stdout.strip().splitlines()[-1])


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sync", type=int, default=300)
    ap.add_argument("--jobs", type=int, default=8)
    a = ap.parse_args()
    with open("/proc/loadavg") as fh:
        print("load average before: %s; %d CPUs" % (" ".join(fh.read().split()[:3]),
                                                    os.cpu_count()))
    with tempfile.TemporaryDirectory(prefix="weir-bench-ray-slurm.") as d:
        prog = os.path.join(d, "calls.py")
        with open(prog, "w") as fh:
            fh.write(PROGRAM)
        cluster = os.path.join(d, "cluster")
        os.mkdir(cluster)
        slurm_env = start_cluster(cluster)
        try:
            os.environ.update(slurm_env)  # the server's sbatch, squeue reach the cluster
            srv = BenchServer(config="executor: slurm\nkill_grace_seconds: 1\n",
                              prefix="weir-bench-ray-slurm.")
            try:
                warm = run(srv, prog, a.sync, {"WEIR_RAY_WARM": "1", "WEIR_WARM_WORKERS": "1",
                                               "WEIR_WARM_LISTEN": "127.0.0.1"})
                cold = run(srv, prog, a.jobs, {"WEIR_RAY_WARM": "0"})
            finally:
                srv.stop()
        finally:
            stop_cluster(cluster)
        local = BenchServer(vcores=2, memory="8g", prefix="weir-bench-ray-slurm.")
        try:
            unix = run(local, prog, a.sync, {"WEIR_RAY_WARM": "1", "WEIR_WARM_WORKERS": "1"})
        finally:
            local.stop()
    rows = [("Slurm, warm worker over TCP", warm), ("Slurm, a job a call", cold),
            ("local, warm worker over Unix", unix)]
    print("%-32s %6s %12s %12s" % ("sync call", "calls", "median (ms)", "p95 (ms)"))
    for name, xs in rows:
        print("%-32s %6d %12.2f %12.2f" % (name, len(xs), pct(xs, 0.5) * 1e3,
                                          pct(xs, 0.95) * 1e3))
    print("a job a call / warm on Slurm (medians): %.0fx" % (pct(cold, 0.5) / pct(warm, 0.5)))
    with open("/proc/loadavg") as fh:
        print("load average after: %s" % " ".join(fh.read().split()[:3]))


if __name__ == "__main__":
    main()
