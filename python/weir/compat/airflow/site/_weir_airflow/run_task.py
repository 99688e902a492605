"""One Airflow task's try: `python3 -m _weir_airflow.run_task FILE DAG_ID TASK_ID`.

The DAG file is imported again with weir's `airflow` first on sys.path; the context is built
from the environment weir gives every DAG task (WEIR_RUN_ID, WEIR_LOGICAL_DATE, WEIR_TS,
WEIR_DS, WEIR_TRY_NUMBER, WEIR_PARAM_<NAME>, ...: docs/dags.md); the run's XComs so far
come in the file $WEIR_RUN_OUTPUTS (the task's `run_outputs: true`), its variables in
WEIR_VARIABLES.  The task's template
fields are rendered with Jinja, its execute() called, and its return value (and what it
pushed with ti.xcom_push) written to $WEIR_OUTPUT, which weir keeps as the task's XCom.
Exit status: 0 success; 1 failure; 97 a sensor in reschedule mode not met yet (the server
pokes it again); 98 AirflowFailException or AirflowSensorTimeout (the task's
no_retry_on_exit_code, or a sensor's timeout: failed, its retries unused); 99
AirflowSkipException (the task's skip_on_exit_code: skipped).  A branch task's choice goes in
the output as `branch`, a short circuit's as `result` (weir's `branch` and `short_circuit`
tasks, docs/dags.md).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import sys
import traceback
from typing import Any, Dict, List, Mapping, Optional

from _weir_airflow import callbacks, datasets, mapping, tasklog
from _weir_airflow.processor import dags_of, import_file, prepare_path
from _weir_airflow.spec import NO_RETRY_EXIT, SKIP_EXIT, has_template
from _weir_airflow.ti_attrs import TaskInstanceAttrs


_NOTSET: Any = object()
NOT_YET_EXIT = 97  # data/sensor_poke.h's SENSOR_EXIT_NOT_YET: a sensor's poke, not met


class TaskInstance(TaskInstanceAttrs):
    """The context's `ti`: the try's identity and its XComs: the run's outputs in (every
    task's that has ended so far: $WEIR_RUN_OUTPUTS, {"TASK": {"MAP_INDEX": {KEY: V}}}),
    pushes out; the other attributes Airflow's has from TaskInstanceAttrs."""

    def __init__(self, dag_id: str, task_id: str, run_id: str, try_number: int,
                 map_index: int, outputs: Mapping[str, Mapping[str, Any]]) -> None:
        self.dag_id = dag_id
        self.task_id = task_id
        self.run_id = run_id
        self.try_number = try_number
        self.map_index = map_index
        self.outputs = {t: dict(v) for t, v in outputs.items()}
        self.pushed: Dict[str, Any] = {}
        self.dag_run: Any = None  # build_context() sets these three
        self.task: Any = None
        self.logical_date: Any = None
        self.execution_date: Any = None

    def xcom_push(self, key: str, value: Any) -> None:
        """Pushes a value under `key` (kept in the task's outputs: JSON where it fits,
        pickled otherwise)."""
        self.pushed[key] = value

    def _value(self, task_id: str, map_index: int, key: str) -> Any:
        """One XCom; _NOTSET when that task instance has none under `key`."""
        out = self.outputs.get(task_id, {}).get(str(map_index))
        if not isinstance(out, dict):
            return _NOTSET
        pickled = out.get(PICKLED)
        if isinstance(pickled, dict) and key in pickled:
            import base64
            import pickle

            return pickle.loads(base64.b64decode(pickled[key]))
        if key == "return_value" and isinstance(out.get("weir_return"), list):
            return out["weir_return"][0]  # the value with its type (a "42" stays a str)
        return out.get(key, _NOTSET)

    def _indexes(self, task_id: str) -> List[int]:
        return sorted(int(i) for i in self.outputs.get(task_id, {}))

    def xcom_pull(self, task_ids: Any = None, dag_id: Optional[str] = None,
                  key: str = "return_value", include_prior_dates: bool = False,
                  map_indexes: Any = None, default: Any = None, **_: Any) -> Any:
        """XComs of the run's tasks, as Airflow's: one task id (a str) gives its value
        (`default` when it has none), or the list of a mapped task's values; no task id,
        the first value of `key` of any task (in the order of the ids); a list of
        task ids gives the values that exist, in the order of the ids; `map_indexes` (an
        int or a list) picks instances.  Another DAG or earlier runs: not reachable."""
        if (dag_id is not None and dag_id != self.dag_id) or include_prior_dates:
            raise NotImplementedError("xcom_pull of another DAG or of earlier runs: weir "
                                      "gives a task the XComs of its own run only")
        if task_ids is None:
            ids = sorted(self.outputs)
        elif isinstance(task_ids, str):
            ids = [task_ids]
        else:
            ids = list(task_ids)
        single_index = map_indexes is None or isinstance(map_indexes, int)
        values: List[Any] = []
        for t in ids:
            if map_indexes is None:
                idx = self._indexes(t)
                idx = [-1] if idx in ([], [-1]) else [i for i in idx if i >= 0]
                if isinstance(task_ids, str) and idx != [-1]:
                    single_index = False  # a mapped task: the list of its values
            elif isinstance(map_indexes, int):
                idx = [map_indexes]
            else:
                idx = list(map_indexes)
            for i in idx:
                v = self._value(t, i, key)
                if v is not _NOTSET:
                    values.append(v)
        # one task id, or none (Airflow's "no filter": the first matching value, as
        # `ti.xcom_pull(key="k")` reads the one task's that pushed `k`)
        if (task_ids is None or isinstance(task_ids, str)) and single_index:
            return values[0] if values else default
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
        if hasattr(default, "has_value"):  # a Param: its default value
            default = default.value if default.has_value() else None
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
    params with the conf over them (WEIR_PARAM_<NAME>), the run's XComs
    ($WEIR_RUN_OUTPUTS), the variables (WEIR_VARIABLES); `prev_ds`/`next_ds` from the DAG's
    schedule around them."""
    from _weir_airflow.context import build_context as full_context

    logical = _date(env.get("WEIR_LOGICAL_DATE") or env.get("WEIR_TS") or
                    _dt.datetime.now(_dt.timezone.utc).isoformat())
    run_id = env.get("WEIR_RUN_ID", "manual__" + logical.isoformat())
    ti = TaskInstance(dag.dag_id, task.task_id, run_id, int(env.get("WEIR_TRY_NUMBER", "1")),
                      int(env.get("WEIR_MAP_INDEX", "-1")), run_outputs(env))
    start, end = env.get("WEIR_DATA_INTERVAL_START"), env.get("WEIR_DATA_INTERVAL_END")
    context = full_context(
        dag=dag, task=task, ti=ti, run_id=run_id, logical_date=logical,
        data_interval_start=_date(start) if start else None,
        data_interval_end=_date(end) if end else None,
        run_type=run_type_of(run_id), conf=run_conf(dag, env),
        variable_lookup=lambda key: variable_lookup(key, env),
        airflow_conf=airflow_configuration(env),
        **callbacks.context_values(env))  # prev_*_success, conn, test_mode
    # what a TaskInstance also holds in Airflow: its run, its task, its dates
    ti.dag_run = context["dag_run"]
    ti.task = task
    ti.logical_date = ti.execution_date = context["logical_date"]
    datasets.add_to_context(context, env)  # triggering_dataset_events, {out,in}let_events
    return context


def airflow_configuration(env: Mapping[str, str]) -> Any:
    """The context's `conf`: the AIRFLOW__SECTION__KEY variables (airflow.configuration)."""
    from airflow.configuration import from_environment

    return from_environment(env)


