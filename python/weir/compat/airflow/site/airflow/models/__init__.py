"""airflow.models: the DAG and the base operator (weir's Airflow-compatible layer)."""

from airflow.models.baseoperator import BaseOperator
from airflow.models.dag import DAG
from airflow.models.param import Param

__all__ = ["BaseOperator", "DAG", "Param"]
