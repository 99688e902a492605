"""weir's airflow.providers.apache package (docs/airflow.md)."""
