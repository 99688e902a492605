"""weir's airflow.providers.mysql package (docs/airflow.md)."""
