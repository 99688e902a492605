"""A Ray program's calls while the server, or the node's agent, is killed with kill -9 and
comes back (docs/ray.md, "When the server or the agent dies"; docs/internals/recovery.md,
"Ray programs"): calls on warm workers and an actor's methods are in flight at each kill, and
some are submitted while nothing listens.  Expected, as Ray with a fault-tolerant GCS: every
result arrives and is right, a call with max_retries=0 ran once (each call appends its
number to a file: its lines are its runs), the actor keeps its state, and once the program
has ended no worker process is left and every worker's job has ended.

`make check` runs a few rounds of each; WEIR_CHAOS_FULL=1 (`make chaos`) runs more.
"""

import os
import random
import signal
import textwrap
import threading
import uuid

import pytest

from cgroup_paths import agent_status, alive
from chaostest import pause
from conftest import cli_describe, wait_for, wait_no_procs
from test_ray_programs import jobs
from test_ray_warm import weir_run

FULL = os.environ.get("WEIR_CHAOS_FULL") == "1"
ROUNDS = 12 if FULL else 3
CALLS = 4  # calls of `work` a round (as many as workers: all run at once), besides the actor's
METHODS = 3  # the actor's calls a round

PROGRAM = """\
import os, sys, time
import ray

SIDE, GATES, ROUNDS, CALLS, METHODS = sys.argv[1], sys.argv[2], int(sys.argv[3]), \\
    int(sys.argv[4]), int(sys.argv[5])
# in every worker's and actor's environment: the test finds this program's processes by it
ray.init(runtime_env={"env_vars": {"CHAOS_RAY_MARK": sys.argv[6]}})


def wait_file(path):
    while not os.path.exists(path):
        time.sleep(0.01)


@ray.remote(max_retries=0)
def work(i, gate):
    # a side effect per run: the line of each run of call i
    with open(os.path.join(SIDE, "work"), "a") as f:
        f.write("%d\\n" % i)
    wait_file(gate)
    return i * i


@ray.remote(max_restarts=0, max_task_retries=0)
class Acc:
    def __init__(self):
        self.total = 0
        self.n = 0

    def add(self, x, gate):
        with open(os.path.join(SIDE, "acc"), "a") as f:
            f.write("%d\\n" % x)
        wait_file(gate)
        self.total += x
        self.n += 1
        return self.n

    def state(self):
        return self.total, self.n


acc = Acc.remote()
for r in range(ROUNDS):
    # the test kills a process, then lets this round begin: its calls are submitted while
    # the server may be down (a worker's job to submit), and run while it is
    wait_file(os.path.join(GATES, "go-%d" % r))
    gate = os.path.join(GATES, "done-%d" % r)
    open(os.path.join(GATES, "submitting-%d" % r), "w").close()
    # a shape of its own each round: its workers are new jobs, submitted now
    shaped = work.options(runtime_env={"env_vars": {"ROUND": str(r)}})
    refs = [shaped.remote(r * 100 + i, gate) for i in range(CALLS)]
    arefs = [acc.add.remote(r * 10 + i, gate) for i in range(METHODS)]
    fresh = Acc.remote()  # an actor's job submitted now too
    fresh_state = fresh.state.remote()
    open(os.path.join(GATES, "submitted-%d" % r), "w").close()
    got = ray.get(refs)
    assert got == [(r * 100 + i) ** 2 for i in range(CALLS)], got
    counts = ray.get(arefs)
    assert counts == [r * METHODS + i + 1 for i in range(METHODS)], counts
    assert ray.get(fresh_state) == (0, 0)
    ray.kill(fresh)
    print("round", r, "ok", flush=True)
total, n = ray.get(acc.state.remote())
print("actor", total, n, flush=True)
"""


def lines(path):
    try:
        return path.read_text().split()
    except FileNotFoundError:
        return []


def running(side, name, want):
    """Whether `want` runs of `name` (work, acc) have begun."""
    return len(lines(side / name)) >= want


def kill_server(srv):
    srv.kill9()
    return "server killed"


def kill_agent(srv):
    st = wait_for(lambda: agent_status(srv), 60, "an agent answering")
    os.kill(st["agent_pid"], signal.SIGKILL)
    wait_for(lambda: not alive(st["agent_pid"]), 30, "the killed agent gone")
    return "agent %d killed" % st["agent_pid"]


def kill_both(srv):
    st = wait_for(lambda: agent_status(srv), 60, "an agent answering")
    srv.kill9()
    os.kill(st["agent_pid"], signal.SIGKILL)
    return "server and agent %d killed" % st["agent_pid"]


