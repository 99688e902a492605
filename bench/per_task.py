#!/usr/bin/env python3
"""What one short task costs, every figure of the target table side by side in one run, each
beside its floor, with the ratio to the target:

- a chain of N `true` DAG tasks: latency per hop, beside make -j2 (target: 2x make's per hop);
- M independent `true` DAG tasks with 2 slots: tasks/s, beside make -j2 (target: 0.6x make's
  rate);
- `weir submit` of a G-task gang of `true` to its result, beside the shell floor (a shell that
  starts G `true` and waits; target 3x); the CLI's own start (`weir --version`, no server)
  is printed apart, and the submit's figure less it;
- the server's CPU per DAG task, over the chain and the fan-out (target 0.3 ms), and beside
  it the node's: the agent's own, and its shims' with their programs' (those it reaped and
  those still alive, the spares in its pool);
- resident memory: the idle server (target 10 MB), the agent when `weir agent status` answers
  (target 2 MB; else "no agent"), and what R running `sleep` tasks add per task (target
  100 KB, in the server and in the agent).

Median of --runs rounds each.  Figures, not assertions: docs/benchmarks.md keeps them.

    per_task.py [--runs R] [--chain N] [--fanout M] [--gang G] [--running R]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import BenchServer, WEIR_BIN, job_spec, median, parse_time
from dags import DagServer, deps, makefile, time_tool

TARGETS = {"hop": 2.0, "rate": 0.6, "gang": 3.0, "cpu_ms": 0.3, "idle_mb": 10.0,
           "agent_mb": 2.0, "per_task_kb": 100.0}


def ratio_line(name, value, target, better_low=True, unit=""):
    ok = value <= target if better_low else value >= target
    print("    %-34s %8.2f%s   target %s%g%s: %s (%.1fx the target)"
          % (name, value, unit, "<= " if better_low else ">= ", target, unit,
             "met" if ok else "missed", value / target if target else float("nan")))


def time_cmd(args, runs, env=None):
    out = []
    for _ in range(runs):
        t0 = time.time()
        r = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                           timeout=120)
        if r.returncode != 0:
            return None
        out.append(time.time() - t0)
    return out


def dag_figures(runs, chain, fanout):
    """make's and weir's seconds per run of each shape, and weir's server CPU per task."""
    graphs = {"chain": deps("chain", chain), "fanout": deps("fanout", fanout)}
    work = Path(tempfile.mkdtemp(prefix="weir-bench-per-task."))
    mk, weir, cpu, node = {}, {}, {}, {}
    try:
        for s, g in graphs.items():
            d = work / s
            d.mkdir()
            (d / "Makefile").write_text(makefile(g))
        srv = DagServer({"bench_" + s: g for s, g in graphs.items()})
        try:
            for s, g in graphs.items():
                mk[s], weir[s], cpu[s], node[s] = [], [], [], []
                for _ in range(runs):
                    # alternate the two, so that a change of the machine's load hits both
                    mk[s] += time_tool("make", work / s, 1) or []
                    c0 = srv.cpu_s()
                    a0 = proc_cpu_s(agent_pid(srv.env))
                    weir[s].append(srv.run_once("bench_" + s, len(g)))
                    cpu[s].append((srv.cpu_s() - c0) / len(g))
                    # the agent's own CPU, and its shims' with their programs' (reaped)
                    a1 = proc_cpu_s(agent_pid(srv.env))
                    if a0 and a1:
                        node[s].append(((a1[0] - a0[0]) / len(g), (a1[1] - a0[1]) / len(g)))
        finally:
            srv.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return mk, weir, cpu, node


def gang_figures(runs, n):
    floor = time_cmd(["sh", "-c", " ".join(["true &"] * n) + " wait"], runs)
    cli = time_cmd([WEIR_BIN, "--version"], runs)
    srv = BenchServer()
    try:
        spec = srv.dir / "gang.json"
        spec.write_text(json.dumps(job_spec(n, "true", name="gang%d" % n)))
        subprocess.run([WEIR_BIN, "submit", str(spec)], env=srv.env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=120)  # warm-up, not counted
        result, ended = [], []
        for _ in range(runs):
            t0 = time.time()
            r = subprocess.run([WEIR_BIN, "submit", str(spec)], env=srv.env,
                               capture_output=True, text=True, timeout=120)
            result.append(time.time() - t0)
            if r.returncode != 0:
                raise RuntimeError("submit failed: %s%s" % (r.stdout, r.stderr))
            job = srv.api("GET", "/api/v1/jobs?limit=1")[1]["jobs"][0]
            ended.append(parse_time(srv.job(job["id"])["ended_at"]) - t0)
    finally:
        srv.stop()
    return floor, cli, result, ended


def agent_pid(env):
    """The node agent's pid when `weir agent status` answers with it, else None."""
    try:
        r = subprocess.run([WEIR_BIN, "agent", "status", "--json"], env=env,
                           capture_output=True, text=True, timeout=10)
        return int(json.loads(r.stdout).get("agent_pid")) if r.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, ValueError, TypeError, AttributeError):
        return None


