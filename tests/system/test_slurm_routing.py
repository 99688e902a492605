"""Routing: one server (executor: local) runs some work locally and some on a real local Slurm
cluster, by queue (weir.yaml `queues:`, a job's `queue:`), with per-job Slurm settings
(`slurm:`) over the queue's.  The cluster comes from slurmtest's module fixture."""

import re

import pytest

from conftest import spec, wait_for
from slurmtest import slurm_cluster  # noqa: F401 (a fixture)
from slurmtest import restart_after_sbatch_death

# The local node is small on purpose: a 2-vcore job fits Slurm's nodes but not this node.
ROUTED_CONFIG = """\
executor: local
resources:
  vcores: 1
  memory: 2g
  gpus: 0
kill_grace_seconds: 2
slurm:
  sbatch_options: ["--spread-job"]
queues:
  train: {executor: slurm}
  light: {executor: local}
pools:
  slurm_pool: {slots: 4, queue: train}
"""

NODE = re.compile(r"^SLURMD_NODENAME=(\S+)$", re.M)
SHOW = "echo SLURMD_NODENAME=${SLURMD_NODENAME-none}; echo JOBNAME=${SLURM_JOB_NAME-none}"


@pytest.fixture
def routed(make_server, slurm_cluster):
    srv = make_server(config=ROUTED_CONFIG, start=False)
    srv.extra_env = dict(slurm_cluster.env)
    srv.start()
    return srv


def test_queues_route_jobs_to_slurm_or_local(routed, slurm_cluster):
    on_slurm = routed.submit(spec({"worker": {"instances": 2, "vcores": 2, "command": SHOW}},
                                  name="to-slurm", queue="train"))
    here = routed.submit(spec({"worker": {"command": SHOW}}, name="stays", queue="light"))
    plain = routed.submit(spec({"worker": {"command": SHOW}}, name="no-queue"))
    assert on_slurm["executor"] == "slurm" and on_slurm["queue"] == "train", on_slurm
    assert here["executor"] == "local" and here["queue"] == "light", here
    assert plain["executor"] == "local" and plain["queue"] is None, plain

    job = routed.wait_job(on_slurm["id"], timeout=120)
    assert job["state"] == "succeeded", (job, routed.events(job["id"]))
    nodes = set()
    for t in job["tasks"]:
        log = routed.log(job["id"], "worker", t["index"])
        m = NODE.search(log)
        assert m and m.group(1) in slurm_cluster.nodes, log
        nodes.add(m.group(1))
        # one Slurm job name per attempt: found again after a crash by this name
        assert "JOBNAME=weir-%d-1" % job["id"] in log, log
    assert len(nodes) == 2, nodes  # --spread-job of the server-wide slurm: reached sbatch
    for j in (here, plain):
        job = routed.wait_job(j["id"], timeout=60)
        assert job["state"] == "succeeded", job
        log = routed.log(job["id"], "worker", 0)
        assert "SLURMD_NODENAME=none" in log and "JOBNAME=none" in log, log
    # the listing shows the route too
    listed = {j["id"]: j for j in routed.api("GET", "/api/v1/jobs")[1]["jobs"]}
    assert listed[on_slurm["id"]]["executor"] == "slurm"
    assert listed[plain["id"]]["executor"] == "local"


def test_a_job_too_big_for_the_local_node_still_goes_to_slurm(routed):
    # 2 vcores: more than this node's 1, which would be refused (422) locally
    r = routed.api("POST", "/api/v1/jobs", spec({"worker": {"vcores": 2, "command": "true"}}))
    assert r[0] == 422, r
    job = routed.submit(spec({"worker": {"vcores": 2, "command": "true"}}, queue="train"))
    assert routed.wait_job(job["id"], timeout=120)["state"] == "succeeded"


