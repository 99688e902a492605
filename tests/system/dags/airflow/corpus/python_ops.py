"""Corpus: PythonOperator and @task as example_python_operator uses them (the context as
**kwargs, op_kwargs, templates_dict, tasks made in a loop, a chain of them)."""
import time
from pprint import pprint

import pendulum

from airflow.models.dag import DAG
from airflow.operators.python import PythonOperator
from airflow.decorators import task

with DAG(
    dag_id="corpus_python_ops",
    schedule=None,
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    tags=["corpus"],
):
    def show_context(ds=None, **kwargs):
        pprint(sorted(kwargs))
        print(ds)
        return "ds was " + ds[:4]

    show = PythonOperator(task_id="show_context", python_callable=show_context)

    def render(templates_dict=None, **kwargs):
        return templates_dict["when"]

    rendered = PythonOperator(task_id="rendered", python_callable=render,
                              templates_dict={"when": "{{ ds_nodash }}"})

    def nap(seconds):
        time.sleep(seconds)
        return seconds * 10

    for i in range(3):
        napper = PythonOperator(task_id="nap_%d" % i, python_callable=nap,
                                op_kwargs={"seconds": i / 20})
        show >> napper

    @task(task_id="decorated")
    def decorated(x, y=2):
        return x * y

    show >> rendered >> decorated(21)
