"""weir's airflow.providers.common.sql package (docs/airflow.md)."""
