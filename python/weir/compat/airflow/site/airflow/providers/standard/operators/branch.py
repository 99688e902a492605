"""airflow.operators.branch under the standard provider's path (Airflow 2.10, 3)."""

from airflow.operators.branch import *  # noqa: F401,F403
