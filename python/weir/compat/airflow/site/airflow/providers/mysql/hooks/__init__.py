"""weir's airflow.providers.mysql.hooks package (docs/airflow.md)."""
