#!/usr/bin/env python3
"""weir on Slurm beside Slurm alone, on the same throw-away local cluster (tests/slurm/start.sh:
slurmctld, 2 slurmd of 4 CPUs each, munge, all on loopback; stopped at the end, also on failure).

- An 8-task job of `true`: submit to all 8 running and submit to the result, through weir with
  `executor: slurm` (`weir submit`, which waits for the result) beside Slurm's own ways to run
  the same 8 tasks: `srun -n 8` from the submitting host (an allocation and one step, srun
  returns when it is over); `sbatch -n 8` of a script whose one `srun` step runs them (result =
  the bench seeing the job leave squeue, polled every 20 ms); and `sbatch -n 8` of a script
  with 8 one-task `srun --exact` steps in the background, the shape weir's batch script first had.
  weir's ratio is to the plain sbatch (and, on a second line, to the same shape).
- N one-task DAG tasks of `true` (independent, one DAG run, `max_active_tasks: N`) through
  weir-on-Slurm, each task a Slurm job, beside one `sbatch --array=0-(N-1)` of `true` and
  beside N separate `sbatch --wrap true` from a shell loop: from the trigger (or the first
  sbatch) to the run's end_date (or the last job gone from squeue, polled every 50 ms).
  After one warm-up round of the array and weir, the variants run in interleaved rounds, so
  that each meets the same slurmctld (its kept jobs grow by 2,000 a round).

"Running" is the last task's start: weir's `started_at` (reported by weir-launch just before it
starts the program), or for Slurm the latest `date +%s.%N` the tasks print.  Median of R runs
each (the 8-task job after one warm-up of each side).  Prints the figures and weir's ratios.

slurmctld starts a batch job at its next background pass, about once a second (sbatch only marks
the job for that pass), so a batch job waits 0 to 1 s for its allocation depending on when it is
submitted.  Run back to back, each variant would be submitted at its own phase of that pass (the
previous run's end sets it) and the comparison would measure the phases.  So each run of each
batch variant is submitted at the same phase (run i at (i + 0.5) / R of the pass, after the
pass's time read from slurmctld.log's allocation lines), and the time from Slurm's allocation to
all running, which no phase touches, is printed beside.

    slurm.py [--runs R] [--tasks 8] [--dag-tasks 500] [--dag-runs 1] [--keep]

Needs root (slurmd and munged run as root) and Debian's slurmctld, slurmd, slurm-client, munge.
"""

import argparse
import datetime
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchlib
from benchlib import REPO, WEIR_BIN, median, ms, parse_time

START = REPO / "tests" / "slurm" / "start.sh"
STOP = REPO / "tests" / "slurm" / "stop.sh"
NODES, CPUS = 2, 4


# -- the cluster ------------------------------------------------------------------------------
def start_cluster(d):
    """Starts the test cluster in d; returns its environment (SLURM_CONF)."""
    last = None
    for _ in range(2):  # start.sh picks free ports without holding them: one retry
        # finished jobs stay 10 min (MinJobAge): room for every run's records, as a real
        # cluster sized for arrays of this many would have (Slurm's default is 10,000)
        r = subprocess.run(["bash", str(START), "--nodes", str(NODES), "--cpus", str(CPUS),
                            "--gpus", "0", "--max-jobs", "100000", str(d)],
                           capture_output=True, text=True,
                           timeout=120, stdin=subprocess.DEVNULL)
        if r.returncode == 0:
            env = {}
            for line in r.stdout.splitlines():
                if line.startswith("export ") and "=" in line:
                    k, v = line[len("export "):].split("=", 1)
                    env[k] = v
            return env
        last = r.stderr[-3000:]
        stop_cluster(d)
    raise RuntimeError("tests/slurm/start.sh failed:\n" + (last or ""))


def stop_cluster(d):
    subprocess.run(["bash", str(STOP), str(d)], capture_output=True, timeout=120,
                   stdin=subprocess.DEVNULL)


def sh(args, timeout=300, **kw):
    r = subprocess.run(args, capture_output=True, text=True, timeout=timeout,
                       stdin=subprocess.DEVNULL, **kw)
    if r.returncode != 0:
        raise RuntimeError("%s exited %d: %s%s" % (args, r.returncode, r.stdout[-2000:],
                                                   r.stderr[-2000:]))
    return r.stdout


