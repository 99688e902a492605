"""airflow.providers.standard (Airflow 2.10 and 3): the core operators and sensors at the
standard provider's paths, the same classes as airflow.operators and airflow.sensors."""
