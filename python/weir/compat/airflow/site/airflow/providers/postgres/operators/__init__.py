"""weir's airflow.providers.postgres.operators package (docs/airflow.md)."""