def squeue_has(job_id):
    out = subprocess.run(["squeue", "-h", "-j", str(job_id), "-o", "%i"], capture_output=True,
                         text=True, timeout=30).stdout
    return bool(out.strip())


def wait_gone(job_id, interval, timeout=1800):
    deadline = time.monotonic() + timeout
    while squeue_has(job_id):
        if time.monotonic() > deadline:
            raise RuntimeError("Slurm job %s still queued after %ss" % (job_id, timeout))
        time.sleep(interval)
    return time.time()


def stamps(text):
    out = []
    for line in text.split():
        try:
            out.append(float(line))
        except ValueError:
            pass
    return out


# -- slurmctld's passes ------------------------------------------------------------------------
class Passes:
    """slurmctld's background passes, from the allocation times in its log."""

    def __init__(self, log):
        self.log = log
        self.last = []  # the latest allocation times seen, oldest first

    def alloc_time(self, job_id, timeout=30):
        """The wall-clock time slurmctld allocated job_id (its log: "sched: Allocate JobId=N"
        or the backfill's "Started JobId=N"), remembered as a pass."""
        pat = re.compile(r"^\[([0-9T:.-]+)\] .*(?:Allocate|Started) JobId=%s[ \n]" % job_id,
                         re.M)
        deadline = time.monotonic() + timeout
        while True:
            m = pat.search(self.log.read_text(errors="replace"))
            if m:
                t = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%f").timestamp()
                self.last = (self.last + [t])[-2:]
                return t
            if time.monotonic() > deadline:
                raise RuntimeError("no allocation of job %s in %s" % (job_id, self.log))
            time.sleep(0.05)

    def period(self):
        if len(self.last) == 2:
            d = self.last[1] - self.last[0]
            k = round(d)
            if 1 <= k <= 20 and abs(d / k - 1.0) < 0.02:
                return d / k
        return 1.0

    def wait_phase(self, phase):
        """Sleeps until `phase` (0..1) of a pass period after one of slurmctld's passes."""
        if not self.last:
            return
        p, now = self.period(), time.time()
        k = math.ceil((now + 0.05 - self.last[-1] - phase * p) / p)
        time.sleep(max(0.0, self.last[-1] + (k + phase) * p - now))


# -- Slurm alone ------------------------------------------------------------------------------
STAMP = "date +%s.%N"


def slurm_srun(n, work):
    """srun -n N from here: (to running, to result)."""
    t0 = time.time()
    out = sh(["srun", "-n", str(n), "--cpus-per-task=1", "--mem-per-cpu=64M",
              "sh", "-c", STAMP], cwd=work)
    t1 = time.time()
    s = stamps(out)
    if len(s) != n:
        raise RuntimeError("srun: %d of %d tasks printed a start: %r" % (len(s), n, out))
    return max(s) - t0, t1 - t0


def slurm_sbatch(n, work, i, passes, phase, steps=1):
    """sbatch -n N of a script with one srun step of N tasks, or (steps=N) N one-task srun
    steps in the background, as weir's batch script had, submitted at `phase` of slurmctld's
    pass: (to running, to result, allocation to running)."""
    out = work / ("sbatch-%d-%d.out" % (steps, i))
    script = work / ("job%d.sh" % steps)
    if steps == 1:
        script.write_text("#!/bin/sh\nsrun sh -c '%s'\n" % STAMP)
    else:
        script.write_text("#!/bin/sh\n" + "".join(
            "srun --nodes=1 --ntasks=1 --exact --cpus-per-task=1 --mem-per-cpu=64 "
            "sh -c '%s' &\n" % STAMP for _ in range(steps)) + "wait\n")
    passes.wait_phase(phase)
    t0 = time.time()
    jid = sh(["sbatch", "--parsable", "-n", str(n), "--cpus-per-task=1", "--mem-per-cpu=64M",
              "--output=%s" % out, str(script)], cwd=work).strip().split(";")[0]
    t1 = wait_gone(jid, 0.02)
    s = stamps(out.read_text())
    if len(s) != n:
        raise RuntimeError("sbatch job %s: %d of %d tasks printed a start" % (jid, len(s), n))
    return max(s) - t0, t1 - t0, max(s) - passes.alloc_time(jid)


