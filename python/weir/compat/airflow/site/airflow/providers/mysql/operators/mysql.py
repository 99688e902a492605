"""airflow.providers.mysql.operators.mysql: MySqlOperator, the SQL operator on
`mysql_conn_id` (default `mysql_default`)."""

from __future__ import annotations

from typing import Any, Optional

from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator


class MySqlOperator(SQLExecuteQueryOperator):
    """SQLExecuteQueryOperator on a MySQL or MariaDB connection."""

    def __init__(self, *, mysql_conn_id: str = "mysql_default",
                 database: Optional[str] = None, **kwargs: Any) -> None:
        if database is not None:
            kwargs.setdefault("hook_params", {})["schema"] = database
        super().__init__(conn_id=mysql_conn_id, **kwargs)
        self.mysql_conn_id = mysql_conn_id
