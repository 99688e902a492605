"""airflow.sensors.time_sensor under the standard provider's path (Airflow 2.10, 3)."""

from airflow.sensors.time_sensor import *  # noqa: F401,F403
