"""airflow.hooks.mysql_hook: the old path of MySqlHook."""

from airflow.providers.mysql.hooks.mysql import MySqlHook

__all__ = ["MySqlHook"]
