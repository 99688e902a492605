"""airflow.operators.branch_operator: the old path of BaseBranchOperator."""

from airflow.operators.branch import BaseBranchOperator

__all__ = ["BaseBranchOperator"]
