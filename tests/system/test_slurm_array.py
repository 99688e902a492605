"""One-task gangs that become ready together go to Slurm as one job array (issue 5, the
overhead of many small tasks): a DAG run's tasks share one `sbatch --array`, each weir job is
one element (`<array id>_<index>`), cancelled, followed and found again after a restart one
by one.  The cluster comes from slurmtest's module fixture."""

import os
import re

import pytest

from conftest import wait_for
from slurmtest import slurm_cluster  # noqa: F401 (a fixture)
from slurmtest import restart_after_sbatch_death, slurm_server_of

CONFIG = """\
executor: slurm
resources:
  vcores: 64
  memory: 64g
  gpus: 0
kill_grace_seconds: 2
pools:
  default_pool: 64
"""

ELEMENT = re.compile(r"slurm job (\d+)_(\d+) submitted")


def dag_yaml(dag_id, n, command):
    lines = ["dag_id: %s" % dag_id, "schedule: none", "max_active_tasks: %d" % n, "tasks:"]
    for i in range(n):
        lines += ["  - task_id: t%02d" % i, "    command: %s" % command,
                  "    resources: {memory: 64m, vcores: 1}"]
    return "\n".join(lines) + "\n"


@pytest.fixture
def srv(make_server, slurm_cluster):
    return slurm_server_of(make_server, slurm_cluster, CONFIG)


def elements(server, job_id):
    """[(array id, index)] of the job's "slurm job A_I submitted" events."""
    return [tuple(map(int, m.groups())) for e in server.events(job_id)
            for m in [ELEMENT.search(e["message"])] if m]


def test_a_dag_of_20_one_task_tasks_runs_as_one_array(srv, slurm_cluster, tmp_path):
    from dagtest import Dags
    d = Dags(srv, tmp_path)
    d.write("many.yaml", dag_yaml("many", 20, "'echo element $SLURM_ARRAY_TASK_ID'"))
    d.wait_dag("many")
    d.trigger("many", run_id="r1")
    run = d.wait_run("many", "r1", timeout=180)
    tis = d.tis("many", "r1")
    assert run["state"] == "success", (run, tis)
    assert len(tis) == 20
    ids = {}
    for name, ti in tis.items():
        el = elements(srv, ti["job_id"])
        assert len(el) == 1, (name, srv.events(ti["job_id"]))
        ids[name] = el[0]
        # the element ran this task's own batch script: its index is the element's
        assert "element %d" % el[0][1] in d.log("many", "r1", name), d.log("many", "r1", name)
    arrays = {a for a, _ in ids.values()}
    assert len(arrays) == 1, ids  # one sbatch, one array
    assert sorted(i for _, i in ids.values()) == list(range(20)), ids
    # each element is its own job in Slurm's eyes, ended as it should
    a = arrays.pop()
    st = slurm_cluster.run(["squeue", "-h", "-r", "-t", "all", "-j", str(a), "-o", "%i %T"])
    shown = dict(line.split() for line in st.stdout.splitlines())
    assert all(shown.get("%d_%d" % (a, i)) in (None, "COMPLETED") for i in range(20)), shown


def test_killing_one_element_cancels_only_it(srv, slurm_cluster, tmp_path):
    from dagtest import Dags
    d = Dags(srv, tmp_path)
    d.write("three.yaml", dag_yaml("three", 3, "'echo up; sleep 300'"))
    d.wait_dag("three")
    d.trigger("three", run_id="k1")
    tis = wait_for(lambda: (lambda t: t if t and all(x["state"] == "running" for x in t.values())
                            else None)(d.tis("three", "k1")), 120, "three running tasks")
    jobs = {name: ti["job_id"] for name, ti in tis.items()}
    el = {name: elements(srv, j)[0] for name, j in jobs.items()}
    assert len({a for a, _ in el.values()}) == 1, el
    victim = jobs["t01"]
    sid = "%d_%d" % el["t01"]
    assert srv.api("DELETE", "/api/v1/jobs/%s" % victim)[0] == 202
    job = srv.wait_job(victim, timeout=60)
    assert job["state"] == "killed", (job, srv.events(victim))
    wait_for(lambda: slurm_cluster.job_state(sid) in (None, "CANCELLED"), 60,
             "element %s cancelled (%s)" % (sid, slurm_cluster.job_state(sid)))
    # the other elements still run, in Slurm and in weir
    for name in ("t00", "t02"):
        other = "%d_%d" % el[name]
        assert slurm_cluster.job_state(other) == "RUNNING", (other, slurm_cluster.job_state(other))
        assert srv.job(jobs[name])["state"] == "running"
    for name in ("t00", "t02"):
        assert srv.api("DELETE", "/api/v1/jobs/%s" % jobs[name])[0] == 202
    for name in ("t00", "t02"):
        assert srv.wait_job(jobs[name], timeout=60)["state"] == "killed"


