"""airflow.sensors: tasks that wait (docs/airflow.md, "Sensors")."""
