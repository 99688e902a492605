"""Corpus: Datasets as example_datasets (a producer's outlets, a consumer scheduled on the
Dataset)."""
import pendulum

from airflow.datasets import Dataset
from airflow.models.dag import DAG
from airflow.operators.bash import BashOperator

orders = Dataset("s3://corpus-bucket/orders.csv")
START = pendulum.datetime(2024, 1, 1, tz="UTC")

with DAG(dag_id="corpus_ds_producer", catchup=False, start_date=START, schedule=None,
         tags=["corpus"]):
    BashOperator(outlets=[orders], task_id="write_orders", bash_command="sleep 0.1")

with DAG(dag_id="corpus_ds_consumer", catchup=False, start_date=START, schedule=[orders],
         tags=["corpus"]):
    BashOperator(task_id="read_orders", bash_command="echo orders")
