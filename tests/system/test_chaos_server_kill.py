"""Chaos: the server killed with `kill -9` at random moments, and restarted after each kill,
while a DAG run and a 4-worker job go on.  Nothing is lost and nothing runs twice: the run
and the job succeed, every task instance ran exactly once (each appends one line to its own
file, and the store records one try: a fault of the server's own is never a task's try).

The short variant runs in `make check`; the issue's full one (a DAG of 10 layers of 20 tasks,
20 kills, `stress-ng --cpu 2` beside it when installed) runs with WEIR_CHAOS_FULL=1, which
`make chaos` sets.  The moments are drawn from a seeded RNG; the seed is printed (set
WEIR_CHAOS_SEED to replay one).
"""

import os
import random
import shutil
import signal
import subprocess
import time

import pytest

from conftest import DEFAULT_CONFIG, spec, wait_for
from dagtest import Dags

FULL = os.environ.get("WEIR_CHAOS_FULL") == "1"
LAYERS, WIDTH, KILLS = (10, 20, 20) if FULL else (4, 12, 5)
MAX_ACTIVE = 8
# a small node, as a new user's machine: the job and the run's tasks wait for each other in
# the queue, so that a kill finds jobs queued as well as running
CONFIG = DEFAULT_CONFIG.replace("vcores: 16", "vcores: 6")


def chaos_dag(side):
    """LAYERS x WIDTH tasks, each task of a layer after every task of the one before."""
    lines = ["dag_id: chaos", "max_active_tasks: %d" % MAX_ACTIVE, "tasks:"]
    for layer in range(LAYERS):
        for i in range(WIDTH):
            name = "l%d_%d" % (layer, i)
            lines.append("  - task_id: %s" % name)
            lines.append("    command: echo $WEIR_TRY_NUMBER >> %s/%s; sleep 0.4" % (side, name))
            if layer:
                ups = ", ".join("l%d_%d" % (layer - 1, k) for k in range(WIDTH))
                lines.append("    depends_on: [%s]" % ups)
    return "\n".join(lines) + "\n"


@pytest.fixture
def stress():
    """`stress-ng --cpu 2` beside the full variant, when it is installed (stopped by pid)."""
    proc = None
    exe = shutil.which("stress-ng")
    if FULL and exe and os.environ.get("WEIR_CHAOS_STRESS", "1") != "0":
        proc = subprocess.Popen([exe, "--cpu", "2", "--quiet"], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)
    print("stress-ng beside: %s" % ("yes" if proc else "no"))
    yield proc
    if proc is not None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)


def test_kill_9_at_random_moments_loses_nothing(make_server, tmp_path, stress):
    seed = int(os.environ.get("WEIR_CHAOS_SEED") or random.SystemRandom().randrange(1 << 32))
    print("chaos seed: %d (WEIR_CHAOS_SEED=%d replays it); %d layers x %d tasks, %d kills"
          % (seed, seed, LAYERS, WIDTH, KILLS))
    rng = random.Random(seed)
    d = Dags(make_server(config=CONFIG), tmp_path)
    d.write("chaos.yaml", chaos_dag(d.side))
    d.wait_dag("chaos")
    srv = d.srv
    jobdir = tmp_path / "job"
    jobdir.mkdir()
    # each worker leaves one line, then outlives a few of the kills
    job = srv.submit(spec({"worker": {"instances": 4, "command":
                                      "echo $WEIR_ATTEMPT >> %s/w$WEIR_TASK_INDEX; sleep 4"
                                      % jobdir}}, name="chaos-job"))
    d.trigger("chaos", run_id="chaos")
    wait_for(lambda: d.side_lines("l0_0"), 60, "the run's first task to start")

    for k in range(KILLS):
        # a random moment: somewhere in the next 1.5 s of the server's life
        time.sleep(rng.uniform(0, 1.5))
        srv.kill9()
        # down for a random while too: tasks end while no server listens, and their
        # reports wait in the agent for the next one
        time.sleep(rng.uniform(0, 0.8))
        srv.start()  # returns once the server answers /health

    run = d.wait_run("chaos", "chaos", timeout=600)
    tis = {t["task_id"]: t for t in d.get("/dags/chaos/dagRuns/chaos/taskInstances?limit=1000")
           ["task_instances"]}
    # every task ran once, and its one try is the store's (upstream_failed ones only counted)
    bad = {n: (t["state"], t["try_number"], d.side_lines(n)) for n, t in tis.items()
           if t["state"] != "upstream_failed" and
           (t["state"] != "success" or t["try_number"] != 1 or d.side_lines(n) != ["1"])}
    skipped = sum(t["state"] == "upstream_failed" for t in tis.values())
    assert run["state"] == "success" and not bad and not skipped, \
        "seed %d: run %s; %d upstream_failed; not run exactly once (state, try, lines): %r\n%s" \
        % (seed, run["state"], skipped, bad, srv.log_text())
    assert len(tis) == LAYERS * WIDTH
    job = srv.wait_job(job["id"], timeout=120)
    assert job["state"] == "succeeded" and job["attempt"] == 1, (seed, job)
    for i in range(4):
        assert (jobdir / ("w%d" % i)).read_text().splitlines() == ["1"], \
            (seed, i, (jobdir / ("w%d" % i)).read_text())
