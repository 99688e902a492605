"""airflow.hooks.postgres_hook: the old path of PostgresHook."""

from airflow.providers.postgres.hooks.postgres import PostgresHook

__all__ = ["PostgresHook"]