def test_a_server_restart_while_elements_run_records_each_once(srv, slurm_cluster, tmp_path):
    from dagtest import Dags
    starts = tmp_path / "starts"
    starts.mkdir()
    d = Dags(srv, tmp_path)
    gate = tmp_path / "gate"
    cmd = "'touch %s/$WEIR_TASK_ID-$$; while ! test -f %s; do sleep 0.2; done; echo finished'" \
        % (starts, gate)
    d.write("four.yaml", dag_yaml("four", 4, cmd))
    d.wait_dag("four")
    d.trigger("four", run_id="s1")
    wait_for(lambda: (lambda t: t if t and all(x["state"] == "running" for x in t.values())
                      else None)(d.tis("four", "s1")), 120, "four running tasks")
    srv.kill9()
    gate.touch()  # they finish while no server listens: reports wait for the new one
    srv.start()
    run = d.wait_run("four", "s1", timeout=120)
    tis = d.tis("four", "s1")
    assert run["state"] == "success", (run, tis)
    assert len(os.listdir(starts)) == 4, os.listdir(starts)  # nothing ran twice
    for name, ti in tis.items():
        job = srv.job(ti["job_id"])
        events = srv.events(ti["job_id"])
        assert job["state"] == "succeeded" and job["attempt"] == 1, (job, events)
        assert len(elements(srv, ti["job_id"])) == 1, events
        ends = [e for e in events if e["kind"] == "state" and "succeeded" in e["message"]]
        assert len(ends) == 1, events
        assert "finished" in d.log("four", "s1", name)


def test_a_crash_between_the_arrays_sbatch_and_its_ids_finds_each_element(
        make_server, slurm_cluster, tmp_path):
    """The server dies (developer-build test hook) right after the array's sbatch answered,
    before any element's id was stored: the restarted server finds each weir job's element
    by the array's name and script, and nothing is submitted twice."""
    from dagtest import Dags
    s = make_server(config=CONFIG, start=False)
    s.extra_env = dict(slurm_cluster.env)
    s.start()
    starts = tmp_path / "starts"
    starts.mkdir()
    d = Dags(s, tmp_path)
    d.write("crash.yaml", dag_yaml("crash", 3, "'touch %s/$WEIR_TASK_ID-$$; sleep 2'" % starts))
    d.wait_dag("crash")
    s.terminate()
    s.extra_env["WEIR_TEST_DIE_AFTER_SBATCH"] = "1"
    s.start()
    try:
        d.trigger("crash", run_id="c1")
    except (OSError, AssertionError):
        pass  # the server may die before it answers
    restart_after_sbatch_death(s)
    run = d.wait_run("crash", "c1", timeout=120)
    tis = d.tis("crash", "c1")
    assert run["state"] == "success", (run, tis)
    arrays = set()
    for name, ti in tis.items():
        events = s.events(ti["job_id"])
        assert any("looking for its job by name" in e["message"] for e in events), events
        el = elements(s, ti["job_id"])
        assert len(el) == 1, events  # found, not submitted again
        arrays.add(el[0][0])
    assert len(arrays) == 1, arrays
    assert len(os.listdir(starts)) == 3, os.listdir(starts)
