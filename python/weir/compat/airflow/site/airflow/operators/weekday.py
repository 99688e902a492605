"""airflow.operators.weekday: BranchDayOfWeekOperator, a branch (weir's `branch: true`,
docs/dags.md) on the day of the week of now, in the DAG's time zone, or of the run's logical
date."""

from __future__ import annotations

import datetime as _dt
from typing import Any, Dict, Iterable, Sequence, Union

from airflow.models.baseoperator import BaseOperator
from airflow.utils.weekday import WeekDay


def push_branch(context: Dict[str, Any], ids: Union[str, Iterable[str]]) -> Any:
    """The branch chosen: pushed as `branch` (what weir's branch task reads) and returned
    (Airflow's XCom of a branch operator)."""
    chosen = ids if isinstance(ids, str) else list(ids)
    context["ti"].xcom_push("branch", chosen)
    return chosen


def now_in(dag: Any) -> _dt.datetime:
    """Now, in the DAG's time zone (UTC without one)."""
    now = _dt.datetime.now(_dt.timezone.utc)
    tz = getattr(dag, "timezone", None)
    if tz is not None:
        try:
            return now.astimezone(tz)
        except TypeError:
            pass
    return now


class BranchDayOfWeekOperator(BaseOperator):
    """Follows `follow_task_ids_if_true` on the days of `week_day`, else
    `follow_task_ids_if_false`."""

    def __init__(self, *, follow_task_ids_if_true: Union[str, Iterable[str]],
                 follow_task_ids_if_false: Union[str, Iterable[str]],
                 week_day: Any, use_task_logical_date: bool = False,
                 use_task_execution_day: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.follow_task_ids_if_true = follow_task_ids_if_true
        self.follow_task_ids_if_false = follow_task_ids_if_false
        self.week_day = week_day
        self.use_task_logical_date = use_task_logical_date or use_task_execution_day
        self._week_day_num = WeekDay.validate_week_day(week_day)

    def choose_branch(self, context: Dict[str, Any]) -> Union[str, Iterable[str]]:
        """The ids to follow."""
        now = context["logical_date"] if self.use_task_logical_date else now_in(self.dag)
        if now.isoweekday() in self._week_day_num:
            return self.follow_task_ids_if_true
        return self.follow_task_ids_if_false

    def execute(self, context: Dict[str, Any]) -> Any:
        """Chooses."""
        return push_branch(context, self.choose_branch(context))

    @property
    def branch_targets(self) -> Sequence[str]:
        """Every task id it may follow."""
        return branch_ids(self.follow_task_ids_if_true, self.follow_task_ids_if_false)


def branch_ids(*choices: Union[str, Iterable[str]]) -> Sequence[str]:
    """The task ids of the choices."""
    out = []
    for c in choices:
        out.extend([c] if isinstance(c, str) else list(c))
    return out
