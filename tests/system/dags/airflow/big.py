"""A DAG whose document passes the cap on the processor's answer (9 MB of description)."""
from datetime import datetime

from airflow import DAG
from airflow.operators.empty import EmptyOperator

with DAG("big", description="x" * (9 * 1024 * 1024), schedule=None,
         start_date=datetime(2024, 1, 1)):
    EmptyOperator(task_id="t")
