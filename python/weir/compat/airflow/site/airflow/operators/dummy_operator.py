"""airflow.operators.dummy_operator: the Airflow 1.10 path of DummyOperator."""

from airflow.operators.empty import EmptyOperator

DummyOperator = EmptyOperator

__all__ = ["DummyOperator", "EmptyOperator"]
