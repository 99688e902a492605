"""A DAG file that never finishes its import."""
from airflow import DAG

while True:
    pass
