"""airflow.providers.standard.operators: airflow.operators' classes."""
