"""airflow.operators.bash under the standard provider's path (Airflow 2.10, 3)."""

from airflow.operators.bash import *  # noqa: F401,F403
