"""airflow.utils.helpers: `chain` and `cross_downstream` where Airflow 1.10 kept them."""

from airflow.models.baseoperator import chain, cross_downstream

__all__ = ["chain", "cross_downstream"]
