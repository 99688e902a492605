"""Corpus: XComs the ways example_xcom and example_xcomargs pass them (a return value, a
pushed key, pulls of one and several tasks, Bash's last line, a pull in a template,
.output)."""
import pendulum

from airflow.decorators import task
from airflow.models.dag import DAG
from airflow.operators.bash import BashOperator
from airflow.operators.python import PythonOperator

NUMBERS = [3, 4, 5]


@task
def push_keyed(ti=None):
    ti.xcom_push(key="numbers", value=NUMBERS)


@task
def push_returned():
    return {"k": "v"}


@task
def pull_both(ti=None):
    keyed = ti.xcom_pull(key="numbers", task_ids="push_keyed")
    both = ti.xcom_pull(task_ids=["push_returned", "echo_last"])
    return {"keyed": keyed, "both": both}


def add_one(value):
    return value + 1


with DAG(
    "corpus_xcom_ways",
    schedule=None,
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    tags=["corpus"],
):
    echo_last = BashOperator(task_id="echo_last", bash_command='echo first; echo "last line"')
    pulled_in_bash = BashOperator(
        task_id="pulled_in_bash",
        bash_command='test "{{ ti.xcom_pull(task_ids="echo_last") }}" = "last line" '
                     '&& echo "{{ ti.xcom_pull(task_ids="push_keyed", key="numbers")[1] }}"',
    )
    keyed = push_keyed()
    [echo_last, keyed] >> pulled_in_bash
    [keyed, push_returned(), echo_last] >> pull_both()

    seven = PythonOperator(task_id="seven", python_callable=lambda: 7)
    plus = PythonOperator(task_id="plus", python_callable=add_one, op_args=[seven.output])

    @task
    def doubled(v):
        return v * 2

    doubled(plus.output)
