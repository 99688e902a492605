"""airflow.operators.http_operator: the old path of SimpleHttpOperator."""

from airflow.providers.http.operators.http import SimpleHttpOperator

__all__ = ["SimpleHttpOperator"]
