"""airflow.operators.bash_operator: the Airflow 1.10 path of BashOperator."""

from airflow.operators.bash import BashOperator

__all__ = ["BashOperator"]
