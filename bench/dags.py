#!/usr/bin/env python3
"""Workflows side by side: the same graph of trivial `true` tasks through weir (a DAG file, a
manual trigger, the run's end) and through GNU make -j2, ninja -j2 and Snakemake -j2.

- chain:  N tasks, each depending on the one before (latency per hop = total / N);
- fanout: M independent tasks (throughput = M / total).

weir runs with 2 tasks at once, as -j2: the server declares 2 vcores, each task takes 1, and
default_pool has 2 slots.  Every state change and every task's log is recorded as always (the
store is SQLite in WAL mode, each task a job with its launcher and log file).  weir's time is
from the POST that triggers the run to the run's end_date (the server's clock), plus what the
trigger itself took; a tool's time is its process from start to exit.  Median of R runs each.
Prints the figures and the ratios to make.

    dags.py [--runs R] [--chain N] [--fanout M] [--only chain|fanout] [--no-install]
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import BenchServer, median, parse_time

TOOLS = ("make", "ninja", "snakemake")


# -- the graphs -------------------------------------------------------------------------------
def deps(shape, n):
    """(name, [names it depends on]) for each task, in order."""
    names = ["t%04d" % i for i in range(n)]
    if shape == "chain":
        return [(name, [names[i - 1]] if i else []) for i, name in enumerate(names)]
    return [(name, []) for name in names]


def makefile(graph):
    # phony targets: make runs each recipe (`true`) once per invocation, nothing is up to date
    names = [n for n, _ in graph]
    lines = [".PHONY: all " + " ".join(names), "all: " + " ".join(names)]
    for name, ds in graph:
        lines += ["%s:%s" % (name, "".join(" " + d for d in ds)), "\ttrue"]
    return "\n".join(lines) + "\n"


def ninja_file(graph):
    # phony-like outputs that are never written: ninja runs every edge each time
    lines = ["rule t", "  command = true", ""]
    for name, ds in graph:
        lines.append("build %s: t%s" % (name, (" || " + " ".join(ds)) if ds else ""))
    lines.append("build all: phony " + " ".join(n for n, _ in graph))
    lines.append("default all")
    return "\n".join(lines) + "\n"


def snakefile(graph):
    # Snakemake wants files: each rule touches its own (the least a file-based tool can do);
    # a rule per task keeps the graph the same shape as the others
    lines = ["rule all:", "    input: [%s]" % ", ".join('"out/%s"' % n for n, _ in graph), ""]
    for name, ds in graph:
        lines += ["rule %s:" % name, '    output: "out/%s"' % name]
        if ds:
            lines.append("    input: [%s]" % ", ".join('"out/%s"' % d for d in ds))
        lines += ['    shell: "true; touch {output}"', ""]
    return "\n".join(lines)


def dag_yaml(dag_id, graph):
    lines = ["dag_id: %s" % dag_id, "schedule: none", "tasks:"]
    for name, ds in graph:
        lines.append("  - task_id: %s" % name)
        if ds:
            lines.append("    depends_on: [%s]" % ", ".join(ds))
        lines.append('    command: "true"')
    return "\n".join(lines) + "\n"


# -- the tools --------------------------------------------------------------------------------
def ensure_tools(install):
    missing = [t for t, pkg in (("ninja", "ninja-build"), ("snakemake", "snakemake"))
               if not shutil.which(t)]
    if missing and install and shutil.which("apt-get"):
        pkgs = ["ninja-build" if t == "ninja" else t for t in missing]
        print("(installing %s)" % " ".join(pkgs), flush=True)
        subprocess.run(["apt-get", "install", "-y"] + pkgs, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    return [t for t in TOOLS if shutil.which(t)]


def tool_cmd(tool, d):
    if tool == "make":
        return ["make", "-s", "-j2", "-f", str(d / "Makefile")]
    if tool == "ninja":
        return ["ninja", "-j2", "-C", str(d)]
    return ["snakemake", "-j2", "-q", "--snakefile", str(d / "Snakefile"), "--directory", str(d),
            "--forceall", "--nolock"]


def time_tool(tool, d, runs):
    out = []
    for _ in range(runs):
        if tool == "snakemake":
            shutil.rmtree(d / "out", ignore_errors=True)
            shutil.rmtree(d / ".snakemake", ignore_errors=True)
        if tool == "ninja":
            for f in (".ninja_log", ".ninja_deps"):
                try:
                    os.unlink(d / f)
                except FileNotFoundError:
                    pass
        t0 = time.time()
        r = subprocess.run(tool_cmd(tool, d), stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, cwd=d, timeout=3600)
        t = time.time() - t0
        if r.returncode != 0:
            print("  %s failed (exit %d): %s" % (tool, r.returncode, r.stderr.decode()[-400:]))
            return None
        out.append(t)
    return out


# -- weir -------------------------------------------------------------------------------------
class DagServer(BenchServer):
    """BenchServer with a DAG folder and a configuration that runs 2 tasks at once."""

    def __init__(self, graphs, slots=2):
        super().__init__(
            config="resources:\n  vcores: %d\n  memory: 32g\n  gpus: 0\n"
                   "kill_grace_seconds: 1\npools:\n  default_pool: %d\n" % (slots, slots),
            dags={dag_id: dag_yaml(dag_id, graph) for dag_id, graph in graphs.items()},
            prefix="weir-bench-dags.")

    def run_once(self, dag_id, n, timeout=3600):
        """Seconds from the trigger to the run's end (server's end_date), checked whole."""
        t0 = time.time()
        status, run = self.api("POST", "/api/v1/dags/%s/dagRuns" % dag_id, {})
        if status != 200:
            raise RuntimeError("trigger %s: %s %r" % (dag_id, status, run))
        rid = run["dag_run_id"]
        deadline = time.monotonic() + timeout
        while True:
            status, run = self.api("GET", "/api/v1/dags/%s/dagRuns/%s" % (dag_id, rid))
            if run["state"] in ("success", "failed"):
                break
            if time.monotonic() > deadline:
                raise RuntimeError("run %s of %s still %s" % (rid, dag_id, run["state"]))
            time.sleep(0.02)
        if run["state"] != "success":
            raise RuntimeError("run %s of %s: %s" % (rid, dag_id, run["state"]))
        # the API pages lists (at most 1000 a page, as Airflow's): read every page
        ok, offset = 0, 0
        while True:
            tis = self.api("GET", "/api/v1/dags/%s/dagRuns/%s/taskInstances?limit=1000"
                           "&offset=%d" % (dag_id, rid, offset))[1]["task_instances"]
            ok += sum(1 for ti in tis if ti["state"] == "success")
            offset += len(tis)
            if not tis or offset >= n:
                break
        if ok != n:
            raise RuntimeError("run %s of %s: %d of %d TIs succeeded" % (rid, dag_id, ok, n))
        return parse_time(run["end_date"]) - t0


def bench_weir(graphs, runs):
    """{dag_id: [seconds per run]}, {dag_id: [the server's CPU seconds per run]}"""
    srv = DagServer(graphs)
    out, cpu = {}, {}
    try:
        for dag_id, graph in graphs.items():
            out[dag_id], cpu[dag_id] = [], []
            for _ in range(runs):
                c0 = srv.cpu_s()
                out[dag_id].append(srv.run_once(dag_id, len(graph)))
                cpu[dag_id].append(srv.cpu_s() - c0)
    finally:
        srv.stop()
    return out, cpu


# -- main -------------------------------------------------------------------------------------
def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--chain", type=int, default=100)
    ap.add_argument("--fanout", type=int, default=2000)
    ap.add_argument("--only", choices=("chain", "fanout"))
    ap.add_argument("--no-install", action="store_true")
    ap.add_argument("--tools", default=",".join(TOOLS), help="comma-separated peers to run")
    args = ap.parse_args()

    have = ensure_tools(not args.no_install)
    tools = [t for t in args.tools.split(",") if t]
    shapes = [s for s in ("chain", "fanout") if args.only in (None, s)]
    sizes = {"chain": args.chain, "fanout": args.fanout}
    graphs = {s: deps(s, sizes[s]) for s in shapes}

    work = Path(tempfile.mkdtemp(prefix="weir-bench-graphs."))
    peers = {}
    try:
        for s in shapes:
            d = work / s
            d.mkdir()
            (d / "Makefile").write_text(makefile(graphs[s]))
            (d / "build.ninja").write_text(ninja_file(graphs[s]))
            (d / "Snakefile").write_text(snakefile(graphs[s]))
            for t in tools:
                peers[(s, t)] = time_tool(t, d, args.runs) if t in have else None
        weir, weir_cpu = bench_weir({("bench_" + s): graphs[s] for s in shapes}, args.runs)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print("workflows: weir (2 vcores, default_pool 2) beside make/ninja/snakemake -j2, "
          "median of %d runs" % args.runs)
    for s in shapes:
        n = sizes[s]
        w = median(weir["bench_" + s])
        mk = median(peers.get((s, "make")) or [])
        if s == "chain":
            print("  chain of %d `true` (latency per hop = total / %d)" % (n, n))
            unit = lambda t: "%8.1f ms total %6.2f ms/hop" % (t * 1000.0, t * 1000.0 / n)
        else:
            print("  %d independent `true` (throughput)" % n)
            unit = lambda t: "%8.1f ms total %7.0f tasks/s" % (t * 1000.0, n / t)
        for t in tools:
            xs = peers.get((s, t))
            if t not in have:
                print("    %-10s not installed" % t)
            elif not xs:
                print("    %-10s failed" % t)
            else:
                print("    %-10s %s" % (t, unit(median(xs))))
        print("    %-10s %s   (%.2fx make's time)"
              % ("weir", unit(w), w / mk if mk else float("nan")))
        print("    weir server CPU: %.2f ms a task (the run's CPU / %d, median of runs)"
              % (median(weir_cpu["bench_" + s]) * 1000.0 / n, n))
        if s == "chain":
            print("    target: per hop <= 2x make's: %s" % ("met" if w <= 2 * mk else "missed"))
        else:
            print("    target: throughput >= make's: %s" % ("met" if w <= mk else "missed"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
