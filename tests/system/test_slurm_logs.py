"""Slurm tasks' logs over HTTP (the default `log_transport` of the slurm backend) and the end
states Slurm gives a job, on the real local Slurm cluster (slurmtest's module fixture)."""

from pathlib import Path

import pytest

from conftest import spec, wait_for
from slurmtest import slurm_cluster  # noqa: F401 (a fixture)
from slurmtest import slurm_job_id, slurm_server_of
from test_log_transport import PROGRAM, assert_log_live_and_whole

SLURM_CONFIG = """\
executor: slurm
kill_grace_seconds: 2
"""


@pytest.fixture
def slurm_server(make_server, slurm_cluster):
    return slurm_server_of(make_server, slurm_cluster, SLURM_CONFIG)



def test_slurm_task_log_comes_over_http_live_and_whole(slurm_server):
    job = slurm_server.submit(spec({"worker": {"command": PROGRAM}}, name="slurm-logs"))
    assert_log_live_and_whole(slurm_server, job["id"], 90)
    # the step did not write the log: the batch script has no redirection into it, and
    # Slurm's own output file holds none of the program's lines
    logs = Path(slurm_server.home) / "jobs" / str(job["id"]) / "logs"
    script = (logs / "slurm-1.sh").read_text()
    assert "--log-to-server" in script and ">>" not in script, script
    sid = slurm_job_id(slurm_server, job["id"])
    out = logs / ("slurm-%s.out" % sid)
    assert not out.exists() or "line-1" not in out.read_text()


def test_scancel_outside_weir_says_so(slurm_server, slurm_cluster):
    job = slurm_server.submit(spec({"worker": {"command": "echo up; sleep 300"}},
                                   name="cancelled-outside"))
    slurm_server.wait_running(job["id"], timeout=90)
    sid = slurm_job_id(slurm_server, job["id"])
    assert sid
    slurm_cluster.run(["scancel", sid])
    done = slurm_server.wait_job(job["id"], timeout=90)
    assert done["state"] in ("failed", "killed"), done
    want = "cancelled outside weir (Slurm job %s CANCELLED)" % sid
    # the launcher reported its program's end (SIGTERM from Slurm) before squeue showed
    # the job CANCELLED: the task and the job then take Slurm's verdict
    wait_for(lambda: want in slurm_server.job(job["id"])["reason"], 30,
             "the job's reason to say %r (now %r)" % (want,
                                                     slurm_server.job(job["id"])["reason"]))
    task = slurm_server.job(job["id"])["tasks"][0]
    assert task["reason"] == want, task
    assert any(want in e["message"] for e in slurm_server.events(job["id"]))


def test_log_transport_file_on_slurm_writes_through_the_shared_home(make_server, slurm_cluster):
    """log_transport: file keeps one srun step per task, each appending to its task's log."""
    srv = make_server(config=SLURM_CONFIG + "log_transport: file\n", start=False)
    srv.extra_env = dict(slurm_cluster.env)
    srv.start()
    job = srv.submit(spec({"worker": {"instances": 2, "command": "echo hello from $WEIR_TASK_INDEX"}},
                          name="file-logs"))
    job = srv.wait_job(job["id"], timeout=90)
    assert job["state"] == "succeeded", job
    for i in (0, 1):
        assert "hello from %d" % i in srv.log(job["id"], "worker", i)
    script = (Path(srv.home) / "jobs" / str(job["id"]) / "logs" / "slurm-1.sh").read_text()
    assert script.count("srun ") == 2 and ">>" in script and "--log-to-server" not in script, \
        script


def test_a_gang_is_one_srun_step_per_component(slurm_server):
    job = slurm_server.submit(spec({"worker": {"instances": 3, "command": "echo w $WEIR_TASK_INDEX"},
                                    "ps": {"command": "echo p $WEIR_TASK_INDEX"}},
                                   name="one-step"))
    job = slurm_server.wait_job(job["id"], timeout=90)
    assert job["state"] == "succeeded", job
    assert sorted((t["role"], t["index"]) for t in job["tasks"]) == \
        [("ps", 0), ("worker", 0), ("worker", 1), ("worker", 2)]
    for t in job["tasks"]:
        assert "%s %d" % (t["role"][0], t["index"]) in slurm_server.log(job["id"], t["role"],
                                                                         t["index"])
    script = (Path(slurm_server.home) / "jobs" / str(job["id"]) / "logs" / "slurm-1.sh") \
        .read_text()
    assert script.count("srun ") == 1 and "--tasks " in script, script
