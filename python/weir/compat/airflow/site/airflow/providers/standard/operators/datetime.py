"""airflow.operators.datetime under the standard provider's path (Airflow 2.10, 3)."""

from airflow.operators.datetime import *  # noqa: F401,F403
