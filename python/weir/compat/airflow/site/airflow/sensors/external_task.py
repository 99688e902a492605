"""airflow.sensors.external_task: ExternalTaskSensor, weir's `sensor: external_task` (the
server reads its own records: no process waits, whatever the mode), and ExternalTaskMarker,
a task that does nothing whose `marker:` makes a recursive clear clear the other DAG's
task (server/dag_manager/markers.c)."""

from __future__ import annotations

import datetime as _dt
from typing import Any, Callable, Collection, Dict, List, Optional, Sequence

from airflow.exceptions import AirflowException
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

    def poke(self, context: Dict[str, Any]) -> bool:
        """weir's server pokes this sensor (_weir_airflow.sensors); never in Python."""
        raise AirflowException("ExternalTaskSensor is poked by weir's server, not in Python")


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
