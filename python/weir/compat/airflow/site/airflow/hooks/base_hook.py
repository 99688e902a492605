"""airflow.hooks.base_hook: the old path of BaseHook."""

from airflow.hooks.base import BaseHook

__all__ = ["BaseHook"]
