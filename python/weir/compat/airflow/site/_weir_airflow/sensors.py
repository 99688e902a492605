"""Airflow's sensors in weir's DAG document (called from spec.task_spec).

A sensor whose wait weir's core knows becomes a `sensor:` task of that kind (docs/dags.md,
"Sensors"), so that weir pokes it itself: in reschedule mode (and deferrable sensors) no slot
and no process is held between pokes.

| Airflow | weir |
|---|---|
| FileSensor | `sensor: file` (the folder: fs_default's root, or `conn:` another fs connection) |
| ExternalTaskSensor | `sensor: external_task` (always poked by the server): a task, several, a task group or the run; with execution_date_fn: a poke in Python, the other DAG's runs read from the server with the task's read key (`env: WEIR_TASK_READS`) |
| SqlSensor | `sensor: sql` (the query not templated); with success, failure, selector, fail_on_empty or hook_params: a poke in Python (the hook) |
| HttpSensor | `sensor: http` (a GET answering 200); with response_check, headers, another method, extra_options ...: a poke in Python (HttpHook) |
| ExternalTaskMarker | `true` with `marker:` (a recursive clear clears the other DAG's task) |

What neither the core nor a Python poke can do as Airflow does is refused with a SpecError
naming the argument (a template in SqlSensor's query ...).  Every other sensor (PythonSensor, BashSensor, `@task.sensor`, the time
sensors, DayOfWeekSensor, a subclass with its own poke()) runs in the task's process, where
BaseSensorOperator.execute() pokes and sleeps (airflow/sensors/base.py).
"""

from __future__ import annotations

import re
import urllib.parse
from typing import Any, Dict, List, Optional

from _weir_airflow.spec import SpecError, has_template

# The templates weir's core renders as Airflow's Jinja does (the same text).
_SIMPLE_TEMPLATE = re.compile(r"\{\{\s*(ds|ds_nodash|run_id)\s*\}\}")
_GLOB = re.compile(r"[*?\[]")


def simple_template(text: str) -> bool:
    """Whether every template in `text` is one weir's core renders the same way."""
    return not has_template(_SIMPLE_TEMPLATE.sub("", text))


def options(task: Any) -> Dict[str, Any]:
    """The wait's options as the core's `sensor:` mapping writes them."""
    out: Dict[str, Any] = {
        "poke_interval": max(float(task.poke_interval), 0.05),
        "timeout": max(float(task.timeout), 0.001),
        "mode": task.mode,
    }
    if task.soft_fail:
        out["soft_fail"] = True
    if task.exponential_backoff:
        out["exponential_backoff"] = True
    if task.max_wait:
        out["max_wait"] = max(float(task.max_wait), 0.05)
    return out


def _refuse(task: Any, what: str) -> SpecError:
    return SpecError("task %s: %s: %s" % (task.task_id, type(task).__name__, what), task.lineno)


def file_sensor(task: Any) -> Optional[Dict[str, Any]]:
    """FileSensor as `file: {folder | conn, path}`; None (run in Python) for what the core's
    glob does not do (`**` with recursive, a template other than ds/ds_nodash/run_id)."""
    path = task.filepath
    if not isinstance(path, str) or not path:
        raise _refuse(task, "filepath: expected a path, got %r" % (path,))
    if not simple_template(path) or "**" in path:
        return None
    if task.fs_conn_id != "fs_default":
        if path.startswith("/"):
            raise _refuse(task, "filepath %r: expected a path relative to connection %s's "
                          "path" % (path, task.fs_conn_id))
        return {"conn": task.fs_conn_id, "path": path}
    full = path if path.startswith("/") else "/" + path  # fs_default's path is "/"
    parts = [p for p in full.split("/") if p]
    if ".." in parts:
        raise _refuse(task, "filepath %r: weir waits for no path with '..'" % path)
    # the folder: the longest leading part without a glob or a template
    n = 0
    while n < len(parts) - 1 and not _GLOB.search(parts[n]) and "{" not in parts[n]:
        n += 1
    return {"folder": "/" + "/".join(parts[:n]), "path": "/".join(parts[n:])}


