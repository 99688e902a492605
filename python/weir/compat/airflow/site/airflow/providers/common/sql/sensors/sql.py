"""airflow.providers.common.sql.sensors.sql: SqlSensor, weir's `sensor: sql` (poked by
weir on its own connection, no Python process in reschedule mode)."""

from __future__ import annotations

from typing import Any, Callable, Dict, Mapping, Optional, Sequence

from airflow.exceptions import AirflowException
from airflow.sensors.base import BaseSensorOperator


class SqlSensor(BaseSensorOperator):
    """Waits until the first cell of the first row of `sql` on `conn_id` is true."""

    template_fields: Sequence[str] = ("sql", "hook_params", "parameters")
    template_ext: Sequence[str] = (".hql", ".sql")

    def __init__(self, *, conn_id: str, sql: str, parameters: Optional[Any] = None,
                 success: Optional[Callable[[Any], bool]] = None,
                 failure: Optional[Callable[[Any], bool]] = None,
                 fail_on_empty: bool = False,
                 hook_params: Optional[Mapping[str, Any]] = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.conn_id = conn_id
        self.sql = sql
        self.parameters = parameters
        self.success = success
        self.failure = failure
        self.fail_on_empty = fail_on_empty
        self.hook_params = hook_params

    def poke(self, context: Dict[str, Any]) -> bool:
        """weir pokes this sensor itself (_weir_airflow.sensors); never in Python."""
        raise AirflowException("SqlSensor is poked by weir, not in Python")


__all__ = ["SqlSensor"]
