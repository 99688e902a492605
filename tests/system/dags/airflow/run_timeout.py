"""dagrun_timeout as Airflow users write it (tests/system/test_dagrun_timeout.py): a run that
runs longer fails, its unfinished tasks skipped, and the DAG's on_failure_callback is called
with the reason "timed_out"; a run that ends in time is untouched."""
import json
import os
import time
from datetime import datetime, timedelta

from airflow import DAG
from airflow.operators.bash import BashOperator
from airflow.operators.python import PythonOperator

SIDE = "@SIDE@"


def run_ended(context):
    with open(SIDE + "/dag_callbacks", "a") as f:
        f.write(json.dumps([context["dag"].dag_id, context["reason"], context["run_id"]])
                + "\n")


def wait_for_file():
    # waits on a file the test never makes: only the timeout ends it
    with open(SIDE + "/pid", "w") as f:
        f.write(str(os.getpid()))
    while not os.path.exists(SIDE + "/never"):
        time.sleep(0.2)


with DAG("py_timeout", schedule=None, start_date=datetime(2024, 1, 1), catchup=False,
         dagrun_timeout=timedelta(seconds=@TIMEOUT@), on_failure_callback=run_ended):
    first = BashOperator(task_id="first", bash_command="true")
    waits = PythonOperator(task_id="waits", python_callable=wait_for_file)
    after = BashOperator(task_id="after", bash_command="true")
    first >> waits >> after

with DAG("py_in_time", schedule=None, start_date=datetime(2024, 1, 1), catchup=False,
         dagrun_timeout=timedelta(hours=1), on_failure_callback=run_ended):
    BashOperator(task_id="quick", bash_command="true")