def test_an_unknown_queue_is_refused_naming_the_queues(routed):
    status, body = routed.api("POST", "/api/v1/jobs",
                              spec({"worker": {"command": "true"}}, queue="gpu"))
    assert status == 422, body
    msg = body.get("error", body.get("message", str(body)))
    assert '"gpu"' in str(msg) and "train" in str(msg) and "light" in str(msg), body
    status, body = routed.api("POST", "/api/v1/jobs",
                              spec({"worker": {"command": "true"}},
                                   slurm={"sbatch_options": ["exclusive"]}))
    assert status in (400, 422), body
    assert "slurm.sbatch_options[0]" in str(body), body


def test_a_jobs_slurm_settings_override_the_queues(routed, slurm_cluster):
    # a partition that does not exist: sbatch refuses, in its words
    job = routed.submit(spec({"worker": {"command": "true"}}, queue="train",
                             slurm={"partition": "nosuch"}))
    job = routed.wait_job(job["id"], timeout=60)
    assert job["state"] == "failed", job
    assert "slurm refused the job" in job["reason"] and "partition" in job["reason"], job
    # options after the queue's, each one argv element (spaces and quotes included)
    job = routed.submit(spec({"worker": {"command": "echo LIMIT=$SLURM_JOB_NAME"}},
                             queue="train",
                             slurm={"time": "7", "sbatch_options": ["--comment=a 'b' $(c)"]}))
    wait_for(lambda: routed.events(job["id"]) and any(
        "submitted" in e["message"] and e["kind"] == "backend"
        for e in routed.events(job["id"])), 60, "the Slurm submission")
    sid = [re.search(r"slurm job (\d+) submitted", e["message"]).group(1)
           for e in routed.events(job["id"]) if e["kind"] == "backend"
           and "submitted" in e["message"]][0]
    r = slurm_cluster.run(["scontrol", "-o", "show", "job", sid], check=False)
    assert "TimeLimit=00:07:00" in r.stdout, r.stdout
    assert "Comment=a 'b' $(c)" in r.stdout, r.stdout
    assert routed.wait_job(job["id"], timeout=120)["state"] == "succeeded"


def test_a_crash_between_sbatch_and_storing_its_id_finds_the_job_again(make_server, slurm_cluster,
                                                                       tmp_path):
    """The server dies (SIGKILL, through a developer-build test hook) right after sbatch
    answered and before the Slurm id was stored: the restarted server finds the attempt's
    Slurm job by its name and script, follows it and records its result once; nothing runs
    twice."""
    srv = make_server(config=ROUTED_CONFIG, start=False)
    srv.extra_env = dict(slurm_cluster.env, WEIR_TEST_DIE_AFTER_SBATCH="1")
    srv.start()
    starts = tmp_path / "starts"
    starts.mkdir()
    cmd = "touch %s/$WEIR_TASK_INDEX-$$; sleep 3; echo finished" % starts
    try:
        status, body = srv.api("POST", "/api/v1/jobs",
                               spec({"worker": {"instances": 2, "command": cmd}},
                                    name="crash-window", queue="train"))
    except OSError:
        status, body = None, None  # the server died before it answered
    restart_after_sbatch_death(srv)
    jobs = srv.api("GET", "/api/v1/jobs")[1]["jobs"]
    assert len(jobs) == 1, jobs
    if status is not None:
        assert status == 201 and body["id"] == jobs[0]["id"], (status, body)
    job = srv.wait_job(jobs[0]["id"], timeout=120)
    events = srv.events(job["id"])
    assert job["state"] == "succeeded", (job, events)
    assert job["attempt"] == 1, job
    assert any("looking for its job by name" in e["message"] for e in events), events
    submitted = [e for e in events if e["kind"] == "backend" and "submitted" in e["message"]]
    assert len(submitted) == 1, submitted  # found, not submitted again
    assert len(list(starts.iterdir())) == 2, list(starts.iterdir())
    for t in job["tasks"]:
        assert "finished" in srv.log(job["id"], "worker", t["index"])


