"""Who did what: every state-changing request recorded with who, from where, what and when,
no secret in any record, and Airflow's /api/v1/eventLogs routes with their fields and codes.

A real server with a configured user: a trigger over HTTP Basic, a kill with the token, a
connection added with a password, a pause from a UI session (cookie and CSRF token), a
failed login; the records read back through the API and straight from the store's file.
"""

import base64
import json
import re
import sqlite3

from airflow_schemas import check
from conftest import spec
from dagtest import BASIC_PASSWORD, BASIC_USER, make_dags  # noqa: F401
from test_ui_server import login, raw

SECRET = "hunter2-not-in-any-record"
FIELDS = {"event_log_id": int, "when": str, "dag_id": (str, type(None)),
          "task_id": (str, type(None)), "run_id": (str, type(None)),
          "map_index": (int, type(None)), "try_number": (int, type(None)), "event": str,
          "execution_date": (str, type(None)), "owner": (str, type(None)),
          "extra": (str, type(None))}
AIRFLOW_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?\+00:00$")


def basic(user, password):
    return {"Authorization": "Basic " + base64.b64encode(
        ("%s:%s" % (user, password)).encode()).decode()}


def events(srv, query=""):
    status, body = srv.api("GET", "/api/v1/eventLogs" + query)
    assert status == 200, (status, body)
    return body


def by_event(srv, event):
    return events(srv, "?event=" + event)["event_logs"]


def check_shape(rec):
    check("EventLog", rec)
    assert set(rec) == set(FIELDS), sorted(set(rec) ^ set(FIELDS))
    for k, t in FIELDS.items():
        assert isinstance(rec[k], t), (k, rec[k])
    assert AIRFLOW_TIME.match(rec["when"]), rec["when"]
    if rec["execution_date"] is not None:
        assert AIRFLOW_TIME.match(rec["execution_date"]), rec["execution_date"]


def test_who_did_what(make_dags):
    d = make_dags(users=True, files=["observed.yaml"])
    srv = d.srv
    d.wait_dag("observed")

    # a trigger over Basic auth, with a dag_run_id in the body
    status, _, data = srv.request("POST", "/api/v1/dags/observed/dagRuns",
                                  raw_body=json.dumps({"dag_run_id": "who_1",
                                                       "conf": {"note": SECRET}}),
                                  token=False, headers=basic(BASIC_USER, BASIC_PASSWORD))
    assert status == 200, (status, data)
    d.wait_run("observed", "who_1")
    # a trigger without a run id: the record takes it from the answer
    run2 = d.trigger("observed")
    d.wait_run("observed", run2["dag_run_id"])

    # a kill with the token
    job = srv.submit(spec({"worker": {"command": "sleep 300"}}, name="to-kill"))
    srv.wait_running(job["id"])
    status, _ = srv.api("DELETE", "/api/v1/jobs/%d" % job["id"])
    assert status == 202
    srv.wait_job(job["id"])

    # a connection added with a password, then a wrong one (400) with a password too
    conn = {"connection_id": "warehouse", "conn_type": "postgres", "host": "db.example",
            "login": "etl", "password": SECRET}
    status, body = srv.api("POST", "/api/v1/connections", conn)
    assert status == 200, body
    status, _ = srv.api("POST", "/api/v1/connections", dict(conn, bogus_field=1))
    assert status == 400
    status, _ = srv.api("POST", "/api/v1/variables", {"key": "api_key", "value": SECRET})
    assert status == 200

    # the UI: a failed login (its password neither logged nor recorded), a login, a pause
    status, _, _, _ = raw(srv, "POST", "/ui/login", {"username": BASIC_USER, "password": SECRET})
    assert status == 401
    browser, _, _ = login(srv, username=BASIC_USER, password=BASIC_PASSWORD)
    status, _, body = browser.call("PATCH", "/api/v1/dags/observed", {"is_paused": True})
    assert status == 200, body

    # reads are not recorded; the launchers' protocol is not either
    before = events(srv)["total_entries"]
    for _ in range(3):
        srv.api("GET", "/api/v1/dags/observed")
        srv.api("GET", "/api/v1/jobs/%d" % job["id"])
    after = events(srv)
    assert after["total_entries"] == before, after
    routes = {json.loads(r["extra"])["route"] for r in events(srv, "?limit=1000")["event_logs"]}
    assert not [r for r in routes if "/launch/" in r], routes

    everything = events(srv, "?limit=1000")
    check("EventLogCollection", everything)
    for rec in everything["event_logs"]:
        check_shape(rec)
    # no secret anywhere: not in the API's answer, not in the store's file
    assert SECRET not in json.dumps(everything)
    db = sqlite3.connect("file:%s?mode=ro" % (srv.home / "weir.db"), uri=True)
    try:
        rows = db.execute("SELECT * FROM event_log").fetchall()
    finally:
        db.close()
    assert rows and SECRET not in repr(rows)
    assert SECRET not in srv.log_text()

    # the trigger: who (the Basic user), from where, what, the run's logical date
    trig = [r for r in by_event(srv, "api.post_dag_run") if r["run_id"] == "who_1"]
    assert len(trig) == 1, by_event(srv, "api.post_dag_run")
    t = trig[0]
    extra = json.loads(t["extra"])
    assert t["owner"] == BASIC_USER and t["dag_id"] == "observed"
    assert t["execution_date"] is not None
    assert extra["method"] == "POST" and extra["status"] == 200
    assert extra["route"] == "/api/v1/dags/{dag_id}/dagRuns"
    assert re.match(r"^127\.0\.0\.1:\d+$", extra["peer"]), extra
    assert sorted(extra["fields"]) == ["conf", "dag_run_id"]
    other = [r for r in by_event(srv, "api.post_dag_run") if r["run_id"] != "who_1"]
    assert [r["run_id"] for r in other] == [run2["dag_run_id"]]
    assert other[0]["owner"] == "token"

    # the kill
    (kill,) = by_event(srv, "api.delete_job")
    kx = json.loads(kill["extra"])
    assert kill["owner"] == "token" and kx["job_id"] == job["id"] and kx["status"] == 202
    # the submission names its new job from the answer
    subs = by_event(srv, "api.post_job")
    assert job["id"] in [json.loads(r["extra"]).get("job_id") for r in subs], subs

    # the connection: field names, never values; the refused one recorded with its 400
    conns = by_event(srv, "api.post_connection")
    assert [json.loads(r["extra"])["status"] for r in conns] == [200, 400]
    cx = json.loads(conns[0]["extra"])
    assert cx["connection_id"] == "warehouse" and "password" in cx["fields"]
    assert "etl" not in conns[0]["extra"] and "db.example" not in conns[0]["extra"]
    (var,) = by_event(srv, "api.post_variables")
    assert json.loads(var["extra"])["variable_key"] == "api_key"

    # the UI: the failed login has no owner, the login and the pause are the user's
    logins = by_event(srv, "ui.login")
    assert [(r["owner"], json.loads(r["extra"])["status"]) for r in logins] == \
        [(None, 401), (BASIC_USER, 200)]
    (pause,) = by_event(srv, "api.patch_dag")
    assert pause["owner"] == BASIC_USER and pause["dag_id"] == "observed"
    assert json.loads(pause["extra"])["fields"] == ["is_paused"]


