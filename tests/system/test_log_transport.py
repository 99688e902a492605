"""Task logs sent over HTTP by the launcher (`log_transport: http`, weir launch
--log-to-server), on the local backend: live while the task runs, whole at its end, and the
POST /api/v1/launch/log route's offsets and errors."""

import json

from conftest import DEFAULT_CONFIG, spec, wait_for
from launchtest import launch_secret

HTTP_CONFIG = DEFAULT_CONFIG + "log_transport: http\n"

# one line every 0.5 s on stdout and on stderr; then a burst bigger than a chunk (64 KiB)
# and than a pipe's buffer, with no newline at the end
PROGRAM = ("for i in $(seq 1 8); do echo line-$i; echo err-$i >&2; sleep 0.5; done; "
           "printf '%300000s' '' | tr ' ' x; printf tail")
EXPECTED_BYTES = sum(len("line-%d\n" % i) + len("err-%d\n" % i) for i in range(1, 9)) \
    + 300000 + len("tail")


def program_bytes(text):
    """The bytes the program wrote, out of a log that also holds the launcher's lines."""
    return sum(len(l) + 1 for l in text.split("\n")
               if l.startswith("line-") or l.startswith("err-")) + \
        text.count("x") + (4 if text.endswith("tail") else 0)


def assert_log_live_and_whole(server, job_id, timeout):
    """PROGRAM's job: its second line is readable while it still runs, and at its end the log
    holds every byte it wrote.  Returns the log."""
    server.wait_running(job_id, timeout=timeout)
    wait_for(lambda: "line-2" in server.log(job_id), timeout / 3, "line-2 in the log")
    assert server.job(job_id)["state"] == "running", "the lines came only at the end"
    done = server.wait_job(job_id, timeout=timeout)
    assert done["state"] == "succeeded", done
    text = server.log(job_id)
    assert text.endswith("tail"), text[-300:]
    assert program_bytes(text) == EXPECTED_BYTES
    return text


def test_http_log_is_live_and_whole(make_server):
    server = make_server(config=HTTP_CONFIG)
    job = server.submit(spec({"worker": {"command": PROGRAM}}, name="logs-http"))
    text = assert_log_live_and_whole(server, job["id"], 60)
    assert [w for w in text.split() if w.startswith("line-")] == \
        ["line-%d" % i for i in range(1, 9)]


def post_log(server, job, offset, body, attempt=1, role="worker", index=0):
    path = "/api/v1/launch/log?job=%s&role=%s&index=%s&attempt=%s&offset=%s" % (
        job, role, index, attempt, offset)
    # as the task's launcher: its launch secret, not the API's token
    status, _, data = server.request("POST", path, raw_body=body,
                                     token=launch_secret(server.token, job, role, index, attempt),
                                     headers={"Content-Type": "application/octet-stream"})
    return status, json.loads(data or b"{}")


def test_log_route_appends_only_at_the_end(make_server):
    server = make_server()
    job = server.submit(spec({"worker": {"command": "sleep 30"}}, name="logs-route"))
    server.wait_running(job["id"])
    size0 = len(server.log(job["id"]).encode())
    st, r = post_log(server, job["id"], size0, b"abc\x00def\n")
    assert (st, r["size"]) == (200, size0 + 8), r
    # the same chunk again (a retry whose answer was lost): nothing written twice
    st, r = post_log(server, job["id"], size0, b"abc\x00def\n")
    assert (st, r["size"]) == (200, size0 + 8), r
    # overlapping: only the new tail goes in
    st, r = post_log(server, job["id"], size0 + 4, b"def\nghi\n")
    assert (st, r["size"]) == (200, size0 + 12), r
    # a gap: 409 with the size to send from
    st, r = post_log(server, job["id"], size0 + 100, b"lost")
    assert st == 409 and r["size"] == size0 + 12, (st, r)
    assert server.log(job["id"]).encode()[size0:] == b"abc\x00def\nghi\n"
    # a task that does not exist, a bad offset, no token
    st, r = post_log(server, job["id"], 0, b"x", role="ps")
    assert st == 404, (st, r)
    st, r = post_log(server, job["id"], -1, b"x")
    assert st == 400 and "offset" in r["error"], (st, r)
    st, _, _ = server.request("POST", "/api/v1/launch/log?job=%s&role=worker&index=0&attempt=1"
                              "&offset=0" % job["id"], raw_body=b"x", token=False)
    assert st == 401
    server.api("DELETE", "/api/v1/jobs/%s" % job["id"])
