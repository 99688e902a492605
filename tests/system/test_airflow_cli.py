"""The `airflow` command (a link to weir named so) against a real server, called the way ops
scripts call Airflow's: seed 004's `airflow trigger_dag NAME`, `airflow dags trigger --conf`,
`dags state`, `tasks states-for-dag-run`, pause and unpause, the output formats; and the
errors a script must be able to see (an unknown DAG, bad --conf, bad flags)."""

import json
import os
import subprocess

import pytest

from conftest import WEIR_BIN
from dagtest import make_dags  # noqa: F401  (the fixture)

REPORT = """\
dag_id: nightly_report
params:
  side: "@SIDE@"
  region: eu
tasks:
  - task_id: extract
    command: echo extract {{ params.region }} >> {{ params.side }}/report
  - task_id: publish
    depends_on: [extract]
    command: echo publish >> {{ params.side }}/report
"""


@pytest.fixture
def airflow(tmp_path):
    """Runs `airflow ARGS...` (a link to the weir binary) with the server's environment."""
    link = tmp_path / "bin" / "airflow"
    link.parent.mkdir()
    os.symlink(WEIR_BIN, link)

    def run(srv, *args, expect=0):
        r = subprocess.run([str(link)] + list(args), capture_output=True, text=True,
                           env=srv.cli_env(), timeout=60, stdin=subprocess.DEVNULL)
        assert r.returncode == expect, "airflow %s: exit %d\n%s\n%s" % (
            " ".join(args), r.returncode, r.stdout, r.stderr)
        return r
    return run


def test_an_ops_script_triggers_polls_and_reads_states(make_dags, airflow):  # noqa: F811
    d = make_dags()
    d.write("nightly_report.yaml", REPORT.replace("@SIDE@", str(d.side)))
    d.srv.start()
    d.wait_dag("nightly_report")
    srv = d.srv

    # Airflow 1's form, as seed 004's shell script calls it
    r = airflow(srv, "trigger_dag", "nightly_report")
    assert r.stdout.startswith("Created <DagRun nightly_report @ "), r.stdout
    first = r.stdout.split(": ", 1)[1].split(",", 1)[0]
    run = d.wait_run("nightly_report", first)
    assert run["state"] == "success", run

    # Airflow 2's, with conf, a run id and a logical date, as JSON
    r = airflow(srv, "dags", "trigger", "nightly_report", "--conf", '{"region": "us"}',
                "--run-id", "ops_1", "--exec-date", "2024-03-01T06:00:00+00:00", "-o", "json")
    created = json.loads(r.stdout)
    assert len(created) == 1 and created[0]["dag_run_id"] == "ops_1", created
    assert created[0]["conf"] == {"region": "us"}
    assert created[0]["logical_date"].startswith("2024-03-01T06:00:00"), created
    d.wait_run("nightly_report", "ops_1")
    assert "extract us" in d.side_lines("report")

    # the state by logical date, with its conf, as `airflow dags state` prints it
    r = airflow(srv, "dags", "state", "nightly_report", "2024-03-01T06:00:00+00:00")
    assert r.stdout.strip() == 'success, {"region": "us"}', r.stdout
    r = airflow(srv, "dags", "state", "nightly_report", "2001-01-01")
    assert r.stdout.strip() == "None"

    # the task instances of a run, by run id or by date; one task's state
    r = airflow(srv, "tasks", "states-for-dag-run", "nightly_report", "ops_1", "-o", "json")
    rows = json.loads(r.stdout)
    assert [(t["task_id"], t["state"]) for t in rows] == [("extract", "success"),
                                                        ("publish", "success")], rows
    r = airflow(srv, "tasks", "states-for-dag-run", "nightly_report", "2024-03-01T06:00:00", "-o",
                "plain")
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["dag_id", "execution_date", "task_id", "state", "start_date",
                                "end_date"], lines
    assert len(lines) == 3 and lines[1].split()[2:4] == ["extract", "success"], lines
    r = airflow(srv, "tasks", "state", "nightly_report", "publish", "ops_1")
    assert r.stdout.strip() == "success"
    r = airflow(srv, "tasks", "list", "nightly_report")
    assert r.stdout.split() == ["extract", "publish"]

    # the runs, newest first; the DAGs
    r = airflow(srv, "dags", "list-runs", "-d", "nightly_report", "-o", "json")
    runs = json.loads(r.stdout)
    assert {x["run_id"] for x in runs} == {first, "ops_1"}, runs
    assert runs[0]["execution_date"] >= runs[1]["execution_date"]
    r = airflow(srv, "dags", "list", "-o", "yaml")
    assert "- dag_id: \"nightly_report\"" in r.stdout, r.stdout
    assert "  is_paused: false" in r.stdout, r.stdout
    r = airflow(srv, "dags", "list")
    head, rule, row = r.stdout.splitlines()
    assert [c.strip() for c in head.split("|")] == ["dag_id", "fileloc", "owners",
                                                    "is_paused"], r.stdout
    assert set(rule) == {"=", "+"} and row.startswith("nightly_report | "), r.stdout

    # pause and unpause, as Airflow prints them, seen by the API
    r = airflow(srv, "dags", "pause", "nightly_report")
    assert r.stdout.strip() == "Dag: nightly_report, paused: True"
    assert d.get("/dags/nightly_report")["is_paused"] is True
    r = airflow(srv, "unpause", "nightly_report")
    assert r.stdout.strip() == "Dag: nightly_report, paused: False"
    assert d.get("/dags/nightly_report")["is_paused"] is False

    # the event log names the command's triggers like any other API call
    status, body = srv.api("GET", "/api/v1/eventLogs?event=api.post_dag_run")
    assert status == 200 and body["total_entries"] == 2, body


def test_errors_a_script_sees(make_dags, airflow):  # noqa: F811
    d = make_dags(files=["observed.yaml"])
    d.wait_dag("observed")
    srv = d.srv

    r = airflow(srv, "dags", "trigger", "no_such_dag", expect=1)
    assert "Dag id no_such_dag not found" in r.stderr, r.stderr
    r = airflow(srv, "trigger_dag", "observed", "-c", "{not json", expect=1)
    assert "--conf" in r.stderr and "not JSON" in r.stderr, r.stderr
    r = airflow(srv, "dags", "trigger", "observed", "-c", "[1, 2]", expect=1)
    assert "expected a JSON object" in r.stderr, r.stderr
    r = airflow(srv, "dags", "state", "observed", "yesterday", expect=1)
    assert "'yesterday' is not a date" in r.stderr, r.stderr
    r = airflow(srv, "tasks", "states-for-dag-run", "observed", "no_run", expect=1)
    assert "not found" in r.stderr, r.stderr
    r = airflow(srv, "dags", "frobnicate", expect=2)
    assert "invalid choice: 'frobnicate'" in r.stderr, r.stderr
    r = airflow(srv, "dags", "list", "-o", "xml", expect=2)
    assert "invalid choice: 'xml'" in r.stderr, r.stderr
    # nothing was triggered by the refused calls
    status, body = srv.api("GET", "/api/v1/dags/observed/dagRuns")
    assert status == 200 and body["total_entries"] == 0, body

    # a wrong token: the server's refusal, exit 1
    env = srv.cli_env({"WEIR_TOKEN": "wrong"})
    link = str(WEIR_BIN)
    r = subprocess.run(["airflow", "dags", "list"], executable=link, capture_output=True,
                       text=True, env=env, timeout=60)
    assert r.returncode == 1 and "401" in r.stderr, (r.returncode, r.stderr)
