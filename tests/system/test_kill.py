"""`weir jobs kill` ends the job and every process it started, children included."""

import uuid

from conftest import cli_describe, find_procs, spec, wait_for, wait_no_procs


def _running_job_with_children(server, command, instances=2):
    mark = "kill-" + uuid.uuid4().hex
    job = server.submit(spec({"worker": {"instances": instances, "command": command}},
                             name="to-kill", env={"SYSTEST_MARK": mark}))
    server.wait_running(job["id"])
    # every task's children are up before we kill (2 sleeps per task)
    wait_for(lambda: len([c for c in find_procs(marker=mark).values()
                          if c.startswith("sleep")]) >= 2 * instances,
             30, "the tasks' sleep children")
    return job, mark


def test_kill_leaves_no_process_behind(server):
    job, mark = _running_job_with_children(server, "sleep 300 & sleep 300; wait")
    r = server.cli("jobs", "kill", job["id"], timeout=60)
    assert r.returncode == 0, cli_describe(r)
    job = server.wait_job(job["id"], timeout=30)
    assert job["state"] == "killed", job
    # the job's state is the decision; each task's comes when its launcher has stopped it
    tasks = server.wait_tasks_ended(job["id"])
    assert all(t["state"] == "killed" for t in tasks), tasks
    left = wait_no_procs(marker=mark, timeout=20)
    assert not left, "processes of the killed job remain: %r" % left


def test_kill_reaches_children_that_left_the_process_group(server):
    # setsid puts the child in a session of its own: only a cgroup (or a subreaper) finds it
    job, mark = _running_job_with_children(server, "setsid sleep 300 & sleep 300; wait")
    status, body = server.api("DELETE", "/api/v1/jobs/%s" % job["id"])
    assert status == 202, body
    job = server.wait_job(job["id"], timeout=30)
    assert job["state"] == "killed", job
    left = wait_no_procs(marker=mark, timeout=20)
    assert not left, "processes of the killed job remain: %r" % left


def test_kill_of_a_queued_job(server):
    # 16 vcores declared: the first job holds all of them, the second waits
    hog = server.submit(spec({"worker": {"vcores": 16, "command": "sleep 300"}}, name="hog"))
    server.wait_running(hog["id"])
    waiting = server.submit(spec({"worker": {"command": "true"}}, name="waits"))
    assert server.job(waiting["id"])["state"] == "queued"
    r = server.cli("jobs", "kill", waiting["id"], timeout=60)
    assert r.returncode == 0, cli_describe(r)
    assert server.wait_job(waiting["id"], timeout=30)["state"] == "killed"
    assert server.api("DELETE", "/api/v1/jobs/%s" % hog["id"])[0] == 202
    assert server.wait_job(hog["id"], timeout=30)["state"] == "killed"


def test_kill_of_an_ended_job_is_409(server):
    job = server.submit(spec({"worker": {"command": "true"}}, name="done"))
    server.wait_job(job["id"], timeout=60)
    status, body = server.api("DELETE", "/api/v1/jobs/%s" % job["id"])
    assert status == 409, body
    assert body.get("error"), body
    r = server.cli("jobs", "kill", job["id"], timeout=60)
    assert r.returncode != 0, cli_describe(r)


def test_sigterm_ignoring_task_is_killed_after_the_grace(server):
    mark = "stubborn-" + uuid.uuid4().hex
    job = server.submit(spec({"worker": {"command": "trap '' TERM; sleep 300 & wait; wait"}},
                             name="stubborn", env={"SYSTEST_MARK": mark}))
    server.wait_running(job["id"])
    wait_for(lambda: find_procs(marker=mark), 30, "the task's processes")
    assert server.api("DELETE", "/api/v1/jobs/%s" % job["id"])[0] == 202
    job = server.wait_job(job["id"], timeout=30)  # grace is 2 s in the test config
    assert job["state"] == "killed", job
    left = wait_no_procs(marker=mark, timeout=20)
    assert not left, left
