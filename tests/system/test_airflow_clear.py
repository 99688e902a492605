"""Clearing a task of a Python DAG file clears its setups and their teardowns, as Airflow 2's
clear (the REST clearTaskInstances, the UI's and `weir tasks clear`) does; a DAG's
sla_miss_callback called when a task misses its SLA (docs/airflow.md)."""

import json
import sys

from dagtest import Dags, dag_config
from test_airflow_mapping import run_ok


def clear(d, run, tasks, dry_run=True, downstream=False):
    status, body = d.srv.api("POST", "/api/v1/dags/clear_setups/clearTaskInstances",
                             {"dag_run_id": run, "task_ids": tasks, "dry_run": dry_run,
                              "only_failed": False, "include_downstream": downstream})
    assert status == 200, body
    return sorted(t["task_id"] for t in body["task_instances"])


def test_clear_takes_the_setups_and_teardowns(make_server, tmp_path):
    srv = make_server(config=dag_config(), start=False)
    srv.extra_env["WEIR_AIRFLOW_PYTHON"] = sys.executable
    d = Dags(srv, tmp_path)
    d.write("clear_setups.py", d.text("airflow/clear_setups.py"))
    d.srv.start()
    d.wait_dag("clear_setups")
    run = d.trigger("clear_setups")["dag_run_id"]
    run_ok(d, "clear_setups", run)
    # a work task: its relevant setups (one with its teardown below the task, one without
    # a teardown) and their teardowns; not a setup whose teardown is elsewhere, not a
    # plain upstream
    assert clear(d, run, ["work"]) == ["create", "delete", "lock", "work"]
    # a setup: its teardowns
    assert clear(d, run, ["create"]) == ["create", "delete"]
    # with its downstream: the tasks below, and their setups
    assert clear(d, run, ["before"], downstream=True) == \
        ["after", "before", "create", "delete", "lock", "work"]
    # a real clear runs them again
    (d.side / "ran").write_text("")
    assert clear(d, run, ["work"], dry_run=False) == ["create", "delete", "lock", "work"]
    run_ok(d, "clear_setups", run)
    assert sorted(d.side_lines("ran")) == ["create", "delete", "lock", "work"]


def test_sla_miss_callback(make_server, tmp_path):
    srv = make_server(config=dag_config(), start=False)
    srv.extra_env["WEIR_AIRFLOW_PYTHON"] = sys.executable
    d = Dags(srv, tmp_path)
    d.write("sla_callback.py", d.text("airflow/sla_callback.py"))
    d.srv.start()
    d.wait_dag("sla_callback")
    run = d.trigger("sla_callback")["dag_run_id"]
    # the task ends once the callback ran (it waits for the callback's file)
    run_ok(d, "sla_callback", run)
    got = json.loads((d.side / "sla").read_text())
    assert got[:4] == ["sla_callback", "slow", "slow", [["sla_callback", "slow"]]], got
    # the task that missed blocks: its state when the miss was seen
    [[task_id, state]] = got[4]
    assert task_id == "slow" and state in ("scheduled", "queued", "running"), got
    notes = d.get("/dags/sla_callback/dagRuns/%s/notifications" % run)
    assert [(n["event"], n["target_kind"]) for n in notes["notifications"]] == \
        [("sla_miss", "command")], notes
