"""airflow.hooks.http_hook: the old path of HttpHook."""

from airflow.providers.http.hooks.http import HttpHook

__all__ = ["HttpHook"]
