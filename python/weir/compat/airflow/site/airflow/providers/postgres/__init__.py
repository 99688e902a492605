"""weir's airflow.providers.postgres package (docs/airflow.md)."""