def run_outputs(env: Mapping[str, str]) -> Dict[str, Dict[str, Any]]:
    """The run's outputs weir wrote for this try ($WEIR_RUN_OUTPUTS); none without it."""
    path = env.get("WEIR_RUN_OUTPUTS")
    if not path:
        return {}
    with open(path) as f:
        data = json.load(f)
    return data if isinstance(data, dict) else {}


def variable_lookup(key: str, env: Mapping[str, str]) -> Optional[str]:
    """A variable's text for the context's `var` (airflow.models.variable's lookup)."""
    from airflow.models.variable import lookup

    return lookup(key, env)


def resolve(value: Any, ti: TaskInstance) -> Any:
    """An argument with each XComArg replaced by its upstream task's return value."""
    from airflow.models.baseoperator import XComArg

    if isinstance(value, XComArg):
        got = ti.xcom_pull(task_ids=value.operator.task_id, key=value.key, default=_NOTSET)
        if got is _NOTSET:
            raise KeyError("task %s has no XCom %r for task %s"
                           % (value.operator.task_id, value.key, ti.task_id))
        return got
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
    space, a quote, `$(...)`) becomes a variable WEIR_TEMPLATE_VALUE_n, set in the command's
    environment, so that whatever it holds and wherever it lands, the shell never runs it as
    code (docs/airflow.md).  place() writes each variable once the whole command is rendered:
    "${NAME}" where the shell reads bare words, ${NAME} inside a double-quoted string (one
    word there already; "${NAME}" would end the string and split the value)."""

    _MARK = re.compile("\x00(WEIR_TEMPLATE_VALUE_[0-9]+)\x00")

    def __init__(self) -> None:
        self.env: Dict[str, str] = {}

    def __call__(self, value: Any) -> str:
        text = str(value)  # None is "None", as Jinja writes it in Airflow
        if _SHELL_SAFE.match(text):
            return text
        name = "WEIR_TEMPLATE_VALUE_%d" % len(self.env)
        self.env[name] = text
        return "\x00%s\x00" % name

    def place(self, command: Any) -> Any:
        """The rendered command with each value's mark made its variable, quoted by where it
        stands (outside quotes, inside double quotes, inside single quotes: the name shows)."""
        if not isinstance(command, str) or "\x00" not in command:
            return command
        out: List[str] = []
        quote = ""  # "", "'" or '"'
        i = 0
        while i < len(command):
            m = self._MARK.match(command, i)
            if m:
                out.append("${%s}" % m.group(1) if quote else '"${%s}"' % m.group(1))
                i = m.end()
                continue
            c = command[i]
            out.append(c)
            if c == "\\" and quote != "'" and i + 1 < len(command):
                out.append(command[i + 1])
                i += 2
                continue
            if c in "'\"" and quote in ("", c):
                quote = c if not quote else ""
            i += 1
        return "".join(out)


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
    if hasattr(task, "bash_command"):
        task.bash_command = values.place(task.bash_command)
    task.template_env = values.env


# The output's key that holds the XComs that are no JSON: {KEY: base64 of the pickle}.
PICKLED = "weir_pickled"


def encode_outputs(out: Dict[str, Any]) -> Dict[str, Any]:
    """The output as JSON: each value that is no JSON value (a datetime, a set, an object)
    pickled under `weir_pickled`, its repr() in its place for the REST API (Airflow's
    XCom pickling); `weir_return` then left out (the pickle holds the value)."""
    import base64
    import pickle

    done: Dict[str, Any] = {}
    pickled: Dict[str, str] = {}
    for key, value in out.items():
        try:
            json.dumps(value, allow_nan=False)
            done[key] = value
        except (TypeError, ValueError):
            if key == "weir_return":
                continue
            pickled[key] = base64.b64encode(pickle.dumps(value)).decode()
            done[key] = repr(value)
    if pickled:
        if "return_value" in pickled:
            done.pop("weir_return", None)
        done[PICKLED] = pickled
    return done


def _check_branch(task: Any, choice: List[str]) -> None:
    """A branch's choice names direct downstream tasks only: else the try fails here, in
    its execute as Airflow's, so its failure callbacks run and not its success ones."""
    from airflow.exceptions import AirflowException

    dag_ids = set(task.dag.task_dict) if task.dag is not None else set()
    unknown = sorted(set(choice) - dag_ids)
    if unknown:
        raise AirflowException("'branch_task_ids' must contain only valid task_ids. "
                               "Invalid tasks found: %s." % set(unknown))
    below = sorted(set(choice) - set(task.downstream_task_ids))
    if below:
        raise AirflowException(
            "branch task %s chose %s, not among its direct downstream tasks (%s): weir "
            "runs a branch's choice of those only" % (
                task.task_id, ", ".join(below),
                ", ".join(sorted(task.downstream_task_ids)) or "none"))


