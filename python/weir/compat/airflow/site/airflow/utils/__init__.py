"""airflow.utils: dates, trigger rules and helpers that DAG files import."""
