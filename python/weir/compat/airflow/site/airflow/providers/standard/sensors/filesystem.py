"""airflow.sensors.filesystem under the standard provider's path (Airflow 2.10, 3)."""

from airflow.sensors.filesystem import *  # noqa: F401,F403
