"""A tensorflow-framework job: every task finds every other through TF_CONFIG."""

import json
import shutil
from pathlib import Path

from conftest import TASK_PY, spec, wait_no_procs

HERE = Path(__file__).resolve().parent


def test_chief_workers_ps_all_connect(server, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(HERE / "tfcheck.py", src / "tfcheck.py")
    cmd = "%s tfcheck.py" % TASK_PY
    expect = json.dumps({"chief": 1, "worker": 2, "ps": 1})
    job = server.submit(spec({
        "chief": {"instances": 1, "command": cmd},
        "worker": {"instances": 2, "command": cmd},
        "ps": {"instances": 1, "command": cmd, "untracked": True, "env": {"UNTRACKED": "1"}},
    }, name="tfconf", framework="tensorflow", src_dir=str(src),
        env={"EXPECT_ROLES": expect}))
    job = server.wait_job(job["id"], timeout=180)
    logs = {(t["role"], t["index"]): server.log(job["id"], t["role"], t["index"])
            for t in job["tasks"]}
    assert job["state"] == "succeeded", (json.dumps(job, indent=1), logs)
    assert len(job["tasks"]) == 4, job["tasks"]
    for t in job["tasks"]:
        log = logs[(t["role"], t["index"])]
        if t["role"] == "ps":
            # untracked: stopped once the tracked roles finished, not a failure of the job
            assert t["state"] in ("killed", "succeeded"), t
            # ps may be stopped between a peer's answer and its own "reached" line; that
            # it reached every peer shows in the peers' logs ("heard from ps:0") below
            assert "me ps:0" in log, log
        else:
            assert t["state"] == "succeeded" and t["exit_code"] == 0, (t, log)
            assert "ALL CONNECTED %s:%d" % (t["role"], t["index"]) in log, log
            assert "heard from ps:0" in log, log
    ports = [(t["host"], t["port"]) for t in job["tasks"]]
    assert len(set(ports)) == 4, ports
    left = wait_no_procs(cwd_prefix=str(server.home), timeout=20)
    assert not left, "processes of the job remain: %r" % left


def test_sidecar_is_left_out_of_tf_config(server, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(HERE / "tfcheck.py", src / "tfcheck.py")
    cmd = "%s tfcheck.py" % TASK_PY
    job = server.submit(spec({
        "worker": {"instances": 2, "command": cmd},
        "tensorboard": {"instances": 1, "sidecar": True,
                        "command": "echo \"TF_CONFIG=$TF_CONFIG\"; sleep 300"},
    }, name="sidecar", framework="tensorflow", src_dir=str(src),
        env={"EXPECT_ROLES": json.dumps({"worker": 2})}))
    job = server.wait_job(job["id"], timeout=120)
    assert job["state"] == "succeeded", json.dumps(job, indent=1)
    left = wait_no_procs(cwd_prefix=str(server.home), timeout=20)
    assert not left, "the sidecar was not stopped: %r" % left
