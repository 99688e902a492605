"""A DAG object (weir's `airflow` package) turned into weir's DAG document: the JSON form a
YAML DAG file parses to, read by the server's `dag_spec_from_json()` (docs/dags.md).

A BashOperator without a template runs as a plain command (bash, no Python); an
EmptyOperator runs `true`; every other task (PythonOperator, `@task`, a templated
BashOperator, a task whose return value a downstream task takes) runs
`python3 -m _weir_airflow.run_task FILE DAG_ID TASK_ID`, which imports the file again (or
is forked from the file's warm interpreter, zygote.py, where the launcher offers one).
Return values travel in the task's `$WEIR_OUTPUT` (`return_value`, and `weir_return`: the
value in a one-item list, its type kept); a Python task reads the run's outputs from
`$WEIR_RUN_OUTPUTS` (its `run_outputs: true`) and the variables its file names
(`variables:`).
"""

from __future__ import annotations

import json
import datetime as _dt
import os
import re
import shlex
import sys
from typing import Any, Dict, List, Optional, Set

# The folder put first on sys.path so that `import airflow` is weir's (this package's too).
SITE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The plugins folder the processor put on sys.path (processor.prepare_path), if any: a task
# started cold gets it on its PYTHONPATH too.
PLUGINS: List[str] = []

_TEMPLATE_MARKS = ("{{", "{%", "{#")
_PRESETS = ("@once", "@continuous", "@hourly", "@daily", "@midnight", "@weekly", "@monthly",
            "@yearly", "@annually")


# run_task's exit statuses: AirflowSkipException (a skip, as a BashOperator's 99) and
# AirflowFailException (a failure without retry); each runner task's skip_on_exit_code and
# no_retry_on_exit_code (docs/dags.md)
SKIP_EXIT = 99
NO_RETRY_EXIT = 98


def _is_delta(t: Any) -> bool:
    from airflow.timetables.interval import DeltaDataIntervalTimetable

    return isinstance(t, (_dt.timedelta, DeltaDataIntervalTimetable))


class SpecError(Exception):
    """A DAG that weir cannot run as written; `line` is where the DAG file made it (0:
    unknown)."""

    def __init__(self, message: str, line: int = 0) -> None:
        super().__init__(message)
        self.line = line


def seconds(value: Any, what: str, line: int) -> int:
    """A duration (timedelta or a number of seconds) as whole seconds."""
    if isinstance(value, _dt.timedelta):
        return int(value.total_seconds())
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    raise SpecError("%s: expected a timedelta or seconds, got %r" % (what, value), line)


