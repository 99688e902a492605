"""airflow.hooks.base: BaseHook, and `get_connection`: a connection as weir gives it to the
task, `WEIR_CONN_<ID>` (the id upper-cased, `.` and `-` as `_`).  A task gets only the
connections it lists; weir lists those its operator's `*conn_id` arguments name and those of
its `connections` argument (docs/airflow.md)."""

from __future__ import annotations

import os
from typing import Any, Dict

from airflow.exceptions import AirflowNotFoundException
from airflow.models.connection import Connection
from airflow.utils.log.logging_mixin import LoggingMixin


def env_name(conn_id: str) -> str:
    """The variable that holds a connection: WEIR_CONN_<ID>."""
    return "WEIR_CONN_" + conn_id.upper().replace(".", "_").replace("-", "_")


class BaseHook(LoggingMixin):
    """A hook: the base of those that talk to a system through a connection."""

    _log_config_logger_name = "airflow.task.hooks"

    conn_name_attr = ""
    default_conn_name = ""
    conn_type = ""
    hook_name = ""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    @classmethod
    def get_connection(cls, conn_id: str) -> Connection:
        """The connection `conn_id` as the task has it (AirflowNotFoundException when the
        task did not list it or it is not defined)."""
        text = os.environ.get(env_name(str(conn_id)))
        if text is None:
            raise AirflowNotFoundException(
                "The conn_id `%s` isn't defined (weir gives a task only the connections it "
                "lists: an operator's *conn_id argument, or connections=[...] in the task's "
                "arguments or the DAG's default_args; docs/airflow.md)" % conn_id)
        if text.lstrip().startswith("{"):
            return Connection.from_json(text, conn_id=conn_id)
        return Connection(conn_id=conn_id, uri=text)

    @classmethod
    def get_hook(cls, conn_id: str, hook_params: Any = None) -> Any:
        """The hook of the connection's type."""
        return cls.get_connection(conn_id).get_hook(hook_params=hook_params)

    def get_conn(self) -> Any:
        """The connection object of the system (a subclass says)."""
        raise NotImplementedError()


def hook_for(conn: Connection, params: Dict[str, Any]) -> Any:
    """The hook class of a connection's type, made for it."""
    kind = conn.conn_type or ""
    if kind == "postgres":
        from airflow.providers.postgres.hooks.postgres import PostgresHook
        return PostgresHook(postgres_conn_id=conn.conn_id, **params)
    if kind == "mysql":
        from airflow.providers.mysql.hooks.mysql import MySqlHook
        return MySqlHook(mysql_conn_id=conn.conn_id, **params)
    if kind in ("http", "https"):
        from airflow.providers.http.hooks.http import HttpHook
        return HttpHook(http_conn_id=str(conn.conn_id), **params)
    if kind == "redis":
        from airflow.providers.redis.hooks.redis import RedisHook
        return RedisHook(redis_conn_id=str(conn.conn_id), **params)
    raise AirflowNotFoundException("connection %s: weir has no hook for type %r"
                                   % (conn.conn_id, kind))
