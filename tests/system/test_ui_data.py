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


# ---- DAG structure, grid, stats, tries, the UI's DAG list ----------------------------------

def problem(d, path, status):
    st, headers, data = d.srv.request("GET", "/api/v1" + path)
    assert st == status, (path, st, data[:300])
    assert hdr(headers, "Content-Type") == "application/problem+json", (path, headers)
    return json.loads(data)


def test_dag_tasks_and_details(make_dags):
    d = make_dags(files=["diamond.yaml", "fanout.yaml"])
    d.wait_dag("diamond")
    d.wait_dag("fanout")

    body = d.get("/dags/diamond/tasks")
    assert body["total_entries"] == 4
    tasks = {t["task_id"]: t for t in body["tasks"]}
    assert [t["task_id"] for t in body["tasks"]] == ["a", "b", "c", "d"]  # by task_id
    assert tasks["a"]["downstream_task_ids"] == ["b", "c"]
    assert sorted(tasks["d"]["upstream_task_ids"]) == ["b", "c"]
    assert tasks["d"]["downstream_task_ids"] == []
    a = tasks["a"]
    for key in ("trigger_rule", "retries", "pool", "execution_timeout", "is_mapped", "ui_color",
                "retry_delay", "priority_weight", "class_ref"):
        assert key in a, (key, a)
    assert a["trigger_rule"] == "all_success" and a["is_mapped"] is False
    assert a["pool"] == "default_pool" and a["execution_timeout"] is None
    assert a["retry_delay"]["__type"] == "TimeDelta"

    fan = {t["task_id"]: t for t in d.get("/dags/fanout/tasks")["tasks"]}
    assert fan["work"]["is_mapped"] is True and fan["join"]["is_mapped"] is False
    assert fan["work"]["downstream_task_ids"] == ["join"]

    det = d.get("/dags/fanout/details")
    assert det["dag_id"] == "fanout" and det["fileloc"].endswith("fanout.yaml")
    assert det["params"]["items"]["value"] == ["x", "y", "z"], det["params"]
    assert det["params"]["items"]["schema"]["type"] == "array"
    assert det["params"]["side"]["schema"]["type"] == "string"
    for key in ("schedule_interval", "timetable_description", "next_dagrun", "is_paused",
                "catchup", "start_date", "timezone", "last_parsed"):
        assert key in det, (key, det)
    assert det["schedule_interval"] is None and det["catchup"] is False

    # errors: unknown DAG 404, bad id 400, wrong method 405
    assert "nope" in problem(d, "/dags/nope/tasks", 404)["detail"]
    problem(d, "/dags/nope/details", 404)
    problem(d, "/dags/bad%20id/tasks", 400)
    st, _, _ = d.srv.request("POST", "/api/v1/dags/diamond/tasks", body={})
    assert st == 405
    # no credentials: 401 as every route
    st, _, _ = d.srv.request("GET", "/api/v1/dags/diamond/details", token=False)
    assert st == 401


