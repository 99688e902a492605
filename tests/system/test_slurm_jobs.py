"""Jobs on the slurm backend: a weir server with `executor: slurm` on a real local Slurm cluster
(tests/slurm/start.sh through slurmtest's module fixture: slurmctld, two slurmd, munge).

One weir job is one Slurm job; each task is an srun step running weir-launch on its node.
"""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import EXAMPLES, TASK_PY, _python_with, cli_describe, spec, wait_for
from slurmtest import slurm_cluster  # noqa: F401 (a fixture)
from slurmtest import slurm_job_id, slurm_server_of

# --spread-job: one task per node where it can, so that two tasks land on two nodes
SLURM_CONFIG = """\
executor: slurm
kill_grace_seconds: 2
slurm:
  sbatch_options: ["--spread-job"]
"""

TORCH_PY = _python_with("torch")
ACC = re.compile(r"^final accuracy: (\d\.\d{4})$", re.M)


@pytest.fixture
def slurm_server(make_server, slurm_cluster):
    return slurm_server_of(make_server, slurm_cluster, SLURM_CONFIG)



def test_two_tasks_run_on_two_nodes(slurm_server):
    job = slurm_server.submit(spec({"worker": {"instances": 2, "command":
                                               "hostname; env | grep -E '^(WEIR_|SLURMD_)' | sort"}},
                                   name="two-nodes"))
    job = slurm_server.wait_job(job["id"], timeout=120)
    assert job["state"] == "succeeded", job
    assert slurm_job_id(slurm_server, job["id"]), slurm_server.events(job["id"])
    nodes = set()
    for t in job["tasks"]:
        assert t["state"] == "succeeded" and t["exit_code"] == 0, t
        log = slurm_server.log(job["id"], "worker", t["index"])
        m = re.search(r"^SLURMD_NODENAME=(\S+)$", log, re.M)
        assert m, log
        nodes.add(m.group(1))
        assert "WEIR_TASK_INDEX=%d" % t["index"] in log, log
        assert "WEIR_TOKEN" not in log, "the launcher's token reached the program: " + log
    assert len(nodes) == 2, nodes


def test_gpus_are_the_ones_slurm_bound(slurm_server):
    """CUDA_VISIBLE_DEVICES is what srun set for the step, not an id weir made up."""
    job = slurm_server.submit(spec({"worker": {"instances": 2, "gpus": 2, "command":
                                               "echo CVD=${CUDA_VISIBLE_DEVICES-unset}; "
                                               "echo STEP=${SLURM_STEP_GPUS-${SLURM_JOB_GPUS-}}"}},
                                   name="gpu-binding"))
    job = slurm_server.wait_job(job["id"], timeout=120)
    assert job["state"] == "succeeded", job
    for t in job["tasks"]:
        log = slurm_server.log(job["id"], "worker", t["index"])
        cvd = re.search(r"^CVD=(.*)$", log, re.M)
        assert cvd, log
        ids = cvd.group(1).split(",")
        assert len(ids) == 2 and all(i.isdigit() for i in ids), log
        step = re.search(r"^STEP=(.*)$", log, re.M)
        assert step and step.group(1) == cvd.group(1), log


def test_kill_cancels_the_slurm_job(slurm_server, slurm_cluster):
    job = slurm_server.submit(spec({"worker": {"instances": 2, "command": "sleep 300"}},
                                   name="to-kill"))
    slurm_server.wait_running(job["id"], timeout=60)
    sid = slurm_job_id(slurm_server, job["id"])
    assert sid
    wait_for(lambda: len([t for t in slurm_cluster.stepds(sid).values() if "batch" not in t])
             >= 2, 30, "the job's two srun steps")
    r = slurm_server.cli("jobs", "kill", job["id"], timeout=60)
    assert r.returncode == 0, cli_describe(r)
    job = slurm_server.wait_job(job["id"], timeout=60)
    assert job["state"] == "killed", job
    wait_for(lambda: not slurm_cluster.stepds(sid), 60, "no slurmstepd of Slurm job %s" % sid)
    # COMPLETING may linger a moment after the last step is gone
    wait_for(lambda: slurm_cluster.job_state(sid) in (None, "CANCELLED", "COMPLETED"), 60,
             "Slurm job %s cancelled (last seen %s)" % (sid, slurm_cluster.job_state(sid)))


