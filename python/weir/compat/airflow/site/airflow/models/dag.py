"""airflow.models.dag: the DAG as a DAG file builds it (weir's Airflow-compatible layer).

A DAG holds its tasks and its settings; weir.compat.airflow.spec turns it into weir's DAG
document.  DAGs made in a `with` block or by `@dag` are registered when made, as Airflow 2.4+
auto-registers them; the processor also takes those left in the module's globals.
"""

from __future__ import annotations

import datetime as _dt
import sys
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Optional

if TYPE_CHECKING:
    from airflow.models.baseoperator import BaseOperator

# The DAGs made while a file is imported (the processor reads and empties it).
registered: List["DAG"] = []
# The `with DAG(...)` blocks open now, innermost last.
_context: List["DAG"] = []

_MISSING: Any = object()


def caller_line() -> int:
    """The line of the DAG file (the first frame outside this package) that called here."""
    here = __file__.rsplit("/airflow/", 1)[0] + "/airflow/"
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(here):
        frame = frame.f_back  # type: ignore[assignment]
    return frame.f_lineno if frame is not None else 0


def current_dag() -> Optional["DAG"]:
    """The DAG of the innermost open `with` block, or None."""
    return _context[-1] if _context else None


def _is_utc(tz: Any) -> bool:
    """Whether a tzinfo is UTC (pendulum's, the standard library's, zoneinfo's)."""
    name = getattr(tz, "name", None) or getattr(tz, "key", None) or getattr(tz, "zone", None)
    if name in ("UTC", "Etc/UTC", "+00:00"):
        return True
    return tz is _dt.timezone.utc


