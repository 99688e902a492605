"""A DAG file with a syntax error."""
from airflow import DAG

with DAG("syntax", schedule=None) as dag
    pass
