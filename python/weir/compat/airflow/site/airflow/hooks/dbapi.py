"""airflow.hooks.dbapi: the old path of DbApiHook."""

from airflow.providers.common.sql.hooks.sql import DbApiHook

__all__ = ["DbApiHook"]