def external_task_sensor(task: Any) -> Optional[Dict[str, Any]]:
    """ExternalTaskSensor as `external_task:` (one task, several, a task group, or the
    whole run; the server reads its own records); None (it pokes in Python, reading the
    other DAG's runs from the server) with an execution_date_fn."""
    if task.execution_date_fn is not None:
        return None
    ids: List[str] = task.external_task_ids or []
    group = task.external_task_group_id
    if group is not None and ids:
        raise _refuse(task, "external_task_group_id with external_task_id(s): give one")
    if not simple_template(str(task.external_dag_id)):
        raise _refuse(task, "external_dag_id %r: weir renders only {{ ds }}, "
                      "{{ ds_nodash }} and {{ run_id }} here" % (task.external_dag_id,))
    if len(ids) == 1 and not simple_template(str(ids[0])):
        raise _refuse(task, "external_task_id %r: weir renders only {{ ds }}, "
                      "{{ ds_nodash }} and {{ run_id }} here" % (ids[0],))
    for value in ids[1:] + ([] if len(ids) == 1 else ids[:1]) + \
            ([group] if group is not None else []):
        if has_template(str(value)):
            raise _refuse(task, "%r: several task ids and a task group's id are read as "
                          "they are written (no template)" % (value,))
    what: Dict[str, Any] = {"dag_id": task.external_dag_id,
                            "states": list(task.allowed_states)}
    if len(ids) == 1:
        what["task_id"] = ids[0]
    elif ids:
        what["task_ids"] = [str(i) for i in ids]
    if group is not None:
        what["task_group_id"] = str(group)
    if task.failed_states:
        what["failed_states"] = list(task.failed_states)
    if task.skipped_states:
        what["skipped_states"] = list(task.skipped_states)
    if task.execution_delta is not None:
        what["execution_delta"] = int(task.execution_delta.total_seconds())
    if task.check_existence:
        what["check_existence"] = True
    return what


def sql_sensor(task: Any) -> Optional[Dict[str, Any]]:
    """SqlSensor as `sql: {conn, query, parameters}`: Airflow's DB-API placeholders
    (`%(name)s`, `%s`) bound as weir's `:name`, as the sql task's (operators.bind_sql); None
    (it pokes in Python, through the hook) for what weir's sensor does not do (a callable,
    `selector`, `fail_on_empty`, `hook_params`).  A template in the query is refused either
    way: weir binds values, it never writes them into SQL text."""
    from _weir_airflow.operators import bind_sql, weir_template

    sql = task.sql
    if not isinstance(sql, str) or not sql.strip():
        raise _refuse(task, "sql: expected a query, got %r" % (sql,))
    if sql.endswith(tuple(task.template_ext)):
        raise _refuse(task, "sql %r: weir does not read a query file here; write the query"
                      % sql)
    if has_template(sql):
        raise _refuse(task, "sql: a template in the query; bind the value as a parameter "
                      "(%(name)s, with parameters={'name': '{{ ds }}'})")
    params = task.parameters
    if task.weir_in_python() or not _core_renders(params):
        return None
    if params is not None and not isinstance(params, (dict, list, tuple)):
        raise _refuse(task, "parameters: expected a dict or a list, got %r" % (params,))
    where = "task %s: sql" % task.task_id
    # a dict's names are bound as they are (:name in the query), and so are %(name)s
    named: Dict[str, Any] = {}
    for key, value in (params.items() if isinstance(params, dict) else ()):
        named[str(key)] = weir_template(value, where, task.lineno) \
            if isinstance(value, str) else value
    query, bound = bind_sql(sql, params, where, task.lineno)
    named.update(bound)
    what: Dict[str, Any] = {"conn": task.conn_id, "query": query}
    if named:
        what["parameters"] = named
    return what


def _core_renders(params: Any) -> bool:
    """Whether each template among the parameters' values is a name weir renders (else
    Jinja renders them in Python, and the driver binds them)."""
    from _weir_airflow.operators import weir_template

    values = params.values() if isinstance(params, dict) else params or ()
    for value in values if isinstance(values, (list, tuple, type({}.values()))) else ():
        if isinstance(value, str):
            try:
                weir_template(value, "", 0)
            except SpecError:
                return False
    return True


def http_sensor(task: Any) -> Optional[Dict[str, Any]]:
    """HttpSensor as `http: {conn, path}` (a GET answering 200); None (it pokes in Python,
    through HttpHook) for what weir's sensor does not do: `response_check`, another method,
    `headers`, `extra_options`, `request_kwargs`, `response_error_codes_allowlist`, a
    template other than {{ ds }}, {{ ds_nodash }}, {{ run_id }}."""
    endpoint = str(task.endpoint or "")
    if (task.response_check is not None or str(task.method).upper() != "GET" or
            task.headers or task.extra_options or task.request_kwargs or
            task.weir_allowlist_given or not simple_template(endpoint) or
            has_template(task.request_params)):
        return None
    path = endpoint if endpoint.startswith("/") else "/" + endpoint
    if task.request_params:
        path += ("&" if "?" in path else "?") + urllib.parse.urlencode(task.request_params)
    return {"conn": task.http_conn_id, "path": path}