def slurm_array(n, work):
    """sbatch --array=0-(n-1) of `true`: seconds to the array gone from squeue."""
    t0 = time.time()
    jid = sh(["sbatch", "--parsable", "--array=0-%d" % (n - 1), "-n", "1",
              "--cpus-per-task=1", "--mem=64M", "--output=/dev/null", "--wrap", "true"],
             cwd=work).strip().split(";")[0]
    return wait_gone(jid, 0.05) - t0


def slurm_separate(n, work, wrap="true"):
    """n separate `sbatch --wrap WRAP`, one after the other from a shell loop (a Slurm job per
    task, as weir submits DAG tasks; WRAP "srun true" adds the one srun step weir's batch
    script has): seconds from the first sbatch to the last job gone."""
    name = "bench-sep-%d" % time.monotonic_ns()
    t0 = time.time()
    sh(["sh", "-c", 'i=0; while [ $i -lt %d ]; do sbatch --parsable -n 1 --cpus-per-task=1 '
        '--mem=64M --output=/dev/null --job-name=%s --wrap "%s" >/dev/null || exit 1; '
        'i=$((i + 1)); done' % (n, name, wrap)], cwd=work, timeout=1800)
    while subprocess.run(["squeue", "-h", "-n", name, "-o", "%i"], capture_output=True,
                         text=True, timeout=30).stdout.strip():
        time.sleep(0.05)
    return time.time() - t0


# -- weir on Slurm ----------------------------------------------------------------------------
class SlurmServer(benchlib.BenchServer):
    """A weir server with `executor: slurm` (and a DAG folder when given DAG files)."""

    def __init__(self, slots, dags=None):
        # resources are Slurm's to count here; the declared ones only must not hold tasks back
        super().__init__(
            config="executor: slurm\nresources:\n  vcores: %d\n  memory: %dg\n  gpus: 0\n"
                   "kill_grace_seconds: 1\npools:\n  default_pool: %d\n" % (slots, slots, slots),
            dags=dags, prefix="weir-bench-slurm.")


def weir_job(srv, spec_path, n, passes, phase):
    """weir submit of the n-task job at `phase` of slurmctld's pass: (to running, to result,
    allocation to running)."""
    passes.wait_phase(phase)
    t0 = time.time()
    r = subprocess.run([WEIR_BIN, "submit", str(spec_path)], env=srv.env, capture_output=True,
                       text=True, timeout=300)
    t1 = time.time()
    job = srv.api("GET", "/api/v1/jobs?limit=1")[1]["jobs"][0]
    job = srv.job(job["id"])
    if r.returncode != 0 or job["state"] != "succeeded":
        raise RuntimeError("weir job %s: exit %d, %s (%s)\n%s" % (
            job["id"], r.returncode, job["state"], job.get("reason"), r.stderr[-2000:]))
    starts = [parse_time(t["started_at"]) for t in job["tasks"] if t.get("started_at")]
    if len(starts) != n:
        raise RuntimeError("weir job %s: %d of %d tasks started" % (job["id"], len(starts), n))
    events = srv.api("GET", "/api/v1/jobs/%s/events" % job["id"])[1]
    sid = [m.group(1) for e in (events.get("events", []) if isinstance(events, dict) else events)
           for m in [re.search(r"slurm job (\d+) submitted", e.get("message", ""))] if m]
    if not sid:
        raise RuntimeError("weir job %s: no Slurm job id in its events" % job["id"])
    return max(starts) - t0, t1 - t0, max(starts) - passes.alloc_time(sid[0])


def dag_yaml(dag_id, n):
    # every task at once, as the array has: Slurm, not the DAG's default of 16, says how many
    lines = ["dag_id: %s" % dag_id, "schedule: none", "max_active_tasks: %d" % n, "tasks:"]
    for i in range(n):
        lines += ["  - task_id: t%04d" % i, '    command: "true"',
                  "    resources: {memory: 64m, vcores: 1}"]
    return "\n".join(lines) + "\n"