def test_a_task_over_its_memory_on_slurm_is_oomkilled_without_a_weir_cgroup(slurm_server,
                                                                          tmp_path):
    """Slurm's step is the task's cgroup: the launcher nests none of its own (it would cost
    each task's start a kernel grace period); the memory limit still holds (this test cluster
    runs Slurm with task/none, so the launcher's RSS polling is what stops the task)."""
    (tmp_path / "hog.py").write_text(
        "import time; chunks = [bytes([1]) * (1 << 20) for _ in range(600)]; "
        "print('allocated', len(chunks), 'MiB', flush=True); time.sleep(5)\n")
    job = slurm_server.submit(spec({"worker": {"memory": "128m",
                                               "command": "grep :memory: /proc/self/cgroup; "
                                                          "%s hog.py" % TASK_PY}},
                                   name="oom-on-slurm", src_dir=str(tmp_path)))
    job = slurm_server.wait_job(job["id"], timeout=120)
    log = slurm_server.log(job["id"])
    (task,) = job["tasks"]
    assert job["state"] == "failed" and "OOMKilled" in (task["reason"] or ""), (job, log)
    assert task["exit_code"] == 137, task
    assert "allocated 600 MiB" not in log, "the task got all its memory: no limit\n" + log
    assert task["peak_memory_bytes"] >= 128 << 20, task
    # the program's memory cgroup is the one it was started in, not one under weir/
    line = re.search(r"^\d+:memory:(\S*)$", log, re.M)
    assert line and "/weir/" not in line.group(1), log


def test_more_gpus_than_the_cluster_has_is_refused_in_slurms_words(slurm_server):
    job = slurm_server.submit(spec({"worker": {"instances": 2, "gpus": 64, "command": "true"}},
                                   name="too-big"))
    job = slurm_server.wait_job(job["id"], timeout=60)
    assert job["state"] == "failed", job
    assert "sbatch" in job["reason"] and "node configuration" in job["reason"], job["reason"]


@pytest.mark.slow
@pytest.mark.skipif(TORCH_PY is None, reason="no python3 with torch (python3-torch)")
def test_pytorch_ddp_trains_on_slurm(slurm_server, tmp_path):
    d = tmp_path / "imdb"
    d.mkdir()
    for name in ("make_data.py", "train.py"):
        shutil.copy(EXAMPLES / "imdb" / name, d / name)
    subprocess.run([TORCH_PY, "make_data.py", "data", "--train", "2000", "--test", "500"],
                   cwd=d, check=True, timeout=120, capture_output=True)
    job = slurm_server.submit(spec({"worker": {"instances": 2, "memory": "2g"}},
                                   name="imdb-ddp", framework="pytorch", src_dir=str(d),
                                   entry_point="train.py", python=TORCH_PY,
                                   params="--data_dir data --epochs 3"))
    job = slurm_server.wait_job(job["id"], timeout=300)
    accs = []
    for t in job["tasks"]:
        log = slurm_server.log(job["id"], t["role"], t["index"])
        found = ACC.findall(log)
        assert len(found) == 1, log[-3000:]
        accs.append(found[0])
    assert job["state"] == "succeeded", job
    assert len(accs) == 2 and accs[0] == accs[1], accs
    assert float(accs[0]) > 0.6, accs


def test_a_pending_job_shows_slurms_reason(slurm_server, slurm_cluster):
    # every GPU of the cluster is held by the first job: the second waits in Slurm's queue
    hog = slurm_server.submit(spec({"worker": {"instances": len(slurm_cluster.nodes),
                                               "gpus": slurm_cluster.gpus,
                                               "command": "sleep 300"}}, name="hog"))
    slurm_server.wait_running(hog["id"], timeout=60)
    waits = slurm_server.submit(spec({"worker": {"gpus": 1, "command": "true"}}, name="waits"))
    wait_for(lambda: "pending in slurm" in slurm_server.job(waits["id"])["reason"], 30,
             "the second job to show Slurm's pending reason")
    job = slurm_server.job(waits["id"])
    assert job["state"] == "starting" and "Resources" in job["reason"], job
    for j in (waits, hog):
        assert slurm_server.api("DELETE", "/api/v1/jobs/%s" % j["id"])[0] == 202
    assert slurm_server.wait_job(waits["id"], timeout=60)["state"] == "killed"
    assert slurm_server.wait_job(hog["id"], timeout=60)["state"] == "killed"


def test_server_killed_while_a_slurm_job_runs_records_it_once(slurm_server, tmp_path):
    starts = tmp_path / "starts"
    starts.mkdir()
    cmd = "touch %s/$WEIR_TASK_INDEX-$$; sleep 6; echo finished" % starts
    job = slurm_server.submit(spec({"worker": {"instances": 2, "command": cmd}},
                                   name="outlives"))
    slurm_server.wait_running(job["id"], timeout=60)
    wait_for(lambda: len(list(starts.iterdir())) == 2, 30, "the 2 tasks to start")
    slurm_server.kill9()
    slurm_server.start()
    job = slurm_server.wait_job(job["id"], timeout=90)
    assert job["state"] == "succeeded", (job, slurm_server.events(job["id"]))
    assert job["attempt"] == 1, job
    for t in job["tasks"]:
        assert t["state"] == "succeeded", t
        assert "finished" in slurm_server.log(job["id"], "worker", t["index"])
    assert len(list(starts.iterdir())) == 2, "tasks ran again: %r" % list(starts.iterdir())
    submitted = [e for e in slurm_server.events(job["id"]) if "submitted" in e["message"]
                 and e["kind"] == "backend"]
    assert len(submitted) == 1, submitted
    ends = [e for e in slurm_server.events(job["id"]) if e["kind"] == "state"
            and e["message"].startswith("succeeded")]
    assert len(ends) == 1, ends


