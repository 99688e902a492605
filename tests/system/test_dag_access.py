"""A DAG's access list (docs/security.md, "A DAG's access list"): `access:` in a YAML DAG
file and Airflow's access_control in a Python one narrow who may read a DAG and act on it,
over REST with several users: a DAG a user may not read is refused (403) and left out of the
lists, one it may read but not act on refuses its changes, the role's own limit still holds,
an Admin passes every list; /ui/me says it per DAG; a bad list is an import error naming the
field, a name that is neither a role nor a user a warning in the log."""

import base64

import pytest

from conftest import wait_for
from dagtest import Dags, dag_config, password_hash

PASSWORD = "access-secret"
USERS = (("ann", "User"), ("bob", "User"), ("vera", "Viewer"))

OPEN = """dag_id: open
tasks:
  - task_id: t
    command: "true"
"""
SHARED = """dag_id: shared
access:
  ann: edit
  Viewer: read
tasks:
  - task_id: t
    command: "true"
"""
SECRET = """dag_id: secret
access:
  ann: [can_read]
  vera: {DAGs: [can_read, can_edit], DAG Runs: [can_create]}
  nobody_here: read
tasks:
  - task_id: t
    command: "true"
"""
PYDAG = """from datetime import datetime

from airflow import DAG
from airflow.operators.bash import BashOperator

with DAG("pyshared", schedule=None, start_date=datetime(2024, 1, 1),
         access_control={"ann": {"can_read", "can_edit"}}):
    BashOperator(task_id="t", bash_command="true")
"""


def users():
    return "users:\n" + "".join(
        '  - name: %s\n    password_hash: "%s"\n    role: %s\n'
        % (name, password_hash(PASSWORD), role) for name, role in USERS)


def basic(user):
    return {"Authorization": "Basic " + base64.b64encode(
        ("%s:%s" % (user, PASSWORD)).encode()).decode()}


@pytest.fixture
def dags(make_server, tmp_path):
    srv = make_server(config=dag_config() + users(), start=False)
    d = Dags(srv, tmp_path)
    d.write("open.yaml", OPEN)
    d.write("shared.yaml", SHARED)
    d.write("secret.yaml", SECRET)
    d.write("pyshared.py", PYDAG)
    srv.start()
    for dag in ("open", "shared", "secret", "pyshared"):
        d.wait_dag(dag, timeout=60)
    for dag in ("open", "shared", "secret", "pyshared"):
        d.trigger(dag, run_id="r1")
        d.wait_run(dag, "r1")
    return d


def api(d, user, method, path, body=None):
    return d.srv.api(method, "/api/v1" + path, body, token=False, headers=basic(user))


def listed(d, user):
    status, body = api(d, user, "GET", "/dags")
    assert status == 200, body
    assert body["total_entries"] == len(body["dags"]), body
    return sorted(x["dag_id"] for x in body["dags"])


def test_reading_follows_the_list(dags):
    d = dags
    assert listed(d, "ann") == ["open", "pyshared", "secret", "shared"]
    assert listed(d, "bob") == ["open", "shared"]       # shared: any Viewer or above reads
    assert listed(d, "vera") == ["open", "secret", "shared"]
    status, body = d.srv.api("GET", "/api/v1/dags")     # the token: Admin, every DAG
    assert sorted(x["dag_id"] for x in body["dags"]) == ["open", "pyshared", "secret", "shared"]

    status, body = api(d, "bob", "GET", "/dags/secret")
    assert status == 403, body
    assert "access list does not let bob (role User) read it" in body["detail"], body
    for path in ("/dags/secret/dagRuns", "/dags/secret/dagRuns/r1/taskInstances",
                 "/dags/secret/details", "/dags/pyshared/dagRuns/r1",
                 "/dags/secret/dagRuns/r1/taskInstances/t/logs/1"):
        status, body = api(d, "bob", "GET", path)
        assert status == 403, (path, body)
    # the lists of every DAG leave out what bob may not read
    status, body = api(d, "bob", "GET", "/dags/~/dagRuns")
    assert status == 200 and body["total_entries"] == 2, body
    assert sorted(r["dag_id"] for r in body["dag_runs"]) == ["open", "shared"]
    status, body = api(d, "bob", "POST", "/dags/~/dagRuns/list", {})
    assert sorted(r["dag_id"] for r in body["dag_runs"]) == ["open", "shared"], body
    status, body = api(d, "bob", "GET", "/dags/~/dagRuns/~/taskInstances")
    assert sorted(t["dag_id"] for t in body["task_instances"]) == ["open", "shared"], body
    status, body = api(d, "bob", "GET", "/ui/dags")
    assert status == 200, body
    assert sorted(x["dag_id"] for x in body["dags"]) == ["open", "shared"], body
    assert body["total_entries"] == 2, body
    status, body = api(d, "ann", "GET", "/dags/~/dagRuns")
    assert body["total_entries"] == 4, body


