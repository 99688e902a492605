"""A server that dies (kill -9) or stops (SIGTERM) while a job runs loses nothing: a new server
on the same home picks the job up, its tasks are not run twice, and its result is recorded once."""

import collections
import uuid

from conftest import find_procs, spec, wait_for


def _job_that_outlives_the_server(server, tmp_path, seconds=6):
    starts = tmp_path / "starts"
    starts.mkdir()
    mark = "recovery-" + uuid.uuid4().hex
    cmd = ("touch %s/$WEIR_ROLE-$WEIR_TASK_INDEX-$WEIR_ATTEMPT-$$; sleep %d; echo finished"
           % (starts, seconds))
    job = server.submit(spec({"chief": {"command": cmd}, "worker": {"instances": 2,
                                                                    "command": cmd}},
                             name="outlives", env={"SYSTEST_MARK": mark}))
    server.wait_running(job["id"])
    wait_for(lambda: len(list(starts.iterdir())) == 3, 30, "the 3 tasks to start")
    return job, starts, mark


def _check_finished_once(server, job, starts):
    job = server.wait_job(job["id"], timeout=90)
    assert job["state"] == "succeeded", job
    assert job["attempt"] == 1, job
    for t in job["tasks"]:
        assert t["state"] == "succeeded" and t["exit_code"] == 0, t
        assert "finished" in server.log(job["id"], t["role"], t["index"])
    ran = sorted(p.name.rsplit("-", 1)[0] for p in starts.iterdir())
    assert ran == ["chief-0-1", "worker-0-1", "worker-1-1"], "tasks ran again: %r" % ran
    events = server.events(job["id"])
    counts = collections.Counter((e["kind"], e["message"]) for e in events)
    dups = {k: n for k, n in counts.items() if n > 1 and
            any(w in (k[0] + " " + k[1]).lower() for w in ("succeeded", "exited", "finished"))}
    assert not dups, "events recorded more than once: %r\nall: %r" % (dups, events)
    jobs = server.api("GET", "/api/v1/jobs")[1]["jobs"]
    assert [j["id"] for j in jobs] == [job["id"]], jobs
    return job


def test_kill_9_of_the_server_loses_nothing(make_server, tmp_path):
    srv = make_server()
    job, starts, mark = _job_that_outlives_the_server(srv, tmp_path)
    srv.kill9()
    # the tasks go on without the server
    assert len([c for c in find_procs(marker=mark).values() if c.startswith("sleep")]) == 3
    srv.start()
    _check_finished_once(srv, job, starts)


def test_server_restart_after_the_tasks_ended(make_server, tmp_path):
    """The launchers report an exit that happened while no server was there."""
    srv = make_server()
    job, starts, mark = _job_that_outlives_the_server(srv, tmp_path, seconds=2)
    srv.kill9()
    wait_for(lambda: not [c for c in find_procs(marker=mark).values()
                          if c.startswith("sleep")], 30, "the tasks to end")
    srv.start()
    _check_finished_once(srv, job, starts)


def test_sigterm_leaves_tasks_running(make_server, tmp_path):
    srv = make_server()
    job, starts, mark = _job_that_outlives_the_server(srv, tmp_path)
    assert srv.terminate() == 0, srv.log_text()
    assert len([c for c in find_procs(marker=mark).values() if c.startswith("sleep")]) == 3, \
        "SIGTERM of the server stopped the tasks"
    srv.start()
    _check_finished_once(srv, job, starts)


def test_queued_job_survives_a_restart(make_server, tmp_path):
    srv = make_server()
    hog = srv.submit(spec({"worker": {"vcores": 16, "command": "sleep 4"}}, name="hog"))
    srv.wait_running(hog["id"])
    queued = srv.submit(spec({"worker": {"command": "echo ran"}}, name="queued"))
    assert srv.job(queued["id"])["state"] == "queued"
    srv.kill9()
    srv.start()
    assert srv.wait_job(hog["id"], timeout=60)["state"] == "succeeded"
    job = srv.wait_job(queued["id"], timeout=60)
    assert job["state"] == "succeeded", job
    assert "ran\n" in srv.log(queued["id"])
