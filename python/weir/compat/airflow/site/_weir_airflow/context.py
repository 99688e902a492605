"""Airflow 2.x's task context: the dict that templates render with and that a
`PythonOperator`'s callable receives, built for one try of one task from facts the task
runner has (the run, its data interval, the DAG's schedule and time zone, the task instance).

The runner calls `build_context(...)` once per try; docs/airflow.md (Templates) lists the keys.
Dates are pendulum DateTimes in UTC, as Airflow gives them, once pendulum is imported (the
task runner imports it before it renders a template, or the DAG file did; otherwise they are
aware `datetime`s in UTC, and pendulum's 30-50 ms import is spared: intervals.py): Airflow does not convert template
dates to the DAG's time zone, so the `ds` of a run at 00:30 in Amsterdam is the UTC date, the
day before.

Values the runner supplies through small protocols:

- `ti` (`TaskInstanceLike`): `dag_id`, `task_id`, `run_id`, `try_number`, `map_index`,
  `xcom_pull(...)` and `xcom_push(key, value)` with Airflow's arguments;
- `variable_lookup(name) -> str | None`: a variable's stored text, None when there is none
  (`var.value.NAME` then raises KeyError("Variable NAME does not exist") as Airflow does);
- `connection_lookup(conn_id) -> object | None`: a connection, None when there is none
  (`conn.NAME` then raises `connection_error`, by default `ConnectionNotFoundError`; the
  `airflow` package passes its `AirflowNotFoundException`).
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, tzinfo
from typing import TYPE_CHECKING, Any, Callable, Dict, Mapping, Optional, Protocol, Union

from _weir_airflow import macros as _macros
from _weir_airflow.intervals import Schedule, interval_schedule, to_utc

if TYPE_CHECKING:
    from pendulum.datetime import DateTime

Context = dict[str, Any]
"""A task's context: a plain dict, so that `**context` passes it to a callable."""

RUN_TYPES = ("scheduled", "manual", "backfill", "dataset_triggered")
"""Airflow's `DagRunType` values, as `dag_run.run_type` holds them."""

_NOTSET: Any = object()


class TaskInstanceLike(Protocol):
    """What templates and callables use of `ti`; the task runner supplies the object."""

    dag_id: str
    task_id: str
    run_id: str
    try_number: int
    map_index: int

    def xcom_pull(self, *args: Any, **kwargs: Any) -> Any:
        """Airflow's `xcom_pull(task_ids=None, dag_id=None, key="return_value",
        include_prior_dates=False, map_indexes=None, default=None)`."""

    def xcom_push(self, *args: Any, **kwargs: Any) -> None:
        """Airflow's `xcom_push(key, value)`."""


class ConnectionNotFoundError(LookupError):
    """`conn.NAME` named a connection that does not exist (the default `connection_error`)."""


class DagRunInfo:
    """`dag_run` in the context: the run as Airflow's `DagRun` shows it to templates.  (A
    plain class, not a dataclass: `dataclasses` costs a task's process 5 ms to import.)"""

    def __init__(
        self,
        dag_id: str,
        run_id: str,
        run_type: str,
        logical_date: DateTime,
        data_interval_start: DateTime,
        data_interval_end: DateTime,
        conf: Optional[dict[str, Any]] = None,
        external_trigger: bool = False,
        start_date: Optional[DateTime] = None,
        state: str = "running",
    ) -> None:
        self.dag_id = dag_id
        self.run_id = run_id
        self.run_type = run_type
        self.logical_date = logical_date
        self.data_interval_start = data_interval_start
        self.data_interval_end = data_interval_end
        self.conf = {} if conf is None else conf
        self.external_trigger = external_trigger
        self.start_date = start_date
        self.state = state

    @property
    def execution_date(self) -> DateTime:
        """The old name of `logical_date`."""
        return self.logical_date

    def __repr__(self) -> str:
        return f"<DagRun {self.dag_id} @ {self.logical_date}: {self.run_id}, state:{self.state}>"


class PreviousSuccess:
    """The DAG's latest successful run before this one, for the `prev_*_success` keys."""

    def __init__(
        self,
        logical_date: Optional[datetime] = None,
        data_interval_start: Optional[datetime] = None,
        data_interval_end: Optional[datetime] = None,
        start_date: Optional[datetime] = None,
        end_date: Optional[datetime] = None,
    ) -> None:
        self.logical_date = logical_date
        self.data_interval_start = data_interval_start
        self.data_interval_end = data_interval_end
        self.start_date = start_date
        self.end_date = end_date


