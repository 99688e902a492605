"""weir's airflow.providers.mysql.operators package (docs/airflow.md)."""
