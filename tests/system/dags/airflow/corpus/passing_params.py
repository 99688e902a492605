"""Corpus: params and conf as example_passing_params_via_test_command (params in a template
and in Python, dag_run.conf, an env in a BashOperator, a task's own params)."""
import datetime
import os
import textwrap

import pendulum

from airflow.decorators import task
from airflow.models.dag import DAG
from airflow.operators.bash import BashOperator


@task(task_id="show_params")
def show_params(params=None, test_mode=None, dag_run=None):
    if not test_mode:
        print("not in test mode")
    return "%s/%s/%s" % (params["size"], params["colour"], (dag_run.conf or {}).get("extra"))


with DAG("corpus_passing_params", schedule="*/5 * * * *",
         start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), catchup=False,
         dagrun_timeout=datetime.timedelta(minutes=4), tags=["corpus"],
         params={"size": 3, "colour": "red"}) as dag:
    cmd = textwrap.dedent("""\
        echo "size {{ params.size }} colour {{ params.colour }} own {{ params.own }}"
        echo "env $SHOWN"
        """)
    shown = BashOperator(task_id="echo_params", bash_command=cmd,
                         params={"own": "mine"}, env={"SHOWN": "{{ params.colour }}"},
                         append_env=True)
    show_params() >> shown
