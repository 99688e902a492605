"""weir's airflow.hooks package (docs/airflow.md)."""
