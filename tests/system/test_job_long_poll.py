"""GET /api/v1/jobs/{id}?wait=S&since=VERSION: answered when the job changes, or after S."""

import threading
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


def test_events_from_answers_only_the_later_events(server):
    status, job = server.api("POST", "/api/v1/jobs?events=1",
                             spec({"worker": {"command": "true"}}, name="events-from"))
    assert status == 201 and "events_from" not in job, job
    final = server.wait_job(job["id"])
    listed = server.api("GET", "/api/v1/jobs/%s/events" % job["id"])[1]["events"]
    assert len(listed) >= 3, listed
    # Those after the first 2, and where they start.
    status, tail = server.api("GET", "/api/v1/jobs/%s?events=1&events_from=2" % job["id"])
    assert status == 200 and tail["events_from"] == 2, tail
    assert tail["events"] == listed[2:], tail
    assert tail["version"] == final["version"], tail
    # All of them: nothing new after the last.
    status, none = server.api("GET", "/api/v1/jobs/%s?events=1&events_from=%d"
                              % (job["id"], len(listed)))
    assert status == 200 and none["events"] == [] and none["events_from"] == len(listed), none
    # More than the job has: the whole list, from 0.
    status, whole = server.api("GET", "/api/v1/jobs/%s?events=1&events_from=%d"
                               % (job["id"], len(listed) + 5))
    assert status == 200 and whole["events_from"] == 0 and whole["events"] == listed, whole
    # A long poll that is answered at once (a stale version) carries them the same way.
    status, poll = server.api("GET", "/api/v1/jobs/%s?wait=5&since=0&events=1&events_from=1"
                              % job["id"], timeout=10)
    assert status == 200 and poll["events"] == listed[1:] and poll["events_from"] == 1, poll
    status, body = server.api("GET", "/api/v1/jobs/%s?events=1&events_from=-1" % job["id"])
    assert status == 400 and "events_from" in body["error"], body


def test_a_gathered_wait_holds_changes_until_the_end(server):
    """gather=MS: a change that does not end the job waits for more; the end answers at once."""
    status, job = server.api("POST", "/api/v1/jobs",
                             spec({"worker": {"command": "sleep 4"}}, name="gather"))
    assert status == 201, job
    first = job["version"]
    answers = {}

    def ask(name, query):
        # A client timeout far below wait: an answer left for the deadline fails here.
        answers[name] = server.api("GET", "/api/v1/jobs/%s?wait=600&since=%s%s"
                                   % (job["id"], first, query), timeout=60)

    threads = [threading.Thread(target=ask, args=("plain", "")),
               threading.Thread(target=ask, args=("gathered", "&gather=60000&events=1"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    status, plain = answers["plain"]
    assert status == 200 and plain["version"] != first, plain
    # The plain wait answered the first change, while the job still ran...
    assert plain["state"] not in ("succeeded", "failed", "killed"), plain
    # ...the gathered one every change up to the end, answered as it came.
    status, gathered = answers["gathered"]
    assert status == 200 and gathered["state"] == "succeeded", gathered
    assert gathered["version"] == server.job(job["id"])["version"], gathered
    assert any(e["message"].startswith("worker:0 running") for e in gathered["events"]), \
        gathered["events"]


def test_a_gathered_wait_answers_a_change_after_its_gather(server):
    status, job = server.api("POST", "/api/v1/jobs",
                             spec({"worker": {"command": "sleep 30"}}, name="gather-end"))
    assert status == 201, job
    # Running for the next half minute: the gather's end answers, not the job's.
    status, changed = server.api("GET", "/api/v1/jobs/%s?wait=600&since=%s&gather=200"
                                 % (job["id"], job["version"]), timeout=25)
    assert status == 200 and changed["version"] != job["version"], changed
    assert changed["state"] not in ("succeeded", "failed", "killed"), changed
    # Nothing changes: a gathered wait still waits for its deadline.
    current = server.wait_running(job["id"])
    current = server.job(job["id"])
    status, same = server.api("GET", "/api/v1/jobs/%s?wait=1&since=%s&gather=100"
                              % (job["id"], current["version"]), timeout=10)
    assert status == 200 and same["version"] == current["version"], same
    server.api("DELETE", "/api/v1/jobs/%s" % job["id"])


def test_a_gathered_wait_rejects_a_bad_gather(server):
    job = server.submit(spec({"worker": {"command": "true"}}, name="bad-gather"))
    for bad in ("soon", "-1", "60001", ""):
        status, body = server.api("GET", "/api/v1/jobs/%s?wait=1&since=x&gather=%s"
                                  % (job["id"], bad))
        assert status == 400 and "gather" in body["error"], (bad, body)
