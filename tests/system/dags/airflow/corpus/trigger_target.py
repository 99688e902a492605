"""Corpus: the target of trigger_controller.py (example_trigger_target_dag's reads)."""
import pendulum

from airflow.decorators import task
from airflow.models.dag import DAG
from airflow.operators.bash import BashOperator


@task(task_id="read_conf")
def read_conf(dag_run=None):
    return dag_run.conf.get("note")


with DAG(dag_id="corpus_trigger_target", start_date=pendulum.datetime(2024, 1, 1, tz="UTC"),
         catchup=False, schedule=None, tags=["corpus"]):
    read_conf() >> BashOperator(
        task_id="echo_conf",
        bash_command='echo "note: $NOTE"',
        env={"NOTE": '{{ dag_run.conf.get("note") }}'},
    )
