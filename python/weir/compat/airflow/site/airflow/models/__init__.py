"""airflow.models: the DAG and the base operator (weir's Airflow-compatible layer)."""

from airflow.models.baseoperator import BaseOperator
from airflow.models.connection import Connection
from airflow.models.dag import DAG
from airflow.models.param import Param
from airflow.models.variable import Variable

__all__ = ["BaseOperator", "Connection", "DAG", "Param", "Variable"]
