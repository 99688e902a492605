"""One Airflow task's try: `python3 -m _weir_airflow.run_task FILE DAG_ID TASK_ID`.

The DAG file is imported again with weir's `airflow` first on sys.path; the context is built
from the environment weir gives every DAG task (WEIR_RUN_ID, WEIR_LOGICAL_DATE, WEIR_TS,
WEIR_DS, WEIR_TRY_NUMBER, WEIR_PARAM_<NAME>, ...: docs/dags.md); the upstream tasks' return
values come in WEIR_AIRFLOW_XCOM (a JSON object, task id -> [value]).  The task's template
fields are rendered with Jinja, its execute() called, and its return value (and what it
pushed with ti.xcom_push) written to $WEIR_OUTPUT, which weir keeps as the task's XCom.
Exit status: 0 success; 1 failure; 97 a sensor in reschedule mode not met yet (the server
pokes it again); 98 AirflowFailException or AirflowSensorTimeout (a failure the server does
not retry); 99 AirflowSkipException (the task ends skipped).  The
server reads 98 and 99 so of an Airflow DAG file's task (dm_sensor_exit, src/server/
dag_manager/sensors.c).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import sys
import traceback
from typing import Any, Dict, List, Mapping, Optional

from _weir_airflow.processor import dags_of, import_file, prepare_path
from _weir_airflow.spec import has_template

SKIP_EXIT = 99
NO_RETRY_EXIT = 98  # data/sensor_poke.h's SENSOR_EXIT_TIMEOUT
NOT_YET_EXIT = 97  # data/sensor_poke.h's SENSOR_EXIT_NOT_YET: a sensor's poke, not met


class TaskInstance:
    """The context's `ti`: the try's identity and its XComs (upstream values in, pushes out)."""

    def __init__(self, dag_id: str, task_id: str, run_id: str, try_number: int,
                 map_index: int, upstream: Mapping[str, Any]) -> None:
        self.dag_id = dag_id
        self.task_id = task_id
        self.run_id = run_id
        self.try_number = try_number
        self.map_index = map_index
        self.upstream = dict(upstream)
        self.pushed: Dict[str, Any] = {}

    def xcom_push(self, key: str, value: Any) -> None:
        """Pushes a value under `key` (kept in the task's outputs)."""
        json.dumps(value)
        self.pushed[key] = value

    def xcom_pull(self, task_ids: Any = None, key: str = "return_value", **_: Any) -> Any:
        """An upstream task's return value (a list for several task ids).  This slice passes
        the return values of the task's direct Python upstream tasks only."""
        if key != "return_value":
            raise KeyError("xcom_pull(key=%r): weir passes only return values downstream "
                           "for now" % key)
        ids = [task_ids] if isinstance(task_ids, str) or task_ids is None else list(task_ids)
        values = [self.upstream.get(t) for t in ids if t is not None]
        if isinstance(task_ids, str):
            return values[0] if values else None
        return values


def _date(text: str) -> _dt.datetime:
    return _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def _env_value(text: str, default: Any) -> Any:
    """A WEIR_PARAM_<NAME> value: text where the DAG's default is text, else decoded as JSON
    where it is JSON (weir writes lists, mappings and numbers as JSON)."""
    if isinstance(default, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def run_conf(dag: Any, env: Mapping[str, str]) -> Dict[str, Any]:
    """The trigger's conf as weir gives it: weir merges the conf over the DAG's params and
    gives a task each as WEIR_PARAM_<NAME>; the conf is what is not a param's default (a
    conf key equal to its param's default is not told apart from it)."""
    conf: Dict[str, Any] = {}
    for key, text in sorted(env.items()):
        if not key.startswith("WEIR_PARAM_"):
            continue
        name = key[len("WEIR_PARAM_"):]
        default = dag.params.get(name)
        value = _env_value(text, default)
        if name not in dag.params or value != default:
            conf[name] = value
    return conf


def run_type_of(run_id: str) -> str:
    """Airflow's run type from the run id's prefix (weir names runs as Airflow does)."""
    kind = run_id.split("__", 1)[0]
    return kind if kind in ("scheduled", "manual", "backfill", "dataset_triggered") else "manual"


def build_context(dag: Any, task: Any, env: Mapping[str, str]) -> Dict[str, Any]:
    """The Airflow context of this try (_weir_airflow.context, the whole of it) from what
    weir gives a task: the run id, logical date and data interval the server computed
    (WEIR_RUN_ID, WEIR_LOGICAL_DATE, WEIR_DATA_INTERVAL_START/END), the try number, the
    params with the conf over them (WEIR_PARAM_<NAME>), the upstream return values
    (WEIR_AIRFLOW_XCOM); `prev_ds`/`next_ds` from the DAG's schedule around them."""
    from _weir_airflow.context import build_context as full_context

    logical = _date(env.get("WEIR_LOGICAL_DATE") or env.get("WEIR_TS") or
                    _dt.datetime.now(_dt.timezone.utc).isoformat())
    run_id = env.get("WEIR_RUN_ID", "manual__" + logical.isoformat())
    upstream = {k: v[0] for k, v in json.loads(env.get("WEIR_AIRFLOW_XCOM") or "{}").items()}
    ti = TaskInstance(dag.dag_id, task.task_id, run_id, int(env.get("WEIR_TRY_NUMBER", "1")),
                      int(env.get("WEIR_MAP_INDEX", "-1")), upstream)
    start, end = env.get("WEIR_DATA_INTERVAL_START"), env.get("WEIR_DATA_INTERVAL_END")
    return full_context(
        dag=dag, task=task, ti=ti, run_id=run_id, logical_date=logical,
        data_interval_start=_date(start) if start else None,
        data_interval_end=_date(end) if end else None,
        run_type=run_type_of(run_id), conf=run_conf(dag, env))


def resolve(value: Any, ti: TaskInstance) -> Any:
    """An argument with each XComArg replaced by its upstream task's return value."""
    from airflow.models.baseoperator import XComArg

    if isinstance(value, XComArg):
        if value.operator.task_id not in ti.upstream:
            raise KeyError("the return value of task %s did not reach task %s"
                           % (value.operator.task_id, ti.task_id))
        return ti.upstream[value.operator.task_id]
    if isinstance(value, dict):
        return {k: resolve(v, ti) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(resolve(v, ti) for v in value)
    return value


# What a value rendered into a shell command may hold as it is (weir's rule for run ids,
# docs/dags.md); any other value reaches the shell through a variable.
_SHELL_SAFE = re.compile(r"^[A-Za-z0-9_.:+,=@%/-]*$")


class ShellValues:
    """Jinja's finalize for a BashOperator's command: a value of _SHELL_SAFE characters (a
    date, an id, a number) is written as it is; any other (a param, the conf, an XCom with a
    space, a quote, `$(...)`) becomes "${WEIR_TEMPLATE_VALUE_n}", set in the command's
    environment, so that whatever it holds and wherever it lands, the shell never runs it as
    code (docs/airflow.md)."""

    def __init__(self) -> None:
        self.env: Dict[str, str] = {}

    def __call__(self, value: Any) -> str:
        text = "" if value is None else str(value)
        if _SHELL_SAFE.match(text):
            return text
        name = "WEIR_TEMPLATE_VALUE_%d" % len(self.env)
        self.env[name] = text
        return '"${%s}"' % name


def needs_render(task: Any) -> bool:
    """Whether a template field holds a template or names a template file."""
    fields = [getattr(task, f) for f in getattr(task, "template_fields", ()) if hasattr(task, f)]
    ext = tuple(getattr(task, "template_ext", ()))

    def is_file(v: Any) -> bool:
        if isinstance(v, str):
            return bool(ext) and v.endswith(ext)
        if isinstance(v, dict):
            return any(is_file(x) for x in v.values())
        if isinstance(v, (list, tuple)):
            return any(is_file(x) for x in v)
        return False

    return has_template(fields) or any(is_file(v) for v in fields)


def render_template_fields(task: Any, context: Dict[str, Any]) -> None:
    """Renders the task's template_fields (_weir_airflow.templating: the DAG's environment,
    template files from the DAG file's folder and template_searchpath); the values rendered
    into a BashOperator's bash_command go through ShellValues (task.template_env)."""
    from _weir_airflow.templating import get_template_env
    from _weir_airflow.templating import render_template_fields as render

    values = ShellValues()
    shell = {"bash_command": get_template_env(task.dag, finalize=values)}
    render(task, context, get_template_env(task.dag), shell)
    task.template_env = values.env


def write_output(path: Optional[str], ti: TaskInstance, result: Any, push: bool) -> None:
    """$WEIR_OUTPUT: what the task pushed, `return_value` (when not None) and `weir_return`
    (the value in a list, for the templates of the tasks downstream)."""
    out = dict(ti.pushed)
    if push:
        try:
            json.dumps(result)
        except (TypeError, ValueError) as exc:
            raise TypeError("the return value of task %s is not JSON serializable (%s); weir "
                            "keeps XComs as JSON" % (ti.task_id, exc)) from None
        if result is not None:
            out["return_value"] = result
        out["weir_return"] = [result]
    if path and out:
        with open(path, "w") as f:
            json.dump(out, f)


def run(argv: List[str], env: Mapping[str, str]) -> int:
    """Runs the task named by argv (FILE DAG_ID TASK_ID); the exit status."""
    from airflow.exceptions import (AirflowFailException, AirflowSensorTimeout,
                                    AirflowSkipException)

    path, dag_id, task_id = os.path.abspath(argv[0]), argv[1], argv[2]
    module = import_file(path)
    dag = next((d for d in dags_of(module) if d.dag_id == dag_id), None)
    if dag is None:
        print("weir: %s defines no DAG %s any more" % (path, dag_id), file=sys.stderr)
        return 1
    task = dag.task_dict.get(task_id)
    if task is None:
        print("weir: DAG %s has no task %s any more" % (dag_id, task_id), file=sys.stderr)
        return 1
    if dag.fileloc is None:
        dag.fileloc = path
    render = needs_render(task)
    if render or getattr(dag, "timezone", None) is not None:
        import pendulum  # noqa: F401  (templates see pendulum's dates, as in Airflow)
    context = build_context(dag, task, env)
    ti: TaskInstance = context["ti"]
    try:
        for field in ("op_args", "op_kwargs"):
            if hasattr(task, field):
                setattr(task, field, resolve(getattr(task, field), ti))
        if render:
            render_template_fields(task, context)
        if getattr(task, "reschedule", False) and hasattr(task, "poke_once"):
            # a sensor in reschedule mode: one poke; the server pokes again (spec: sensor:)
            done, result = task.poke_once(context)
            if not done:
                print("weir: not met yet; weir pokes again when it is due", flush=True)
                return NOT_YET_EXIT
        else:
            result = task.execute(context)
        if getattr(task, "show_return_value_in_logs", True) and result is not None:
            print("Done. Returned value was: %r" % (result,), flush=True)
        write_output(env.get("WEIR_OUTPUT"), ti, result, task.do_xcom_push)
    except AirflowSkipException as exc:
        print("weir: task %s raised AirflowSkipException (%s): skipped" % (task_id, exc),
              file=sys.stderr)
        return SKIP_EXIT
    except (AirflowFailException, AirflowSensorTimeout):
        traceback.print_exc()
        return NO_RETRY_EXIT
    return 0


def main() -> None:
    """Entry point."""
    if len(sys.argv) != 4:
        print("usage: python3 -m _weir_airflow.run_task FILE DAG_ID TASK_ID",
              file=sys.stderr)
        sys.exit(2)
    prepare_path(os.path.abspath(sys.argv[1]), None)
    sys.stdout.flush()
    rc = run(sys.argv[1:], os.environ)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(rc)


if __name__ == "__main__":
    main()
