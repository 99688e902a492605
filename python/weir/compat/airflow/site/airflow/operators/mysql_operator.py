"""airflow.operators.mysql_operator: the old path of MySqlOperator."""

from airflow.providers.mysql.operators.mysql import MySqlOperator

__all__ = ["MySqlOperator"]
