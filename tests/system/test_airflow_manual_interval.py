"""A manual run's data interval (docs/airflow.md, docs/dags.md `manual_interval:`): a Python
DAG's is the one Airflow's timetable infers (a cron's period that ends at or before the run's
date, a timedelta's step that ends at it), a YAML DAG's weir's own (the period that starts at
the date), for the same schedule and the same trigger."""

from test_airflow_dags import airflow_dags

PY = '''\
from datetime import datetime, timedelta

from airflow import DAG
from airflow.operators.empty import EmptyOperator

with DAG("py_daily", schedule="@daily", start_date=datetime(2099, 1, 1)):
    EmptyOperator(task_id="t")

with DAG("py_six_hours", schedule=timedelta(hours=6), start_date=datetime(2099, 1, 1)):
    EmptyOperator(task_id="t")
'''

YAML = '''\
dag_id: yaml_daily
schedule: "@daily"
start_date: 2099-01-01
tasks:
  - task_id: t
    command: "true"
'''


def trigger(d, dag_id, at):
    status, run = d.srv.api("POST", "/api/v1/dags/%s/dagRuns" % dag_id,
                            {"dag_run_id": "by_hand", "logical_date": at})
    assert status == 200, run
    return run["data_interval_start"], run["data_interval_end"]


def test_python_dags_infer_airflows_manual_interval(make_server, tmp_path):
    d = airflow_dags(make_server, tmp_path, [])
    (d.dir / "manual.py").write_text(PY)
    (d.dir / "manual.yaml").write_text(YAML)
    for dag_id in ("py_daily", "py_six_hours", "yaml_daily"):
        d.wait_dag(dag_id)
    at = "2024-05-06T10:30:00Z"
    assert trigger(d, "py_daily", at) == ("2024-05-05T00:00:00+00:00",
                                          "2024-05-06T00:00:00+00:00")
    assert trigger(d, "py_six_hours", at) == ("2024-05-06T04:30:00+00:00",
                                              "2024-05-06T10:30:00+00:00")
    assert trigger(d, "yaml_daily", at) == ("2024-05-06T10:30:00+00:00",
                                            "2024-05-07T00:00:00+00:00")
