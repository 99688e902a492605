"""airflow.operators.dummy: DummyOperator, EmptyOperator's old name."""

from airflow.operators.empty import EmptyOperator

DummyOperator = EmptyOperator

__all__ = ["DummyOperator", "EmptyOperator"]
