"""airflow.sensors.date_time under the standard provider's path (Airflow 2.10, 3)."""

from airflow.sensors.date_time import *  # noqa: F401,F403