def write_output(path: Optional[str], ti: TaskInstance, result: Any, push: bool,
                 task: Any = None) -> None:
    """$WEIR_OUTPUT: what the task pushed, `return_value` (when not None) and `weir_return`
    (the value in a list, for the templates of the tasks downstream); a branch's `branch`
    or a short circuit's `result` (its operator's weir_choice())."""
    out = dict(ti.pushed)
    from airflow.models.variable import WRITES

    if WRITES:  # Variable.set/.delete: the server writes them (the keys the file names)
        out["weir_set_variables"] = dict(WRITES)
    flow = getattr(task, "weir_flow", None)
    if flow is not None:
        choice = task.weir_choice(result)
        if flow == "branch":
            if choice is not None and not isinstance(choice, (str, list, tuple, set)):
                raise TypeError("branch task %s returned %r; expected a task id, a list of "
                                "them or None" % (ti.task_id, choice))
            from airflow.utils.task_group import expand_group_ids

            if isinstance(choice, str):
                choice = [choice]
            if choice is not None:
                # a task group's id stands for its roots, as in Airflow
                choice = expand_group_ids(task.dag, sorted(choice) if isinstance(choice, set)
                                          else list(choice))
                _check_branch(task, choice)
            out["branch"] = choice
        else:
            out["result"] = bool(choice)
    if push:
        if result is not None:
            out["return_value"] = result
        out["weir_return"] = [result]
        if getattr(task, "multiple_outputs", False):
            if not isinstance(result, dict):
                raise TypeError("task %s has multiple_outputs and returned %r; expected a "
                                "dict" % (ti.task_id, type(result).__name__))
            for k, v in result.items():
                out[str(k)] = v
    out = encode_outputs(out)
    if path and out:
        with open(path, "w") as f:
            json.dump(out, f)


