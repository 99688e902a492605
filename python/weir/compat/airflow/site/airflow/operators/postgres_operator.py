"""airflow.operators.postgres_operator: the old path of PostgresOperator."""

from airflow.providers.postgres.operators.postgres import PostgresOperator

__all__ = ["PostgresOperator"]
