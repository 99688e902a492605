"""Corpus: TriggerDagRunOperator as example_trigger_controller_dag (a conf passed to the
target, which reads it from dag_run.conf in a template and in Python)."""
import pendulum

from airflow.models.dag import DAG
from airflow.operators.trigger_dagrun import TriggerDagRunOperator

with DAG(dag_id="corpus_trigger_controller", start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
         catchup=False, schedule=None, tags=["corpus"]):
    TriggerDagRunOperator(task_id="kick", trigger_dag_id="corpus_trigger_target",
                          conf={"note": "from the controller"})