def test_grid_stats_and_tries(make_dags):
    d = make_dags(files=["fanout.yaml", "flaky.yaml", "broken.yaml"])
    d.wait_dag("fanout")
    d.wait_dag("flaky")
    for rid, when in (("f1", "2024-01-01T00:00:00+00:00"), ("f2", "2024-01-02T00:00:00+00:00")):
        d.trigger("fanout", run_id=rid, logical_date=when)
    d.trigger("flaky", run_id="k1")
    for rid in ("f1", "f2"):
        assert d.wait_run("fanout", rid)["state"] == "success"
    assert d.wait_run("flaky", "k1", timeout=90)["state"] == "success"

    # the grid: runs oldest first, tasks upstream first, the foreach task summed up
    g = d.get("/ui/dags/fanout/grid")
    assert [r["dag_run_id"] for r in g["runs"]] == ["f1", "f2"]
    for r in g["runs"]:
        for key in ("state", "run_type", "logical_date", "start_date", "end_date", "queued_at"):
            assert key in r, (key, r)
    assert [t["task_id"] for t in g["tasks"]] == ["work", "join"]
    work, join = g["tasks"]
    assert work["is_mapped"] is True and join["is_mapped"] is False
    assert [i["dag_run_id"] for i in work["instances"]] == ["f1", "f2"]
    cell = work["instances"][0]
    assert cell["state"] == "success" and cell["map_index_count"] == 3, cell
    assert cell["states_count"] == {"success": 3}, cell
    assert cell["try_number"] == 1 and cell["start_date"] and cell["end_date"], cell
    assert join["instances"][1]["state"] == "success"
    assert join["instances"][1]["map_index_count"] is None
    # limit keeps the newest runs
    g1 = d.get("/ui/dags/fanout/grid?limit=1")
    assert [r["dag_run_id"] for r in g1["runs"]] == ["f2"]
    assert len(g1["tasks"][0]["instances"]) == 1
    assert d.get("/ui/dags/fanout/grid?limit=100000")["runs"]  # cut to the maximum, no error
    assert "limit" in problem(d, "/ui/dags/fanout/grid?limit=-1", 400)["detail"]
    problem(d, "/ui/dags/fanout/grid?limit=abc", 400)
    problem(d, "/ui/dags/nope/grid", 404)
    problem(d, "/ui/dags/fanout/nothing", 404)

    # stats: durations of the newest runs, counts of every run by state
    s = d.get("/ui/dags/fanout/stats")
    assert [r["dag_run_id"] for r in s["runs"]] == ["f1", "f2"]
    assert all(r["duration_seconds"] is not None and r["duration_seconds"] >= 0
               for r in s["runs"]), s
    assert s["counts"]["success"] == 2 and s["counts"]["failed"] == 0, s
    problem(d, "/ui/dags/nope/stats", 404)

    # every try of a task instance: flaky failed twice, then succeeded
    base = "/dags/flaky/dagRuns/k1/taskInstances/flaky"
    tries = d.get(base + "/tries")
    assert tries["total_entries"] == 3
    assert [t["try_number"] for t in tries["task_instances"]] == [1, 2, 3]
    assert [t["state"] for t in tries["task_instances"]] == ["up_for_retry", "up_for_retry",
                                                          "success"]
    for t in tries["task_instances"]:
        assert t["job_id"] and t["start_date"] and t["end_date"], t
        assert "reason" in t
    g = d.get("/ui/dags/flaky/grid")
    assert g["tasks"][0]["instances"][0]["try_number"] == 3
    # a foreach instance's tries, by Airflow's path and by map_index=
    mapped = "work"  # fanout.yaml's foreach task
    one = d.get("/dags/fanout/dagRuns/f1/taskInstances/%s/1/tries" % mapped)["task_instances"]
    assert [(t["map_index"], t["try_number"], t["state"]) for t in one] == [(1, 1, "success")]
    assert d.get("/dags/fanout/dagRuns/f1/taskInstances/%s/tries?map_index=2" % mapped)[
        "total_entries"] == 1
    problem(d, base.replace("flaky/dagRuns", "flaky/dagRuns", 1) + "x/tries", 404)
    problem(d, "/dags/flaky/dagRuns/nope/taskInstances/flaky/tries", 404)
    problem(d, "/dags/fanout/dagRuns/f1/taskInstances/%s/7/tries" % mapped, 404)
    problem(d, "/dags/fanout/dagRuns/f1/taskInstances/%s/x/tries" % mapped, 400)

    # the UI's DAG list: DAGs with their last runs, and the import errors with their line
    u = d.get("/ui/dags")
    dags = {x["dag_id"]: x for x in u["dags"]}
    assert [r["dag_run_id"] for r in dags["fanout"]["last_runs"]] == ["f1", "f2"]
    assert dags["flaky"]["last_runs"][0]["state"] == "success"
    for key in ("next_dagrun", "schedule_interval", "is_paused"):
        assert key in dags["fanout"]
    errs = [e for e in u["import_errors"] if e["filename"].endswith("broken.yaml")]
    assert len(errs) == 1 and errs[0]["line"] == 5, u["import_errors"]
    assert "retires" in errs[0]["message"]


# ---- the job list's roles and task counts ------------------------------------------------

def test_job_list_roles_and_task_counts(server):
    job = server.submit(spec({"chief": {"command": "sleep 30", "memory": "512m"},
                              "worker": {"command": "sleep 30", "instances": 2,
                                         "vcores": 2}}, name="shape"))
    server.wait_running(job["id"])

    def listed(state=None):
        q = "?state=" + state if state else ""
        status, body = server.api("GET", "/api/v1/jobs" + q)
        assert status == 200, body
        return {j["id"]: j for j in body["jobs"]}

    j = listed()[job["id"]]
    roles = {r["name"]: r for r in j["roles"]}
    assert roles["chief"] == {"name": "chief", "instances": 1, "vcores": 1, "memory_mb": 512,
                              "gpus": 0}, roles
    assert roles["worker"]["instances"] == 2 and roles["worker"]["vcores"] == 2, roles
    assert roles["worker"]["memory_mb"] == 256, roles
    assert j["tasks_by_state"] == {"running": 3}, j
    assert job["id"] in listed("running")
    assert job["id"] not in listed("succeeded")

    server.api("DELETE", "/api/v1/jobs/%s" % job["id"])
    server.wait_job(job["id"])
    server.wait_tasks_ended(job["id"])
    j = listed("killed")[job["id"]]
    assert sum(j["tasks_by_state"].values()) == 3, j
    assert set(j["tasks_by_state"]) <= {"killed", "failed"}, j
