"""airflow.providers.common.sql.sensors.sql: SqlSensor.  Without a callable it is weir's
`sensor: sql` (poked by weir on its own connection, no Python process in reschedule mode);
with `success`, `failure`, `selector`, `fail_on_empty` or `hook_params` it pokes in Python
through the connection's hook, as Airflow 2's common-sql SqlSensor does (poke() below;
_weir_airflow.sensors decides)."""

from __future__ import annotations

from operator import itemgetter
from typing import Any, Callable, Dict, Mapping, Optional, Sequence

from airflow.exceptions import AirflowException
from airflow.sensors.base import BaseSensorOperator


class SqlSensor(BaseSensorOperator):
    """Waits until `selector` (the first cell by default) of the first row of `sql` on
    `conn_id` is true, or `success` of it is; `failure` of it true fails the task; no row is
    "not yet", or a failure with `fail_on_empty`."""

    template_fields: Sequence[str] = ("sql", "hook_params", "parameters")
    template_ext: Sequence[str] = (".hql", ".sql")

    def __init__(self, *, conn_id: str, sql: str, parameters: Optional[Any] = None,
                 success: Optional[Callable[[Any], bool]] = None,
                 failure: Optional[Callable[[Any], bool]] = None,
                 selector: Callable[[Any], Any] = itemgetter(0),
                 fail_on_empty: bool = False,
                 hook_params: Optional[Mapping[str, Any]] = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.conn_id = conn_id
        self.sql = sql
        self.parameters = parameters
        self.success = success
        self.failure = failure
        self.selector = selector
        self.fail_on_empty = fail_on_empty
        self.hook_params = hook_params

    def weir_in_python(self) -> bool:
        """Whether the poke needs Python (a callable, fail_on_empty, hook_params): weir's
        own `sensor: sql` takes the first cell's truth only."""
        return (self.success is not None or self.failure is not None or
                self.fail_on_empty or bool(self.hook_params) or
                repr(self.selector) != "operator.itemgetter(0)")

    def _get_hook(self) -> Any:
        from airflow.hooks.base import BaseHook
        from airflow.providers.common.sql.hooks.sql import DbApiHook

        hook = BaseHook.get_connection(self.conn_id).get_hook(
            hook_params=dict(self.hook_params or {}))
        if not isinstance(hook, DbApiHook):
            raise AirflowException(
                "The connection type is not supported by SqlSensor. The associated hook "
                "should be a subclass of `DbApiHook`. Got %s" % type(hook).__name__)
        return hook

    def poke(self, context: Dict[str, Any]) -> bool:
        """One query: Airflow's rules on its first row."""
        hook = self._get_hook()
        print("Poking: %s (with parameters %s)" % (self.sql, self.parameters), flush=True)
        records = hook.get_records(self.sql, self.parameters)
        if not records:
            if self.fail_on_empty:
                raise AirflowException("No rows returned, raising as per fail_on_empty flag")
            return False
        condition = self.selector(records[0])
        if self.failure is not None:
            if not callable(self.failure):
                raise AirflowException("self.failure is present, but not callable -> %r"
                                       % (self.failure,))
            if self.failure(condition):
                raise AirflowException("Failure criteria met. self.failure(%r) returned True"
                                       % (condition,))
        if self.success is not None:
            if not callable(self.success):
                raise AirflowException("self.success is present, but not callable -> %r"
                                       % (self.success,))
            return bool(self.success(condition))
        return bool(condition)


__all__ = ["SqlSensor"]
