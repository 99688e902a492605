"""airflow.operators.email_operator: the old path of EmailOperator."""

from airflow.operators.email import EmailOperator

__all__ = ["EmailOperator"]
