"""The example's 2-worker PyTorch DDP job (gloo, CPU) trains to the same accuracy on both ranks."""

import re
import shutil
import subprocess

import pytest

from conftest import EXAMPLES, _python_with, cli_describe, spec

TORCH_PY = _python_with("torch")
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(TORCH_PY is None, reason="no python3 with torch (python3-torch)")]
ACC = re.compile(r"^final accuracy: (\d\.\d{4})$", re.M)


@pytest.fixture
def imdb(tmp_path):
    """A copy of examples/imdb with its data generated and its venv.zip packed."""
    d = tmp_path / "imdb"
    d.mkdir()
    for name in ("make_data.py", "train.py", "tony.xml", "job.yaml", "pack_venv.sh"):
        shutil.copy(EXAMPLES / "imdb" / name, d / name)
    subprocess.run([TORCH_PY, "make_data.py", "data", "--train", "2000", "--test", "500"],
                   cwd=d, check=True, timeout=120, capture_output=True)
    subprocess.run(["sh", "pack_venv.sh", "venv.zip"], cwd=d, check=True, timeout=120,
                   capture_output=True, env={"PATH": "/usr/bin:/bin", "PYTHON": TORCH_PY})
    return d


def _accuracies(server, job):
    accs = []
    for t in job["tasks"]:
        log = server.log(job["id"], t["role"], t["index"])
        found = ACC.findall(log)
        assert len(found) == 1, "%s:%s log has no single accuracy line:\n%s" % (
            t["role"], t["index"], log[-3000:])
        accs.append(found[0])
    return accs


def test_ddp_two_workers_train_to_the_same_accuracy(server, imdb):
    job = server.submit(spec({"worker": {"instances": 2, "memory": "2g"}},
                             name="imdb-ddp", framework="pytorch", src_dir=str(imdb),
                             entry_point="train.py", python=TORCH_PY,
                             params="--data_dir data --epochs 3"))
    job = server.wait_job(job["id"], timeout=300)
    accs = _accuracies(server, job)
    assert job["state"] == "succeeded", job
    assert len(accs) == 2 and accs[0] == accs[1], accs
    assert float(accs[0]) > 0.6, accs
    for t in job["tasks"]:
        assert t["state"] == "succeeded" and t["exit_code"] == 0, t
        assert t["peak_memory_bytes"] and t["peak_memory_bytes"] > 10 << 20, t


def test_ddp_env_contract(server, tmp_path):
    """torchrun's variables: ranks unique across roles, one world, one master."""
    script = ("import os, json; print('ENV', json.dumps({k: os.environ.get(k) for k in "
              "('MASTER_ADDR','MASTER_PORT','RANK','WORLD_SIZE','LOCAL_RANK','LOCAL_WORLD_SIZE',"
              "'GROUP_RANK','INIT_METHOD')}))")
    (tmp_path / "env.py").write_text(script + "\n")
    job = server.submit(spec({"chief": {"instances": 1}, "worker": {"instances": 2}},
                             name="ddp-env", framework="pytorch", src_dir=str(tmp_path),
                             entry_point="env.py", python=TORCH_PY))
    job = server.wait_job(job["id"], timeout=120)
    assert job["state"] == "succeeded", job
    import json
    envs = []
    for t in job["tasks"]:
        log = server.log(job["id"], t["role"], t["index"])
        line = [ln for ln in log.splitlines() if ln.startswith("ENV ")]
        assert line, log
        envs.append(json.loads(line[0][4:]))
    assert sorted(int(e["RANK"]) for e in envs) == [0, 1, 2], envs
    assert {e["WORLD_SIZE"] for e in envs} == {"3"}, envs
    assert len({(e["MASTER_ADDR"], e["MASTER_PORT"]) for e in envs}) == 1, envs
    for e in envs:
        assert e["MASTER_PORT"] and e["MASTER_PORT"].isdigit(), e
        assert e["INIT_METHOD"] and e["MASTER_PORT"] in e["INIT_METHOD"], e
        for k in ("LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK"):
            assert e[k] is not None and e[k].isdigit(), (k, e)


def test_example_through_tony_flags(server, imdb):
    """The seed's command line shape with the example's tony.xml and venv.zip."""
    r = server.cli("submit", "--python_venv=venv.zip", "--src_dir=.", "--executes=train.py",
                   "--task_params=--data_dir data --epochs 3 ", "--conf_file=tony.xml",
                   "--python_binary_path=venv/bin/python", "--conf", "tony.worker.memory=2g",
                   cwd=imdb, timeout=300)
    assert r.returncode == 0, cli_describe(r)
    jobs = server.api("GET", "/api/v1/jobs")[1]["jobs"]
    assert len(jobs) == 1, jobs
    job = server.job(jobs[0]["id"])
    assert job["state"] == "succeeded", job
    assert job["framework"] == "pytorch", job
    assert [t["role"] for t in job["tasks"]] == ["worker", "worker"], job["tasks"]
    accs = _accuracies(server, job)
    assert accs[0] == accs[1], accs
    assert accs[0] in r.stdout + r.stderr or "succeeded" in (r.stdout + r.stderr).lower(), \
        cli_describe(r)


def test_example_job_yaml_is_a_valid_spec(server, imdb):
    """examples/imdb/job.yaml is the same job: 2 workers of 4g, pytorch, the venv artifact."""
    r = server.cli("submit", "--detach", imdb / "job.yaml", timeout=60)
    assert r.returncode == 0, cli_describe(r)
    jobs = server.api("GET", "/api/v1/jobs")[1]["jobs"]
    assert len(jobs) == 1, jobs
    job = server.job(jobs[0]["id"])
    s = job["spec"]
    assert s["framework"] == "pytorch" and s["roles"]["worker"]["instances"] == 2, s
    assert s["artifacts"][0]["name"] == "venv", s
    assert s["artifacts"][0]["path"].startswith("/"), "relative path not resolved: %r" % s
    job = server.wait_job(job["id"], timeout=300)
    assert job["state"] == "succeeded", (job, server.log(job["id"]))
    accs = _accuracies(server, job)
    assert accs[0] == accs[1], accs