def weir_dag(srv, dag_id, n, timeout=1800):
    t0 = time.time()
    status, run = srv.api("POST", "/api/v1/dags/%s/dagRuns" % dag_id, {})
    if status != 200:
        raise RuntimeError("trigger %s: %s %r" % (dag_id, status, run))
    rid = run["dag_run_id"]
    deadline = time.monotonic() + timeout
    while run["state"] not in ("success", "failed"):
        if time.monotonic() > deadline:
            raise RuntimeError("run %s still %s" % (rid, run["state"]))
        time.sleep(0.05)
        run = srv.api("GET", "/api/v1/dags/%s/dagRuns/%s" % (dag_id, rid))[1]
    tis = srv.api("GET", "/api/v1/dags/%s/dagRuns/%s/taskInstances?limit=%d"
                  % (dag_id, rid, n + 10))[1]["task_instances"]
    ok = sum(1 for ti in tis if ti["state"] == "success")
    if run["state"] != "success" or ok != n:
        bad = [ti for ti in tis if ti["state"] != "success"][:3]
        raise RuntimeError("run %s: %s, %d of %d TIs succeeded; e.g. %s" % (
            rid, run["state"], ok, n, ["%s %s: %s" % (ti["task_id"], ti["state"], ti["reason"])
                                      for ti in bad]))
    return parse_time(run["end_date"]) - t0


