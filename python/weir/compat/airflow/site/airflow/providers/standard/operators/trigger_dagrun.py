"""airflow.operators.trigger_dagrun under the standard provider's path (Airflow 2.10, 3)."""

from airflow.operators.trigger_dagrun import *  # noqa: F401,F403
