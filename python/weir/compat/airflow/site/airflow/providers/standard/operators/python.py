"""airflow.operators.python under the standard provider's path (Airflow 2.10, 3)."""

from airflow.operators.python import *  # noqa: F401,F403
