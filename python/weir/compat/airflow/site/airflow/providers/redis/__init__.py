"""weir's airflow.providers.redis package (docs/airflow.md)."""
