"""airflow.operators.python_operator: the Airflow 1.10 path of the Python operators, which
Airflow 2 still imports (its deprecated-classes table)."""

from airflow.operators.python import (BranchPythonOperator, PythonOperator,
                                      PythonVirtualenvOperator, ShortCircuitOperator)

__all__ = ["BranchPythonOperator", "PythonOperator", "PythonVirtualenvOperator",
           "ShortCircuitOperator"]
