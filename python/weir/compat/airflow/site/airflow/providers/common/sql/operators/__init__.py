"""weir's airflow.providers.common.sql.operators package (docs/airflow.md)."""
