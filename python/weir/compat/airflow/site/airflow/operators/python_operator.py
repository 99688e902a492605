"""airflow.operators.python_operator: the Airflow 1.10 path of PythonOperator."""

from airflow.operators.python import PythonOperator

__all__ = ["PythonOperator"]
