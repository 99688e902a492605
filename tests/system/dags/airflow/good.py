"""A good DAG file beside the broken ones."""
from datetime import datetime

from airflow import DAG
from airflow.operators.bash import BashOperator

with DAG("good", start_date=datetime(2024, 1, 1), schedule=None, catchup=False) as dag:
    BashOperator(task_id="hello", bash_command="echo hello @VERSION@")
