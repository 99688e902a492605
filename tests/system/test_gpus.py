"""Declared GPUs (config gpus: 3) are exclusive: jobs wait for them and never share them."""

import re

from conftest import FINAL_STATES, spec, wait_for

SHOW = "echo \"CVD=[${CUDA_VISIBLE_DEVICES-unset}]\"; sleep %s"


def _cvd(log):
    m = re.search(r"CVD=\[([^\]]*)\]", log)
    assert m, log
    return m.group(1)


def test_more_gpus_than_exist_is_422(server):
    status, body = server.api("POST", "/api/v1/jobs",
                              spec({"worker": {"gpus": 4, "command": "true"}}))
    assert status == 422, body
    assert "gpu" in body["error"].lower() and "4" in body["error"] and "3" in body["error"], body
    # 2 instances of 2 gpus: 4 in all, a gang that can never fit 3
    status, body = server.api("POST", "/api/v1/jobs",
                              spec({"worker": {"instances": 2, "gpus": 2, "command": "true"}}))
    assert status == 422, body


def test_two_jobs_of_two_gpus_run_one_after_the_other(server):
    a = server.submit(spec({"worker": {"gpus": 2, "command": SHOW % 4}}, name="gpu-a"))
    server.wait_running(a["id"])
    b = server.submit(spec({"worker": {"gpus": 2, "command": SHOW % 0}}, name="gpu-b"))

    def b_waits():
        jb = server.job(b["id"])
        ja = server.job(a["id"])
        if ja["state"] in FINAL_STATES:
            return "a-ended"
        if jb["state"] == "queued" and "gpu" in (jb.get("reason") or ""):
            return jb
        return None
    seen = wait_for(b_waits, 30, "job b queued with a reason naming gpus")
    assert seen != "a-ended", "job a ended before b was seen waiting for gpus"
    assert server.job(b["id"])["state"] in ("queued",) + FINAL_STATES
    ja = server.wait_job(a["id"], timeout=60)
    jb = server.wait_job(b["id"], timeout=60)
    assert ja["state"] == "succeeded" and jb["state"] == "succeeded", (ja, jb)
    ga = _cvd(server.log(a["id"])).split(",")
    gb = _cvd(server.log(b["id"])).split(",")
    assert len(ga) == 2 and len(gb) == 2, (ga, gb)
    assert len(set(ga)) == 2 and len(set(gb)) == 2, (ga, gb)
    # b started only after a ended, so b may reuse a's ids; but both lists are the task's
    assert ja["tasks"][0]["gpus"].split(",") == ga, ja["tasks"][0]
    assert jb["tasks"][0]["gpus"].split(",") == gb, jb["tasks"][0]
    assert ja["ended_at"] <= jb["tasks"][0]["started_at"], (ja, jb)


def test_concurrent_gpu_tasks_get_disjoint_ids(server):
    """1 gpu each for 3 instances: all run at once, on 3 different ids."""
    job = server.submit(spec({"worker": {"instances": 3, "gpus": 1, "command": SHOW % 1}},
                             name="gpu-three"))
    job = server.wait_job(job["id"], timeout=60)
    assert job["state"] == "succeeded", job
    ids = [_cvd(server.log(job["id"], "worker", i)) for i in range(3)]
    assert sorted(ids) == sorted(set(ids)) and len(ids) == 3, ids
    assert all(re.fullmatch(r"\d+", i) for i in ids), ids


def test_task_without_gpus_sees_empty_cuda_visible_devices(server):
    job = server.submit(spec({"worker": {"command": SHOW % 0}}, name="no-gpu"))
    job = server.wait_job(job["id"], timeout=60)
    assert job["state"] == "succeeded", job
    assert _cvd(server.log(job["id"])) == "", server.log(job["id"])
