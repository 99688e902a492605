"""airflow.operators.subdag_operator: the Airflow 1.10 path of SubDagOperator (refused where
a DAG file makes one: airflow/operators/subdag.py)."""

from airflow.operators.subdag import SubDagOperator

__all__ = ["SubDagOperator"]
