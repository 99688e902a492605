"""weir's airflow.providers.http.hooks package (docs/airflow.md)."""
