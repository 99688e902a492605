"""Corpus: a custom operator that raises AirflowSkipException as example_skip_dag (skips
flow down with all_success, one_success below a skip and a success)."""
import pendulum

from airflow.exceptions import AirflowSkipException
from airflow.models.baseoperator import BaseOperator
from airflow.models.dag import DAG
from airflow.operators.empty import EmptyOperator
from airflow.utils.context import Context
from airflow.utils.trigger_rule import TriggerRule


class AlwaysSkip(BaseOperator):
    """Skips itself."""

    ui_color = "#e8b7e4"

    def execute(self, context: Context):
        raise AirflowSkipException("nothing to do today")


def wire(dag, suffix, rule):
    ok = EmptyOperator(task_id="ok_" + suffix, dag=dag)
    skip = AlwaysSkip(task_id="skip_" + suffix, dag=dag)
    join = EmptyOperator(task_id="join_" + suffix, dag=dag, trigger_rule=rule)
    last = EmptyOperator(task_id="last_" + suffix, dag=dag)
    [ok, skip] >> join >> last


with DAG(dag_id="corpus_skips", schedule=None, catchup=False,
         start_date=pendulum.datetime(2024, 1, 1, tz="UTC"), tags=["corpus"]) as dag:
    wire(dag, "all", TriggerRule.ALL_SUCCESS)
    wire(dag, "one", TriggerRule.ONE_SUCCESS)
