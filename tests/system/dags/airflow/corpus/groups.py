"""Corpus: TaskGroup and @task_group as example_task_group(_decorator) (nested groups,
prefixed ids, a group between tasks, a decorated group called twice)."""
import pendulum

from airflow.decorators import task, task_group
from airflow.models.dag import DAG
from airflow.operators.bash import BashOperator
from airflow.operators.empty import EmptyOperator
from airflow.utils.task_group import TaskGroup

with DAG(dag_id="corpus_groups", schedule=None, catchup=False,
         start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), tags=["corpus"]) as dag:
    head = EmptyOperator(task_id="head")
    with TaskGroup("prep", tooltip="preparation") as prep:
        a = EmptyOperator(task_id="a")
        b = BashOperator(task_id="b", bash_command="echo b")
        a >> b
    with TaskGroup("work") as work:
        lone = EmptyOperator(task_id="lone")
        with TaskGroup("inner") as inner:
            x = EmptyOperator(task_id="x")
            y = EmptyOperator(task_id="y")
            x >> y
        lone >> inner
    tail = EmptyOperator(task_id="tail")
    head >> prep >> work >> tail

    @task
    def first(v):
        return v + 1

    @task
    def second(v):
        return v * 3

    @task_group
    def calc(v):
        return second(first(v))

    @task
    def total(values):
        return sum(values)

    total([calc(1), calc(2)])
