"""weir's airflow.providers.postgres.hooks package (docs/airflow.md)."""
