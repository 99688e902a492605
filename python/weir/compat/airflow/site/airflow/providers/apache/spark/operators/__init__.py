"""weir's airflow.providers.apache.spark.operators package (docs/airflow.md)."""