def run_rounds(make_server, tmp_path, kill, what, env=None):
    """The program above, ROUNDS rounds; each round: the calls in flight, `kill`, the next
    round's calls submitted while it is down, then the server (when killed) back.
    make_server() gives the started server; env: more of the program's environment."""
    seed = int(os.environ.get("WEIR_CHAOS_SEED") or random.SystemRandom().randrange(1 << 32))
    rng = random.Random(seed)
    print("chaos seed: %d (WEIR_CHAOS_SEED=%d replays it); %d rounds, %s"
          % (seed, seed, ROUNDS, what), flush=True)
    srv = make_server()
    side, gates = tmp_path / "side", tmp_path / "gates"
    side.mkdir()
    gates.mkdir()
    prog = tmp_path / "chaos_ray.py"
    prog.write_text(textwrap.dedent(PROGRAM))
    out = {}
    mark = uuid.uuid4().hex

    def run():
        out["r"] = weir_run(srv, prog, side, gates, ROUNDS, CALLS, METHODS, mark, timeout=600,
                            env=dict({"WEIR_WARM_WORKERS": "4", "WEIR_WARM_IDLE": "1"},
                                     **(env or {})))

    t = threading.Thread(target=run)
    t.start()
    try:
        for r in range(ROUNDS):
            if r:
                # the round before has its calls running on their workers, and the actor
                # its first method of the round (they run one at a time): kill now
                wait_for(lambda: not t.is_alive() or (
                    running(side, "work", r * CALLS) and
                    running(side, "acc", (r - 1) * METHODS + 1)), 120,
                    "round %d's calls running" % (r - 1))
                how = kill(srv)
                (gates / ("done-%d" % (r - 1))).touch()  # they end while it is down
            else:
                how = "nothing killed"
            (gates / ("go-%d" % r)).touch()
            if r:
                # calls submitted while nothing listens: their workers' jobs, and an
                # actor's, wait for the server
                wait_for(lambda: (gates / ("submitting-%d" % r)).exists() or
                         not t.is_alive(), 120, "round %d submitting" % r)
                if srv.proc.poll() is not None:
                    pause(rng, 0.5)
                    srv.start()
            print("round %d/%d: %s" % (r + 1, ROUNDS, how), flush=True)
        wait_for(lambda: running(side, "work", ROUNDS * CALLS) or not t.is_alive(), 120,
                 "the last round's calls running")
        (gates / ("done-%d" % (ROUNDS - 1))).touch()
    finally:
        for r in range(ROUNDS):
            (gates / ("go-%d" % r)).touch()
            (gates / ("done-%d" % r)).touch()
        t.join(600)
    res = out["r"]
    assert res.returncode == 0, (seed, cli_describe(res))
    assert res.stdout.splitlines() == ["round %d ok" % k for k in range(ROUNDS)] + [
        "actor %d %d" % (sum(k * 10 + i for k in range(ROUNDS) for i in range(METHODS)),
                         ROUNDS * METHODS)], (seed, cli_describe(res))
    # max_retries=0: each call ran once; the actor's methods too (max_task_retries=0)
    work_runs = sorted(int(x) for x in lines(side / "work"))
    assert work_runs == sorted(k * 100 + i for k in range(ROUNDS) for i in range(CALLS)), \
        (seed, work_runs)
    acc_runs = sorted(int(x) for x in lines(side / "acc"))
    assert acc_runs == sorted(k * 10 + i for k in range(ROUNDS) for i in range(METHODS)), \
        (seed, acc_runs)
    # every call recorded once, succeeded, under the worker that ran it
    recs = [c for j in jobs(srv) if j["name"] == "warm-worker"
            for c in srv.api("GET", "/api/v1/jobs/%d/calls?limit=1000" % j["id"])[1]["calls"]]
    assert sorted(c["state"] for c in recs if c["name"] == "work") == \
        ["succeeded"] * (ROUNDS * CALLS), (seed, recs)
    # nothing lingers: no worker process, every worker's (and the actor's) job ended
    assert wait_no_procs(marker="CHAOS_RAY_MARK=" + mark, timeout=60) == {}, seed
    for j in jobs(srv):
        j = srv.wait_job(j["id"], timeout=60)
        # a worker leaves idle (succeeded) or is killed at the program's end; the actors
        # killed with ray.kill end failed (signal 9)
        assert j["state"] in ("succeeded", "killed") or j["name"] == "Acc", (seed, j)
    # and once the server stops cleanly, no process of its (agent, shim, spare, worker)
    srv.terminate()
    assert wait_no_procs(marker=srv.mark, timeout=60) == {}, seed


@pytest.mark.parametrize("kill", [kill_server, kill_agent, kill_both],
                         ids=["server", "agent", "both"])
def test_ray_calls_survive_kill_9(make_server, tmp_path, kill):
    run_rounds(make_server, tmp_path, kill, "ray calls, %s" % kill.__name__)
