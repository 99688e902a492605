"""weir's airflow.providers.http package (docs/airflow.md)."""