# ExternalTaskMarker's execution_date written as the run's own logical date
_SAME_DATE = re.compile(r"^\{\{\s*(?:(?:logical_date|execution_date)\.isoformat\(\)|ts)"
                        r"\s*\}\}$")


def marker(task: Any) -> Dict[str, Any]:
    """ExternalTaskMarker as the task's `marker:` (a recursive clear of it clears that task
    of the other DAG's run of the same logical date)."""
    date = task.execution_date
    if not (isinstance(date, str) and _SAME_DATE.match(date)):
        raise _refuse(task, "execution_date %r: weir clears the other DAG's run of the same "
                      "logical date ({{ logical_date.isoformat() }}, the default)" % (date,))
    for field in ("external_dag_id", "external_task_id"):
        if has_template(str(getattr(task, field))):
            raise _refuse(task, "%s: a template; the marker names the task as written"
                          % field)
    return {"dag_id": str(task.external_dag_id), "task_id": str(task.external_task_id),
            "recursion_depth": int(task.recursion_depth)}


def apply_sensor(task: Any, t: Dict[str, Any]) -> None:
    """Makes `t`, the task's entry in weir's document as spec.task_spec() wrote it, what an
    Airflow sensor is on weir: a `sensor:` task of the core's kind (the command gone), the
    runner's command with `sensor:` options for a Python poke in reschedule mode (run_task
    pokes once, exit 97 is "not yet"), `true` and `marker:` for an ExternalTaskMarker.  Other tasks are
    left as they are."""
    from airflow.sensors.base import BaseSensorOperator

    from _weir_airflow.operators import not_a_command

    keys = sensor_keys(task)
    if reads_runs(task):
        env = t.setdefault("env", {})
        env["WEIR_TASK_READS"] = "dag_runs"  # the server gives it a read key
    if "sensor" in keys or "command" in keys:
        not_a_command(t)
        t.update(keys)
    elif isinstance(task, BaseSensorOperator) and task.reschedule:
        t["sensor"] = options(task)


def reads_runs(task: Any) -> bool:
    """Whether the task reads other DAGs' runs from the server (an ExternalTaskSensor,
    or a subclass, that pokes in Python): its job asks for a read key."""
    from airflow.sensors.external_task import ExternalTaskSensor

    return isinstance(task, ExternalTaskSensor) and (
        task.execution_date_fn is not None or type(task).poke is not ExternalTaskSensor.poke)


def sensor_keys(task: Any) -> Dict[str, Any]:
    """What `task` adds to its entry in weir's document: {"sensor": {...}} for a sensor weir
    pokes itself, {"command": "true", "marker": {...}} for an ExternalTaskMarker, {} for any other task (a
    sensor whose poke is Python runs in run_task).  Raises SpecError for an argument the
    core cannot honour."""
    from airflow.providers.common.sql.sensors.sql import SqlSensor
    from airflow.providers.http.sensors.http import HttpSensor
    from airflow.sensors.external_task import ExternalTaskMarker, ExternalTaskSensor
    from airflow.sensors.filesystem import FileSensor

    if isinstance(task, ExternalTaskMarker):
        return {"command": "true", "marker": marker(task)}
    # a subclass with a poke() of its own runs it in Python
    if isinstance(task, FileSensor) and type(task).poke is FileSensor.poke:
        what = file_sensor(task)
        return {} if what is None else {"sensor": dict(options(task), file=what)}
    if isinstance(task, ExternalTaskSensor) and type(task).poke is ExternalTaskSensor.poke:
        ext = external_task_sensor(task)
        return {} if ext is None else {"sensor": dict(options(task), external_task=ext)}
    if isinstance(task, SqlSensor) and type(task).poke is SqlSensor.poke:
        what = sql_sensor(task)
        return {} if what is None else {"sensor": dict(options(task), sql=what)}
    if isinstance(task, HttpSensor) and type(task).poke is HttpSensor.poke:
        what = http_sensor(task)
        return {} if what is None else {"sensor": dict(options(task), http=what)}
    return {}
