"""airflow.sensors.time_delta under the standard provider's path (Airflow 2.10, 3)."""

from airflow.sensors.time_delta import *  # noqa: F401,F403
