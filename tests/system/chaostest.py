"""What the chaos tests share (test_chaos_server_kill.py, test_chaos_agent_kill.py): the load
(a DAG run of LAYERS x WIDTH tasks and a 4-worker job on a small node), the seeded moments,
`stress-ng` beside the long variant, and the checks afterwards: nothing lost, nothing run
twice that was not itself killed, every result recorded once, nothing left behind.

Each task appends its try number to its own file, each worker its attempt: a file's lines
are the runs of its task.  The short variants run in `make check`; WEIR_CHAOS_FULL=1 (`make
chaos`) runs the issue's sizes, beside `stress-ng --cpu 2` when it is installed.
"""

import os
import random
import re
import shutil
import signal
import subprocess
import time

import pytest

from cgroup_paths import agent_server, agent_status, alive, group_parents, groups_on
from conftest import DEFAULT_CONFIG, find_procs, spec, wait_for, wait_no_procs
from dagtest import Dags

FULL = os.environ.get("WEIR_CHAOS_FULL") == "1"
LAYERS, WIDTH = (10, 20) if FULL else (4, 12)
MAX_ACTIVE = 8
WORKERS = 4
# a small node, as a new user's machine: the job and the run's tasks wait for each other in
# the queue, so that a kill finds jobs queued as well as running
CONFIG = DEFAULT_CONFIG.replace("vcores: 16", "vcores: 6")


def chaos_dag(side):
    """LAYERS x WIDTH tasks, each task of a layer after every task of the one before.  Each
    has retries, for a try whose shim is killed (never spent otherwise: the checks hold every
    task not killed to one try)."""
    lines = ["dag_id: chaos", "max_active_tasks: %d" % MAX_ACTIVE,
             "default_args: {retries: 3, retry_delay: 1}", "tasks:"]
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


def seeded(what):
    """A seeded RNG for the kills' moments; prints the seed (WEIR_CHAOS_SEED replays it)."""
    seed = int(os.environ.get("WEIR_CHAOS_SEED") or random.SystemRandom().randrange(1 << 32))
    print("chaos seed: %d (WEIR_CHAOS_SEED=%d replays it); %d layers x %d tasks, %s"
          % (seed, seed, LAYERS, WIDTH, what), flush=True)
    return seed, random.Random(seed)


