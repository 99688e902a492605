"""airflow.providers.postgres.operators.postgres: PostgresOperator, the SQL operator on
`postgres_conn_id` (default `postgres_default`)."""

from __future__ import annotations

from typing import Any, Optional

from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator


class PostgresOperator(SQLExecuteQueryOperator):
    """SQLExecuteQueryOperator on a PostgreSQL connection."""

    def __init__(self, *, postgres_conn_id: str = "postgres_default",
                 database: Optional[str] = None, runtime_parameters: Any = None,
                 **kwargs: Any) -> None:
        if database is not None:
            kwargs.setdefault("hook_params", {})["schema"] = database
        super().__init__(conn_id=postgres_conn_id, **kwargs)
        self.postgres_conn_id = postgres_conn_id
        self.runtime_parameters = runtime_parameters