def utc_text(value: Any, what: str, line: int) -> str:
    """A date or datetime (naive: UTC, as Airflow's default time zone) as RFC 3339 UTC."""
    if isinstance(value, _dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(_dt.timezone.utc)
        return value.strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(value, _dt.date):
        return value.strftime("%Y-%m-%dT00:00:00Z")
    raise SpecError("%s: expected a datetime, got %r" % (what, value), line)


def _delta_cron(s: _dt.timedelta, dag: Any) -> Any:
    """A timedelta as the cron expression that fires at the same times from start_date when
    one does (minutes dividing an hour, hours dividing a day, one day, one week), else as a
    step (_step)."""
    # a fixed duration, whatever the zone (as Airflow's DeltaDataIntervalTimetable):
    # the grid is UTC's, from start_date in UTC
    start = dag.start_date if isinstance(dag.start_date, _dt.datetime) else None
    if start is not None and start.tzinfo is not None:
        start = start.astimezone(_dt.timezone.utc)
    m0, h0 = (start.minute, start.hour) if start else (0, 0)
    total = int(s.total_seconds())
    if total > 0 and total % 60 == 0:
        mins = total // 60
        if mins < 60 and 60 % mins == 0:
            return "%d/%d * * * *" % (m0 % mins, mins) if mins > 1 else "* * * * *"
        if mins % 60 == 0 and mins < 1440 and 1440 % mins == 0:
            hours = mins // 60
            return "%d %d/%d * * *" % (m0, h0 % hours, hours)
        if mins == 1440:
            return "%d %d * * *" % (m0, h0)
        if mins == 7 * 1440 and start is not None:
            return "%d %d * * %d" % (m0, h0, (start.weekday() + 1) % 7)
    return _step(s, dag)


def _step(s: Any, dag: Any) -> Dict[str, Any]:
    """A timedelta or a dateutil relativedelta as weir's `schedule: {delta: {...}}`: a step
    from start_date, months first (Airflow's DeltaDataIntervalTimetable).  A relativedelta's
    absolute fields (year=, day=, weekday=, ...), a part of a second and a step that is not
    forward are import errors naming them."""
    if isinstance(s, _dt.timedelta):
        months, secs, micro = 0, s.days * 86400 + s.seconds, s.microseconds
    else:
        fixed: List[str] = [name for name in ("year", "month", "day", "weekday", "hour",
                                              "minute", "second", "microsecond")
                            if getattr(s, name, None) is not None]
        if fixed or s.leapdays:
            raise SpecError("schedule %r: weir steps a relativedelta by its relative fields "
                            "(years, months, weeks, days, hours, minutes, seconds); %s "
                            "is not supported" % (s, ", ".join(fixed) or "leapdays"),
                            dag.lineno)
        months = s.years * 12 + s.months
        secs = ((s.days * 24 + s.hours) * 60 + s.minutes) * 60 + s.seconds
        micro = s.microseconds
    if micro or months < 0 or secs < 0 or (months == 0 and secs == 0):
        raise SpecError("schedule %r: expected a step forward of whole seconds" % (s,),
                        dag.lineno)
    step: Dict[str, Any] = {}
    if months:
        step["months"] = months
    if secs:
        step["seconds"] = secs
    return {"delta": step}


def _is_relativedelta(s: Any) -> bool:
    return type(s).__name__ == "relativedelta" and hasattr(s, "months")


def _events(t: Any, dag: Any) -> Dict[str, Any]:
    """An EventsTimetable as `schedule: {events: [...], restrict_to_events: B}`: each time
    as written (naive: the DAG's time zone, as weir reads start_date)."""
    out = []
    for when in t.event_dates:
        if not isinstance(when, _dt.datetime):
            raise SpecError("EventsTimetable: event %r: expected a datetime" % (when,),
                            dag.lineno)
        out.append(when.isoformat())
    return {"events": out, "restrict_to_events": bool(t.restrict_to_events)}


def dataset_schedule(value: Any, line: int) -> Any:
    """A schedule on datasets as weir writes it (docs/dags.md, "Datasets"), or None when
    `value` is none: a list of URIs when every dataset must be updated (a list of Datasets, a
    Dataset, `a & b`); else a condition {"any"|"all": [URI or condition, ...]} (`a | b`,
    `(a | b) & c`, Airflow 2.9's DatasetAny and DatasetAll nested; a DatasetAlias is
    {"alias": NAME})."""
    from airflow.datasets import BaseDataset, Dataset, DatasetAlias, DatasetAll, DatasetAny

    items = list(value) if isinstance(value, (list, tuple, set, frozenset)) else [value]
    if not items or not all(isinstance(i, BaseDataset) for i in items):
        return None

    def cond(node: Any) -> Any:
        if isinstance(node, Dataset):
            return node.uri
        if isinstance(node, DatasetAlias):  # the datasets it had events added for
            return {"alias": node.name}
        if isinstance(node, (DatasetAll, DatasetAny)):
            if not node.objects:
                raise SpecError("schedule %r: an empty %s names no dataset"
                                % (value, type(node).__name__), line)
            return {"any" if isinstance(node, DatasetAny) else "all":
                    [cond(o) for o in node.objects]}
        raise SpecError("schedule %r: %r is not a Dataset, & or |; weir runs a DAG on "
                        "datasets, DatasetAll and DatasetAny" % (value, node), line)

    tree = cond(items[0]) if len(items) == 1 else {"all": [cond(i) for i in items]}

    def flat(node: Any) -> Optional[List[str]]:
        if isinstance(node, str):
            return [node]
        if "all" not in node:
            return None
        out: List[str] = []
        for sub in node["all"]:
            got = flat(sub)
            if got is None:
                return None
            out.extend(u for u in got if u not in out)
        return out

    uris = flat(tree)
    return uris if uris is not None else tree


def _timetable(t: Any, dag: Any) -> Any:
    """A timetable object as weir's schedule, or None when `t` is none weir knows."""
    from airflow.timetables.interval import CronDataIntervalTimetable, DeltaDataIntervalTimetable
    from airflow.timetables.trigger import CronTriggerTimetable

    if isinstance(t, CronDataIntervalTimetable):
        return t._expression
    from airflow.timetables.events import EventsTimetable
    from airflow.timetables.simple import (ContinuousTimetable, NullTimetable,
                                           OnceTimetable)

    if isinstance(t, DeltaDataIntervalTimetable):
        if _is_relativedelta(t._delta):
            return _step(t._delta, dag)
        if not isinstance(t._delta, _dt.timedelta):
            raise SpecError("DeltaDataIntervalTimetable(%r): expected a timedelta or a "
                            "relativedelta" % (t._delta,), dag.lineno)
        return _delta_cron(t._delta, dag)
    if isinstance(t, EventsTimetable):
        return _events(t, dag)
    if isinstance(t, (NullTimetable, OnceTimetable, ContinuousTimetable)):
        return {NullTimetable: "none", OnceTimetable: "@once",
                ContinuousTimetable: "@continuous"}[type(t)]
    if isinstance(t, CronTriggerTimetable):
        out: Dict[str, Any] = {"trigger": t._expression}
        interval = t._interval
        if not isinstance(interval, _dt.timedelta):
            raise SpecError("CronTriggerTimetable interval %r: expected a timedelta"
                            % (interval,), dag.lineno)
        if interval:
            out["interval"] = int(interval.total_seconds())
        return out
    return None


def schedule_of(dag: Any) -> Any:
    """The DAG's schedule as weir writes it (docs/dags.md): "none", a preset (@continuous
    too) or five cron fields; a list of dataset URIs; {datasets: CONDITION} for `|`; a mapping
    {cron|trigger: EXPR, interval: SECONDS, datasets: ...} for a CronTriggerTimetable and a
    DatasetOrTimeSchedule; {delta: {months, seconds}} for a relativedelta; {events: [...],
    restrict_to_events: B} for an EventsTimetable; {runs: [...], ...} for a custom Timetable
    (timetable_runs.py).  A timedelta becomes the cron expression
    that fires at the same times from start_date when one does, else a delta."""
    from airflow.timetables.base import Timetable

    s = dag.schedule
    out = _schedule(s, dag)
    if out == "@continuous" and dag.max_active_runs != 1:
        # Airflow's DAG() raises it: ContinuousTimetable's active_runs_limit
        raise SpecError("Invalid max_active_runs: ContinuousTimetable requires "
                        "max_active_runs <= 1 (schedule=\"@continuous\" runs one run at a "
                        "time: add max_active_runs=1)", dag.lineno)
    if out is None and isinstance(s, Timetable):
        # a custom timetable: its next runs, listed now (timetable_runs.py)
        from _weir_airflow.timetable_runs import custom_runs

        return custom_runs(s, dag)
    if out is None:
        raise SpecError("schedule %r: not supported yet; expected a cron expression, a "
                        "preset, a timedelta or relativedelta, None, datasets (a list, &, |), "
                        "CronTriggerTimetable, CronDataIntervalTimetable, "
                        "DeltaDataIntervalTimetable, EventsTimetable or DatasetOrTimeSchedule"
                        % (s,), dag.lineno)
    return out


def _schedule(s: Any, dag: Any) -> Any:
    """schedule_of's work: None when `s` is no schedule weir knows."""
    from airflow.timetables.datasets import DatasetOrTimeSchedule

    if s is None:
        return "none"
    if _is_relativedelta(s):
        return _step(s, dag)
    if isinstance(s, str):
        if s.startswith("@") and s not in _PRESETS:
            raise SpecError("schedule %r: weir has no such preset yet; expected one of %s, "
                            "a cron expression, a timedelta or None"
                            % (s, ", ".join(_PRESETS)), dag.lineno)
        return s
    if isinstance(s, _dt.timedelta):
        return _delta_cron(s, dag)
    ds = dataset_schedule(s, dag.lineno)
    if isinstance(ds, list):
        return ds
    if ds is not None:
        return {"datasets": ds}
    if isinstance(s, DatasetOrTimeSchedule):
        t = _timetable(s.timetable, dag)
        if t is None or _is_delta(s.timetable) or not (
                isinstance(t, str) and not t.startswith(("@once", "@continuous", "none"))
                or isinstance(t, dict) and ("trigger" in t or "cron" in t)):
            raise SpecError("DatasetOrTimeSchedule timetable %r: expected a "
                            "CronTriggerTimetable or a CronDataIntervalTimetable"
                            % (s.timetable,), dag.lineno)
        out = dict(t) if isinstance(t, dict) else {"cron": t}
        out["datasets"] = dataset_schedule(s.datasets, dag.lineno)
        return out
    return _timetable(s, dag)


def manual_interval(dag: Any) -> Any:
    """How a manual run's data interval is inferred, as Airflow's timetable infers it
    (docs/dags.md, `manual_interval:`): "ending" for a cron (CronDataIntervalTimetable: the
    period that ends at the latest fire time at or before the run's date) and a
    relativedelta (the step that ends at it); {"before": SECONDS} for a timedelta (that
    long before it, whatever cron weir schedules it on); None for any other schedule, whose
    manual runs weir and Airflow give the same interval."""
    from airflow.timetables.interval import CronDataIntervalTimetable, DeltaDataIntervalTimetable

    s = dag.schedule
    if isinstance(s, DeltaDataIntervalTimetable):
        s = s._delta
    if isinstance(s, _dt.timedelta):
        total = int(s.total_seconds())
        return {"before": total} if total > 0 else None
    if _is_relativedelta(s) or isinstance(s, CronDataIntervalTimetable):
        return "ending"
    if isinstance(s, str) and s not in ("@once", "@continuous"):
        return "ending"
    return None


def schedule_zone(dag: Any) -> Optional[str]:
    """The zone of the schedule's wall clock (None: UTC): a cron timetable's own, else the
    DAG's (start_date's tzinfo, as Airflow takes it); none for a fixed duration."""
    from airflow.timetables.datasets import DatasetOrTimeSchedule

    s = dag.schedule
    if isinstance(s, DatasetOrTimeSchedule):
        s = s.timetable
    if _is_delta(s):
        return None
    if hasattr(s, "_timezone") and hasattr(s, "_expression"):
        return zone_name(s._timezone, "timetable", dag.lineno)
    return zone_name(getattr(dag, "timezone", None), "start_date", dag.lineno)


def zone_name(tz: Any, what: str, line: int) -> Optional[str]:
    """A tzinfo as a tz database name for the document's `timezone` (None: UTC): pendulum's
    and zoneinfo's zones by name; a fixed offset of whole hours as Etc/GMT-N (the tz
    database's inverted sign); a name alone is taken as it is."""
    if tz is None:
        return None
    if isinstance(tz, str):
        return None if tz in ("UTC", "Etc/UTC") else tz
    name = getattr(tz, "key", None) or getattr(tz, "zone", None)
    if not isinstance(name, str):
        name = getattr(tz, "name", None)
    if isinstance(name, str) and "/" in name or name in ("UTC", "Etc/UTC", "GMT"):
        return None if name in ("UTC", "Etc/UTC", "GMT") else name
    offset = tz.utcoffset(None) if hasattr(tz, "utcoffset") else None
    if isinstance(offset, _dt.timedelta):
        secs = int(offset.total_seconds())
        if secs == 0:
            return None
        if secs % 3600 == 0 and abs(secs) <= 14 * 3600:
            return "Etc/GMT%+d" % (-secs // 3600)
    raise SpecError("%s: time zone %r: expected a tz database zone (pendulum.timezone("
                    "\"Europe/Amsterdam\"), zoneinfo.ZoneInfo) or a whole-hour offset"
                    % (what, tz), line)


def has_template(value: Any) -> bool:
    """Whether a string (or a dict's values, a list's items) holds a Jinja mark."""
    if isinstance(value, str):
        return any(m in value for m in _TEMPLATE_MARKS)
    if isinstance(value, dict):
        return any(has_template(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(has_template(v) for v in value)
    return False


def no_template(text: str) -> str:
    """`text` with weir's template marks written as literals."""
    return text.replace("{{", "{{ '{{' }}")


def runner_command(fileloc: str, dag_id: str, task_id: str, python: str) -> str:
    """The command of a task that runs in Python: run_task with the file imported again, or
    forked from the file's warm interpreter where the launcher gives $WEIR_AIRFLOW_WARM (the
    client, which runs the same command cold where it cannot: src/launch/airflow_warm.h)."""
    words = [python, "-m", "_weir_airflow.run_task", fileloc, dag_id, task_id]
    cmd = ('exec ${WEIR_AIRFLOW_WARM:+"$WEIR_AIRFLOW_WARM" airflow-warm} '
           + " ".join(shlex.quote(w) for w in words))
    site = SITE + (":" + PLUGINS[0] if PLUGINS else "")
    path = "PYTHONPATH=%s${PYTHONPATH:+:$PYTHONPATH} " % shlex.quote(site)
    return no_template(path + cmd)


def plain_bash(task: Any, pushed: Set[str]) -> bool:
    """Whether a BashOperator runs as a plain command: no template anywhere, no template
    file, and no downstream task takes its return value."""
    cmd = task.bash_command
    return (isinstance(cmd, str) and not has_template([cmd, task.env or {}, task.cwd or ""])
            and not cmd.endswith(tuple(task.template_ext)) and task.task_id not in pushed)


def outlet_uris(outlets: List[Any]) -> List[str]:
    """The URIs of the Datasets among a task's outlets (weir's `outlets`, each success an
    update of each); another lineage object schedules nothing, in Airflow too."""
    from airflow.datasets import Dataset

    out: List[str] = []
    for item in outlets:
        if isinstance(item, Dataset) and item.uri not in out:
            out.append(item.uri)
    return out


def inlet_items(task: Any) -> List[Any]:
    """A task's `inlets` as weir writes them (each a dataset URI or {"alias": NAME}, once):
    the datasets and aliases whose latest events its context's `inlet_events` holds.
    Anything else in it is a SpecError naming it."""
    from airflow.datasets import Dataset, DatasetAlias

    out: List[Any] = []
    for item in task.inlets:
        if isinstance(item, Dataset):
            one: Any = item.uri
        elif isinstance(item, DatasetAlias):
            one = {"alias": item.name}
        else:
            raise SpecError("task %s: inlets: %r is not a Dataset or a DatasetAlias"
                            % (task.task_id, item), task.lineno)
        if one not in out:
            out.append(one)
    return out


def operator_path(task: Any) -> str:
    """The task's class as a dotted path of Python names (Airflow's class_ref): its module and
    name, any other character of them (a DAG file's module name) made '_'."""
    cls = getattr(task, "weir_operator_class", None) or type(task)  # a mapped task's
    parts = (str(cls.__module__ or "") + "." + cls.__name__).split(".")
    clean = [re.sub(r"[^A-Za-z0-9_]", "_", p) or "_" for p in parts]
    return ".".join(("_" + p) if p[0].isdigit() else p for p in clean)


def priority_weights(dag: Any) -> Optional[Dict[str, int]]:
    """Each task's weight as Airflow adds it up by its `weight_rule` (its own plus the tasks
    below it, above it, or alone), weir's `priority`; None when every task keeps Airflow's
    defaults (weight 1, downstream), which weir leaves to its own order."""
    if all(t.priority_weight == 1 and t.weight_rule == "downstream" for t in dag.tasks):
        return None

    def reach(task: Any, attr: str) -> Set[str]:
        seen: Set[str] = set()
        todo = list(getattr(task, attr))
        while todo:
            i = todo.pop()
            if i not in seen:
                seen.add(i)
                todo.extend(getattr(dag.task_dict[i], attr))
        return seen

    out: Dict[str, int] = {}
    for task in dag.tasks:
        others: Set[str] = set()
        if task.weight_rule == "downstream":
            others = reach(task, "downstream_task_ids")
        elif task.weight_rule == "upstream":
            others = reach(task, "upstream_task_ids")
        out[task.task_id] = task.priority_weight + sum(dag.task_dict[i].priority_weight
                                                       for i in others)
    return out


def task_spec(dag: Any, task: Any, fileloc: str, pushed: Set[str], python: str,
              variables: Optional[List[str]] = None,
              priorities: Optional[Dict[str, int]] = None) -> Dict[str, Any]:
    """One task of weir's document; `variables`: the keys a Python task may read."""
    from _weir_airflow import callbacks, email_alerts, operators
    from airflow.operators.bash import BashOperator
    from airflow.operators.empty import EmptyOperator

    from _weir_airflow.sensors import apply_sensor

    line = task.lineno
    t: Dict[str, Any] = {"task_id": task.task_id, "operator": operator_path(task)}
    if task.doc_md:
        t["doc_md"] = str(task.doc_md)
    ups = sorted(task.upstream_task_ids)
    if ups:
        t["depends_on"] = ups
    if isinstance(task, EmptyOperator) and task.task_id not in pushed:
        t["command"] = "true"
    elif isinstance(task, BashOperator) and plain_bash(task, pushed):
        t["command"] = "exec bash -c " + shlex.quote(task.bash_command)
        if task.env:
            t["env"] = {str(k): str(v) for k, v in task.env.items()}
        if task.cwd:
            t["cwd"] = task.cwd
        codes = [c for c in task.skip_on_exit_code if isinstance(c, int) and 0 < c < 256]
        if codes:
            t["skip_on_exit_code"] = codes
    else:
        t["command"] = runner_command(fileloc, dag.dag_id, task.task_id, python)
        # run_task's exits: AirflowSkipException, AirflowFailException (run_task.py)
        t["skip_on_exit_code"] = SKIP_EXIT
        t["no_retry_on_exit_code"] = NO_RETRY_EXIT
        if task.weir_flow is not None:
            t[task.weir_flow] = True
        # ti.xcom_pull and the XComArgs read the run's outputs ($WEIR_RUN_OUTPUTS)
        t["run_outputs"] = True
        if variables:
            t["variables"] = variables
    operators.apply(task, t)  # weir's own task kinds, a Python task's connections
    apply_sensor(task, t)  # Airflow's sensors (_weir_airflow.sensors)
    if task.trigger_rule != "all_success":
        t["trigger_rule"] = task.trigger_rule
    outlets = outlet_uris(task.outlets)
    if outlets:
        t["outlets"] = outlets
    inlets = inlet_items(task)
    if inlets:
        t["inlets"] = inlets
    if task.is_setup:
        t["setup"] = True
    if task.is_teardown:
        t["teardown"] = True
        if task.on_failure_fail_dagrun:
            t["on_failure_fail_dagrun"] = True
    t["retries"] = task.retries
    t["retry_delay"] = seconds(task.retry_delay, "task %s: retry_delay" % task.task_id, line)
    if task.retry_exponential_backoff:
        t["retry_exponential_backoff"] = True
    if task.max_retry_delay is not None:
        t["max_retry_delay"] = seconds(task.max_retry_delay,
                                       "task %s: max_retry_delay" % task.task_id, line)
    if task.execution_timeout is not None:
        t["execution_timeout"] = seconds(task.execution_timeout,
                                         "task %s: execution_timeout" % task.task_id, line)
    if priorities is not None:
        t["priority"] = priorities[task.task_id]
    if task.pool is not None:
        t["pool"] = task.pool
    if task.pool_slots != 1:
        t["pool_slots"] = task.pool_slots
    if task.queue is not None:
        t["queue"] = task.queue
    for key in ("max_active_tis_per_dag", "max_active_tis_per_dagrun"):
        cap = getattr(task, key)
        if cap is not None:
            if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
                raise SpecError("task %s: %s %r: expected a whole number >= 1 (0 would never "
                                "run it) or None" % (task.task_id, key, cap), line)
            t[key] = cap
    if task.depends_on_past:
        t["depends_on_past"] = True
    if task.wait_for_downstream:
        t["wait_for_downstream"] = True
    callbacks.apply(task, t)  # sla
    email_alerts.apply(task, t)  # email, email_on_failure, email_on_retry
    return t


_VAR_TEMPLATE = re.compile(r"\bvar\.(?:value|json)\.(?:get\(\s*['\"]([A-Za-z0-9_.-]+)['\"]"
                           r"|([A-Za-z_][A-Za-z0-9_]*))")


def variables_named(path: str) -> List[str]:
    """The variable keys a DAG file names literally: `Variable.get("KEY")` (and `key=`,
    `setdefault`, and `set`, `update`, `delete`: the keys its tasks may write), `{{ var.value.KEY }}`, `var.json.get('KEY')`: the variables its tasks
    get (a name computed at run time is not found: docs/airflow.md)."""
    import ast

    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        tree = ast.parse(text, path)
    except (OSError, SyntaxError, ValueError):
        return []
    keys: Set[str] = set()
    names = {"Variable"} | {a.asname for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                            for a in node.names if a.name == "Variable" and a.asname}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and
                node.func.attr in ("get", "setdefault", "set", "update", "delete")):
            continue
        owner = node.func.value
        name = owner.attr if isinstance(owner, ast.Attribute) else \
            owner.id if isinstance(owner, ast.Name) else ""
        if name not in names:
            continue
        args = list(node.args[:1]) + [k.value for k in node.keywords if k.arg == "key"]
        keys.update(a.value for a in args
                    if isinstance(a, ast.Constant) and isinstance(a.value, str))
    for m in _VAR_TEMPLATE.finditer(text):
        key = m.group(1) or m.group(2)
        if key != "get":
            keys.add(key)
    return sorted(k for k in keys if re.match(r"^[A-Za-z0-9_.-]{1,250}$", k))


def pushed_tasks(dag: Any) -> Set[str]:
    """The tasks whose return value a task downstream reads (an XComArg argument, or a
    Python task right below a Python task or a templated Bash task, whatever its trigger
    rule: its `ti.xcom_pull`)."""
    from _weir_airflow import mapping, operators
    from airflow.models.baseoperator import field_xcom_args, xcom_args_in
    from airflow.operators.python import PythonOperator

    from airflow.operators.bash import BashOperator

    out: Set[str] = set(mapping.pushed_by(dag))
    for task in dag.tasks:
        if isinstance(task, PythonOperator):
            for arg in xcom_args_in([task.op_args, task.op_kwargs]):
                out.add(arg.operator.task_id)
        for arg in field_xcom_args(task):
            out.add(arg.operator.task_id)
        templated = isinstance(task, BashOperator) and not plain_bash(task, set())
        if isinstance(task, PythonOperator) or templated:
            pulls = reads_xcoms(task)
            out.update(u for u in task.upstream_task_ids
                       if isinstance(dag.task_dict.get(u), PythonOperator) or
                       operators.pushes_xcom(dag.task_dict.get(u)) or
                       (pulls and isinstance(dag.task_dict.get(u), BashOperator) and
                        dag.task_dict[u].do_xcom_push))
    return out


def _code_names(code: Any) -> Set[str]:
    """The names a code object and the functions defined in it use."""
    names = set(code.co_names)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names |= _code_names(const)
    return names


def reads_xcoms(task: Any) -> bool:
    """Whether a task calls xcom_pull: a template that names it, or a Python callable whose
    code does (a plain BashOperator above such a task pushes its last line, as Airflow's;
    above any other it runs without Python)."""
    from airflow.operators.bash import BashOperator

    if isinstance(task, BashOperator):
        return "xcom_pull" in json.dumps([task.bash_command, task.env or {}], default=str)
    fn = getattr(task, "python_callable", None)
    fn = getattr(fn, "__wrapped__", fn)
    if fn is None or isinstance(fn, type(print)):
        return False  # a built-in pulls nothing
    code = getattr(fn, "__code__", None) or getattr(getattr(fn, "__call__", None), "__code__",
                                                    None)
    return code is None or "xcom_pull" in _code_names(code)


def dag_to_spec(dag: Any, fileloc: str, python: Optional[str] = None) -> Dict[str, Any]:
    """The DAG as weir's document (the JSON form of a YAML DAG file).  Raises SpecError for
    what weir cannot run as written."""
    from _weir_airflow import dag_callback, mapping, templating

    python = python or sys.executable
    if not dag.task_dict:
        raise SpecError("DAG %s: no tasks (weir's DAGs have one at least)" % dag.dag_id,
                        dag.lineno)
    from airflow.models.baseoperator import field_xcom_args

    for task in dag.tasks:
        # a template field's XComArg: its task runs first (Airflow's)
        for arg in field_xcom_args(task):
            task.set_upstream(arg.operator)
    for task in dag.tasks:
        for u in task.upstream_task_ids | task.downstream_task_ids:
            if u not in dag.task_dict:
                raise SpecError("task %s: depends on %s, a task of another DAG"
                                % (task.task_id, u), task.lineno)
    pushed = pushed_tasks(dag)
    doc: Dict[str, Any] = {"dag_id": dag.dag_id}
    if dag.description:
        doc["description"] = dag.description
    doc_md = templating.dag_doc_md(dag, fileloc)
    if doc_md:
        doc["doc_md"] = doc_md
    doc["schedule"] = schedule_of(dag)
    zone = schedule_zone(dag)
    if zone:
        doc["timezone"] = zone
    if dag.start_date is not None:
        doc["start_date"] = utc_text(dag.start_date, "start_date", dag.lineno)
    if dag.end_date is not None:
        doc["end_date"] = utc_text(dag.end_date, "end_date", dag.lineno)
    doc["catchup"] = bool(dag.catchup)
    manual = manual_interval(dag)
    if manual is not None:
        doc["manual_interval"] = manual
    doc["max_active_runs"] = dag.max_active_runs
    doc["max_active_tasks"] = dag.max_active_tasks
    if getattr(dag, "dagrun_timeout", None) is not None:
        doc["dagrun_timeout"] = dagrun_timeout(dag)
    if dag.tags:
        doc["tags"] = [str(t) for t in dag.tags]
    if dag.params:
        doc["params"] = {str(k): plain_param(k, v, dag.lineno) for k, v in dag.params.items()}
    if getattr(dag, "access_control", None) is not None:
        doc["access"] = access_of(dag.access_control, dag.lineno)
    variables = variables_named(fileloc)
    priorities = priority_weights(dag)
    tasks: List[Dict[str, Any]] = [task_spec(dag, t, fileloc, pushed, python, variables,
                                             priorities)
                                   for t in dag.tasks]
    mapping.apply(dag, tasks)  # mapped tasks' foreach
    doc["tasks"] = tasks
    dag_callback.apply(dag, doc, fileloc, python)  # on_success_callback, on_failure_callback
    return doc


def dagrun_timeout(dag: Any) -> int:
    """The DAG's dagrun_timeout as whole seconds, at least one (a timedelta under a second
    still times a run out, as Airflow's); anything but a timedelta is an error, as Airflow's
    DAG refuses it."""
    value = dag.dagrun_timeout
    if not isinstance(value, _dt.timedelta):
        raise SpecError("DAG %s: dagrun_timeout: expected a timedelta, got %r"
                        % (dag.dag_id, value), dag.lineno)
    total = value.total_seconds()
    if total <= 0:
        raise SpecError("DAG %s: dagrun_timeout: expected a timedelta above 0, got %r"
                        % (dag.dag_id, value), dag.lineno)
    return max(1, int(-(-total // 1)))


def access_of(access: Any, line: int) -> Dict[str, Any]:
    """access_control as weir's `access:`: Airflow writes sets of permission names ({"Op":
    {"can_read", "can_edit"}}) or, since 2.x, a mapping of resources to sets ({"Op": {"DAGs":
    {"can_read"}}}); JSON has lists, sorted so that the document is the same each time.  The
    names are checked by the server, as a YAML file's are."""
    def perms(v: Any) -> Any:
        if isinstance(v, str):
            return v
        if isinstance(v, dict):
            return {str(k): perms(p) for k, p in v.items()}
        if isinstance(v, (set, frozenset, list, tuple)):
            return sorted(str(p) for p in v)
        raise SpecError("access_control: %r: expected permission names (a set of strings) "
                        "or a mapping of resources to them" % (v,), line)
    if not isinstance(access, dict):
        raise SpecError("access_control: expected a mapping of roles or users to "
                        "permissions, got %s" % type(access).__name__, line)
    return {str(who): perms(v) for who, v in access.items()}


# The JSON Schema keywords weir's server checks (src/model/param_schema.c), those it keeps
# without checking, and Airflow's keywords for its trigger form only (left out).
_SCHEMA_KEYWORDS = ("type", "enum", "minimum", "maximum", "exclusiveMinimum",
                    "exclusiveMaximum", "minLength", "maxLength", "pattern", "format",
                    "const", "items", "properties", "minItems", "maxItems", "uniqueItems",
                    "multipleOf", "required", "default", "description", "title")
_FORM_ONLY = ("values_display", "section", "examples", "description_md", "description_html",
              "custom_html_form", "const_display")


def _json_value(name: Any, value: Any, line: int) -> Any:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, (list, tuple)):
        return [_json_value(name, v, line) for v in value]
    if isinstance(value, dict):
        return {str(k): _json_value(name, v, line) for k, v in value.items()}
    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.isoformat()
    raise SpecError("params.%s: %r: expected a JSON value (str, numbers, lists, dicts)"
                    % (name, value), line)


def plain_param(name: Any, value: Any, line: int) -> Any:
    """A param as weir's document writes it: a Param as its schema (with `default` when it
    has one), a plain value as it is (a dict whose keys all look like schema keywords
    wrapped as {"default": ...}, so that it stays a value)."""
    from airflow.models.param import Param

    if isinstance(value, Param):
        schema: Dict[str, Any] = {}
        for key, v in value.schema.items():
            if key in _FORM_ONLY:
                continue
            if key not in _SCHEMA_KEYWORDS:
                raise SpecError("params.%s: Param's %r: weir checks only %s"
                                % (name, key, ", ".join(_SCHEMA_KEYWORDS[:-3])), line)
            schema[key] = _json_value(name, v, line)
        if value.has_value():
            schema["default"] = _json_value(name, value.value, line)
        if not schema:  # Param() alone: any value, to be given by every run
            schema["title"] = str(name)
        return schema
    out = _json_value(name, value, line)
    if isinstance(out, dict) and out and all(k in _SCHEMA_KEYWORDS for k in out):
        return {"default": out}
    return out