# -- main -------------------------------------------------------------------------------------
def row(name, x, base=None):
    ratio = "   (weir / Slurm %.2fx, %+.0f%%)" % (x / base, 100.0 * (x / base - 1)) if base else ""
    return "  %-48s %10s%s" % (name, ms(x), ratio)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--tasks", type=int, default=8)
    ap.add_argument("--dag-tasks", type=int, default=500)
    ap.add_argument("--dag-runs", type=int, default=1)
    ap.add_argument("--only", choices=("job", "dag"))
    ap.add_argument("--keep", action="store_true", help="keep the cluster's directory (logs, jobcomp.txt)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("slurm: skipped: the local Slurm cluster needs root (slurmd and munged)")
        return 0
    n, m = args.tasks, args.dag_tasks

    cdir = Path(tempfile.mkdtemp(prefix="weir-bench-slurmctl."))
    work = cdir / "work"
    work.mkdir()
    saved = {k: os.environ.pop(k) for k in list(os.environ) if k.startswith("SLURM_")}
    res = {}
    try:
        os.environ.update(start_cluster(cdir))
        if args.only in (None, "job"):
            passes = Passes(cdir / "log" / "slurmctld.log")
            slurm_srun(n, work)  # warm-ups, not counted
            res["srun"] = [slurm_srun(n, work) for _ in range(args.runs)]
            srv = SlurmServer(64)
            try:
                spec = srv.dir / ("true%d.json" % n)
                spec.write_text(
                    '{"name": "true%d", "framework": "none", "roles": {"worker": '
                    '{"instances": %d, "memory": "64m", "vcores": 1, "command": "true"}}}'
                    % (n, n))
                slurm_sbatch(n, work, 0, passes, 0.5)
                slurm_sbatch(n, work, 0, passes, 0.5, steps=n)
                weir_job(srv, spec, n, passes, 0.5)
                for k in ("sbatch", "steps", "weir"):
                    res[k] = []
                # interleaved, each run's three at the same phase of slurmctld's pass
                for i in range(args.runs):
                    phase = (i + 0.5) / args.runs
                    res["sbatch"].append(slurm_sbatch(n, work, i + 1, passes, phase))
                    res["steps"].append(slurm_sbatch(n, work, i + 1, passes, phase, steps=n))
                    res["weir"].append(weir_job(srv, spec, n, passes, phase))
            finally:
                srv.stop()
        if args.only in (None, "dag"):
            srv = SlurmServer(m + 10, dags={"fan": dag_yaml("fan", m)})
            try:
                # a warm-up round, not counted: the first array after slurmctld starts
                # waits ~2.5 s for its first allocation, whichever side goes first
                slurm_array(m, work)
                weir_dag(srv, "fan", m)
                for k in ("array", "separate", "shape", "dag"):
                    res[k] = []
                # interleaved rounds: every variant meets the same slurmctld (the finished
                # jobs it keeps, which squeue lists, grow by 2,000 each round)
                for _ in range(args.dag_runs):
                    res["array"].append(slurm_array(m, work))
                    res["separate"].append(slurm_separate(m, work))
                    res["shape"].append(slurm_separate(m, work, "srun --exact -n 1 true"))
                    res["dag"].append(weir_dag(srv, "fan", m))
            finally:
                srv.stop()
    finally:
        stop_cluster(cdir)
        os.environ.update(saved)
        if not args.keep:
            shutil.rmtree(cdir, ignore_errors=True)
        else:
            print("(cluster directory kept: %s)" % cdir)

    print("weir on Slurm beside Slurm alone: %d nodes x %d CPUs (tests/slurm/start.sh), "
          "median of %d runs" % (NODES, CPUS, args.runs))
    if "weir" in res:
        med = lambda k, i: median([x[i] for x in res[k]])
        print("  %d tasks of `true`, submit to all running" % n)
        print(row("srun -n %d (Slurm)" % n, med("srun", 0)))
        print(row("sbatch -n %d, one srun step (Slurm)" % n, med("sbatch", 0)))
        print(row("sbatch -n %d, %d one-task steps (weir's first shape)" % (n, n),
                  med("steps", 0)))
        print(row("weir submit, executor: slurm", med("weir", 0), med("sbatch", 0)))
        print(row("  the same against 8 one-task steps", med("weir", 0), med("steps", 0)))
        print("  %d tasks of `true`, submit to result" % n)
        print(row("srun -n %d (Slurm)" % n, med("srun", 1)))
        print(row("sbatch -n %d, one srun step (Slurm)" % n, med("sbatch", 1)))
        print(row("sbatch -n %d, %d one-task steps (weir's first shape)" % (n, n),
                  med("steps", 1)))
        print(row("weir submit, executor: slurm", med("weir", 1), med("sbatch", 1)))
        print(row("  the same against 8 one-task steps", med("weir", 1), med("steps", 1)))
        print("  %d tasks of `true`, Slurm's allocation (slurmctld.log) to all running" % n)
        print(row("sbatch -n %d, one srun step (Slurm)" % n, med("sbatch", 2)))
        print(row("sbatch -n %d, %d one-task steps" % (n, n), med("steps", 2)))
        print(row("weir submit, executor: slurm", med("weir", 2), med("sbatch", 2)))
        print("  submitted at phases %s of slurmctld's ~1 s pass; each run, ms to running "
              "(allocation to running):"
              % ", ".join("%.2f" % ((i + 0.5) / args.runs) for i in range(args.runs)))
        for i in range(args.runs):
            print("    sbatch %7.1f (%5.1f)   steps %7.1f (%5.1f)   weir %7.1f (%5.1f)" % tuple(
                1000 * res[k][i][j] for k in ("sbatch", "steps", "weir") for j in (0, 2)))
        pair = lambda i: median([w[i] - b[i] for w, b in zip(res["weir"], res["sbatch"])])
        print("  weir minus sbatch -n 8 at the same phase, median of the runs: to running "
              "%+.1f ms, allocation to running %+.1f ms" % (1000 * pair(0), 1000 * pair(2)))
    if "dag" in res:
        a, w = median(res["array"]), median(res["dag"])
        print("  %d independent one-task `true`, to the end (median of %d)" % (m, args.dag_runs))
        print("  %-48s %10s  (%.0f tasks/s)" % ("sbatch --array=0-%d (Slurm)" % (m - 1), ms(a),
                                               m / a))
        sp, sh_ = median(res["separate"]), median(res["shape"])
        print("  %-48s %10s  (%.0f tasks/s)" % ("%d x sbatch --wrap true" % m, ms(sp), m / sp))
        print("  %-48s %10s  (%.0f tasks/s)" % ("%d x sbatch --wrap 'srun true' (weir's shape)"
                                               % m, ms(sh_), m / sh_))
        print("  %-48s %10s  (%.0f tasks/s)   (weir / Slurm %.2fx, %+.0f%%)"
              % ("weir DAG run, executor: slurm", ms(w), m / w, w / a, 100.0 * (w / a - 1)))
        print("  %-48s %10s                (weir / Slurm %.2fx, %+.0f%%)"
              % ("  the same against 8 one-task steps", "", w / sh_, 100.0 * (w / sh_ - 1)))
        print("  each round, s: array %s" % " ".join("%.2f" % x for x in res["array"]))
        print("                 weir  %s" % " ".join("%.2f" % x for x in res["dag"]))
    print("  target: weir on Slurm adds at most 10% to Slurm's own times")
    return 0


if __name__ == "__main__":
    sys.exit(main())