class Load:
    """The DAG run and the 4-worker job, running on one server (its agent on the `cgroups`
    path).  `killed` gathers the job ids whose shim a test killed: the only tries and
    attempts allowed to end lost."""

    def __init__(self, make_server, tmp_path, cgroups="host"):
        self.srv = agent_server(make_server, cgroups, config=CONFIG)
        # the groups there before (other servers' on this machine): a name made of a pid
        # may repeat one of ours
        self.groups_before = groups_in(group_parents(self.srv))
        self.d = Dags(self.srv, tmp_path)
        self.d.write("chaos.yaml", chaos_dag(self.d.side))
        self.d.wait_dag("chaos")
        self.jobdir = tmp_path / "job"
        self.jobdir.mkdir()
        self.killed = set()
        self.agents = set()
        self.shims = set()
        # each worker leaves one line, then outlives a few of the kills
        self.job = self.srv.submit(spec({"worker": {"instances": WORKERS, "command":
                                                    "echo $WEIR_ATTEMPT >> %s/w$WEIR_TASK_INDEX; "
                                                    "sleep 4" % self.jobdir}},
                                        name="chaos-job", restart={"max_restarts": 3}))
        self.d.trigger("chaos", run_id="chaos")
        wait_for(lambda: self.d.side_lines("l0_0"), 60, "the run's first task to start")

    def ended(self):
        """How many of the run's tasks have a line (for the round's line)."""
        return sum(1 for p in self.d.side.iterdir())

    def agent(self, timeout=60):
        """The agent's status once one answers (a new one after a kill); notes its pid and
        its shims', for the check of what is left."""
        st = wait_for(lambda: agent_status(self.srv), timeout, "an agent answering")
        self.agents.add(st["agent_pid"])
        self.shims.update(v[0] for v in st["tasks"].values())
        return st

    def round(self, k, n, what):
        print("round %d/%d: %s; %d/%d tasks begun" % (k + 1, n, what, self.ended(),
                                                      LAYERS * WIDTH), flush=True)

    # -- the checks ------------------------------------------------------------------------
    def check(self, seed):
        """The run and the job succeeded; every task ran once with the one try the store
        records, or (a task whose shim was killed) once per try at most, each try before
        its last lost by a kill of ours; every result recorded once."""
        d, srv = self.d, self.srv
        run = d.wait_run("chaos", "chaos", timeout=900)
        tis = {t["task_id"]: t for t in d.get("/dags/chaos/dagRuns/chaos/taskInstances?limit=1000")
               ["task_instances"]}
        bad = {}
        for name, t in tis.items():
            why = self.ti_wrong(name, t)
            if why:
                bad[name] = (t["state"], t["try_number"], d.side_lines(name), why)
        assert run["state"] == "success" and not bad, \
            "seed %d: run %s; not run exactly once (state, try, lines, why): %r\n%s" \
            % (seed, run["state"], bad, srv.log_text())
        assert len(tis) == LAYERS * WIDTH
        job = srv.wait_job(self.job["id"], timeout=120)
        assert job["state"] == "succeeded", (seed, job)
        lost = self.lost_attempts(job)
        assert lost == list(range(1, job["attempt"])), (seed, job, lost, self.killed)
        for i in range(WORKERS):
            got = (self.jobdir / ("w%d" % i)).read_text().splitlines()
            assert once_per_try(got, job["attempt"], exact=job["attempt"] == 1), (seed, i, got)
        twice = recorded_twice(srv.events(job["id"]))
        assert not twice, ("the job's reports recorded twice", seed, twice)
        return run, tis, job

    def ti_wrong(self, name, t):
        """Why TI `t` breaks the promise, or None."""
        if t["state"] != "success":
            return "not success"
        got = self.d.side_lines(name)
        tries = self.d.get("/dags/chaos/dagRuns/chaos/taskInstances/%s/tries" % name)
        tries = tries["task_instances"]
        if [tr["try_number"] for tr in tries] != list(range(1, t["try_number"] + 1)):
            return "tries recorded %r" % [tr["try_number"] for tr in tries]
        for tr in tries:
            twice = recorded_twice(self.srv.events(tr["job_id"]))
            if twice:
                return "try %d's reports recorded twice: %r" % (tr["try_number"], twice)
        if t["try_number"] == 1:
            return None if got == ["1"] else "one try, not one line"
        if not once_per_try(got, t["try_number"]):
            return "a try ran twice, or the last one not at all"
        for tr in tries[:-1]:
            if tr["job_id"] not in self.killed:
                return "try %d retried, yet its shim was not killed: %r" % (tr["try_number"], tr)
            states = [x["state"] for x in self.srv.job(tr["job_id"])["tasks"]]
            if states != ["lost"]:
                return "try %d's task %r, not lost" % (tr["try_number"], states)
        return None

    def lost_attempts(self, job):
        """The job's attempts that ended with a task lost, each of a job whose shim was
        killed (an attempt lost otherwise is returned as 0, which no check allows)."""
        out = []
        for a in range(1, job["attempt"]):
            if any(t["state"] == "lost" for t in self.srv.tasks(job["id"], attempt=a)):
                out.append(a if job["id"] in self.killed else 0)
        return out

    def check_nothing_left(self, seed):
        """After a clean stop: no process of the test (agent, shim, task), no group of its
        agents or shims under weir's cgroup parent, no spare's folder."""
        srv = self.srv
        parents = group_parents(srv)
        assert bool(parents) == groups_on(srv), srv.log_text()
        srv.terminate()
        left = wait_no_procs(srv.mark, str(srv.home), timeout=60)
        assert not left, ("processes left", seed, left)
        agents = [p for p in self.agents if alive(p)]
        assert not agents, ("agents left", seed, agents)
        assert not find_procs(cwd_prefix=str(srv.home)), seed
        if parents:
            deadline = time.monotonic() + 30
            while self.groups_left(parents) and time.monotonic() < deadline:
                time.sleep(0.5)
            left = {g: procs_in(g) for g in self.groups_left(parents)}
            assert not left, ("groups left (their processes)", seed, left, self.agent_log())
        spares = srv.home / "jobs" / ".spares"
        folders = list(spares.iterdir()) if spares.is_dir() else []
        assert not folders, ("spare folders left", seed, folders)

    def agent_log(self):
        """The tail of the agents' log (HOME/agent.log), for a failure's message."""
        try:
            return (self.srv.home / "agent.log").read_text(errors="replace")[-6000:]
        except OSError:
            return ""

    def groups_left(self, parents):
        """The groups under `parents` made since the test began by one of its agents or
        shims: pool-AGENTPID-N, and a fresh shim's JOB-ATTEMPT-ROLE-INDEX-SHIMPID."""
        out = []
        for g in sorted(groups_in(parents) - self.groups_before):
            parts = os.path.basename(g).split("-")
            if parts[0] == "pool" and len(parts) == 3 and parts[1].isdigit():
                if int(parts[1]) in self.agents:
                    out.append(g)
            elif len(parts) == 5 and parts[4].isdigit() and int(parts[4]) in self.shims:
                out.append(g)
        return out


