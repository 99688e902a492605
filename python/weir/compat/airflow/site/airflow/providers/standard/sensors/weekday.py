"""airflow.sensors.weekday under the standard provider's path (Airflow 2.10, 3)."""

from airflow.sensors.weekday import *  # noqa: F401,F403
