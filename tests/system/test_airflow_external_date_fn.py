"""ExternalTaskSensor with execution_date_fn in Airflow DAG files run by a real server
(docs/airflow.md, "Sensors"): the function is called in the task's process with the logical
date (and the context's keys it names), the other DAG's runs at the dates it gives are read
from the server with the task's read key, and the sensor ends as Airflow's: met when every
date's awaited tasks (a task, a task group, or the run) are in allowed_states, failed by a
failed state (skipped with soft_fail), failed by check_existence for a DAG the server does
not have; in reschedule mode it waits for a run that does not exist yet.  The read key opens
that read only, for that task."""

import json

from conftest import wait_for
from test_airflow_operators import server_with

UPSTREAM = '''\
from datetime import datetime
from airflow import DAG
from airflow.operators.bash import BashOperator
from airflow.utils.task_group import TaskGroup

with DAG("upstream", start_date=datetime(2024, 1, 1), schedule=None,
         default_args={"retries": 0}):
    BashOperator(task_id="a", bash_command="true")
    BashOperator(task_id="bad", bash_command="exit 1")
    with TaskGroup("grp"):
        BashOperator(task_id="x", bash_command="true")
        BashOperator(task_id="y", bash_command="true")
'''

WATCHER = '''\
from datetime import datetime, timedelta
from airflow import DAG
from airflow.sensors.external_task import ExternalTaskSensor


def two_days(dt):
    return [dt - timedelta(days=1), dt]


def by_param(dt, params):
    # a context key taken by name, as Airflow passes them
    return dt - timedelta(days=params["back"])


quick = {"poke_interval": 0.1, "timeout": 120}
with DAG("watcher", start_date=datetime(2024, 1, 1), schedule=None, params={"back": 1},
         default_args={"retries": 0}):
    ExternalTaskSensor(task_id="both_days", external_dag_id="upstream", external_task_id="a",
                       execution_date_fn=two_days, **quick)
    ExternalTaskSensor(task_id="group", external_dag_id="upstream",
                       external_task_group_id="grp", execution_date_fn=by_param,
                       mode="reschedule", **quick)
    ExternalTaskSensor(task_id="failed", external_dag_id="upstream", external_task_id="bad",
                       failed_states=["failed"], execution_date_fn=lambda dt: dt, **quick)
    ExternalTaskSensor(task_id="soft", external_dag_id="upstream", external_task_id="bad",
                       failed_states=["failed"], soft_fail=True,
                       execution_date_fn=lambda dt: [dt], **quick)
    ExternalTaskSensor(task_id="whole_run", external_dag_id="upstream",
                       allowed_states=["failed"], execution_date_fn=two_days, **quick)
    ExternalTaskSensor(task_id="missing", external_dag_id="nope", check_existence=True,
                       execution_date_fn=two_days, **quick)
    ExternalTaskSensor(task_id="later", external_dag_id="upstream", external_task_id="a",
                       execution_date_fn=lambda dt: dt + timedelta(days=1),
                       mode="reschedule", **quick)
'''


def test_execution_date_fn_pokes_in_python(make_server, tmp_path):
    d = server_with(make_server, tmp_path, {"upstream.py": UPSTREAM, "watcher.py": WATCHER})
    d.wait_dag("upstream")
    d.wait_dag("watcher")
    for day in ("2024-03-01", "2024-03-02"):
        up = d.trigger("upstream", logical_date=day + "T00:00:00Z")
        assert d.wait_run("upstream", up["dag_run_id"])["state"] == "failed"  # bad fails
    rid = d.trigger("watcher", logical_date="2024-03-02T00:00:00Z")["dag_run_id"]

    def settled():
        tis = d.tis("watcher", rid)
        waiting = tis["later"]["state"] == "up_for_reschedule"
        done = all(t["state"] in ("success", "failed", "skipped")
                   for n, t in tis.items() if n != "later")
        return waiting and done
    wait_for(settled, 90, "the sensors but `later` ending, `later` waiting")
    # the run `later` waits for comes now
    up = d.trigger("upstream", logical_date="2024-03-03T00:00:00Z")
    d.wait_run("upstream", up["dag_run_id"])
    run = d.wait_run("watcher", rid, timeout=90)
    tis = d.tis("watcher", rid)
    states = {n: t["state"] for n, t in tis.items()}
    logs = {n: d.log("watcher", rid, n) for n in ("failed", "soft", "missing")}
    assert states == {"both_days": "success", "group": "success", "failed": "failed",
                      "soft": "skipped", "whole_run": "success", "missing": "failed",
                      "later": "success"}, (states, logs)
    assert "Some of the external tasks ['bad'] in DAG upstream failed." in logs["failed"]
    assert "Skipping due to soft_fail" in logs["soft"]
    assert "The external DAG nope does not exist." in logs["missing"]
    assert "Poking for ['a'] of DAG upstream at 2024-03-01 00:00:00+00:00, 2024-03-02" in \
        d.log("watcher", rid, "both_days")
    assert run["state"] == "failed"
    # the read key is in no log and no job's spec shown by the API
    for n in tis:
        assert "WEIR_TASK_READ_KEY=" not in d.log("watcher", rid, n)


def test_the_read_key_opens_its_own_task_only(make_server, tmp_path):
    d = server_with(make_server, tmp_path, {"upstream.py": UPSTREAM})
    d.wait_dag("upstream")
    body = {"job": 1, "role": "main", "index": 0, "attempt": 1, "dag_id": "upstream",
            "logical_dates": ["2024-03-01T00:00:00Z"]}
    # the API token is no read key; nor is a made-up one
    for auth in ("Bearer " + d.srv.token, "Bearer " + "0" * 64):
        code, _, data = d.srv.request("POST", "/api/v1/launch/dagRuns", body=body, token=False,
                                      headers={"Authorization": auth})
        assert code in (401, 403), (code, data)
    code, _, data = d.srv.request("POST", "/api/v1/launch/dagRuns", body={"job": 1}, token=False,
                                  headers={"Authorization": "Bearer " + "0" * 64})
    assert code in (400, 401), (code, data)
    assert json.loads(data)  # a problem, not a crash
