"""The Airflow-compatible module (to come): DAG files written in Python for Airflow, read by
weir.

It will hold `airflow.DAG`, the operators (BashOperator, PythonOperator, ...), the TaskFlow
API (`@dag`, `@task`), params, datasets and XComs as weir's DAGs have them, so that a DAG
file that imports `airflow` is turned into one of weir's DAGs (docs/dags.md) and scheduled
by the server.  Nothing is defined here yet.
"""
