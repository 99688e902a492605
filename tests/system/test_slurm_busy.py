"""Slurm too busy to take a job: a cluster of its own whose controller keeps at most
MaxJobCount=2 job records (Debian's Slurm 22.05 then takes one or two jobs).  sbatch retries
by itself for about two minutes, then gives up with "Resource temporarily unavailable"; weir
then keeps the job waiting, shows why, and submits it again until Slurm takes it, once."""

import pytest

from conftest import spec, wait_for
from slurmtest import cluster_running, slurm_job_id, slurm_server_of

CONFIG = """\
executor: slurm
kill_grace_seconds: 2
"""


@pytest.fixture(scope="module")
def tiny_cluster(tmp_path_factory):
    yield from cluster_running(tmp_path_factory.mktemp("slurm-busy"), nodes=1, gpus=0,
                               options=["--max-jobs", "2", "--min-job-age", "2"])


@pytest.mark.slow
def test_a_job_slurm_cannot_take_yet_waits_and_is_submitted_again(make_server, tiny_cluster,
                                                                  tmp_path):
    srv = slurm_server_of(make_server, tiny_cluster, CONFIG)
    marker = tmp_path / "go"
    cmd = "while [ ! -e %s ]; do sleep 0.5; done; echo taken at last" % marker

    def running_or_busy(job_id):
        j = srv.job(job_id)
        return j if j["state"] == "running" or "Slurm is busy" in (j["reason"] or "") else None

    # one job at a time (jobs started together would go as one array) until Slurm is full
    held, later = [], None
    for i in range(3):
        job = srv.submit(spec({"worker": {"command": cmd}}, name="job%d" % i))
        job = wait_for(lambda: running_or_busy(job["id"]), 240,
                       "job %d running, or waiting with 'Slurm is busy'" % i)
        if job["state"] != "running":
            later = job
            break
        held.append(job)
    assert later and held, (held, later)
    assert later["state"] == "starting", later
    assert "Resource temporarily unavailable" in later["reason"], later
    assert not slurm_job_id(srv, later["id"])
    marker.touch()  # the held jobs end; their records go after MinJobAge
    job = srv.wait_job(later["id"], timeout=300)
    assert job["state"] == "succeeded", (job, srv.events(job["id"]))
    assert "taken at last" in srv.log(job["id"], "worker", 0)
    submitted = [e for e in srv.events(job["id"]) if "submitted" in e["message"]
                 and "slurm job" in e["message"]]
    assert len(submitted) == 1, srv.events(job["id"])
    assert all(srv.wait_job(h["id"], timeout=60)["state"] == "succeeded" for h in held)