DAG_ROUTED = """\
dag_id: routed
tasks:
  - task_id: prep
    command: echo "prep on ${SLURMD_NODENAME-this machine}"
  - task_id: train
    depends_on: [prep]
    queue: train
    slurm: {sbatch_options: ["--comment=from-the-dag"]}
    resources: {gpus: 1}
    command: echo "train on $SLURMD_NODENAME"
  - task_id: eval
    depends_on: [train]
    pool: slurm_pool
    command: echo "eval on ${SLURMD_NODENAME-this machine}"
"""

DAG_BAD_QUEUE = """\
dag_id: bad_queue
tasks:
  - task_id: a
    command: "true"
  - task_id: b
    queue: nosuch
    command: "true"
"""


def test_a_dag_runs_one_task_here_and_one_on_slurm(routed, slurm_cluster, tmp_path):
    from dagtest import Dags
    d = Dags(routed, tmp_path)
    d.write("routed.yaml", DAG_ROUTED)
    d.write("bad_queue.yaml", DAG_BAD_QUEUE)
    d.wait_dag("routed")
    # every GPU of the cluster is held: the Slurm task waits in Slurm's queue
    hog = routed.submit(spec({"worker": {"instances": len(slurm_cluster.nodes),
                                         "gpus": slurm_cluster.gpus, "command": "sleep 300"}},
                             name="hog", queue="train"))
    routed.wait_running(hog["id"], timeout=60)
    d.trigger("routed", run_id="r1")
    ti = wait_for(lambda: (lambda t: t if "pending in slurm" in t["reason"] else None)(
        d.tis("routed", "r1")["train"]), 60, "the Slurm task to show Slurm's pending reason")
    assert ti["state"] == "queued" and "Resources" in ti["reason"], ti
    assert d.tis("routed", "r1")["prep"]["state"] == "success"
    job = routed.job(ti["job_id"])
    assert job["executor"] == "slurm" and job["queue"] == "train", job
    assert job["spec"]["slurm"]["sbatch_options"] == ["--comment=from-the-dag"], job["spec"]
    assert routed.api("DELETE", "/api/v1/jobs/%s" % hog["id"])[0] == 202
    run = d.wait_run("routed", "r1", timeout=120)
    assert run["state"] == "success", (run, d.tis("routed", "r1"))
    assert "prep on this machine" in d.log("routed", "r1", "prep")
    log = d.log("routed", "r1", "train")
    assert any("train on %s" % n in log for n in slurm_cluster.nodes), log
    # a task that names no queue takes its pool's
    log = d.log("routed", "r1", "eval")
    assert any("eval on %s" % n in log for n in slurm_cluster.nodes), log
    assert routed.job(d.tis("routed", "r1")["eval"]["job_id"])["queue"] == "train"
    # a queue the server does not have: an import error at its line
    errs = d.get("/importErrors")["import_errors"]
    bad = [e for e in errs if e["filename"].endswith("bad_queue.yaml")]
    assert bad and ':6: tasks[1].queue: no queue "nosuch"' in bad[0]["stack_trace"], errs
    assert "train" in bad[0]["stack_trace"], bad


