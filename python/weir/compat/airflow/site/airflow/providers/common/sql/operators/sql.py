"""airflow.providers.common.sql.operators.sql: SQLExecuteQueryOperator.  weir runs it as its
own `sql:` task on the connection (docs/dags.md: the C drivers, values bound), its rows
pushed as XCom as Airflow's fetch_all_handler gives them (docs/airflow.md says when).  A
subclass that overrides execute() runs in Python through the connection's hook."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Union

from airflow.models.baseoperator import BaseOperator
from airflow.providers.common.sql.hooks.sql import fetch_all_handler


class BaseSQLOperator(BaseOperator):
    """An operator on a database connection (`conn_id`)."""

    conn_id_field = "conn_id"

    def __init__(self, *, conn_id: Optional[str] = None, database: Optional[str] = None,
                 hook_params: Optional[Dict[str, Any]] = None, retry_on_failure: bool = True,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.conn_id = conn_id
        self.database = database
        self.hook_params = dict(hook_params or {})

    def get_db_hook(self) -> Any:
        """The connection's hook (its type's: postgres, mysql)."""
        from airflow.hooks.base import BaseHook

        params = dict(self.hook_params)
        if self.database:
            params["database"] = self.database
        return BaseHook.get_connection(str(self.conn_id)).get_hook(hook_params=params)


class SQLExecuteQueryOperator(BaseSQLOperator):
    """Runs `sql` (a statement, a script, a list of them, or a `.sql` file) on `conn_id`."""

    template_fields: Sequence[str] = ("sql", "parameters", "conn_id", "database",
                                      "hook_params")
    template_ext: Sequence[str] = (".sql", ".json")

    def __init__(self, *, sql: Union[str, List[str]], autocommit: bool = False,
                 parameters: Any = None, handler: Callable[[Any], Any] = fetch_all_handler,
                 output_processor: Optional[Callable[..., Any]] = None,
                 conn_id: Optional[str] = None, database: Optional[str] = None,
                 split_statements: Optional[bool] = None, return_last: bool = True,
                 show_return_value_in_logs: bool = False, **kwargs: Any) -> None:
        super().__init__(conn_id=conn_id, database=database, **kwargs)
        self.sql = sql
        self.autocommit = autocommit
        self.parameters = parameters
        self.handler = handler
        self.output_processor = output_processor
        self.split_statements = split_statements
        self.return_last = return_last
        self.show_return_value_in_logs = show_return_value_in_logs

    def execute(self, context: Dict[str, Any]) -> Any:
        """Runs the statements through the hook (a subclass's path; weir's sql task runs this
        class itself)."""
        hook = self.get_db_hook()
        out = hook.run(sql=self.sql, autocommit=self.autocommit, parameters=self.parameters,
                       handler=self.handler if self.do_xcom_push else None,
                       split_statements=bool(self.split_statements),
                       return_last=self.return_last)
        if not self.do_xcom_push:
            return None
        if self.output_processor is not None:
            return self.output_processor(out, hook.descriptions)
        return _plain(out)


def _plain(value: Any) -> Any:
    """Rows as JSON values: tuples as lists, dates and times as ISO text, decimals as
    numbers (weir keeps XComs as JSON)."""
    import datetime as _dt
    import decimal

    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (_dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value
