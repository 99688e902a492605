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


def test_events_ride_with_the_job_and_the_submission_has_a_version(server):
    status, job = server.api("POST", "/api/v1/jobs?events=1",
                             spec({"worker": {"command": "sleep 1"}}, name="with-events"))
    assert status == 201, job
    assert job["version"] and [e["kind"] for e in job["events"]][:1] == ["submitted"], job
    job = server.wait_running(job["id"])
    current = server.job(job["id"])
    assert "events" not in current, current
    # The events do not change the version; they are those of GET .../events.
    status, both = server.api("GET", "/api/v1/jobs/%s?events=1" % job["id"])
    assert status == 200 and both["version"] == current["version"], both
    listed = server.api("GET", "/api/v1/jobs/%s/events" % job["id"])[1]["events"]
    assert both["events"] == listed, both
    # A long poll with events=1 answers each change with the events up to it.
    for _ in range(20):
        status, changed = server.api("GET", "/api/v1/jobs/%s?wait=30&since=%s&events=1"
                                     % (job["id"], current["version"]), timeout=60)
        assert status == 200 and changed["version"] != current["version"], changed
        current = changed
        if changed["state"] == "succeeded":
            break
    assert changed["state"] == "succeeded", changed
    assert any(e["message"] == "worker:0 succeeded" for e in changed["events"]), changed
