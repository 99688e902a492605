"""airflow.models.xcom_arg: XComArg, a task's XCom (its return value, or another key) as
an argument of a task downstream: `XComArg(task, key="command")`."""

from airflow.models.baseoperator import XComArg

__all__ = ["XComArg"]
