"""A task that allocates past its memory is killed and reported OOMKilled with exit code 137."""

from conftest import TASK_PY, spec

# 600 separate 1 MiB objects, each filled, so the pages are really touched
HOG = ("import time; chunks = [bytes([1]) * (1 << 20) for _ in range(600)]; "
       "print('allocated', len(chunks), 'MiB', flush=True); time.sleep(5)")


def test_task_over_its_memory_is_oomkilled(server, tmp_path):
    (tmp_path / "hog.py").write_text(HOG + "\n")
    job = server.submit(spec({"worker": {"instances": 1, "memory": "128m",
                                         "command": "%s hog.py" % TASK_PY}},
                             name="oom", src_dir=str(tmp_path)))
    job = server.wait_job(job["id"], timeout=120)
    log = server.log(job["id"])
    assert job["state"] == "failed", (job, log)
    (task,) = job["tasks"]
    assert task["state"] == "failed", task
    assert "OOMKilled" in (task["reason"] or ""), (task, log)
    assert task["exit_code"] == 137, task
    assert "OOMKilled" in (job["reason"] or ""), job
    assert "allocated 600 MiB" not in log, "the task got all its memory: no limit\n" + log
    assert task["peak_memory_bytes"] and task["peak_memory_bytes"] >= 64 << 20, task


def test_task_within_its_memory_is_not_killed(server, tmp_path):
    (tmp_path / "small.py").write_text(
        "chunks = [bytes([1]) * (1 << 20) for _ in range(100)]; print('ok', len(chunks))\n")
    job = server.submit(spec({"worker": {"instances": 1, "memory": "512m",
                                         "command": "%s small.py" % TASK_PY}},
                             name="fits", src_dir=str(tmp_path)))
    job = server.wait_job(job["id"], timeout=120)
    assert job["state"] == "succeeded", (job, server.log(job["id"]))
    (task,) = job["tasks"]
    assert task["peak_memory_bytes"] >= 100 << 20, task
