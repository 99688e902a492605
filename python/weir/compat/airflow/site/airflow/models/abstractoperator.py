"""airflow.models.abstractoperator: AbstractOperator, what Airflow's operators share beyond
their arguments: `dag_id`, `upstream_list` and `downstream_list`, `get_direct_relatives()`,
`task_type`, `operator_name`, `label`, `node_id`, `has_dag()`, `self.log`; and the BaseOperator
arguments weir accepts without using them (`email`, `executor_config`, `run_as_user`,
`on_failure_callback`, ...) read back as attributes, with Airflow's defaults when not given,
as callbacks and custom operators read them."""

from typing import Any, Callable, Dict, List, Set

from airflow.utils.log.logging_mixin import LoggingMixin

# BaseOperator arguments kept in `other` (accepted, not used by weir) and their defaults
ARGUMENT_DEFAULTS: Dict[str, Any] = {
    "email": None, "email_on_failure": True, "email_on_retry": True, "sla": None,
    "on_execute_callback": None, "on_success_callback": None, "on_failure_callback": None,
    "on_retry_callback": None, "on_skipped_callback": None, "executor_config": {},
    "resources": None, "run_as_user": None, "map_index_template": None,
    "executor": None, "owner_links": None, "task_display_name": None,
    "ignore_first_depends_on_past": True,
}


class AbstractOperator(LoggingMixin):
    """The attributes every task has (Airflow's AbstractOperator and DAGNode)."""

    ui_color: str = "#fff"
    ui_fgcolor: str = "#000"
    template_fields_renderers: Dict[str, str] = {}

    def __getattr__(self, name: str) -> Any:
        """A computed attribute (`dag_id`, `upstream_list`, ...; plain attributes, not
        properties, so that a DAG file's operator may set one of the same name), an accepted
        argument weir keeps in `other`, or its Airflow default."""
        other = self.__dict__.get("other")
        if other is not None:
            if name in _COMPUTED:
                return _COMPUTED[name](self)
            if name in other:
                return other[name]
            if name in ARGUMENT_DEFAULTS:
                value = ARGUMENT_DEFAULTS[name]
                return dict(value) if isinstance(value, dict) else value
        raise AttributeError("%r object has no attribute %r" % (type(self).__name__, name))

    # -- what Airflow's TaskInstance calls around execute(), and the helpers custom
    # operators of Airflow 1.10 and 2 call on themselves --------------------------------
    def pre_execute(self, context: Any) -> None:
        """Called before execute() (after the templates are rendered)."""

    def post_execute(self, context: Any, result: Any = None) -> None:
        """Called after execute() with its return value."""

    def on_kill(self) -> None:
        """Called when the task is killed; an operator that started something stops it."""

    def prepare_template(self) -> None:
        """Called after the template files are read, before they are rendered."""

    def xcom_push(self, context: Any, key: str, value: Any, execution_date: Any = None) -> None:
        """`ti.xcom_push(key, value)` of the running task."""
        context["ti"].xcom_push(key=key, value=value)

    def xcom_pull(self, context: Any, task_ids: Any = None, dag_id: Any = None,
                  key: str = "return_value", include_prior_dates: Any = None) -> Any:
        """`ti.xcom_pull(...)` of the running task."""
        return context["ti"].xcom_pull(task_ids=task_ids, dag_id=dag_id, key=key,
                                       include_prior_dates=bool(include_prior_dates))

    def get_template_env(self) -> Any:
        """The DAG's Jinja environment."""
        from _weir_airflow.templating import get_template_env

        return get_template_env(self.__dict__.get("dag"))

    def render_template(self, content: Any, context: Any, jinja_env: Any = None,
                        seen_oids: Any = None) -> Any:
        """`content` (a string, or strings in lists and dicts) rendered with `context`."""
        from _weir_airflow.templating import render_template

        env = jinja_env if jinja_env is not None else self.get_template_env()
        return render_template(content, context, env, tuple(getattr(self, "template_ext", ())))

    def has_dag(self) -> bool:
        """Whether the task belongs to a DAG."""
        return self.__dict__.get("dag") is not None

    def _tasks(self, ids: Any) -> List[Any]:
        dag = self.__dict__.get("dag")
        if dag is None:
            return []
        return [dag.task_dict[i] for i in sorted(ids) if i in dag.task_dict]

    def get_direct_relatives(self, upstream: bool = False) -> List[Any]:
        """The tasks directly upstream (or downstream)."""
        return self._tasks(self.get_direct_relative_ids(upstream))

    def get_direct_relative_ids(self, upstream: bool = False) -> Set[str]:
        """Their ids."""
        return set(self.__dict__.get("upstream_task_ids" if upstream else
                                     "downstream_task_ids", ()))


def _dag_id(op: Any) -> str:
    """The DAG's id (Airflow's `adhoc_OWNER` for a task of no DAG)."""
    dag = op.__dict__.get("dag")
    return str(dag.dag_id) if dag is not None else "adhoc_" + str(op.__dict__.get("owner"))


def _label(op: Any) -> str:
    """The task id without its group's prefix, as the graph labels it."""
    group, task_id = op.__dict__.get("task_group"), str(op.__dict__["task_id"])
    prefix = getattr(group, "group_id", None)
    if group is not None and getattr(group, "prefix_group_id", True) and prefix and \
            task_id.startswith(prefix + "."):
        return task_id[len(prefix) + 1:]
    return task_id


_COMPUTED: Dict[str, Callable[[Any], Any]] = {
    "dag_id": _dag_id,
    "label": _label,
    "node_id": lambda op: str(op.__dict__["task_id"]),
    "task_type": lambda op: type(op).__name__,
    "operator_name": lambda op: str(getattr(type(op), "custom_operator_name", None)
                                    or type(op).__name__),
    "upstream_list": lambda op: op.get_direct_relatives(upstream=True),
    "downstream_list": lambda op: op.get_direct_relatives(upstream=False),
}

__all__ = ["AbstractOperator"]
