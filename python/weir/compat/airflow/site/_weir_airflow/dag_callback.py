"""A DAG's own callbacks: `python3 -m _weir_airflow.dag_callback FILE DAG_ID`, run by the
server's notifier when a run ends (the DAG's `on_success` / `on_failure` notification of kind
`command`, `as_task_user`: spec.dag_to_spec() writes it for a DAG with `on_success_callback`
or `on_failure_callback`), and when a task misses its SLA (the DAG's `on_sla_miss`, for
`sla_miss_callback`: called with Airflow's five arguments, sla_miss()).

The event comes in the environment the notifier gives a command (WEIR_EVENT run_success or
run_failure, WEIR_RUN_ID, WEIR_LOGICAL_DATE, WEIR_REASON); the DAG file is imported again
and each callback called with a context as Airflow's (that of the DAG's last task, with
`reason`: "success", "task_failure" or, for a run past its dagrun_timeout, "timed_out").  Exit 1 when a callback raised: the delivery's record
shows the failure.
"""

from __future__ import annotations

import datetime
import os
import sys
import traceback
from typing import Any, List, Mapping

from _weir_airflow.processor import dags_of, import_file, prepare_path


def callbacks_of(dag: Any, name: str) -> List[Any]:
    """The DAG's callbacks of one kind, as a list."""
    value = dag.other.get(name)
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def command(fileloc: str, dag_id: str, python: str) -> str:
    """The notification's command that runs this module for the DAG."""
    import shlex

    from _weir_airflow.spec import SITE

    words = [python, "-m", "_weir_airflow.dag_callback", fileloc, dag_id]
    return "PYTHONPATH=%s exec %s" % (shlex.quote(SITE), " ".join(shlex.quote(w) for w in words))


def apply(dag: Any, doc: Any, fileloc: str, python: str) -> None:
    """The DAG's document with its run-level notifications for its callbacks (none: as it
    is)."""
    for name, key in (("on_success_callback", "on_success"),
                      ("on_failure_callback", "on_failure"),
                      ("sla_miss_callback", "on_sla_miss")):
        if callbacks_of(dag, name):
            doc[key] = [{"command": command(fileloc, dag.dag_id, python), "as_task_user": True,
                         "retries": 0}]


def run(path: str, dag_id: str, env: Mapping[str, str]) -> int:
    """Calls the DAG's callbacks for the run's end the environment tells; the exit status."""
    from _weir_airflow.run_task import build_context

    module = import_file(path)
    dag = next((d for d in dags_of(module) if d.dag_id == dag_id), None)
    if dag is None or not dag.task_dict:
        print("weir: %s defines no DAG %s any more" % (path, dag_id), file=sys.stderr)
        return 1
    if dag.fileloc is None:
        dag.fileloc = path
    if env.get("WEIR_EVENT") == "sla_miss":
        return sla_miss(dag, env)
    success = env.get("WEIR_EVENT") == "run_success"
    fns = callbacks_of(dag, "on_success_callback" if success else "on_failure_callback")
    context = build_context(dag, dag.tasks[-1], env)
    # Airflow's reasons: a run past its dagrun_timeout fails with "timed_out" (the server's
    # run reason, WEIR_REASON)
    context["reason"] = ("success" if success
                         else "timed_out" if env.get("WEIR_REASON") == "timed_out"
                         else "task_failure")
    rc = 0
    for fn in fns:
        try:
            fn(context)
        except Exception:
            traceback.print_exc()
            rc = 1
    return rc


class SlaMiss:
    """A missed SLA as Airflow's `SlaMiss` row shows it to the callback."""

    def __init__(self, dag_id: str, task_id: str, execution_date: Any, timestamp: Any) -> None:
        self.dag_id = dag_id
        self.task_id = task_id
        self.execution_date = execution_date
        self.timestamp = timestamp
        self.email_sent = False
        self.notification_sent = False
        self.description = None
        self.map_index = -1

    def __repr__(self) -> str:
        return "<SlaMiss: %s.%s %s>" % (self.dag_id, self.task_id, self.execution_date)


def sla_miss(dag: Any, env: Mapping[str, str]) -> int:
    """The DAG's sla_miss_callback for one miss (the notifier's WEIR_TASK_ID, WEIR_STATE,
    WEIR_LOGICAL_DATE), called as Airflow calls it: `(dag, task_list, blocking_task_list,
    slas, blocking_tis)`; the task that missed is blocking while it has not succeeded."""
    import pendulum

    from _weir_airflow.run_task import build_context

    task_id = env.get("WEIR_TASK_ID", "")
    task = dag.task_dict.get(task_id)
    if task is None:
        print("weir: DAG %s has no task %s any more" % (dag.dag_id, task_id), file=sys.stderr)
        return 1
    from _weir_airflow.run_task import _date

    now = pendulum.instance(datetime.datetime.now(datetime.timezone.utc))
    text = env.get("WEIR_LOGICAL_DATE")
    when = pendulum.instance(_date(text)) if text else now
    line = "%s on %s" % (task_id, when.isoformat())
    slas = [SlaMiss(dag.dag_id, task_id, when, now)]
    blocking = env.get("WEIR_STATE") not in ("success", "skipped")
    blocking_tis = []
    if blocking:
        ti = build_context(dag, task, env)["ti"]
        ti.state = env.get("WEIR_STATE")
        blocking_tis.append(ti)
    rc = 0
    for fn in callbacks_of(dag, "sla_miss_callback"):
        try:
            fn(dag, line, line if blocking else "", slas, blocking_tis)
        except Exception:
            traceback.print_exc()
            rc = 1
    return rc


def main() -> None:
    """Entry point."""
    if len(sys.argv) != 3:
        print("usage: python3 -m _weir_airflow.dag_callback FILE DAG_ID", file=sys.stderr)
        sys.exit(2)
    path = os.path.abspath(sys.argv[1])
    prepare_path(path, None)
    rc = run(path, sys.argv[2], os.environ)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(rc)


if __name__ == "__main__":
    main()
