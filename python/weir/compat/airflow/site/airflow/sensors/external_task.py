"""airflow.sensors.external_task: ExternalTaskSensor, weir's `sensor: external_task` (the
server reads its own records: no process waits, whatever the mode) unless it has an
`execution_date_fn`: then it pokes in Python as Airflow's does, the function called with the
logical date and the context, the other DAG's runs at the dates it gives read from the server
(_weir_airflow.external_runs); and ExternalTaskMarker, a task that does nothing whose
`marker:` makes a recursive clear clear the other DAG's task
(server/dag_manager/markers.c)."""

from __future__ import annotations

import datetime as _dt
import inspect
from typing import Any, Callable, Collection, Dict, List, Optional, Sequence

from airflow.exceptions import AirflowException, AirflowSkipException
from airflow.models.baseoperator import BaseOperator
from airflow.sensors.base import BaseSensorOperator


class ExternalTaskSensor(BaseSensorOperator):
    """Waits for tasks of another DAG (one, several, a task group; its whole run without
    any) in its run of the same logical date, or of the logical date minus
    `execution_delta` (weir's server pokes it: _weir_airflow.sensors)."""

    template_fields: Sequence[str] = ("external_dag_id", "external_task_id",
                                      "external_task_ids")

    def __init__(
        self,
        *,
        external_dag_id: str,
        external_task_id: Optional[str] = None,
        external_task_ids: Optional[Collection[str]] = None,
        external_task_group_id: Optional[str] = None,
        allowed_states: Optional[Collection[str]] = None,
        skipped_states: Optional[Collection[str]] = None,
        failed_states: Optional[Collection[str]] = None,
        execution_delta: Optional[_dt.timedelta] = None,
        execution_date_fn: Optional[Callable[..., Any]] = None,
        check_existence: bool = False,
        **kwargs: Any,
    ) -> None:
        kwargs.pop("poll_interval", None)  # the deferrable trigger's; poke_interval rules
        super().__init__(**kwargs)
        if external_task_id is not None and external_task_ids is not None:
            raise ValueError("Only one of `external_task_id` or `external_task_ids` may be "
                             "provided to ExternalTaskSensor; not both.")
        if external_task_group_id is not None and (external_task_id is not None or
                                                    external_task_ids is not None):
            raise ValueError("Values for `external_task_group_id` and `external_task_id` or "
                             "`external_task_ids` can't be set at the same time")
        if execution_delta is not None and execution_date_fn is not None:
            raise ValueError("Only one of `execution_delta` or `execution_date_fn` may be "
                             "provided to ExternalTaskSensor; not both.")
        if external_task_ids is not None and \
                len(list(external_task_ids)) > len(set(external_task_ids)):
            raise ValueError("Duplicate task_ids passed in external_task_ids parameter")
        self.external_dag_id = external_dag_id
        self.external_task_id = external_task_id
        self.external_task_ids: Optional[List[str]] = (
            [external_task_id] if external_task_id is not None else
            list(external_task_ids) if external_task_ids is not None else None)
        self.external_task_group_id = external_task_group_id
        self.allowed_states = [str(getattr(s, "value", s)) for s in
                               (allowed_states or ["success"])]
        self.skipped_states = [str(getattr(s, "value", s)) for s in (skipped_states or [])]
        self.failed_states = [str(getattr(s, "value", s)) for s in (failed_states or [])]
        self.execution_delta = execution_delta
        self.execution_date_fn = execution_date_fn
        self.check_existence = check_existence
        self._has_checked_existence = False

    # -- a poke in Python (with execution_date_fn; weir's server pokes the others) ----------
    def _dates(self, context: Dict[str, Any]) -> List[Any]:
        """The logical dates of the other DAG's runs to look at, as Airflow's: the run's own,
        minus execution_delta, or what execution_date_fn returns (one date or a list),
        called with the logical date and the context's keys it takes by name (all with
        **kwargs; `context` too, as older functions took it)."""
        logical = context["logical_date"]
        if self.execution_delta is not None:
            return [logical - self.execution_delta]
        if self.execution_date_fn is None:
            return [logical]
        kwargs = {k: v for k, v in context.items() if k not in ("execution_date",
                                                                 "logical_date")}
        kwargs["context"] = context
        params = inspect.signature(self.execution_date_fn).parameters
        if not any(p.kind == p.VAR_KEYWORD for p in params.values()):
            first = next(iter(params), None)
            kwargs = {k: v for k, v in kwargs.items() if k in params and k != first}
        got = self.execution_date_fn(logical, **kwargs)
        return list(got) if isinstance(got, (list, tuple)) else [got]

    def _fail(self, text: str) -> AirflowException:
        return AirflowSkipException(text + " Skipping due to soft_fail.") \
            if self.soft_fail else AirflowException(text)

    def _check_existence(self, answer: Dict[str, Any]) -> None:
        """check_existence: the DAG, each task and the group must be loaded by the server."""
        dag = self.external_dag_id
        if not answer.get("loaded"):
            raise self._fail("The external DAG %s does not exist." % dag)
        known = set(answer.get("task_ids") or [])
        for task_id in self.external_task_ids or []:
            if task_id not in known:
                raise self._fail("The external task %s in DAG %s does not exist."
                                 % (task_id, dag))
        group = self.external_task_group_id
        if group is not None and not any(t.startswith(group + ".") for t in known):
            raise self._fail("The external task group '%s' in DAG '%s' does not exist."
                             % (group, dag))

    def _count(self, answer: Dict[str, Any], states: List[str]) -> float:
        """Airflow's count: the awaited task instances (each mapped one) in `states` at the
        dates, over the number of tasks awaited; without tasks, the runs in `states`."""
        runs = answer.get("runs") or []
        ids = list(self.external_task_ids or [])
        if self.external_task_group_id is not None:
            prefix = self.external_task_group_id + "."
            ids = [t for t in answer.get("task_ids") or [] if t.startswith(prefix)]
            if not ids:
                return 0.0
        if ids:
            n = sum(1 for r in runs for ti in r.get("task_instances") or []
                    if ti.get("task_id") in ids and ti.get("state") in states)
            return n / len(ids)
        return float(sum(1 for r in runs if r.get("state") in states))

    def poke(self, context: Dict[str, Any]) -> bool:
        """One poke, as Airflow's: a task awaited (or the run) in failed_states fails it
        (skips with soft_fail), then one in skipped_states skips it; met when each date's
        awaited tasks (or run) are in allowed_states."""
        from _weir_airflow.external_runs import ReadError, read_runs

        dates = self._dates(context)
        what = (self.external_task_ids or self.external_task_group_id or
                "the run")
        self.log.info("Poking for %s of DAG %s at %s ...", what, self.external_dag_id,
                      ", ".join(str(d) for d in dates))
        try:
            answer = read_runs(str(self.external_dag_id), dates)
        except ReadError as e:
            raise AirflowException(str(e)) from e
        if self.check_existence and not self._has_checked_existence:
            self._check_existence(answer)
            self._has_checked_existence = True
        if self.failed_states and self._count(answer, self.failed_states) > 0:
            raise self._fail("Some of the external tasks %s in DAG %s failed."
                             % (what, self.external_dag_id) if what != "the run" else
                             "The external DAG %s failed." % self.external_dag_id)
        if self.skipped_states and self._count(answer, self.skipped_states) > 0:
            raise AirflowSkipException("The external tasks %s in DAG %s reached a state in "
                                       "our states-to-skip-on list. Skipping."
                                       % (what, self.external_dag_id))
        return self._count(answer, self.allowed_states) == len(dates)


class ExternalTaskMarker(BaseOperator):
    """Marks that a task of another DAG depends on this one: clearing this task with
    "downstream" and "recursive" clears that task (with its downstream) in the other DAG's
    run of the same logical date, as Airflow's; it runs as a task that does nothing."""

    template_fields: Sequence[str] = ("external_dag_id", "external_task_id",
                                      "execution_date")

    def __init__(self, *, external_dag_id: str, external_task_id: str,
                 execution_date: Optional[Any] = "{{ logical_date.isoformat() }}",
                 recursion_depth: int = 10, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.external_dag_id = external_dag_id
        self.external_task_id = external_task_id
        self.execution_date = execution_date
        if recursion_depth <= 0:
            raise ValueError("recursion_depth should be a positive integer")
        self.recursion_depth = recursion_depth

    def execute(self, context: Dict[str, Any]) -> None:
        """Nothing: a marker."""
        return None


__all__ = ["ExternalTaskSensor", "ExternalTaskMarker"]
