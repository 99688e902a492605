"""A DAG file that raises while it is imported."""
from datetime import datetime

from airflow import DAG
from airflow.operators.bash import BashOperator

with DAG("raises", start_date=datetime(2024, 1, 1), schedule=None) as dag:
    BashOperator(task_id="t", bash_command="true")
    raise RuntimeError("the configuration service is down")
