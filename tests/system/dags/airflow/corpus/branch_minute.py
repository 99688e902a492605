"""Corpus: a branch on the logical date's minute with depends_on_past, as
example_branch_python_dop_operator_3 (the task not chosen is skipped, and a skipped task of
the run before lets the next one run), and tasks with priority weights and weight rules, as
example_custom_weight."""
import datetime

from airflow.models.dag import DAG
from airflow.operators.empty import EmptyOperator
from airflow.operators.python import BranchPythonOperator
from airflow.utils.weight_rule import WeightRule


def even_or_odd(**kwargs):
    minute = kwargs["logical_date"].minute
    print("minute", minute)
    return "even_minute" if minute % 2 == 0 else "odd_minute"


with DAG(dag_id="corpus_branch_minute", schedule="*/1 * * * *",
         start_date=datetime.datetime(2024, 1, 1), catchup=False, tags=["corpus"],
         default_args={"depends_on_past": True}):
    which = BranchPythonOperator(task_id="which", python_callable=even_or_odd)
    which >> [EmptyOperator(task_id="even_minute"), EmptyOperator(task_id="odd_minute")]

    last = EmptyOperator(task_id="weighted_last", priority_weight=5,
                         weight_rule=WeightRule.ABSOLUTE, depends_on_past=False)
    for rule in ("absolute", "downstream", "upstream"):
        EmptyOperator(task_id="weighted_" + rule, priority_weight=2, weight_rule=rule,
                      depends_on_past=False) >> last
