"""A TonY user's submit as TonY's own docs and examples write it: a venv zipped at its root
with --python_binary_path=bin/python, --executes without --src_dir, tony.xml found in the
current directory and TONY_CONF_DIR/tony-site.xml over it, TonY's task environment, and the
status lines saying every state a task passed through."""

import json
import re
import subprocess

import pytest

from conftest import _python_with, cli_describe, write_venv_zip

SCRIPT = """\
import json, os, sys
print("ENV " + json.dumps({k: os.environ.get(k) for k in
      ("VENV_WRAPPER", "JOB_NAME", "TASK_INDEX", "TASK_NUM", "DISTRIBUTED_MODE", "IS_CHIEF")}))
"""


def _xml(**props):
    body = "".join("  <property><name>%s</name><value>%s</value></property>\n" % (k, v)
                   for k, v in props.items())
    return "<configuration>\n%s</configuration>\n" % body


def _env_lines(server, job, i):
    log = server.log(job["id"], "worker", i)
    found = [json.loads(ln[4:]) for ln in log.splitlines() if ln.startswith("ENV ")]
    assert len(found) == 1, log
    return found[0]


def _python3():
    return subprocess.run(["sh", "-c", "command -v python3"], capture_output=True,
                          text=True).stdout.strip()


def _last_job(server):
    return server.job(server.api("GET", "/api/v1/jobs")[1]["jobs"][0]["id"])


def test_root_zipped_venv_with_tony_binary_path(server, tmp_path):
    """`cd venv && zip -r ../venv.zip .` with --python_binary_path=bin/python runs the venv's
    interpreter (TonY: venv/bin/python), as does the seed's venv/ folder layout."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text(SCRIPT)
    (tmp_path / "tony.xml").write_text(_xml(**{"tony.worker.instances": 2,
                                               "tony.worker.memory": "512m"}))
    for prefix, binary in (("", "bin/python"), ("venv/", "venv/bin/python")):
        write_venv_zip(tmp_path / "venv.zip", prefix=prefix)
        r = server.cli("submit", "--conf_file=tony.xml", "--src_dir=src", "--executes=train.py",
                       "--python_venv=venv.zip", "--python_binary_path=" + binary,
                       cwd=tmp_path, timeout=180)
        assert r.returncode == 0, (prefix, cli_describe(r))
        job = _last_job(server)
        assert job["state"] == "succeeded", job
        for i in range(2):
            env = _env_lines(server, job, i)
            assert env["VENV_WRAPPER"] == "1", (prefix, env)
            assert env["JOB_NAME"] == "worker" and env["TASK_INDEX"] == str(i), env
            assert env["TASK_NUM"] == "2" and env["DISTRIBUTED_MODE"] == "GANG", env
            assert env["IS_CHIEF"] == ("true" if i == 0 else None), env


def test_executes_without_src_dir_ships_the_file(server, tmp_path):
    (tmp_path / "train.py").write_text(SCRIPT)
    (tmp_path / "x.xml").write_text(_xml(**{"tony.worker.instances": 1,
                                            "tony.worker.memory": "512m"}))
    py = _python3()
    r = server.cli("submit", "--conf_file", "x.xml", "--executes", "train.py",
                   "--python_binary_path", py, cwd=tmp_path, timeout=180)
    assert r.returncode == 0, cli_describe(r)
    job = _last_job(server)
    assert job["state"] == "succeeded", job
    assert _env_lines(server, job, 0)["JOB_NAME"] == "worker"

    r = server.cli("submit", "--conf_file", "x.xml", "--executes", "missing.py",
                   cwd=tmp_path, timeout=60)
    assert r.returncode == 2, cli_describe(r)
    assert "--executes missing.py" in r.stderr and "--src_dir" in r.stderr, cli_describe(r)


def test_tony_xml_and_tony_site_are_read_and_said(server, tmp_path):
    """No --conf_file: ./tony.xml; TONY_CONF_DIR/tony-site.xml over it; --conf over both."""
    proj = tmp_path / "proj"
    site = tmp_path / "site"
    proj.mkdir()
    site.mkdir()
    (proj / "train.py").write_text(SCRIPT)
    (proj / "tony.xml").write_text(_xml(**{"tony.worker.instances": 1,
                                           "tony.worker.memory": "512m",
                                           "tony.application.name": "from-tony-xml"}))
    (site / "tony-site.xml").write_text(_xml(**{"tony.worker.instances": 2,
                                                "tony.application.name": "from-site"}))
    r = server.cli("submit", "--executes=train.py", "--src_dir=.", "--python_binary_path",
                   _python3(), "--conf", "tony.application.name=from-conf", cwd=proj,
                   timeout=180,
                   env={"TONY_CONF_DIR": str(site)})
    assert r.returncode == 0, cli_describe(r)
    assert r.stdout.startswith("job "), "stdout must still start with the job line"
    said = [ln for ln in r.stderr.splitlines() if ln.startswith("configuration:")]
    assert said == ["configuration: tony.xml, then %s/tony-site.xml, then --conf" % site], \
        cli_describe(r)
    job = _last_job(server)
    assert job["name"] == "from-conf", job
    assert len(job["tasks"]) == 2, job["tasks"]  # tony-site.xml's, over tony.xml's


LINE = re.compile(r"^\d\d:\d\d:\d\d (worker:\d+) (\S+)")


def test_status_lines_say_every_state_once_in_order(server, tmp_path):
    """A job whose tasks start and end between two looks still shows running."""
    (tmp_path / "quick.py").write_text("print('done')\n")
    (tmp_path / "tony.xml").write_text(_xml(**{"tony.worker.instances": 2,
                                               "tony.worker.memory": "256m"}))
    py = _python3()
    r = server.cli("submit", "--conf_file=tony.xml", "--executes=quick.py", "--src_dir=.",
                   "--python_binary_path", py, cwd=tmp_path, timeout=180)
    assert r.returncode == 0, cli_describe(r)
    seen = {}
    for ln in r.stdout.splitlines():
        m = LINE.match(ln)
        if m:
            seen.setdefault(m.group(1), []).append(m.group(2))
    assert seen == {"worker:0": ["pending", "starting", "running", "succeeded"],
                    "worker:1": ["pending", "starting", "running", "succeeded"]}, \
        cli_describe(r)


TORCH_PY = _python_with("torch")

DDP = """\
import os
import torch
import torch.distributed as dist

