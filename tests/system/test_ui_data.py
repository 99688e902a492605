"""The data routes the web UI reads: logs in pieces (offset, length, negative offset,
download and the X-Weir-Log-* headers) on both log routes, DAG structure and details, the grid,
stats and DAG list of /api/v1/ui, every try of a task instance, and the job list's roles and
task counts.  Against a real server with real jobs and DAG runs."""

import json
import urllib.parse

from conftest import spec
from dagtest import make_dags  # noqa: F401

BIG = 3 * 1024 * 1024 + 12345  # bytes of the big log: more than 3 MB, not a round number
PIECE = 256 * 1024
# A deterministic 3 MB log: numbered lines, so a piece out of place shows.
BIG_CMD = "seq -w 1 %d | sed 's/$/ ........................................./'" % (BIG // 40)


def hdr(headers, name):
    return {k.lower(): v for k, v in headers.items()}.get(name.lower())


def read_in_pieces(get, size):
    """Reads [0, size) with length=PIECE requests, each starting where the last one ended
    (X-Weir-Log-Offset + the answer's length), as the UI's log viewer does."""
    out = b""
    offset = 0
    while offset < size:
        status, headers, data = get("offset=%d&length=%d" % (offset, PIECE))
        assert status == 200, (status, data[:300])
        assert int(hdr(headers, "X-Weir-Log-Offset")) == offset, headers
        assert len(data) <= PIECE
        assert data, "an empty piece at %d of %d" % (offset, size)
        out += data
        offset += len(data)
    return out


def check_log_route(get, name_re):
    """The whole contract of one log route; `get(query)` -> (status, headers, bytes)."""
    status, headers, full = get("")
    assert status == 200, (status, full[:300])
    size = int(hdr(headers, "X-Weir-Log-Size"))
    assert size == len(full) and size >= BIG, (size, len(full))
    assert hdr(headers, "X-Weir-Log-Offset") == "0"
    assert hdr(headers, "X-Weir-Task-Ended") == "true"
    assert hdr(headers, "Content-Disposition") is None

    # pieces reassemble byte for byte
    assert read_in_pieces(get, size) == full

    # negative offset: the last 256 KiB; the header says where they start
    status, headers, tail = get("offset=-%d" % PIECE)
    assert status == 200
    assert tail == full[-PIECE:]
    assert int(hdr(headers, "X-Weir-Log-Offset")) == size - PIECE
    # more than the file from the end: from the start
    status, headers, data = get("offset=-%d&length=10" % (size * 2))
    assert (status, data, hdr(headers, "X-Weir-Log-Offset")) == (200, full[:10], "0")
    # past the end: empty, at the end; a piece cut short by the end
    status, headers, data = get("offset=%d" % (size + 100))
    assert (status, data, hdr(headers, "X-Weir-Log-Offset")) == (200, b"", str(size))
    status, headers, data = get("offset=%d&length=1000" % (size - 10))
    assert (status, data) == (200, full[-10:])
    status, headers, data = get("length=0")
    assert (status, data) == (200, b"")

    # download names the file
    status, headers, data = get("download=1&offset=-100")
    assert status == 200 and data == full[-100:]
    cd = hdr(headers, "Content-Disposition")
    assert cd is not None and cd.startswith("attachment; filename=\""), headers
    fname = cd.split("filename=\"", 1)[1].rstrip("\"")
    assert name_re(fname), cd

    # bad parameters name themselves
    for q, word in (("offset=abc", "offset"), ("length=-1", "length"), ("length=x", "length"),
                    ("download=maybe", "download"), ("offset=%2B5", "offset")):
        status, _, data = get(q)
        assert status == 400, (q, status, data[:200])
        assert word in data.decode(), (q, data)
    return full


def test_job_log_in_pieces(server):
    job = server.submit(spec({"worker": {"command": BIG_CMD}}, name="big-log"))
    job = server.wait_job(job["id"], timeout=120)
    assert job["state"] == "succeeded", job

    def get(q):
        return server.request("GET", "/api/v1/jobs/%s/tasks/worker/0/logs?%s" % (job["id"], q))

    full = check_log_route(get, lambda f: f == "job-%s-worker-0.log" % job["id"])
    assert b"00001 ...." in full[:200]

    # unknown task: 404 as before
    status, _, _ = server.request("GET", "/api/v1/jobs/%s/tasks/worker/5/logs?offset=-5"
                                  % job["id"])
    assert status == 404


def test_running_job_log_says_not_ended(server):
    job = server.submit(spec({"worker": {"command": "echo started; sleep 30"}}, name="live"))
    server.wait_running(job["id"])
    status, headers, _ = server.request(
        "GET", "/api/v1/jobs/%s/tasks/worker/0/logs?offset=-100" % job["id"])
    assert status == 200
    assert hdr(headers, "X-Weir-Task-Ended") == "false", headers
    server.api("DELETE", "/api/v1/jobs/%s" % job["id"])
    server.wait_job(job["id"])


BIG_DAG = """
dag_id: biglog
tasks:
  - task_id: talk
    command: %s
""" % json.dumps(BIG_CMD)


def test_try_log_in_pieces(make_dags):
    d = make_dags()
    d.write("biglog.yaml", BIG_DAG)
    d.wait_dag("biglog")
    d.trigger("biglog", run_id="r1")
    assert d.wait_run("biglog", "r1", timeout=120)["state"] == "success"
    base = "/api/v1/dags/biglog/dagRuns/r1/taskInstances/talk/logs/1"

    def get(q):
        return d.srv.request("GET", base + ("?" + q if q else ""),
                             headers={"Accept": "text/plain"})

    full = check_log_route(get, lambda f: f == "biglog-r1-talk-1.log")
    assert b"00001 ...." in full[:200]
    # the continuation token of a piece points after it
    status, headers, data = get("offset=0&length=1000")
    tok = hdr(headers, "X-Weir-Continuation-Token")
    status, headers, data2 = get("token=" + urllib.parse.quote(tok))
    assert data + data2 == full
    # offset and a token together, or offset with JSON: 400 problems
    status, _, data = get("offset=5&token=" + urllib.parse.quote(tok))
    assert status == 400 and b"offset" in data
    status, headers, data = d.srv.request("GET", base + "?offset=5",
                                          headers={"Accept": "application/json"})
    assert status == 400 and hdr(headers, "Content-Type") == "application/problem+json"
    # a try that did not happen
    status, _, _ = d.srv.request("GET", base[:-1] + "2?offset=-10",
                                 headers={"Accept": "text/plain"})
    assert status == 404