def groups_in(parents):
    """Every group under `parents`, as paths."""
    out = set()
    for parent in parents:
        try:
            out.update(e.path for e in os.scandir(parent) if e.is_dir())
        except OSError:
            pass
    return out


def procs_in(group):
    """The pids a group holds (its cgroup.procs), or why they cannot be read."""
    try:
        with open(os.path.join(group, "cgroup.procs")) as f:
            return f.read().split()
    except OSError as e:
        return str(e)


def recorded_twice(events):
    """The reports a job's events record more than once in one attempt: a task's start
    ("ROLE:I running (pid N)") or its end ("ROLE:I succeeded", "... lost: why", ...)."""
    seen, twice, attempt = set(), [], 0
    for e in events:
        m = re.match(r"starting: attempt (\d+)", e["message"])
        if e["kind"] == "state" and m:
            attempt = int(m.group(1))
        m = re.match(r"(\S+:\d+) (\w+)", e["message"])
        if e["kind"] != "task" or not m or m.group(2) in ("registered", "started"):
            continue
        what = (attempt, m.group(1), "start" if m.group(2) == "running" else "end")
        if what in seen:
            twice.append(e)
        seen.add(what)
    return twice


def once_per_try(lines, last, exact=False):
    """Whether a task's lines are its tries' numbers, each at most once, in order, the last
    try's among them (exact: every try's)."""
    try:
        tries = [int(x) for x in lines]
    except ValueError:
        return False
    if exact:
        return tries == list(range(1, last + 1))
    return tries == sorted(set(tries)) and tries and tries[-1] == last and tries[0] >= 1


def kill_agent(load):
    """kill -9 of the node's agent; returns its pid once it is dead."""
    st = load.agent()
    os.kill(st["agent_pid"], signal.SIGKILL)
    wait_for(lambda: not alive(st["agent_pid"]), 30, "the killed agent gone")
    return st["agent_pid"]


def kill_shim(load, rng):
    """kill -9 of a random shim whose task runs or starts (one killed before its journal's
    first line has its start given to another shim); returns (key, pid), or None when none
    does now.  The task's job is noted as killed (its try may end lost)."""
    st = load.agent()
    running = sorted(k for k, v in st["tasks"].items() if v[2] in ("starting", "running"))
    if not running:
        return None
    key = rng.choice(running)
    load.killed.add(int(key.split(".")[0]))
    pid = st["tasks"][key][0]
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return key, pid


def kill_both(load, rng):
    """kill -9 of the server and the agent, then the server started again after a while."""
    st = load.agent()
    load.srv.kill9()
    os.kill(st["agent_pid"], signal.SIGKILL)
    pause(rng, 0.8)  # tasks end while neither runs: their journals keep the results
    load.srv.start()  # returns once the server answers /health
    return "server and agent %d killed, server back" % st["agent_pid"]


def kill_server(load, rng):
    """kill -9 of the server, started again after a random while: tasks end while no
    server listens, and their reports wait in the agent for the next one."""
    load.srv.kill9()
    pause(rng, 0.8)
    load.srv.start()  # returns once the server answers /health
    return "server killed, back"


def pause(rng, top):
    """A random while, up to `top` seconds: a kill's moment, or how long a process stays down."""
    time.sleep(rng.uniform(0, top))