def stat_ticks(pid):
    """(own, reaped children's) clock ticks from /proc/PID/stat; None when it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14])


def live_children(pid):
    out = []
    try:
        for tid in os.listdir("/proc/%d/task" % pid):
            with open("/proc/%d/task/%s/children" % (pid, tid)) as f:
                out += [int(c) for c in f.read().split()]
    except OSError:
        pass
    return out


def tree_ticks(pid):
    """Ticks of a live process with everything below it, reaped or alive."""
    t = stat_ticks(pid)
    if t is None:
        return 0
    return t[0] + t[1] + sum(tree_ticks(c) for c in live_children(pid))


def proc_cpu_s(pid):
    """(its own CPU seconds, its children's: those it reaped and those alive, with theirs) from
    /proc; None without pid.  A live child's CPU (a spare, a shim still running) is not in
    the reaped figure yet, so the live ones count too."""
    if pid is None:
        return None
    t = stat_ticks(pid)
    if t is None:
        return None
    tck = os.sysconf("SC_CLK_TCK")
    return t[0] / tck, (t[1] + sum(tree_ticks(c) for c in live_children(pid))) / tck


def agent_rss_kb(env):
    """The agent's VmRSS when `weir agent status` answers with its pid, else None."""
    pid = agent_pid(env)
    if pid is None:
        return None
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (ValueError, TypeError, AttributeError, OSError):
        return None
    return None


def memory_figures(running):
    srv = BenchServer(vcores=max(64, running), memory="64g")
    try:
        time.sleep(0.5)
        idle = srv.rss_kb()
        agent_idle = agent_rss_kb(srv.env)
        job = srv.submit(job_spec(running, "sleep 120", name="sleepers"))
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            j = srv.job(job["id"])
            if sum(t["state"] == "running" for t in j["tasks"]) == running:
                break
            time.sleep(0.1)
        else:
            raise RuntimeError("the %d sleeping tasks did not all run" % running)
        time.sleep(0.5)
        busy = srv.rss_kb()
        agent_busy = agent_rss_kb(srv.env)
        srv.api("DELETE", "/api/v1/jobs/%s" % job["id"])
        srv.wait(job["id"], timeout=60)
    finally:
        srv.stop()
    return idle, busy, agent_idle, agent_busy


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--chain", type=int, default=100)
    ap.add_argument("--fanout", type=int, default=2000)
    ap.add_argument("--gang", type=int, default=8)
    ap.add_argument("--running", type=int, default=32)
    args = ap.parse_args()
    if not shutil.which("make"):
        print("make is not installed")
        return 1

    mk, weir, cpu, node = dag_figures(args.runs, args.chain, args.fanout)
    floor, cli, result, ended = gang_figures(max(args.runs, 5), args.gang)
    idle, busy, agent_idle, agent_busy = memory_figures(args.running)

    n, m = args.chain, args.fanout
    hop_mk, hop_w = median(mk["chain"]) / n, median(weir["chain"]) / n
    rate_mk, rate_w = m / median(mk["fanout"]), m / median(weir["fanout"])
    print("per-task cost, median of %d rounds (weir: 2 vcores, default_pool 2; make -j2)"
          % args.runs)
    print("  chain of %d `true`: make %.2f ms/hop, weir %.2f ms/hop" % (n, hop_mk * 1e3,
                                                                         hop_w * 1e3))
    ratio_line("weir / make per hop", hop_w / hop_mk, TARGETS["hop"], unit="x")
    print("  %d independent `true`: make %.0f tasks/s, weir %.0f tasks/s" % (m, rate_mk, rate_w))
    ratio_line("weir / make rate", rate_w / rate_mk, TARGETS["rate"], better_low=False,
               unit="x")
    f, c = median(floor), median(cli)
    print("  gang of %d `true`: floor (sh) %.1f ms; weir's CLI start %.1f ms; submit to its "
          "result %.1f ms (%.1f ms less the CLI's start); to the job's end %.1f ms"
          % (args.gang, f * 1e3, c * 1e3, median(result) * 1e3, (median(result) - c) * 1e3,
             median(ended) * 1e3))
    ratio_line("submit to result / floor", median(result) / f, TARGETS["gang"], unit="x")
    print("  server CPU per DAG task: chain %.2f ms, fan-out %.2f ms"
          % (median(cpu["chain"]) * 1e3, median(cpu["fanout"]) * 1e3))
    ratio_line("server CPU per task (fan-out)", median(cpu["fanout"]) * 1e3, TARGETS["cpu_ms"],
               unit=" ms")
    for s in ("chain", "fanout"):
        if node[s]:
            print("  node CPU per DAG task (%s): agent %.2f ms, shim and program %.2f ms"
                  % (s, median([a for a, _ in node[s]]) * 1e3,
                     median([c for _, c in node[s]]) * 1e3))
    print("  resident memory: server idle %d KB, with %d running tasks %d KB"
          % (idle, args.running, busy))
    ratio_line("server idle", idle / 1024.0, TARGETS["idle_mb"], unit=" MB")
    ratio_line("server per running task", (busy - idle) / args.running,
               TARGETS["per_task_kb"], unit=" KB")
    if agent_idle is None:
        print("  agent: no agent")
    else:
        ratio_line("agent idle", agent_idle / 1024.0, TARGETS["agent_mb"], unit=" MB")
        if agent_busy is not None:
            ratio_line("agent per running task", (agent_busy - agent_idle) / args.running,
                       TARGETS["per_task_kb"], unit=" KB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
