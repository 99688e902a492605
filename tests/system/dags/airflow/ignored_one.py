"""Listed in .airflowignore: never imported (it would raise)."""
from airflow import DAG
raise RuntimeError("never imported by the server")