class VariableAccessor:
    """`var.value` and `var.json`: `var.value.NAME`, `var.value.get(NAME, default)`."""

    def __init__(
        self, lookup: Optional[Callable[[str], Optional[str]]], deserialize_json: bool
    ) -> None:
        self._lookup = lookup
        self._json = deserialize_json

    def __getattr__(self, name: str) -> Any:
        # copy and pickle ask for dunders, and for the fields before they are set
        if name.startswith("__") or name in ("_lookup", "_json"):
            raise AttributeError(name)
        return self.get(name)

    def get(self, name: str, default_var: Any = _NOTSET) -> Any:
        """The variable's value (decoded from JSON for `var.json`), `default_var` when it
        does not exist, else KeyError as Airflow's `Variable.get` raises."""
        raw = self._lookup(name) if self._lookup is not None else None
        if raw is None:
            if default_var is not _NOTSET:
                return default_var
            raise KeyError(f"Variable {name} does not exist")
        return json.loads(raw) if self._json else raw

    def __repr__(self) -> str:
        return f"<VariableAccessor json={self._json}>"


class ConnectionAccessor:
    """`conn`: `conn.NAME` is the connection, `conn.get(NAME, default)`."""

    def __init__(
        self, lookup: Optional[Callable[[str], Any]], error: Callable[[str], BaseException]
    ) -> None:
        self._lookup = lookup
        self._error = error

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_lookup", "_error"):
            raise AttributeError(name)
        found = self._lookup(name) if self._lookup is not None else None
        if found is None:
            raise self._error(f"The conn_id `{name}` isn't defined")
        return found

    def get(self, name: str, default_conn: Any = None) -> Any:
        """The connection, or `default_conn` when it does not exist."""
        found = self._lookup(name) if self._lookup is not None else None
        return default_conn if found is None else found

    def __repr__(self) -> str:
        return "<ConnectionAccessor>"


class ConfigView:
    """`conf` in the context: Airflow's configuration, read-only, from {section: {key: text}}."""

    def __init__(self, sections: Optional[Mapping[str, Mapping[str, str]]] = None) -> None:
        self._sections = {
            s.lower(): {k.lower(): v for k, v in kv.items()} for s, kv in (sections or {}).items()
        }

    def has_option(self, section: str, key: str) -> bool:
        """Whether the key is set."""
        return key.lower() in self._sections.get(section.lower(), {})

    def get(self, section: str, key: str, fallback: Any = _NOTSET) -> Any:
        """The key's text, `fallback` when unset, else KeyError naming section and key."""
        value = self._sections.get(section.lower(), {}).get(key.lower())
        if value is None:
            if fallback is not _NOTSET:
                return fallback
            raise KeyError(f"configuration key [{section}] {key} is not set")
        return value

    def getboolean(self, section: str, key: str, fallback: Any = _NOTSET) -> Any:
        """The key as a boolean (true/t/1/yes, false/f/0/no)."""
        value = self.get(section, key, fallback)
        if not isinstance(value, str):
            return value
        if value.strip().lower() in ("true", "t", "1", "yes", "y", "on"):
            return True
        if value.strip().lower() in ("false", "f", "0", "no", "n", "off", ""):
            return False
        raise ValueError(f"configuration key [{section}] {key}: {value!r} is not a boolean")

    def getint(self, section: str, key: str, fallback: Any = _NOTSET) -> Any:
        """The key as an integer."""
        value = self.get(section, key, fallback)
        return int(value) if isinstance(value, str) else value


def resolve_params(
    dag_params: Optional[Mapping[str, Any]],
    task_params: Optional[Mapping[str, Any]] = None,
    conf: Optional[Mapping[str, Any]] = None,
    conf_overrides_params: bool = True,
) -> dict[str, Any]:
    """`params` as a task sees it: the DAG's, then the task's, then (when
    `conf_overrides_params`, Airflow's `[core] dag_run_conf_overrides_params`, true by
    default) every key of `dag_run.conf`, declared or not.  A `Param` (an object with
    `value` and `resolve()`) is copied, given the overriding value and resolved, so its
    schema is checked; the DAG's own Param is left as it was."""
    merged: dict[str, Any] = {}
    layers: list[Mapping[str, Any]] = [dag_params or {}, task_params or {}]
    if conf_overrides_params and conf:
        layers.append(conf)
    for layer in layers:
        for key, value in layer.items():
            held = merged.get(key)
            if held is not None and _is_param(held) and not _is_param(value):
                import copy

                param = copy.copy(held)
                param.value = value
                merged[key] = param
            else:
                merged[key] = value
    return {key: (value.resolve() if _is_param(value) else value) for key, value in merged.items()}


