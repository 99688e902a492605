"""A DAG object (weir's `airflow` package) turned into weir's DAG document: the JSON form a
YAML DAG file parses to, read by the server's `dag_spec_from_json()` (docs/dags.md).

A BashOperator without a template runs as a plain command (bash, no Python); an
EmptyOperator runs `true`; every other task (PythonOperator, `@task`, a templated
BashOperator, a task whose return value a downstream task takes) runs
`python3 -m _weir_airflow.run_task FILE DAG_ID TASK_ID`, which imports the file again.
Return values travel in the task's `$WEIR_OUTPUT` (`return_value`, and `weir_return`: the
value in a one-item list, its type kept); a Python task reads the run's outputs from
`$WEIR_RUN_OUTPUTS` (its `run_outputs: true`) and the variables its file names
(`variables:`).
"""

from __future__ import annotations

import datetime as _dt
import os
import re
import shlex
import sys
from typing import Any, Dict, List, Optional, Set

# The folder put first on sys.path so that `import airflow` is weir's (this package's too).
SITE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_TEMPLATE_MARKS = ("{{", "{%", "{#")
_PRESETS = ("@once", "@hourly", "@daily", "@midnight", "@weekly", "@monthly", "@yearly",
            "@annually")


# run_task's exit statuses: AirflowSkipException (a skip, as a BashOperator's 99) and
# AirflowFailException (a failure without retry); each runner task's skip_on_exit_code and
# no_retry_on_exit_code (docs/dags.md)
SKIP_EXIT = 99
NO_RETRY_EXIT = 98


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


def schedule_of(dag: Any) -> Any:
    """The DAG's schedule as weir writes it: "none", a preset or five cron fields.  A
    timedelta becomes the cron expression that fires at the same times from start_date
    when one does (minutes dividing an hour, hours dividing a day, one day, one week)."""
    s = dag.schedule
    if s is None:
        return "none"
    if isinstance(s, str):
        if s.startswith("@") and s not in _PRESETS:
            raise SpecError("schedule %r: weir has no such preset yet; expected one of %s, "
                            "a cron expression, a timedelta or None"
                            % (s, ", ".join(_PRESETS)), dag.lineno)
        return s
    if isinstance(s, _dt.timedelta):
        start = dag.start_date if isinstance(dag.start_date, _dt.datetime) else None
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
        raise SpecError("schedule %s: weir runs a timedelta only when it is a cron "
                        "interval (a divisor of an hour or a day, a day, a week); write a "
                        "cron expression" % s, dag.lineno)
    raise SpecError("schedule %r: not supported yet (datasets and timetables are to come); "
                    "expected a cron expression, a preset, a timedelta or None" % (s,),
                    dag.lineno)


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
    """The command of a task that runs in Python: run_task with the file imported again."""
    words = [python, "-m", "_weir_airflow.run_task", fileloc, dag_id, task_id]
    cmd = "exec " + " ".join(shlex.quote(w) for w in words)
    path = "PYTHONPATH=%s${PYTHONPATH:+:$PYTHONPATH} " % shlex.quote(SITE)
    return no_template(path + cmd)


def plain_bash(task: Any, pushed: Set[str]) -> bool:
    """Whether a BashOperator runs as a plain command: no template anywhere, no template
    file, and no downstream task takes its return value."""
    cmd = task.bash_command
    return (isinstance(cmd, str) and not has_template([cmd, task.env or {}, task.cwd or ""])
            and not cmd.endswith(tuple(task.template_ext)) and task.task_id not in pushed)


def operator_path(task: Any) -> str:
    """The task's class as a dotted path of Python names (Airflow's class_ref): its module and
    name, any other character of them (a DAG file's module name) made '_'."""
    cls = getattr(task, "weir_operator_class", None) or type(task)  # a mapped task's
    parts = (str(cls.__module__ or "") + "." + cls.__name__).split(".")
    clean = [re.sub(r"[^A-Za-z0-9_]", "_", p) or "_" for p in parts]
    return ".".join(("_" + p) if p[0].isdigit() else p for p in clean)


