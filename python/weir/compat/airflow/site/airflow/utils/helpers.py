"""airflow.utils.helpers: `chain` where Airflow 1.10 kept it."""

from airflow.models.baseoperator import chain

__all__ = ["chain"]
