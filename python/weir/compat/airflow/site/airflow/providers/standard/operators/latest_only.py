"""airflow.operators.latest_only under the standard provider's path (Airflow 2.10, 3)."""

from airflow.operators.latest_only import *  # noqa: F401,F403
