"""weir's airflow.providers.apache.spark package (docs/airflow.md)."""