class DAG:
    """A workflow: tasks and when they run (Airflow's `airflow.DAG`)."""

    def __init__(
        self,
        dag_id: str,
        description: Optional[str] = None,
        schedule: Any = _MISSING,
        schedule_interval: Any = _MISSING,
        start_date: Optional[_dt.datetime] = None,
        end_date: Optional[_dt.datetime] = None,
        default_args: Optional[Dict[str, Any]] = None,
        catchup: bool = True,
        max_active_runs: int = 16,
        max_active_tasks: int = 16,
        concurrency: Optional[int] = None,
        tags: Optional[Iterable[str]] = None,
        params: Optional[Dict[str, Any]] = None,
        doc_md: Optional[str] = None,
        fileloc: Optional[str] = None,
        access_control: Optional[Dict[str, Any]] = None,
        **other: Any,
    ) -> None:
        if schedule is not _MISSING and schedule_interval is not _MISSING:
            raise ValueError("DAG %s: give schedule or schedule_interval, not both" % dag_id)
        self.dag_id = dag_id
        self.description = description
        timetable = other.pop("timetable", _MISSING)  # Airflow 2.2's argument
        self.schedule: Any = (
            schedule if schedule is not _MISSING
            else schedule_interval if schedule_interval is not _MISSING
            else timetable if timetable is not _MISSING
            else _dt.timedelta(days=1)
        )
        self.default_args: Dict[str, Any] = dict(default_args or {})
        self.start_date = start_date if start_date is not None else self.default_args.get(
            "start_date")
        self.end_date = end_date if end_date is not None else self.default_args.get("end_date")
        # Airflow's: the zone of start_date (an aware one), else UTC; None here stands for UTC
        # (a task's process then needs no pendulum); a schedule object may carry its own
        tz = getattr(self.start_date, "tzinfo", None)
        self.timezone: Any = None if tz is None or _is_utc(tz) else tz
        self.catchup = catchup
        self.max_active_runs = max_active_runs
        self.max_active_tasks = concurrency if concurrency is not None else max_active_tasks
        self.tags: List[str] = list(tags or [])
        self.params: Dict[str, Any] = dict(params or {})
        self.doc_md = doc_md
        # who may read and act on the DAG: weir's `access:` (docs/security.md)
        self.access_control: Optional[Dict[str, Any]] = (
            dict(access_control) if access_control is not None else None)
        # what templates read (_weir_airflow/templating.py); the rest is accepted, not used
        self.template_searchpath = other.pop("template_searchpath", None)
        self.template_undefined = other.pop("template_undefined", None)
        self.user_defined_macros = other.pop("user_defined_macros", None)
        self.user_defined_filters = other.pop("user_defined_filters", None)
        self.render_template_as_native_obj = bool(
            other.pop("render_template_as_native_obj", False))
        self.jinja_environment_kwargs = other.pop("jinja_environment_kwargs", None)
        # a run that runs longer fails, its unfinished tasks skipped: the spec's key
        # (_weir_airflow/spec.py); a DAG argument, not one of default_args
        self.dagrun_timeout = other.pop("dagrun_timeout", None)
        self.other = other  # accepted, not used by weir yet (docs/airflow.md)
        self.fileloc = fileloc
        self.lineno = caller_line()
        self.task_dict: Dict[str, "BaseOperator"] = {}
        self.task_groups: Dict[str, Any] = {}  # group id -> TaskGroup (utils/task_group.py)
        self.entered = False  # used as a context (with-block, @dag): auto-registered
        registered.append(self)

    # -- tasks --------------------------------------------------------------------------------
    def add_task(self, task: "BaseOperator") -> None:
        """Adds `task`; a task id used twice is an error, as Airflow's DuplicateTaskIdFound."""
        from airflow.exceptions import DuplicateTaskIdFound

        if task.task_id in self.task_dict and self.task_dict[task.task_id] is not task:
            raise DuplicateTaskIdFound(
                "Task id '%s' has already been added to the DAG" % task.task_id)
        self.task_dict[task.task_id] = task

    @property
    def tasks(self) -> List["BaseOperator"]:
        """The tasks, in the order they were added."""
        return list(self.task_dict.values())

    @property
    def task_ids(self) -> List[str]:
        """The task ids, in the order they were added."""
        return list(self.task_dict)

    def get_task(self, task_id: str) -> "BaseOperator":
        """The task of that id (KeyError-like TaskNotFound otherwise)."""
        from airflow.exceptions import TaskNotFound

        if task_id not in self.task_dict:
            raise TaskNotFound("Task %s not found in DAG %s" % (task_id, self.dag_id))
        return self.task_dict[task_id]

    def has_task(self, task_id: str) -> bool:
        """Whether the DAG has a task of that id."""
        return task_id in self.task_dict

    @property
    def task_count(self) -> int:
        """How many tasks the DAG has."""
        return len(self.task_dict)

    @property
    def roots(self) -> List["BaseOperator"]:
        """The tasks with no upstream task."""
        return [t for t in self.task_dict.values() if not t.upstream_task_ids]

    @property
    def leaves(self) -> List["BaseOperator"]:
        """The tasks with no downstream task."""
        return [t for t in self.task_dict.values() if not t.downstream_task_ids]

    @property
    def schedule_interval(self) -> Any:
        """The schedule as given (Airflow 2's older name for it)."""
        return self.schedule

    @property
    def folder(self) -> Optional[str]:
        """The folder of the DAG file."""
        import os

        return os.path.dirname(self.fileloc) if self.fileloc else None

    @property
    def owner(self) -> str:
        """The owners of its tasks, as Airflow joins them."""
        return ", ".join(sorted({str(t.owner) for t in self.task_dict.values()}))

    # -- with-block ---------------------------------------------------------------------------
    def __enter__(self) -> "DAG":
        _context.append(self)
        self.entered = True
        return self

    def __exit__(self, *exc: Any) -> None:
        _context.pop()

    def __repr__(self) -> str:
        return "<DAG: %s>" % self.dag_id


def dag(dag_id: str = "", **dag_kwargs: Any) -> Callable[[Callable[..., Any]], Callable[..., DAG]]:
    """`@dag(...)`: the decorated function, called, builds its tasks inside a new DAG named
    after it (or `dag_id`) and returns that DAG; its parameters are the DAG's params."""

    def wrap(fn: Callable[..., Any]) -> Callable[..., DAG]:
        def factory(*args: Any, **kwargs: Any) -> DAG:
            d = DAG(dag_id or fn.__name__, **dag_kwargs)
            if d.doc_md is None and fn.__doc__:
                d.doc_md = fn.__doc__
            # each parameter of the function is a param of the DAG, and a DagParam in the
            # body: a task given it gets the run's value (the conf over the default)
            import inspect

            from airflow.models.param import DagParam

            bound = inspect.signature(fn).bind(*args, **kwargs)
            bound.apply_defaults()
            with d:
                fn(**{name: DagParam(d, name, value)
                      for name, value in bound.arguments.items()})
            return d

        factory.__name__ = fn.__name__
        factory.__doc__ = fn.__doc__
        return factory

    if callable(dag_id):  # @dag without parentheses
        fn0: Callable[..., Any] = dag_id
        dag_id = ""
        return wrap(fn0)  # type: ignore[return-value]
    return wrap
