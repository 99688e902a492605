"""airflow.hooks.dbapi_hook: the Airflow 1.10 path of DbApiHook."""

from airflow.providers.common.sql.hooks.sql import DbApiHook

__all__ = ["DbApiHook"]
