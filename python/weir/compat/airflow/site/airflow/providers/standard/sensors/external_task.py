"""airflow.sensors.external_task under the standard provider's path (Airflow 2.10, 3)."""

from airflow.sensors.external_task import *  # noqa: F401,F403
