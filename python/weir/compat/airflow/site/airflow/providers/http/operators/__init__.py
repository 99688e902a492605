"""weir's airflow.providers.http.operators package (docs/airflow.md)."""