def _is_param(value: Any) -> bool:
    return hasattr(value, "resolve") and hasattr(value, "value") and callable(value.resolve)


def _ds(dt: Optional[datetime]) -> Optional[str]:
    return None if dt is None else dt.strftime("%Y-%m-%d")


def _nodash(text: Optional[str]) -> Optional[str]:
    return None if text is None else text.replace("-", "")


def _utc_or_none(dt: Optional[datetime]) -> Optional[DateTime]:
    return None if dt is None else to_utc(dt)


def build_context(
    *,
    dag: Any,
    task: Any,
    ti: TaskInstanceLike,
    run_id: str,
    logical_date: datetime,
    data_interval_start: Optional[datetime] = None,
    data_interval_end: Optional[datetime] = None,
    run_type: str = "scheduled",
    conf: Optional[Mapping[str, Any]] = None,
    external_trigger: Optional[bool] = None,
    run_start_date: Optional[datetime] = None,
    schedule: Schedule = _NOTSET,
    timezone: Union[str, tzinfo, None] = _NOTSET,
    prev_logical_date: Optional[datetime] = _NOTSET,
    next_logical_date: Optional[datetime] = _NOTSET,
    prev_success: Optional[PreviousSuccess] = None,
    params: Optional[Mapping[str, Any]] = _NOTSET,
    task_params: Optional[Mapping[str, Any]] = _NOTSET,
    conf_overrides_params: bool = True,
    variable_lookup: Optional[Callable[[str], Optional[str]]] = None,
    connection_lookup: Optional[Callable[[str], Any]] = None,
    connection_error: Callable[[str], BaseException] = ConnectionNotFoundError,
    expanded_ti_count: Optional[int] = None,
    test_mode: bool = False,
    airflow_conf: Any = None,
    triggering_dataset_events: Optional[Mapping[str, Any]] = None,
) -> Context:
    """The context of one try of `task` in the run `run_id` of `dag`.

    dag, task: the DAG and operator objects (`dag.dag_id`, `task.task_id` are read; `dag.schedule`
        or `dag.schedule_interval`, `dag.timezone`, `dag.params`, `task.params`,
        `task.inlets`, `task.outlets`, `task.map_index_template` are read when present and
        the matching argument is not given).
    ti: the task instance (`TaskInstanceLike`), also `task_instance`.
    run_id, run_type ("scheduled", "manual", "backfill", "dataset_triggered"), conf (the
        run's `dag_run.conf`), external_trigger (default: run_type == "manual"),
        run_start_date (`dag_run.start_date`).
    logical_date, data_interval_start, data_interval_end: the run's; aware datetimes (naive
        ones are UTC).  When the interval is not given it is inferred as Airflow infers it
        for a run without one: [logical_date, next schedule time) on a data-interval
        schedule, else [logical_date, logical_date].
    schedule, timezone: the DAG's (default: read from `dag`); used for `prev_ds`/`next_ds`
        when `prev_logical_date`/`next_logical_date` are not given: on a cron or delta
        schedule prev is the schedule time before the logical date and next the start of the
        following interval; on other schedules (None, "@once", timetable objects, datasets)
        both are None; a manual run has both equal to its logical date.  Pass them to
        override (None: unknown).
    prev_success: the latest successful earlier run (None: there is none or it is unknown;
        its keys are then None).
    params, task_params, conf_overrides_params: see `resolve_params`.
    variable_lookup, connection_lookup, connection_error: see the module's docstring.
    expanded_ti_count: the number of mapped instances of a mapped task, else None.
    test_mode: True under `weir tasks test`; airflow_conf: the `conf` object (default: an
        empty `ConfigView`); triggering_dataset_events: {dataset uri: [events]}.

    Raises ValueError for an unknown run_type, time zone or a bad cron expression.
    """
    if run_type not in RUN_TYPES:
        raise ValueError(f"run_type {run_type!r}: expected one of {', '.join(RUN_TYPES)}")
    dag_id: str = dag.dag_id
    task_id: str = task.task_id
    if schedule is _NOTSET:
        schedule = getattr(dag, "schedule", getattr(dag, "schedule_interval", None))
    if timezone is _NOTSET:
        timezone = getattr(dag, "timezone", None)
    if external_trigger is None:
        external_trigger = run_type == "manual"
    timetable = interval_schedule(schedule, timezone)

    logical = to_utc(logical_date)
    if data_interval_start is None or data_interval_end is None:
        if timetable is not None and not external_trigger:
            start, end = logical, timetable.next_after(logical)
        else:
            start, end = logical, logical
        data_interval_start = data_interval_start or start
        data_interval_end = data_interval_end or end
    interval_start, interval_end = to_utc(data_interval_start), to_utc(data_interval_end)

    if prev_logical_date is _NOTSET:
        if external_trigger:
            prev_logical_date = logical
        else:
            prev_logical_date = timetable.prev_before(logical) if timetable is not None else None
    if next_logical_date is _NOTSET:
        if external_trigger:
            next_logical_date = logical
        else:
            next_logical_date = (
                timetable.align_to_prev(interval_end) if timetable is not None else None
            )
    prev_logical = _utc_or_none(prev_logical_date)
    next_logical = _utc_or_none(next_logical_date)

    if params is _NOTSET:
        params = getattr(dag, "params", None)
    if task_params is _NOTSET:
        task_params = getattr(task, "params", None)
    run_conf = dict(conf or {})
    dag_run = DagRunInfo(
        dag_id=dag_id,
        run_id=run_id,
        run_type=run_type,
        logical_date=logical,
        data_interval_start=interval_start,
        data_interval_end=interval_end,
        conf=run_conf,
        external_trigger=external_trigger,
        start_date=_utc_or_none(run_start_date),
    )
    ds = logical.strftime("%Y-%m-%d")
    ds_nodash = ds.replace("-", "")
    ts = logical.isoformat()
    success = prev_success or PreviousSuccess()
    return {
        "conf": airflow_conf if airflow_conf is not None else ConfigView(),
        "conn": ConnectionAccessor(connection_lookup, connection_error),
        "dag": dag,
        "dag_run": dag_run,
        "data_interval_end": interval_end,
        "data_interval_start": interval_start,
        "ds": ds,
        "ds_nodash": ds_nodash,
        "execution_date": logical,
        "expanded_ti_count": expanded_ti_count,
        "inlets": list(getattr(task, "inlets", None) or []),
        "logical_date": logical,
        "macros": _macros,
        "map_index_template": getattr(task, "map_index_template", None),
        "next_ds": _ds(next_logical),
        "next_ds_nodash": _nodash(_ds(next_logical)),
        "next_execution_date": next_logical,
        "outlets": list(getattr(task, "outlets", None) or []),
        "params": resolve_params(params, task_params, run_conf, conf_overrides_params),
        "prev_data_interval_end_success": _utc_or_none(success.data_interval_end),
        "prev_data_interval_start_success": _utc_or_none(success.data_interval_start),
        "prev_ds": _ds(prev_logical),
        "prev_ds_nodash": _nodash(_ds(prev_logical)),
        "prev_end_date_success": _utc_or_none(success.end_date),
        "prev_execution_date": prev_logical,
        "prev_execution_date_success": _utc_or_none(success.logical_date),
        "prev_start_date_success": _utc_or_none(success.start_date),
        "run_id": run_id,
        "task": task,
        "task_instance": ti,
        "task_instance_key_str": f"{dag_id}__{task_id}__{ds_nodash}",
        "test_mode": test_mode,
        "ti": ti,
        "tomorrow_ds": (logical + timedelta(days=1)).strftime("%Y-%m-%d"),
        "tomorrow_ds_nodash": (logical + timedelta(days=1)).strftime("%Y%m%d"),
        "triggering_dataset_events": dict(triggering_dataset_events or {}),
        "ts": ts,
        "ts_nodash": logical.strftime("%Y%m%dT%H%M%S"),
        "ts_nodash_with_tz": ts.replace("-", "").replace(":", ""),
        "var": {
            "json": VariableAccessor(variable_lookup, True),
            "value": VariableAccessor(variable_lookup, False),
        },
        "yesterday_ds": (logical - timedelta(days=1)).strftime("%Y-%m-%d"),
        "yesterday_ds_nodash": (logical - timedelta(days=1)).strftime("%Y%m%d"),
    }
