"""airflow.providers.standard.sensors: airflow.sensors' classes."""
