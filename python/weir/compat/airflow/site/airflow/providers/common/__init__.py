"""weir's airflow.providers.common package (docs/airflow.md)."""
