"""airflow.plugins_manager: AirflowPlugin (weir's Airflow-compatible layer).  Airflow registers
a plugin's timetables, operators and macros so that its scheduler can serialize DAGs that use
them; weir's DAG processor and tasks import the classes where the DAG file imports them (the
DAG folder and the plugins folder are on sys.path), so a plugin class is accepted and needs
nothing more (docs/airflow.md, "Custom timetables")."""

from __future__ import annotations

from typing import Any, List, Optional


class AirflowPluginException(Exception):
    """A plugin that cannot be loaded."""


class AirflowPlugin:
    """What a plugin module subclasses; its lists are kept as given."""

    name: Optional[str] = None
    source: Any = None
    hooks: List[Any] = []
    executors: List[Any] = []
    macros: List[Any] = []
    admin_views: List[Any] = []
    flask_blueprints: List[Any] = []
    menu_links: List[Any] = []
    appbuilder_views: List[Any] = []
    appbuilder_menu_items: List[Any] = []
    global_operator_extra_links: List[Any] = []
    operator_extra_links: List[Any] = []
    timetables: List[Any] = []
    listeners: List[Any] = []
    priority_weight_strategies: List[Any] = []

    @classmethod
    def validate(cls) -> None:
        """Airflow's check: a plugin has a name."""
        if not cls.name:
            raise AirflowPluginException("Your plugin needs a name.")

    @classmethod
    def on_load(cls, *args: Any, **kwargs: Any) -> None:
        """Called by Airflow when the plugin is loaded; weir loads none."""
