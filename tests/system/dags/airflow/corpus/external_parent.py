"""Corpus: ExternalTaskMarker and ExternalTaskSensor as example_external_task_marker_dag (a
parent DAG marks a child DAG's task; the child waits on the parent's task)."""
import pendulum

from airflow.models.dag import DAG
from airflow.operators.empty import EmptyOperator
from airflow.sensors.external_task import ExternalTaskMarker, ExternalTaskSensor

START = pendulum.datetime(2024, 1, 1, tz="UTC")

with DAG(dag_id="corpus_ext_parent", start_date=START, catchup=False, schedule=None,
         tags=["corpus"]):
    ExternalTaskMarker(task_id="mark_child", external_dag_id="corpus_ext_child",
                       external_task_id="waited_on")

with DAG(dag_id="corpus_ext_child", start_date=START, catchup=False, schedule=None,
         tags=["corpus"]):
    waits = ExternalTaskSensor(task_id="waits", external_dag_id="corpus_ext_parent",
                               external_task_id="mark_child", allowed_states=["success"],
                               failed_states=["failed", "skipped"], mode="reschedule",
                               poke_interval=1, timeout=3, soft_fail=True)
    waits >> EmptyOperator(task_id="waited_on")
