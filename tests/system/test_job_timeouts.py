"""A job's timeouts (`timeouts: {allocation, registration, execution}`) end it when they expire,
also when the job was changed long before by another turn, and across a server restart."""

from conftest import spec


def test_execution_timeout_fails_the_job_and_stops_its_tasks(server):
    job = server.submit(spec({"worker": {"instances": 2, "command": "sleep 300"}},
                             timeouts={"execution": 2}))
    server.wait_running(job["id"])
    job = server.wait_job(job["id"], timeout=60)
    assert job["state"] == "failed", job
    assert "execution timeout after 2s" in job["reason"], job
    tasks = server.wait_tasks_ended(job["id"])
    assert all(t["state"] != "running" for t in tasks), tasks


def test_allocation_timeout_ends_a_job_that_never_fits_in_time(server):
    # the first job holds every vcore (DEFAULT_CONFIG: 16); the second waits behind it
    holder = server.submit(spec({"worker": {"vcores": 16, "command": "sleep 300"}}, name="holder"))
    server.wait_running(holder["id"])
    waiter = server.submit(spec({"worker": {"command": "true"}}, name="waiter",
                                timeouts={"allocation": 2}))
    job = server.wait_job(waiter["id"], timeout=60)
    assert job["state"] == "failed", job
    assert "allocation timeout after 2s" in job["reason"], job
    # the holder's own timers are untouched by the other job's expiry
    assert server.job(holder["id"])["state"] == "running"
    assert server.api("DELETE", "/api/v1/jobs/%s" % holder["id"])[0] == 202
    server.wait_job(holder["id"], timeout=60)


def test_many_jobs_each_expire_at_their_own_time(server):
    # jobs with and without timeouts side by side: only the ones with a limit end early
    limited = [server.submit(spec({"worker": {"command": "sleep 300"}}, name="limited-%d" % i,
                                  timeouts={"execution": 2 + i}))
               for i in range(3)]
    free = server.submit(spec({"worker": {"command": "sleep 300"}}, name="free"))
    for j in limited:
        job = server.wait_job(j["id"], timeout=60)
        assert job["state"] == "failed", job
        assert "execution timeout after %ds" % (2 + limited.index(j)) in job["reason"], job
    assert server.job(free["id"])["state"] == "running"
    assert server.api("DELETE", "/api/v1/jobs/%s" % free["id"])[0] == 202
    server.wait_job(free["id"], timeout=60)


def test_a_timeout_armed_before_a_restart_still_expires_after_it(server):
    job = server.submit(spec({"worker": {"command": "sleep 300"}}, timeouts={"execution": 4}))
    server.wait_running(job["id"])
    assert server.terminate() == 0
    server.start()
    job = server.wait_job(job["id"], timeout=60)
    assert job["state"] == "failed", job
    assert "execution timeout after 4s" in job["reason"], job
