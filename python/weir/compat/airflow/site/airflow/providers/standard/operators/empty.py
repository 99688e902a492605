"""airflow.operators.empty under the standard provider's path (Airflow 2.10, 3)."""

from airflow.operators.empty import *  # noqa: F401,F403
