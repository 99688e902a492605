"""weir's airflow.providers.redis.hooks package (docs/airflow.md)."""
