"""airflow.operators.latest_only_operator: the old path of LatestOnlyOperator."""

from airflow.operators.latest_only import LatestOnlyOperator

__all__ = ["LatestOnlyOperator"]