def task_spec(dag: Any, task: Any, fileloc: str, pushed: Set[str], python: str,
              variables: Optional[List[str]] = None) -> Dict[str, Any]:
    """One task of weir's document; `variables`: the keys a Python task may read."""
    from _weir_airflow import callbacks, operators
    from airflow.operators.bash import BashOperator
    from airflow.operators.empty import EmptyOperator

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
    if task.trigger_rule != "all_success":
        t["trigger_rule"] = task.trigger_rule
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
    if task.pool is not None:
        t["pool"] = task.pool
    if task.pool_slots != 1:
        t["pool_slots"] = task.pool_slots
    if task.queue is not None:
        t["queue"] = task.queue
    if task.depends_on_past:
        t["depends_on_past"] = True
    if task.wait_for_downstream:
        t["wait_for_downstream"] = True
    callbacks.apply(task, t)  # sla
    return t


_VAR_TEMPLATE = re.compile(r"\bvar\.(?:value|json)\.(?:get\(\s*['\"]([A-Za-z0-9_.-]+)['\"]"
                           r"|([A-Za-z_][A-Za-z0-9_]*))")


def variables_named(path: str) -> List[str]:
    """The variable keys a DAG file names literally: `Variable.get("KEY")` (and `key=`,
    `setdefault`), `{{ var.value.KEY }}`, `var.json.get('KEY')`: the variables its tasks
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
                node.func.attr in ("get", "setdefault")):
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
    Python task right below a Python task or a templated Bash task that runs when all
    upstream succeeded: its `ti.xcom_pull`)."""
    from _weir_airflow import mapping, operators
    from airflow.models.baseoperator import xcom_args_in
    from airflow.operators.python import PythonOperator

    from airflow.operators.bash import BashOperator

    out: Set[str] = set(mapping.pushed_by(dag))
    for task in dag.tasks:
        if isinstance(task, PythonOperator):
            for arg in xcom_args_in([task.op_args, task.op_kwargs]):
                out.add(arg.operator.task_id)
        templated = isinstance(task, BashOperator) and not plain_bash(task, set())
        if (isinstance(task, PythonOperator) or templated) and \
                task.trigger_rule == "all_success":
            out.update(u for u in task.upstream_task_ids
                       if isinstance(dag.task_dict.get(u), PythonOperator) or
                       operators.pushes_xcom(dag.task_dict.get(u)))
    return out


def dag_to_spec(dag: Any, fileloc: str, python: Optional[str] = None) -> Dict[str, Any]:
    """The DAG as weir's document (the JSON form of a YAML DAG file).  Raises SpecError for
    what weir cannot run as written."""
    from _weir_airflow import dag_callback, mapping

    python = python or sys.executable
    if not dag.task_dict:
        raise SpecError("DAG %s: no tasks (weir's DAGs have one at least)" % dag.dag_id,
                        dag.lineno)
    for task in dag.tasks:
        for u in task.upstream_task_ids | task.downstream_task_ids:
            if u not in dag.task_dict:
                raise SpecError("task %s: depends on %s, a task of another DAG"
                                % (task.task_id, u), task.lineno)
    pushed = pushed_tasks(dag)
    doc: Dict[str, Any] = {"dag_id": dag.dag_id}
    if dag.description:
        doc["description"] = dag.description
    if dag.doc_md:
        doc["doc_md"] = str(dag.doc_md)
    doc["schedule"] = schedule_of(dag)
    if dag.start_date is not None:
        doc["start_date"] = utc_text(dag.start_date, "start_date", dag.lineno)
    if dag.end_date is not None:
        doc["end_date"] = utc_text(dag.end_date, "end_date", dag.lineno)
    doc["catchup"] = bool(dag.catchup)
    doc["max_active_runs"] = dag.max_active_runs
    doc["max_active_tasks"] = dag.max_active_tasks
    if dag.tags:
        doc["tags"] = [str(t) for t in dag.tags]
    if dag.params:
        doc["params"] = {str(k): plain_param(k, v, dag.lineno) for k, v in dag.params.items()}
    if getattr(dag, "access_control", None) is not None:
        doc["access"] = access_of(dag.access_control, dag.lineno)
    variables = variables_named(fileloc)
    tasks: List[Dict[str, Any]] = [task_spec(dag, t, fileloc, pushed, python, variables)
                                   for t in dag.tasks]
    mapping.apply(dag, tasks)  # mapped tasks' foreach
    doc["tasks"] = tasks
    dag_callback.apply(dag, doc, fileloc, python)  # on_success_callback, on_failure_callback
    return doc


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


def plain_param(name: Any, value: Any, line: int) -> Any:
    """A param's default as JSON (Param objects are to come)."""
    if value is None or isinstance(value, (str, int, float, bool, list, dict)):
        return value
    raise SpecError("params.%s: %r: only plain values (str, numbers, lists, dicts) for now"
                    % (name, value), line)
