"""Corpus: nested branches as example_nested_branch_dag (an inner branch's join skipped with
its outer branch, joins on none_failed_min_one_success)."""
import pendulum

from airflow.decorators import task
from airflow.models import DAG
from airflow.operators.empty import EmptyOperator
from airflow.utils.trigger_rule import TriggerRule

with DAG(dag_id="corpus_nested_branch", start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
         catchup=False, schedule=None, tags=["corpus"]):

    @task.branch()
    def outer():
        return "left"

    @task.branch()
    def inner():
        return "inner_one"

    out = outer()
    left = EmptyOperator(task_id="left")
    right = EmptyOperator(task_id="right")
    outer_join = EmptyOperator(task_id="outer_join",
                               trigger_rule=TriggerRule.NONE_FAILED_MIN_ONE_SUCCESS)
    inn = inner()
    one = EmptyOperator(task_id="inner_one")
    two = EmptyOperator(task_id="inner_two")
    inner_join = EmptyOperator(task_id="inner_join",
                               trigger_rule=TriggerRule.NONE_FAILED_MIN_ONE_SUCCESS)
    out >> left >> outer_join
    out >> right >> inn >> [one, two] >> inner_join >> outer_join
