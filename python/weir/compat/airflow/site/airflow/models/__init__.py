"""airflow.models: the DAG and the base operator (weir's Airflow-compatible layer); DagRun
and TaskInstance, the names DAG files annotate with, are imported when first asked for."""

from typing import Any

from airflow.models.baseoperator import BaseOperator
from airflow.models.connection import Connection
from airflow.models.dag import DAG
from airflow.models.param import Param
from airflow.models.variable import Variable

__all__ = ["BaseOperator", "Connection", "DAG", "DagRun", "Param", "TaskInstance", "Variable"]

_LAZY = {"DagRun": "airflow.models.dagrun", "TaskInstance": "airflow.models.taskinstance"}


def __getattr__(name: str) -> Any:
    """`from airflow.models import DagRun` (or TaskInstance), as Airflow 2 lets a file write."""
    if name in _LAZY:
        import importlib
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError("module 'airflow.models' has no attribute %r" % name)
