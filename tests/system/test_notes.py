"""Notes on DAG runs and task instances (docs/api.md, "Notes"): Airflow's three setNote routes,
a note read back in the run's and the TI's answers (and their lists), who may set one (a
User, not a Viewer), the body's checks, what is not there, the length bound, a note kept
through a clear and across a restart."""

import pytest

from dagtest import dag_config, password_hash

PASSWORD = "notes-secret"

NOTED = """dag_id: noted
tasks:
  - task_id: one
    command: "true"
  - task_id: each
    foreach: [10, 20]
    command: "true"
"""


def users():
    return "users:\n" + "".join(
        '  - name: %s\n    password_hash: "%s"\n    role: %s\n'
        % (name, password_hash(PASSWORD), role)
        for name, role in (("vera", "Viewer"), ("uma", "User")))


@pytest.fixture
def noted(make_server, tmp_path):
    from dagtest import Dags
    srv = make_server(config=dag_config() + users(), start=False)
    d = Dags(srv, tmp_path)
    d.write("noted.yaml", NOTED)
    srv.start()
    d.wait_dag("noted")
    d.trigger("noted", run_id="r1")
    assert d.wait_run("noted", "r1")["state"] == "success"
    return d


def basic(user):
    import base64
    return {"Authorization": "Basic " + base64.b64encode(
        ("%s:%s" % (user, PASSWORD)).encode()).decode()}


def patch(d, path, body, user="uma", raw=None):
    return d.srv.api("PATCH", "/api/v1/dags/noted/dagRuns" + path, body, token=False,
                     headers=basic(user), raw_body=raw)


def test_set_and_read_back(noted):
    d = noted
    assert d.run("noted", "r1")["note"] is None
    status, run = patch(d, "/r1/setNote", {"note": "rerun after the disk fix ✓"})
    assert status == 200, run
    assert run["dag_run_id"] == "r1" and run["note"] == "rerun after the disk fix ✓", run
    assert d.run("noted", "r1")["note"] == "rerun after the disk fix ✓"
    listed = d.get("/dags/noted/dagRuns")["dag_runs"]
    assert [r["note"] for r in listed] == ["rerun after the disk fix ✓"], listed

    status, ti = patch(d, "/r1/taskInstances/one/setNote", {"note": "fine"})
    assert status == 200, ti
    assert ti["task_id"] == "one" and ti["map_index"] == -1 and ti["note"] == "fine", ti
    status, ti = patch(d, "/r1/taskInstances/each/1/setNote", {"note": "the second item"})
    assert status == 200, ti
    assert ti["task_id"] == "each" and ti["map_index"] == 1, ti
    assert ti["note"] == "the second item", ti
    tis = d.tis("noted", "r1")
    assert tis["one"]["note"] == "fine", tis
    assert tis["each[1]"]["note"] == "the second item", tis
    assert tis["each[0]"]["note"] is None, tis
    got = d.get("/dags/noted/dagRuns/r1/taskInstances/each/1")
    assert got["note"] == "the second item", got

    # "" removes it
    status, ti = patch(d, "/r1/taskInstances/one/setNote", {"note": ""})
    assert status == 200 and ti["note"] is None, ti

    # kept through a clear (the run runs again) and across a restart
    status, body = d.srv.api("POST", "/api/v1/dags/noted/clearTaskInstances",
                             {"dag_run_id": "r1", "task_ids": ["each"], "only_failed": False,
                              "dry_run": False})
    assert status == 200, body
    assert d.wait_run("noted", "r1")["state"] == "success"
    d.srv.terminate()
    d.srv.start()
    assert d.run("noted", "r1")["note"] == "rerun after the disk fix ✓"
    assert d.tis("noted", "r1")["each[1]"]["note"] == "the second item"


def test_who_may_set_one(noted):
    d = noted
    status, body = patch(d, "/r1/setNote", {"note": "by a viewer"}, user="vera")
    assert status == 403, body
    assert "role User or above" in body["detail"] and "role is Viewer" in body["detail"], body
    status, body = patch(d, "/r1/taskInstances/each/0/setNote", {"note": "x"}, user="vera")
    assert status == 403, body
    assert d.run("noted", "r1")["note"] is None
    # the token is an Admin
    status, run = d.srv.api("PATCH", "/api/v1/dags/noted/dagRuns/r1/setNote", {"note": "ok"})
    assert status == 200 and run["note"] == "ok", run
    # the event log names who set it
    status, body = d.srv.api("GET", "/api/v1/eventLogs?event=api.set_dag_run_note")
    assert status == 200, body
    owners = sorted(e["owner"] for e in body["event_logs"])
    assert owners == ["token", "vera"], body


@pytest.mark.parametrize("raw,what", [
    ('{}', "note: missing"),
    ('{"note": 5}', "note: expected a string"),
    ('{"note": null}', "note: expected a string"),
    ('{"note": "x", "user": "me"}', "user"),
    ('[1]', "JSON object"),
    ('not json', "JSON"),
])
def test_bad_bodies_name_the_field(noted, raw, what):
    status, body = patch(noted, "/r1/setNote", None, raw=raw)
    assert status == 400, body
    assert what in body["detail"], body
    status, body = patch(noted, "/r1/taskInstances/one/setNote", None, raw=raw)
    assert status == 400 and what in body["detail"], body


def test_what_is_not_there(noted):
    d = noted
    status, body = patch(d, "/nope/setNote", {"note": "x"})
    assert status == 404 and "nope" in body["detail"], body
    status, body = d.srv.api("PATCH", "/api/v1/dags/nodag/dagRuns/r1/setNote", {"note": "x"})
    assert status == 404 and "nodag" in body["detail"], body
    status, body = patch(d, "/r1/taskInstances/nope/setNote", {"note": "x"})
    assert status == 404 and "nope" in body["detail"], body
    status, body = patch(d, "/r1/taskInstances/each/7/setNote", {"note": "x"})
    assert status == 404 and "instance 7" in body["detail"], body
    status, body = patch(d, "/r1/taskInstances/each/x/setNote", {"note": "x"})
    assert status == 404, body  # not a number: no such route
    status, body = d.srv.api("GET", "/api/v1/dags/noted/dagRuns/r1/setNote")
    assert status == 405, body


def test_the_length_bound(noted):
    d = noted
    status, body = patch(d, "/r1/setNote", {"note": "é" * 1001})
    assert status == 400, body
    assert "note: at most 1000 characters" in body["detail"], body
    assert d.run("noted", "r1")["note"] is None
    status, run = patch(d, "/r1/setNote", {"note": "é" * 1000})
    assert status == 200 and run["note"] == "é" * 1000, run