rank, world = int(os.environ["RANK"]), int(os.environ["WORLD"])
dist.init_process_group("gloo", init_method=os.environ["INIT_METHOD"], rank=rank,
                        world_size=world)
t = torch.tensor([float(rank + 1)])
dist.all_reduce(t)
print("SUM %d of %d: %g" % (rank, world, t.item()))
dist.destroy_process_group()
"""


@pytest.mark.slow
@pytest.mark.skipif(TORCH_PY is None, reason="no python3 with torch (python3-torch)")
def test_tony_pytorch_from_a_root_zipped_venv(server, tmp_path):
    """TonY's PyTorch script shape: INIT_METHOD, RANK and WORLD, gloo, 2 workers, from a real
    venv zipped at its root, run by --python_binary_path=bin/python."""
    venv = tmp_path / "venv"
    r = subprocess.run([TORCH_PY, "-m", "venv", "--system-site-packages", "--without-pip",
                        str(venv)], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        pytest.skip("cannot make a venv: %s" % r.stderr[-500:])
    subprocess.run(["zip", "-q", "-r", str(tmp_path / "venv.zip"), "."], cwd=venv, check=True,
                   timeout=120)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "ddp.py").write_text(DDP)
    (tmp_path / "tony.xml").write_text(_xml(**{"tony.application.framework": "pytorch",
                                               "tony.worker.instances": 2,
                                               "tony.worker.memory": "2g"}))
    r = server.cli("submit", "--conf_file=tony.xml", "--src_dir=src", "--executes=ddp.py",
                   "--python_venv=venv.zip", "--python_binary_path=bin/python",
                   cwd=tmp_path, timeout=300)
    assert r.returncode == 0, cli_describe(r)
    job = _last_job(server)
    assert job["state"] == "succeeded", job
    for i in range(2):
        log = server.log(job["id"], "worker", i)
        assert "SUM %d of 2: 3" % i in log, log[-3000:]
