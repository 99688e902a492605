"""A task's callbacks (`on_execute_callback`, `on_success_callback`, `on_failure_callback`,
`on_retry_callback`, `on_skipped_callback`: one callable or a list, from the task's arguments
or default_args) and the context values the server tells a try beyond the run's own
(docs/airflow.md, "Callbacks"; docs/internals/airflow.md).

run_task calls them in the task's process, where Airflow calls them: on_execute before
execute(), then on_success, or on_failure / on_retry with the exception in the context (a
retry when the try's number is at most the task's retries and the error is no
AirflowFailException), or on_skipped.  A try ended from outside (its execution_timeout, a
kill) gets SIGTERM first: terminating() turns it into an AirflowException raised in the task,
so the failure callbacks run then too, as in Airflow.  An error inside a callback is printed
and ignored, as Airflow logs it.
"""

from __future__ import annotations

import datetime as _dt
import signal
import sys
import traceback
from typing import Any, Callable, Dict, List, Mapping, Optional

NAMES = ("on_execute_callback", "on_success_callback", "on_failure_callback",
         "on_retry_callback", "on_skipped_callback")


# ti.state as each callback sees it in Airflow
_STATE_SEEN = {"on_success_callback": "success", "on_failure_callback": "failed",
               "on_retry_callback": "up_for_retry", "on_skipped_callback": "skipped"}


def of(task: Any, name: str) -> List[Callable[..., Any]]:
    """The task's callbacks of one kind, as a list."""
    value = getattr(task, "other", {}).get(name)
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def call(task: Any, name: str, context: Dict[str, Any],
         exception: Optional[BaseException] = None) -> None:
    """Calls each callback of kind `name` with the context (and `exception` in it)."""
    fns = of(task, name)
    if not fns:
        return
    ti = context.get("ti")
    if ti is not None and name in _STATE_SEEN:  # the state the callback sees, as Airflow's
        ti.state = _STATE_SEEN[name]
    if exception is not None:
        context["exception"] = exception
    for fn in fns:
        try:
            fn(context)
        except Exception:  # a callback's failure changes nothing, as in Airflow
            print("weir: task %s: %s %s failed:" % (task.task_id, name,
                                                     getattr(fn, "__name__", repr(fn))),
                  file=sys.stderr)
            traceback.print_exc()


def failed(task: Any, context: Dict[str, Any], exception: BaseException,
           retry_allowed: bool) -> None:
    """A try that failed: on_retry when another try follows, else on_failure."""
    ti = context.get("ti")
    try_number = int(getattr(ti, "try_number", 1))
    retries = int(getattr(task, "retries", 0) or 0)
    name = "on_retry_callback" if retry_allowed and try_number <= retries else \
        "on_failure_callback"
    call(task, name, context, exception)


def terminating() -> None:
    """SIGTERM (weir's end of a try from outside: its timeout, a kill) raised in the task
    as Airflow's AirflowException("Task received SIGTERM signal")."""
    from airflow.exceptions import AirflowException

    def handler(signum: int, frame: Any) -> None:
        # once: a second SIGTERM (a warm task gets its client's relay and may get the
        # cgroup's too) must not cut the failure callbacks short; the kill after the
        # grace still ends the try
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise AirflowException("Task received SIGTERM signal")

    signal.signal(signal.SIGTERM, handler)


def _date(text: Optional[str]) -> Optional[_dt.datetime]:
    if not text:
        return None
    return _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def context_values(env: Mapping[str, str]) -> Dict[str, Any]:
    """build_context's arguments from what the server tells the try: the DAG's latest
    successful run before this one (WEIR_PREV_SUCCESS_*), the connections the task lists
    (WEIR_CONN_<ID>: `conn`, any other raising AirflowNotFoundException), test_mode
    (WEIR_TEST_MODE, set by `weir tasks test`)."""
    from _weir_airflow.context import PreviousSuccess
    from airflow.exceptions import AirflowNotFoundException

    prev = None
    if env.get("WEIR_PREV_SUCCESS_LOGICAL_DATE"):
        prev = PreviousSuccess(
            logical_date=_date(env.get("WEIR_PREV_SUCCESS_LOGICAL_DATE")),
            data_interval_start=_date(env.get("WEIR_PREV_SUCCESS_DATA_INTERVAL_START")),
            data_interval_end=_date(env.get("WEIR_PREV_SUCCESS_DATA_INTERVAL_END")),
            start_date=_date(env.get("WEIR_PREV_SUCCESS_START_DATE")),
            end_date=_date(env.get("WEIR_PREV_SUCCESS_END_DATE")))

    def connection(conn_id: str) -> Any:
        from airflow.hooks.base import BaseHook, env_name

        if env_name(conn_id) not in env:
            return None
        return BaseHook.get_connection(conn_id)

    def missing(message: str) -> BaseException:
        return AirflowNotFoundException(
            message + " (weir gives a task only the connections it lists: an operator's "
            "*conn_id argument, or connections=[...]; docs/airflow.md)")

    return {"prev_success": prev, "connection_lookup": connection,
            "connection_error": missing, "test_mode": env.get("WEIR_TEST_MODE") == "1"}


def apply(task: Any, t: Dict[str, Any]) -> None:
    """The task's document `t` with its `sla` (a timedelta or seconds): weir's `sla:` from
    the run's start (Airflow measures it from the end of the run's data interval: the time
    a scheduled run starts)."""
    from _weir_airflow.spec import seconds

    sla = getattr(task, "other", {}).get("sla")
    if sla is not None:
        t["sla"] = {"within": max(1, seconds(sla, "task %s: sla" % task.task_id, task.lineno)),
                    "from": "run_start"}
