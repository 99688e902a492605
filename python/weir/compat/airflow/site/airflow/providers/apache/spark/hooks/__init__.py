"""weir's airflow.providers.apache.spark.hooks package (docs/airflow.md)."""
