"""Corpus: BranchPythonOperator and @task.branch as example_branch_operator does (a branch
over several paths, a join with none_failed_min_one_success)."""
import pendulum

from airflow.decorators import task
from airflow.models.dag import DAG
from airflow.operators.empty import EmptyOperator
from airflow.operators.python import BranchPythonOperator
from airflow.utils.edgemodifier import Label
from airflow.utils.trigger_rule import TriggerRule

PATHS = ["path_a", "path_b", "path_c"]

with DAG(
    dag_id="corpus_branch_classic",
    start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
    catchup=False,
    schedule=None,
    tags=["corpus"],
    params={"pick": "path_b"},
):
    begin = EmptyOperator(task_id="begin")
    pick = BranchPythonOperator(task_id="pick",
                                python_callable=lambda params: params["pick"])
    begin >> pick
    joined = EmptyOperator(task_id="joined",
                           trigger_rule=TriggerRule.NONE_FAILED_MIN_ONE_SUCCESS)
    for p in PATHS:
        first = EmptyOperator(task_id=p)
        second = EmptyOperator(task_id="after_" + p)
        pick >> Label(p) >> first >> second >> joined

    @task.branch(task_id="pick_many")
    def pick_many():
        return ["many_1", "many_3"]

    many = pick_many()
    end = EmptyOperator(task_id="end", trigger_rule="none_failed_min_one_success")
    for i in (1, 2, 3):
        t = EmptyOperator(task_id="many_%d" % i)
        many >> t >> end
    joined >> many
