"""Task and DAG callbacks, and the context's prev_*_success, conn and test_mode, as Airflow
users write them (tests/system/test_airflow_mapping.py)."""
import json
import time
from datetime import datetime, timedelta

from airflow import DAG
from airflow.decorators import task
from airflow.exceptions import AirflowNotFoundException
from airflow.operators.python import PythonOperator

SIDE = "@SIDE@"


def record(kind):
    def callback(context):
        exc = context.get("exception")
        with open(SIDE + "/callbacks", "a") as f:
            f.write(json.dumps([kind, context["ti"].task_id, context["ti"].try_number,
                                str(exc) if exc is not None else None]) + "\n")
    return callback


def run_ended(context):
    with open(SIDE + "/dag_callbacks", "a") as f:
        f.write(json.dumps([context["dag"].dag_id, context["reason"], context["run_id"],
                            context["ds"]]) + "\n")


with DAG("callbacks", schedule=None, start_date=datetime(2024, 1, 1), catchup=False,
         on_failure_callback=run_ended,
         default_args={"on_failure_callback": record("failure"),
                       "retry_delay": timedelta(seconds=1)}):
    @task(on_execute_callback=record("execute"),
          on_success_callback=[record("success"), record("success_too")])
    def fine():
        return 1

    @task(retries=1, on_retry_callback=record("retry"))
    def breaks():
        raise ValueError("boom")

    @task(execution_timeout=timedelta(seconds=1))
    def slow():
        time.sleep(60)

    fine()
    breaks()
    slow()


def show(conn, **context):
    got = {k: str(context[k]) if context[k] is not None else None for k in (
        "prev_start_date_success", "prev_end_date_success", "prev_execution_date_success",
        "prev_data_interval_start_success", "prev_data_interval_end_success")}
    got["test_mode"] = context["test_mode"]
    got["host"] = conn.warehouse.host if "warehouse" in str(context["params"]) else None
    try:
        conn.other
        got["other"] = "found"
    except AirflowNotFoundException as exc:
        got["other"] = str(exc)
    with open(SIDE + "/context", "a") as f:
        f.write(json.dumps(got) + "\n")


with DAG("context_extra", schedule=None, start_date=datetime(2024, 1, 1), catchup=False,
         params={"use": "warehouse"}, on_success_callback=[run_ended]):
    PythonOperator(task_id="show", python_callable=show, connections=["warehouse"])


with DAG("context_test", schedule=None, start_date=datetime(2024, 1, 1), catchup=False,
         params={"use": "none"}):
    PythonOperator(task_id="show", python_callable=show)
