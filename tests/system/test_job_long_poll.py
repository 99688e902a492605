"""GET /api/v1/jobs/{id}?wait=S&since=VERSION: answered when the job changes, or after S."""

import time

from conftest import spec


def test_long_poll_answers_on_change_and_times_out_without_one(server):
    job = server.submit(spec({"worker": {"command": "sleep 2"}}, name="poll"))
    job = server.wait_running(job["id"])
    current = server.job(job["id"])
    assert current["version"], current
    # Same version twice in a row while nothing changed.
    assert server.job(job["id"])["version"] == current["version"]

    # Waits while the task sleeps, then answers with the changed job.
    t0 = time.monotonic()
    status, changed = server.api("GET", "/api/v1/jobs/%s?wait=30&since=%s"
                                 % (job["id"], current["version"]), timeout=60)
    waited = time.monotonic() - t0
    assert status == 200, changed
    assert changed["version"] != current["version"], changed
    assert waited < 30, "answered only at the deadline: the change was not noticed"

    final = server.wait_job(job["id"])
    assert final["state"] == "succeeded", final
    # No change to come: answered at the deadline with the same version.
    status, same = server.api("GET", "/api/v1/jobs/%s?wait=1&since=%s"
                              % (job["id"], final["version"]))
    assert status == 200 and same["version"] == final["version"], same
    # A stale version is answered at once.
    status, now = server.api("GET", "/api/v1/jobs/%s?wait=30&since=0000000000000000"
                             % job["id"], timeout=5)
    assert status == 200 and now["state"] == "succeeded", now


def test_long_poll_rejects_a_bad_wait(server):
    job = server.submit(spec({"worker": {"command": "true"}}, name="bad-wait"))
    status, body = server.api("GET", "/api/v1/jobs/%s?wait=forever&since=x" % job["id"])
    assert status == 400 and "wait" in body["error"], body