def test_acting_follows_the_list_and_the_role(dags):
    d = dags
    # shared: ann may act, bob (a User, listed only through Viewer: read) may not
    status, body = api(d, "ann", "POST", "/dags/shared/dagRuns", {"dag_run_id": "by_ann"})
    assert status == 200, body
    status, body = api(d, "bob", "POST", "/dags/shared/dagRuns", {"dag_run_id": "by_bob"})
    assert status == 403, body
    assert "does not let bob (role User) act on it" in body["detail"], body
    for method, path, b in (("PATCH", "/dags/shared", {"is_paused": True}),
                            ("PATCH", "/dags/shared/dagRuns/r1/setNote", {"note": "x"}),
                            ("POST", "/dags/shared/clearTaskInstances", {"dry_run": True}),
                            ("DELETE", "/dags/shared/dagRuns/r1", None)):
        status, body = api(d, "bob", method, path, b)
        assert status == 403 and "act on it" in body["detail"], (method, path, body)
    # secret: ann may read, not act; vera's `edit` is narrowed by her role (a Viewer)
    status, body = api(d, "ann", "POST", "/dags/secret/dagRuns", {})
    assert status == 403 and "does not let ann (role User) act on it" in body["detail"], body
    status, body = api(d, "vera", "GET", "/dags/secret/dagRuns/r1")
    assert status == 200, body
    status, body = api(d, "vera", "POST", "/dags/secret/dagRuns", {})
    assert status == 403 and "needs the role User or above" in body["detail"], body
    # the Python DAG's access_control: ann acts, bob does not even read
    status, body = api(d, "ann", "POST", "/dags/pyshared/dagRuns", {"dag_run_id": "py_ann"})
    assert status == 200, body
    status, body = api(d, "bob", "POST", "/dags/pyshared/dagRuns", {})
    assert status == 403 and "read it" not in body["detail"], body
    # PATCH /dags pauses only what the user may act on
    status, body = api(d, "bob", "PATCH", "/dags?dag_id_pattern=~&update_mask=is_paused",
                       {"is_paused": True})
    assert status == 200, body
    assert sorted(x["dag_id"] for x in body["dags"]) == ["open"], body
    assert d.get("/dags/shared")["is_paused"] is False
    # an Admin passes every list
    status, body = d.srv.api("POST", "/api/v1/dags/secret/dagRuns", {"dag_run_id": "adm"})
    assert status == 200, body


def test_ui_me_per_dag(dags):
    d = dags
    status, me = api(d, "ann", "GET", "/ui/me?dag_id=secret")
    assert status == 200, me
    assert me["may"]["trigger"] is False and me["may"]["note"] is False, me
    assert me["may"]["kill_job"] is True  # not a DAG's action
    status, me = api(d, "ann", "GET", "/ui/me?dag_id=shared")
    assert me["may"]["trigger"] is True and me["may"]["clear"] is True, me
    status, me = api(d, "ann", "GET", "/ui/me")
    assert me["may"]["trigger"] is True, me
    status, me = d.srv.api("GET", "/api/v1/ui/me?dag_id=secret")
    assert me["may"]["trigger"] is True, me


def test_bad_lists_and_unknown_names(dags):
    d = dags
    wait_for(lambda: "nobody_here is neither a role" in d.srv.log_text(), 30,
             "the warning about an unknown name")
    d.write("bad.yaml", "dag_id: bad\naccess:\n  ann: [fly]\ntasks:\n  - task_id: t\n"
                        "    command: \"true\"\n")

    def error():
        status, body = d.srv.api("GET", "/api/v1/importErrors")
        errs = [e["stack_trace"] for e in body.get("import_errors", [])
                if e["filename"].endswith("bad.yaml")]
        return errs[0] if errs else None
    msg = wait_for(error, 30, "bad.yaml's import error")
    assert "access.ann[0]: expected read, edit, can_read, can_edit or can_delete" in msg, msg


def test_stats_import_errors_and_event_log_follow_the_list(dags):
    d = dags
    # dagStats leaves out the DAGs the reader may not read, as Airflow's does
    status, body = api(d, "bob", "GET", "/dagStats?dag_ids=open,secret,pyshared")
    assert status == 200, body
    assert sorted(s["dag_id"] for s in body["dags"]) == ["open"], body
    status, body = api(d, "ann", "GET", "/dagStats?dag_ids=open,secret,pyshared")
    assert sorted(s["dag_id"] for s in body["dags"]) == ["open", "pyshared", "secret"], body

    # an event log record of a DAG the reader may not read is not there for it
    def dag_ids(user):
        status, body = api(d, user, "GET", "/eventLogs?limit=1000")
        assert status == 200, body
        assert body["total_entries"] == len(body["event_logs"]), body
        return body["event_logs"]
    admin = d.get("/eventLogs?limit=1000")["event_logs"]
    assert {"secret", "pyshared"} <= {e["dag_id"] for e in admin}, admin
    bobs = dag_ids("bob")
    assert not {"secret", "pyshared"} & {e["dag_id"] for e in bobs}, bobs
    assert len(bobs) < len(admin)
    secret = next(e for e in admin if e["dag_id"] == "secret")
    status, body = api(d, "bob", "GET", "/eventLogs/%d" % secret["event_log_id"])
    assert status == 403 and "access list does not let bob" in body["detail"], body
    status, body = api(d, "ann", "GET", "/eventLogs/%d" % secret["event_log_id"])
    assert status == 200 and body["dag_id"] == "secret", body

    # a broken file that holds a DAG bob may not read: its import error is not his to see
    d.write("secret.yaml", SECRET + "  - task_id: [broken\n")

    def error(user):
        status, body = api(d, user, "GET", "/importErrors")
        assert status == 200, body
        errs = [e for e in body["import_errors"] if e["filename"].endswith("secret.yaml")]
        return errs[0] if errs else None
    err = wait_for(lambda: error("ann"), 30, "secret.yaml's import error")
    assert error("bob") is None
    status, body = api(d, "bob", "GET", "/importErrors")
    assert body["total_entries"] == len(body["import_errors"]), body
    status, body = api(d, "bob", "GET", "/importErrors/%d" % err["import_error_id"])
    assert status == 403 and "DAG secret" in body["detail"], body
    status, body = api(d, "ann", "GET", "/importErrors/%d" % err["import_error_id"])
    assert status == 200 and body["filename"].endswith("secret.yaml"), body
