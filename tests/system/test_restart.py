"""The restart policy, and a failed chief stopping the whole job at once."""

import uuid

from conftest import spec, wait_no_procs

FLAKY = ("echo \"attempt=$WEIR_ATTEMPT\"; "
         "if [ \"$WEIR_ATTEMPT\" = 1 ]; then exit 137; fi; exit 0")


def test_gang_restarts_after_exit_137(server):
    job = server.submit(spec({"worker": {"instances": 2, "command": FLAKY}},
                             name="flaky", restart={"max_restarts": 1}))
    job = server.wait_job(job["id"], timeout=120)
    assert job["state"] == "succeeded", job
    assert job["attempt"] == 2, job
    all_tasks = server.tasks(job["id"], attempt="all")
    assert sorted((t["attempt"], t["index"]) for t in all_tasks) == \
        [(1, 0), (1, 1), (2, 0), (2, 1)], all_tasks
    first = [t for t in all_tasks if t["attempt"] == 1]
    # the first to exit 137 ends the attempt; its peer may be stopped (SIGTERM) before its own
    assert any(t["exit_code"] == 137 for t in first), first
    assert all(t["exit_code"] in (137, 143) or t["state"] == "killed" for t in first), first
    assert all(t["exit_code"] == 0 for t in all_tasks if t["attempt"] == 2), all_tasks
    # both attempts' logs are kept
    for attempt in (1, 2):
        log = server.log(job["id"], "worker", 0, attempt=attempt)
        assert "attempt=%d" % attempt in log, (attempt, log)


def test_no_restart_beyond_max_restarts(server):
    job = server.submit(spec({"worker": {"command": "echo attempt=$WEIR_ATTEMPT; exit 140"}},
                             name="always-140", restart={"max_restarts": 2}))
    job = server.wait_job(job["id"], timeout=120)
    assert job["state"] == "failed", job
    assert job["attempt"] == 3, job
    assert job["exit_code"] == 140 or job["tasks"][0]["exit_code"] == 140, job


def test_exit_1_is_final(server):
    job = server.submit(spec({"worker": {"instances": 2, "command":
                                         "echo attempt=$WEIR_ATTEMPT; "
                                         "[ $WEIR_TASK_INDEX = 0 ] && exit 1; sleep 1"}},
                             name="broken", restart={"max_restarts": 1}))
    job = server.wait_job(job["id"], timeout=120)
    assert job["state"] == "failed", job
    assert job["attempt"] == 1, "exit 1 is not retryable, but the job was restarted: %r" % job
    assert "worker" in job["reason"] and "1" in job["reason"], job
    assert len(server.tasks(job["id"], attempt="all")) == 2


def test_failed_chief_fails_the_job_at_once(server):
    mark = "chief-fails-" + uuid.uuid4().hex
    job = server.submit(spec({
        "chief": {"command": "sleep 1; exit 3"},
        "worker": {"instances": 2, "command": "sleep 300 & sleep 300; wait"},
        "ps": {"untracked": True, "command": "sleep 300"},
    }, name="chief-fails", env={"SYSTEST_MARK": mark}))
    job = server.wait_job(job["id"], timeout=60)
    assert job["state"] == "failed", job
    assert "chief" in job["reason"], job
    states = {(t["role"], t["index"]): t["state"] for t in job["tasks"]}
    assert states[("chief", 0)] == "failed", states
    for key, state in states.items():
        if key[0] != "chief":
            assert state in ("killed", "failed"), states
    left = wait_no_procs(marker=mark, timeout=20)
    assert not left, "processes of the failed job remain: %r" % left


def test_failed_worker_fails_job_under_all_policy(server):
    job = server.submit(spec({
        "worker": {"instances": 2, "command": "[ $WEIR_TASK_INDEX = 1 ] && exit 5; sleep 2"},
    }, name="all-policy", success_policy="all"))
    job = server.wait_job(job["id"], timeout=60)
    assert job["state"] == "failed", job
    assert "worker" in job["reason"], job


def test_fail_on_worker_failure_stops_the_others(server):
    mark = "worker-fails-" + uuid.uuid4().hex
    job = server.submit(spec({
        "worker": {"instances": 2, "command": "[ $WEIR_TASK_INDEX = 1 ] && exit 5; sleep 300"},
    }, name="fail-fast", fail_on_worker_failure=True, env={"SYSTEST_MARK": mark}))
    job = server.wait_job(job["id"], timeout=60)
    assert job["state"] == "failed", job
    assert "worker" in job["reason"], job
    left = wait_no_procs(marker=mark, timeout=20)
    assert not left, "processes of the failed job remain: %r" % left
