"""airflow.operators.weekday under the standard provider's path (Airflow 2.10, 3)."""

from airflow.operators.weekday import *  # noqa: F401,F403
