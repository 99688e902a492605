"""XComs from any task of the run, keys, mapped values, multiple_outputs, and Variables,
written as Airflow users write them (weir's system tests, test_airflow_semantics.py)."""
import json
import os
from datetime import datetime
from typing import Dict

from airflow import DAG
from airflow.decorators import task
from airflow.models import Variable
from airflow.operators.bash import BashOperator
from airflow.operators.python import PythonOperator

SIDE = "@SIDE@"


def out(name, value):
    with open(SIDE + "/" + name, "w") as f:
        f.write(json.dumps(value, sort_keys=True) + "\n")


def first(ti):
    ti.xcom_push(key="rows", value=7)
    return "a"


def second():
    return {"n": 2}


def when():
    return datetime(2024, 5, 6, 7, 8)  # no JSON value: pickled, as Airflow's XCom pickling


def collect(ti):
    assert ti.xcom_pull(task_ids="when") == datetime(2024, 5, 6, 7, 8)
    got = {
        # a list of task ids: their values, in the order asked
        "both": ti.xcom_pull(task_ids=["second", "first"]),
        "one": ti.xcom_pull(task_ids="first"),
        "key": ti.xcom_pull(task_ids="first", key="rows"),
        # a task that is not a direct upstream (first is two tasks up)
        "far": ti.xcom_pull(task_ids="first", key="rows") + 1,
        "missing": ti.xcom_pull(task_ids="nothing_here", default="dflt"),
        "none_pushed": ti.xcom_pull(task_ids=["first", "quiet"]),
        "parts_key": ti.xcom_pull(task_ids="parts", key="low"),
    }
    out("xcom_collect", got)


def read_vars(ds=None, **context):
    got = {
        "region": Variable.get("region"),
        "limits": Variable.get("limits", deserialize_json=True),
        "absent": Variable.get("not_set_anywhere", default_var="fallback"),
        "templ": context["templates_dict"]["r"],
        # what weir gave the task: the variables the file names that the server has
        "given": sorted(os.environ.get("WEIR_VARIABLES", "").split(",")),
    }
    try:
        Variable.get("also_not_set")
    except KeyError as exc:
        got["error"] = str(exc)
    out("xcom_vars", got)


with DAG("xcoms", schedule=None, start_date=datetime(2024, 1, 1)):
    a = PythonOperator(task_id="first", python_callable=first)
    b = PythonOperator(task_id="second", python_callable=second)
    quiet = BashOperator(task_id="quiet", bash_command="true", do_xcom_push=False)

    @task
    def parts() -> Dict[str, int]:
        return {"low": 1, "high": 9}

    @task
    def spread(low, high):
        out("xcom_spread", [low, high])

    p = parts()
    spread(p["low"], p["high"])

    c = PythonOperator(task_id="collect", python_callable=collect)
    a >> b >> c
    PythonOperator(task_id="when", python_callable=when) >> c
    [quiet, p] >> c

    PythonOperator(task_id="read_vars", python_callable=read_vars,
                   templates_dict={"r": "{{ var.value.region }}"})