def test_event_log_routes_filters_and_codes(make_dags):
    d = make_dags(files=["observed.yaml"])
    srv = d.srv
    d.wait_dag("observed")
    for i in range(3):
        d.trigger("observed", run_id="r%d" % i)
    for i in range(3):
        d.wait_run("observed", "r%d" % i)
    srv.api("PATCH", "/api/v1/dags/observed", {"is_paused": True})
    srv.api("POST", "/api/v1/variables", {"key": "k", "value": "v"})

    body = events(srv)
    assert body["total_entries"] == 5 and len(body["event_logs"]) == 5
    ids = [r["event_log_id"] for r in body["event_logs"]]
    assert ids == sorted(ids)

    # paging and ordering
    page = events(srv, "?limit=2&offset=1")
    assert page["total_entries"] == 5 and [r["event_log_id"] for r in page["event_logs"]] == \
        ids[1:3]
    desc = events(srv, "?order_by=-event_log_id")
    assert [r["event_log_id"] for r in desc["event_logs"]] == ids[::-1]
    by_run = events(srv, "?order_by=-run_id&dag_id=observed&event=api.post_dag_run")
    assert [r["run_id"] for r in by_run["event_logs"]] == ["r2", "r1", "r0"]

    # Airflow's filters
    assert events(srv, "?run_id=r1")["total_entries"] == 1
    assert events(srv, "?dag_id=observed")["total_entries"] == 4
    assert events(srv, "?owner=token")["total_entries"] == 5
    assert events(srv, "?owner=nobody")["total_entries"] == 0
    assert events(srv, "?included_events=api.patch_dag,api.post_variables")["total_entries"] == 2
    assert events(srv, "?excluded_events=api.post_dag_run")["total_entries"] == 2
    first = body["event_logs"][0]
    assert events(srv, "?before=2000-01-01T00:00:00%2B00:00")["total_entries"] == 0
    assert events(srv, "?after=2000-01-01T00:00:00%2B00:00")["total_entries"] == 5

    # one record
    status, one = srv.api("GET", "/api/v1/eventLogs/%d" % first["event_log_id"])
    assert status == 200 and one == first
    check_shape(one)

    # codes, as problems
    for path, code in [("/api/v1/eventLogs/999999", 404), ("/api/v1/eventLogs/abc", 400),
                       ("/api/v1/eventLogs?order_by=password", 400),
                       ("/api/v1/eventLogs?bogus=1", 400), ("/api/v1/eventLogs?limit=-1", 400),
                       ("/api/v1/eventLogs?map_index=x", 400),
                       ("/api/v1/eventLogs?before=yesterday", 400),
                       ("/api/v1/eventLogs/1/more", 404)]:
        status, headers, data = srv.request("GET", path)
        assert status == code, (path, status, data)
        assert headers["Content-Type"].startswith("application/problem+json"), (path, headers)
        assert json.loads(data)["status"] == code
    status, headers, _ = srv.request("POST", "/api/v1/eventLogs", raw_body="{}")
    assert status == 405
    status, _, _ = srv.request("GET", "/api/v1/eventLogs", token=False)
    assert status == 401
    # the refused requests above changed nothing: only the POST (405) is recorded
    assert events(srv)["total_entries"] == 6
    # the metrics page counts the records written (docs/metrics.md)
    status, _, page = srv.request("GET", "/metrics")
    assert status == 200
    assert "\nweir_event_log_records_total 6\n" in page.decode(), page.decode()[-2000:]
