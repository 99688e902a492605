"""The local Slurm test cluster itself (tests/slurm/start.sh through slurmtest.py) works:
nodes idle, multi-node steps, fake GPUs, batch jobs, and scancel leaving nothing behind.
These are what the Slurm backend's tests rely on; a failure here points at the cluster, not
at weir."""

import time
import uuid

from conftest import find_procs, wait_for
from slurmtest import slurm_cluster  # noqa: F401 (the fixture)


def test_every_node_idle(slurm_cluster):
    print("cluster start took %.2fs" % slurm_cluster.start_seconds)
    states = slurm_cluster.node_states()
    assert len(states) == 2, states
    assert set(states.values()) == {"idle"}, states
    assert slurm_cluster.nodes == sorted(states)


def test_one_task_on_each_node(slurm_cluster):
    r = slurm_cluster.run(["srun", "-N2", "-n2", "--mem=64", "sh", "-c",
                           'echo "$SLURM_PROCID $SLURMD_NODENAME"'])
    ranks = dict(line.split() for line in r.stdout.splitlines())
    assert sorted(ranks) == ["0", "1"], r.stdout
    assert ranks["0"] != ranks["1"], r.stdout
    assert set(ranks.values()) == set(slurm_cluster.nodes)


def test_gpu_gres_sets_cuda_visible_devices(slurm_cluster):
    r = slurm_cluster.run(["srun", "--gres=gpu:1", "--mem=64", "sh", "-c",
                           'echo "gpus=$CUDA_VISIBLE_DEVICES"'])
    assert r.stdout.strip() == "gpus=0", r.stdout
    r = slurm_cluster.run(["srun", "-N2", "-n2", "--gres=gpu:2", "--mem=64", "sh", "-c",
                           'echo "$SLURMD_NODENAME $CUDA_VISIBLE_DEVICES"'])
    lines = sorted(r.stdout.splitlines())
    assert lines == ["%s 0,1" % n for n in slurm_cluster.nodes], r.stdout


def test_more_gpus_than_a_node_has_is_refused(slurm_cluster):
    r = slurm_cluster.run(["sbatch", "--gres=gpu:3", "--wrap", "true"], check=False)
    assert r.returncode != 0, r.stdout
    assert "Requested node configuration is not available" in r.stderr, r.stderr


def test_sbatch_wait(slurm_cluster, tmp_path):
    out = tmp_path / "out.txt"
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/sh\necho \"batch on $SLURMD_NODENAME\"\nexit 3\n")
    r = slurm_cluster.run(["sbatch", "--wait", "--parsable", "--mem=64", "-o", str(out),
                           str(script)], check=False, timeout=60)
    assert r.returncode == 3, (r.stdout, r.stderr)
    job_id = r.stdout.strip().split(";")[0]
    assert out.read_text().startswith("batch on node"), out.read_text()
    assert slurm_cluster.job_state(job_id) == "FAILED"


def test_scancel_leaves_no_process(slurm_cluster, tmp_path):
    mark = "slurmtest-" + uuid.uuid4().hex
    # A batch shell with two children, all carrying the mark in their environment.
    r = slurm_cluster.run(["sbatch", "--parsable", "--mem=64", "-o", str(tmp_path / "o"),
                           "--wrap", "sleep 300 & sleep 300; wait"], env={"MARK": mark})
    job_id = r.stdout.strip().split(";")[0]
    def sleeps():
        return [c for c in find_procs(mark).values() if c.startswith("sleep")]
    wait_for(lambda: len(sleeps()) == 2, 30, "job %s's two sleeps" % job_id)
    assert slurm_cluster.stepds(job_id), "no slurmstepd seen for job %s" % job_id
    t0 = time.monotonic()
    slurm_cluster.run(["scancel", job_id])
    wait_for(lambda: not find_procs(mark) and not slurm_cluster.stepds(job_id), 30,
             "job %s's processes to end" % job_id)
    print("scancel to no process: %.2fs" % (time.monotonic() - t0))
    wait_for(lambda: slurm_cluster.job_state(job_id) == "CANCELLED", 30,
             "job %s CANCELLED" % job_id)
