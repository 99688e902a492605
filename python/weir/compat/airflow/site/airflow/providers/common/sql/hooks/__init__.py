"""weir's airflow.providers.common.sql.hooks package (docs/airflow.md)."""
