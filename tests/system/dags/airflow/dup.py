"""Defines dag_id "good" again: an import error, as in Airflow."""
from datetime import datetime

from airflow import DAG
from airflow.operators.empty import EmptyOperator

with DAG("good", start_date=datetime(2024, 1, 1), schedule=None) as dag:
    EmptyOperator(task_id="other")
