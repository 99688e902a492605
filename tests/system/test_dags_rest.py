"""Airflow's REST API the way an ops shell script uses it (curl, Basic auth, a polling loop),
and the `weir dags` / `weir tasks` commands with their exit statuses."""

import json
import subprocess

from conftest import cli_describe
from dagtest import BASIC_PASSWORD, BASIC_USER, make_dags  # noqa: F401

POLL = r'''
set -e
state=none
for i in $(seq 1 300); do
    state=$(curl -s -u "$AUTH" "$URL/api/v1/dags/gate/dagRuns/$RUN" | jq -r .state)
    case "$state" in success|failed) break;; esac
    sleep 0.2
done
echo "$state"
'''


def sh(script, env, timeout=90):
    r = subprocess.run(["/bin/sh", "-c", script], capture_output=True, text=True, env=env,
                       timeout=timeout, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, "script failed: %s\n%s" % (r.returncode, r.stderr)
    return r.stdout


def test_curl_basic_auth_trigger_poll_log_clear(make_dags):
    d = make_dags(users=True, files=["gate.yaml"])
    d.wait_dag("gate")
    env = {"PATH": "/usr/bin:/bin", "URL": d.srv.url, "RUN": "ops_run_1",
           "AUTH": "%s:%s" % (BASIC_USER, BASIC_PASSWORD)}

    # a wrong password is refused the Airflow way
    out = sh('curl -s -o /dev/null -w "%{http_code}" -u "ops:wrong" "$URL/api/v1/dags"', env)
    assert out == "401", out

    # trigger with conf; Airflow answers 200 with the DAGRun
    out = sh('curl -s -w "\\n%{http_code}" -u "$AUTH" -H "Content-Type: application/json" '
             '-d \'{"dag_run_id": "ops_run_1", "conf": {"msg": "hello; $(echo INJECTED)"}}\' '
             '"$URL/api/v1/dags/gate/dagRuns"', env)
    body, code = out.rsplit("\n", 1)
    assert code == "200", out
    assert json.loads(body)["dag_run_id"] == "ops_run_1", body

    # the ops script's polling loop: gate fails (no `allow` file yet)
    assert sh(POLL, env).strip() == "failed"

    # greet's log over REST, as text: the conf reached the command as one literal string
    log = sh('curl -s -u "$AUTH" -H "Accept: text/plain" '
             '"$URL/api/v1/dags/gate/dagRuns/$RUN/taskInstances/greet/logs/1"', env)
    assert "msg=hello; $(echo INJECTED)" in log, log
    # and as JSON with a continuation token
    js = json.loads(sh('curl -s -u "$AUTH" -H "Accept: application/json" '
                       '"$URL/api/v1/dags/gate/dagRuns/$RUN/taskInstances/gate/logs/1"', env))
    assert "content" in js and "continuation_token" in js, js

    # open the gate, clear the failed task over REST: the run goes on and succeeds
    (d.side / "allow").write_text("")
    out = sh('curl -s -u "$AUTH" -H "Content-Type: application/json" -d '
             '\'{"dag_run_id": "ops_run_1", "task_ids": ["gate"], "only_failed": true, '
             '"dry_run": false}\' "$URL/api/v1/dags/gate/clearTaskInstances"', env)
    cleared = json.loads(out)["task_instances"]
    assert [t["task_id"] for t in cleared] == ["gate"], out
    assert sh(POLL, env).strip() == "success"
    tis = d.tis("gate", "ops_run_1")
    assert tis["gate"]["state"] == "success" and tis["gate"]["try_number"] == 2, tis
    assert tis["greet"]["try_number"] == 1, tis  # not cleared, not run again
    assert "gate open" in d.log("gate", "ops_run_1", "gate", 2)


def test_trigger_wait_exit_status(make_dags):
    d = make_dags(files=["diamond.yaml", "fails.yaml"])
    d.wait_dag("diamond")
    d.wait_dag("fails")

    r = d.srv.cli("dags", "trigger", "diamond", "--wait", timeout=90)
    assert r.returncode == 0, cli_describe(r)
    assert r.stdout.startswith("dag run "), cli_describe(r)
    for task in "abcd":
        assert " %s success" % task in r.stdout, cli_describe(r)
    assert "success in" in r.stdout.splitlines()[-1], cli_describe(r)

    r = d.srv.cli("dags", "trigger", "fails", "--wait", "--run-id", "will_fail", timeout=90)
    assert r.returncode == 1, cli_describe(r)
    assert " boom failed" in r.stdout, cli_describe(r)
    assert r.stdout.splitlines()[-1].startswith("dag run will_fail of fails failed"), \
        cli_describe(r)

    # bad --conf is a local error (2); an unknown DAG is the server's 404 (1)
    r = d.srv.cli("dags", "trigger", "diamond", "--conf", "{not json", "--wait")
    assert r.returncode == 2 and "--conf" in r.stderr, cli_describe(r)
    r = d.srv.cli("dags", "trigger", "nosuchdag", "--wait")
    assert r.returncode == 1, cli_describe(r)
    # no server: 3
    r = d.srv.cli("dags", "trigger", "diamond", "--wait", env={"WEIR_SERVER": "127.0.0.1:1"})
    assert r.returncode == 3, cli_describe(r)


def test_cli_state_runs_tasks_logs_clear_pause(make_dags):
    d = make_dags(files=["gate.yaml"])
    d.wait_dag("gate")
    r = d.srv.cli("dags", "trigger", "gate", "--run-id", "cli_1", "--conf", '{"msg": "hi"}',
                  "--logical-date", "2024-03-01", "--wait", timeout=90)
    assert r.returncode == 1, cli_describe(r)
    r = d.srv.cli("dags", "state", "gate", "cli_1")
    assert (r.returncode, r.stdout) == (0, "failed\n"), cli_describe(r)
    r = d.srv.cli("tasks", "state", "gate", "cli_1", "greet")
    assert (r.returncode, r.stdout) == (0, "success\n"), cli_describe(r)
    r = d.srv.cli("tasks", "logs", "gate", "cli_1", "greet")
    assert r.returncode == 0 and "msg=hi" in r.stdout, cli_describe(r)
    r = d.srv.cli("dags", "runs", "gate")
    assert r.returncode == 0 and "cli_1" in r.stdout and "2024-03-01" in r.stdout, \
        cli_describe(r)

    (d.side / "allow").write_text("")
    r = d.srv.cli("tasks", "clear", "gate", "cli_1", "--task", "gate", "--only-failed")
    assert r.returncode == 0 and "cleared 1 task instance" in r.stdout, cli_describe(r)
    d.wait_run("gate", "cli_1", timeout=60)
    r = d.srv.cli("dags", "state", "gate", "cli_1")
    assert r.stdout == "success\n", cli_describe(r)
    r = d.srv.cli("tasks", "logs", "gate", "cli_1", "gate", "--try", "2", "--follow",
                  timeout=30)
    assert r.returncode == 0 and "gate open" in r.stdout, cli_describe(r)

    r = d.srv.cli("dags", "pause", "gate")
    assert r.returncode == 0, cli_describe(r)
    assert d.get("/dags/gate")["is_paused"] is True
    r = d.srv.cli("dags", "unpause", "gate")
    assert r.returncode == 0 and d.get("/dags/gate")["is_paused"] is False, cli_describe(r)
    r = d.srv.cli("dags", "show", "gate")
    assert r.returncode == 0 and "cli_1" in r.stdout, cli_describe(r)


def test_backfill_one_run_per_interval(make_dags):
    d = make_dags(files=["daily.yaml"])
    d.wait_dag("daily")
    r = d.srv.cli("dags", "backfill", "daily", "--from", "2024-01-02", "--to", "2024-01-04",
                  "--wait", timeout=120)
    assert r.returncode == 0, cli_describe(r)
    days = [line.split() for line in d.side_lines("days")]
    backfilled = sorted(day for day, run_id in days if run_id.startswith("backfill__"))
    assert backfilled == ["2024-01-02", "2024-01-03", "2024-01-04"], days
    runs = d.get("/dags/daily/dagRuns")["dag_runs"]
    ids = {run["dag_run_id"] for run in runs}
    assert "backfill__2024-01-03T00:00:00+00:00" in ids, ids
    # again: the runs exist and are kept, nothing runs twice
    r = d.srv.cli("dags", "backfill", "daily", "--from", "2024-01-02", "--to", "2024-01-02")
    assert r.returncode == 0 and "exists already" in r.stdout, cli_describe(r)
    # a range without an interval, and a reversed one, are bad input
    r = d.srv.cli("dags", "backfill", "daily", "--from", "2024-01-05", "--to", "2024-01-04")
    assert r.returncode == 2, cli_describe(r)


def test_tasks_logs_follow_a_running_try(make_dags):
    d = make_dags(files=["talk.yaml"])
    d.wait_dag("talk")
    d.trigger("talk", run_id="t1")
    # started while the try runs (or before it starts): every line once, then it ends
    r = d.srv.cli("tasks", "logs", "talk", "t1", "talk", "--follow", timeout=60)
    assert r.returncode == 0, cli_describe(r)
    assert r.stdout.splitlines() == ["line %d" % i for i in range(1, 7)], cli_describe(r)
    assert d.wait_run("talk", "t1")["state"] == "success"


def test_list_filters_are_honoured_or_refused(make_dags):
    """A script filtering Airflow's lists gets what it asked for, or a 400 naming the
    parameter; unknown paths are 404; "~" lists across DAGs and runs."""
    d = make_dags()
    d.write("ml_nightly.yaml", "dag_id: ml_nightly\ntags: [ml]\ntasks:\n"
            "  - {task_id: a, command: 'true'}\n")
    d.write("etl_hourly.yaml", "dag_id: etl_hourly\ntags: [etl]\ntasks:\n"
            "  - {task_id: a, command: 'true'}\n  - {task_id: b, command: 'false'}\n")
    d.wait_dag("ml_nightly")
    d.wait_dag("etl_hourly")
    d.trigger("ml_nightly", run_id="m1", logical_date="2024-03-01T00:00:00+00:00")
    d.trigger("etl_hourly", run_id="e1", logical_date="2024-03-05T00:00:00+00:00")
    assert d.wait_run("ml_nightly", "m1")["state"] == "success"
    assert d.wait_run("etl_hourly", "e1")["state"] == "failed"

    def ids(body, key="dags", field="dag_id"):
        return sorted(x[field] for x in body[key])

    def refused(path, word, status=400, method="GET", body=None):
        st, b = d.srv.api(method, "/api/v1" + path, body)
        assert st == status and word in b["detail"], (path, st, b)

    assert ids(d.get("/dags?tags=ml")) == ["ml_nightly"]
    assert ids(d.get("/dags?tags=ml&tags=etl")) == ["etl_hourly", "ml_nightly"]
    assert ids(d.get("/dags?dag_id_pattern=HOURLY")) == ["etl_hourly"]
    assert d.get("/dags?paused=true")["total_entries"] == 0
    assert ids(d.get("/dags?order_by=-dag_id"))[0] == "etl_hourly"
    assert d.get("/dags?order_by=-dag_id")["dags"][0]["dag_id"] == "ml_nightly"
    assert set(d.get("/dags?fields=dag_id,is_paused")["dags"][0]) == {"dag_id", "is_paused"}
    refused("/dags?tag=ml", "tag")
    refused("/dags?fields=owner_links", "owner_links")

    assert ids(d.get("/dags/~/dagRuns?state=failed"), "dag_runs") == ["etl_hourly"]
    assert ids(d.get("/dags/~/dagRuns?execution_date_gte=2024-03-02T00:00:00Z"),
               "dag_runs") == ["etl_hourly"]
    assert d.get("/dags/~/dagRuns?end_date_lte=2000-01-01T00:00:00Z")["total_entries"] == 0
    refused("/dags/~/dagRuns?start_date_gte=soon", "start_date_gte")
    st, b = d.srv.api("POST", "/api/v1/dags/~/dagRuns/list",
                      {"dag_ids": ["ml_nightly"], "states": ["success"]})
    assert st == 200 and ids(b, "dag_runs") == ["ml_nightly"], b

    tis = d.get("/dags/~/dagRuns/~/taskInstances?state=failed")
    assert [(t["dag_id"], t["task_id"]) for t in tis["task_instances"]] == [("etl_hourly", "b")]
    assert d.get("/dags/etl_hourly/dagRuns/e1/taskInstances?limit=1")["total_entries"] == 2
    assert len(d.get("/dags/etl_hourly/dagRuns/e1/taskInstances?limit=1")
               ["task_instances"]) == 1
    assert d.get("/dags/etl_hourly/dagRuns/e1/taskInstances?pool=default_pool"
                 "&duration_gte=0")["total_entries"] == 2
    # the date filters read the dates back from each TI's view
    assert d.get("/dags/etl_hourly/dagRuns/e1/taskInstances?start_date_gte="
                 "2000-01-01T00:00:00Z")["total_entries"] == 2
    assert d.get("/dags/etl_hourly/dagRuns/e1/taskInstances?end_date_lte="
                 "2000-01-01T00:00:00Z")["total_entries"] == 0
    assert d.get("/dags/etl_hourly/dagRuns/e1/taskInstances?queue=nosuch")["total_entries"] == 0
    st, b = d.srv.api("POST", "/api/v1/dags/~/dagRuns/~/taskInstances/list",
                      {"task_ids": ["a"], "dag_ids": ["etl_hourly", "ml_nightly"]})
    assert st == 200 and b["total_entries"] == 2, b
    refused("/dags/etl_hourly/dagRuns/e1/taskInstances?executor=celery", "executor")

    refused("/dags/etl_hourly/dagRuns/e1/taskInstances/a/noSuchRoute", "no such route", 404)
    refused("/dags/~/dagRuns/e1", "~")


def test_one_dags_run_pages_agree_with_the_filtered_listing(make_dags):
    """GET /dags/{id}/dagRuns by execution date, with at most one state and no date filter,
    is read a page at a time from the store's index; with a date filter (or several states)
    every run of the DAG is read and filtered.  Both give the same pages and totals."""
    d = make_dags()
    d.write("pages.yaml", "dag_id: pages\ntasks:\n  - {task_id: a, command: 'true'}\n")
    d.write("beside.yaml", "dag_id: beside\ntasks:\n  - {task_id: a, command: 'true'}\n")
    d.wait_dag("pages")
    d.wait_dag("beside")
    for day in (3, 1, 5, 2, 4):  # logical dates not in the order of the rows
        d.trigger("pages", run_id="p%d" % day, logical_date="2024-03-0%dT00:00:00+00:00" % day)
    d.trigger("beside", run_id="b1", logical_date="2024-03-06T00:00:00+00:00")
    for day in range(1, 6):
        assert d.wait_run("pages", "p%d" % day)["state"] == "success"
    st, _ = d.srv.api("PATCH", "/api/v1/dags/pages/dagRuns/p3", {"state": "failed"})
    assert st == 200

    def page(query):
        body = d.get("/dags/pages/dagRuns?" + query)
        return [r["dag_run_id"] for r in body["dag_runs"]], body["total_entries"]

    assert page("order_by=-execution_date") == (["p5", "p4", "p3", "p2", "p1"], 5)
    assert page("order_by=execution_date&limit=2&offset=1") == (["p2", "p3"], 5)
    assert page("state=success&order_by=-execution_date&limit=3") == (["p5", "p4", "p2"], 4)
    assert page("state=failed") == (["p3"], 1)
    for order in ("execution_date", "-execution_date", "-logical_date"):
        for state in ("", "&state=success", "&state=failed", "&state=running"):
            for limit, offset in ((100, 0), (2, 1), (2, 4), (1, 9)):
                q = "order_by=%s&limit=%d&offset=%d%s" % (order, limit, offset, state)
                assert page(q) == page(q + "&execution_date_gte=2000-01-01T00:00:00Z"), q
    assert page("state=success&state=failed&order_by=-execution_date") == page(
        "order_by=-execution_date")