def test_roles_with_different_resources_make_a_heterogeneous_job(slurm_server, slurm_cluster):
    show = "echo CPUS=$SLURM_CPUS_PER_TASK; env | grep -E '^(SLURMD_NODENAME|TF_CONFIG)='"
    job = slurm_server.submit(spec({"chief": {"vcores": 2, "memory": "512m", "command": show},
                                    "worker": {"instances": 2, "command": show}},
                                   name="het", framework="tensorflow"))
    job = slurm_server.wait_job(job["id"], timeout=120)
    assert job["state"] == "succeeded", (job, slurm_server.events(job["id"]))
    sid = slurm_job_id(slurm_server, job["id"])
    assert sid, slurm_server.events(job["id"])
    for t in job["tasks"]:
        log = slurm_server.log(job["id"], t["role"], t["index"])
        assert "CPUS=%d" % (2 if t["role"] == "chief" else 1) in log, log
        assert '"chief"' in log and '"worker"' in log, log
    r = slurm_cluster.run(["scontrol", "-o", "show", "job", sid], check=False)
    assert "HetJobId=%s" % sid in r.stdout or not r.stdout.strip(), r.stdout


def test_tf_config_all_connect_on_slurm(slurm_server, tmp_path):
    """The jobs issue's TF_CONFIG all-to-all check, with the tasks in Slurm's srun steps."""
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(Path(__file__).resolve().parent / "tfcheck.py", src / "tfcheck.py")
    cmd = "%s tfcheck.py" % TASK_PY
    expect = json.dumps({"chief": 1, "worker": 2, "ps": 1})
    job = slurm_server.submit(spec({
        "chief": {"instances": 1, "command": cmd},
        "worker": {"instances": 2, "command": cmd},
        "ps": {"instances": 1, "command": cmd, "untracked": True, "env": {"UNTRACKED": "1"}},
    }, name="tfconf", framework="tensorflow", src_dir=str(src),
        env={"EXPECT_ROLES": expect}))
    job = slurm_server.wait_job(job["id"], timeout=180)
    logs = {(t["role"], t["index"]): slurm_server.log(job["id"], t["role"], t["index"])
            for t in job["tasks"]}
    assert job["state"] == "succeeded", (json.dumps(job, indent=1), logs)
    for t in job["tasks"]:
        log = logs[(t["role"], t["index"])]
        if t["role"] == "ps":
            assert t["state"] in ("killed", "succeeded"), t
            assert "me ps:0" in log, log  # its reach shows in the peers' logs
        else:
            assert t["state"] == "succeeded" and t["exit_code"] == 0, (t, log)
            assert "ALL CONNECTED %s:%d" % (t["role"], t["index"]) in log, log
            assert "heard from ps:0" in log, log


DAG_ON_SLURM = """\
dag_id: on_slurm
tasks:
  - task_id: first
    command: echo "first on $SLURMD_NODENAME"; sleep 4; echo first done
  - task_id: second
    depends_on: [first]
    command: echo "second on $SLURMD_NODENAME"
"""


def test_dag_tasks_run_on_slurm_and_their_logs_are_live(make_server, slurm_cluster, tmp_path):
    from dagtest import Dags
    srv = make_server(config=SLURM_CONFIG, start=False)
    srv.extra_env = dict(slurm_cluster.env)
    d = Dags(srv, tmp_path)
    d.write("on_slurm.yaml", DAG_ON_SLURM)
    srv.start()
    d.wait_dag("on_slurm")
    d.trigger("on_slurm", run_id="r1")
    # the running task's log, through the API, before the task ends
    wait_for(lambda: "first on " in d.log("on_slurm", "r1", "first")
             and d.tis("on_slurm", "r1")["first"]["state"] == "running", 60,
             "first's log while it runs")
    assert "first done" not in d.log("on_slurm", "r1", "first")
    run = d.wait_run("on_slurm", "r1", timeout=90)
    assert run["state"] == "success", (run, d.tis("on_slurm", "r1"))
    for task in ("first", "second"):
        log = d.log("on_slurm", "r1", task)
        assert any("%s on %s" % (task, n) in log for n in slurm_cluster.nodes), log
