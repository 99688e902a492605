"""weir's airflow.providers package (docs/airflow.md)."""