def test_archives_are_shipped_once_and_unpacked_once_per_node(make_server, slurm_cluster,
                                                              tmp_path):
    from conftest import write_venv_zip
    import os
    shared = tmp_path / "shared"
    srv = make_server(config=ROUTED_CONFIG.replace(
        "  train: {executor: slurm}",
        "  train: {executor: slurm, shared_dir: %s}" % shared), start=False)
    srv.extra_env = dict(slurm_cluster.env)
    srv.start()
    venv = write_venv_zip(tmp_path / "venv.zip", "shipped")
    cmd = ("echo NODE=$SLURMD_NODENAME; venv/bin/python -c \"import os; "
           "print('marker=' + open('venv/marker.txt').read().strip()); "
           "print('wrapper=' + os.environ.get('VENV_WRAPPER', ''))\"")

    def run():
        job = srv.submit(spec({"worker": {"instances": 2, "command": cmd}}, name="ship",
                              queue="train", artifacts=[{"path": str(venv), "name": "venv"}]))
        job = srv.wait_job(job["id"], timeout=120)
        logs = [srv.log(job["id"], "worker", t["index"]) for t in job["tasks"]]
        assert job["state"] == "succeeded", (job, logs)
        for log in logs:
            assert "marker=shipped" in log and "wrapper=1" in log, log
        return {re.search(r"^NODE=(\S+)$", log, re.M).group(1) for log in logs}

    def trees():
        """{node: {sha: (inode, mtime)}} of the unpacked trees in each node's cache."""
        out = {}
        for node in (shared / "nodes").iterdir():
            out[node.name] = {e.name: (e.stat().st_ino, e.stat().st_mtime_ns)
                              for e in os.scandir(node) if re.fullmatch(r"[0-9a-f]{64}", e.name)}
        return out

    nodes = run()
    assert len(nodes) == 2, nodes
    shipped = [p.name for p in (shared / "artifacts").iterdir()]
    assert len(shipped) == 1 and re.fullmatch(r"[0-9a-f]{64}\.zip", shipped[0]), shipped
    first = trees()
    assert set(first) == nodes, first  # one cache per node, named by Slurm's node name
    for node, t in first.items():
        assert list(t) == [shipped[0][:64]], (node, t)  # unpacked once on each node
    assert run() == nodes
    assert trees() == first  # the second job unpacked nothing
    assert [p.name for p in (shared / "artifacts").iterdir()] == shipped


def test_a_pool_naming_an_unknown_queue_stops_the_server(make_server):
    srv = make_server(config="pools: {p: {slots: 1, queue: nope}}\n", start=False)
    srv.start(wait=False)
    assert srv.proc.wait(30) == 2, srv.log_text()
    assert 'pools.p.queue: no queue "nope"' in srv.log_text(), srv.log_text()


DAG_CLEAR = """\
dag_id: clear_on_slurm
tasks:
  - task_id: train
    queue: train
    command: 'if test -f {marker}; then echo second try; else touch {marker}; echo first try; sleep 300; fi'
"""


def test_clearing_a_running_slurm_task_cancels_its_slurm_job(routed, slurm_cluster, tmp_path):
    from dagtest import Dags
    from slurmtest import slurm_job_id
    d = Dags(routed, tmp_path)
    d.write("clear_on_slurm.yaml", DAG_CLEAR.format(marker=tmp_path / "marker"))
    d.wait_dag("clear_on_slurm")
    d.trigger("clear_on_slurm", run_id="c1")
    ti = wait_for(lambda: (lambda t: t if t["state"] == "running" else None)(
        d.tis("clear_on_slurm", "c1")["train"]), 90, "the Slurm task to run")
    sid = wait_for(lambda: slurm_job_id(routed, ti["job_id"]), 30, "the task's Slurm job")
    wait_for(lambda: slurm_cluster.stepds(sid), 30, "a slurmstepd of Slurm job %s" % sid)
    wait_for(lambda: "first try" in d.log("clear_on_slurm", "c1", "train"), 30, "the first try")
    status, body = routed.api("POST", "/api/v1/dags/clear_on_slurm/clearTaskInstances",
                              {"dag_run_id": "c1", "task_ids": ["train"], "dry_run": False,
                               "only_failed": False})
    assert status == 200 and len(body["task_instances"]) == 1, (status, body)
    # the first try's Slurm job is cancelled and leaves nothing behind; the task runs again
    wait_for(lambda: not slurm_cluster.stepds(sid), 60, "no slurmstepd of Slurm job %s" % sid)
    wait_for(lambda: slurm_cluster.job_state(sid) in (None, "CANCELLED"), 60,
             "Slurm job %s cancelled (last seen %s)" % (sid, slurm_cluster.job_state(sid)))
    run = d.wait_run("clear_on_slurm", "c1", timeout=120)
    assert run["state"] == "success", (run, d.tis("clear_on_slurm", "c1"))
    ti = d.tis("clear_on_slurm", "c1")["train"]
    assert slurm_job_id(routed, ti["job_id"]) != sid
    assert "second try" in d.log("clear_on_slurm", "c1", "train", try_number=ti["try_number"])