def run(argv: List[str], env: Mapping[str, str], module: Any = None) -> int:
    """Runs the task named by argv (FILE DAG_ID TASK_ID); the exit status.  `module`: the
    file imported already (a warm interpreter's, _weir_airflow.zygote); None: imported here."""
    from airflow.exceptions import (AirflowFailException, AirflowSensorTimeout,
                                    AirflowSkipException)
    from airflow.models.param import resolve_dag_params

    path, dag_id, task_id = os.path.abspath(argv[0]), argv[1], argv[2]
    if module is None:
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
    callbacks.terminating()  # SIGTERM (a timeout, a kill) raised in the task
    tasklog.setup()  # logging.info() and self.log reach the task's log, as in Airflow
    context = build_context(dag, task, env)
    ti: TaskInstance = context["ti"]
    try:
        task = context["task"] = mapping.unmap(task, ti)  # a mapped task's instance
        if hasattr(task, "weir_expanded_count"):
            context["expanded_ti_count"] = task.weir_expanded_count
        # the XComArgs of the arguments and template fields: their tasks' values
        for field in ("op_args", "op_kwargs", *getattr(task, "template_fields", ())):
            if hasattr(task, field):  # and a @dag function's parameters: the run's values
                value = resolve_dag_params(getattr(task, field), context)
                setattr(task, field, resolve(value, ti))
        if render:
            render_template_fields(task, context)
        from airflow.operators.python import CURRENT_CONTEXT

        CURRENT_CONTEXT.append(context)  # get_current_context()
        task.pre_execute(context=context)
        callbacks.call(task, "on_execute_callback", context)
        if getattr(task, "reschedule", False) and hasattr(task, "poke_once"):
            # a sensor in reschedule mode: one poke; the server pokes again (spec: sensor:)
            done, result = task.poke_once(context)
            if not done:
                print("weir: not met yet; weir pokes again when it is due", flush=True)
                return NOT_YET_EXIT
        else:
            result = task.execute(context)
            task.post_execute(context=context, result=result)
        if getattr(task, "show_return_value_in_logs", True) and result is not None:
            print("Done. Returned value was: %r" % (result,), flush=True)
        mapping.after_try(dag, task, ti, result, context)
        datasets.push_outlet_events(context, task, ti)  # the outlets' extras
        write_output(env.get("WEIR_OUTPUT"), ti, result, task.do_xcom_push, task)
    except AirflowSkipException as exc:
        print("weir: task %s raised AirflowSkipException (%s): skipped" % (task_id, exc),
              file=sys.stderr)
        callbacks.call(task, "on_skipped_callback", context)
        return SKIP_EXIT
    except (AirflowFailException, AirflowSensorTimeout) as exc:
        traceback.print_exc()
        print("weir: task %s raised AirflowFailException: failed without a retry" % task_id,
              file=sys.stderr)
        callbacks.failed(task, context, exc, retry_allowed=False)
        return NO_RETRY_EXIT
    except SystemExit as exc:
        if exc.code in (0, None):
            raise
        # a callable's sys.exit(N): a failure, never read as a skip or a failure without retry
        print("weir: task %s called sys.exit(%r)" % (task_id, exc.code), file=sys.stderr)
        callbacks.failed(task, context, exc, retry_allowed=True)
        return 1
    except Exception as exc:
        traceback.print_exc()
        callbacks.failed(task, context, exc, retry_allowed=True)
        return 1
    callbacks.call(task, "on_success_callback", context)
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
