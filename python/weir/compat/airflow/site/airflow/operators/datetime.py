"""airflow.operators.datetime: BranchDateTimeOperator, a branch (weir's `branch: true`) on
whether now (or the run's logical date) lies between target_lower and target_upper."""

from __future__ import annotations

import datetime as _dt
from typing import Any, Dict, Iterable, Optional, Sequence, Tuple, Union

from airflow.exceptions import AirflowException
from airflow.models.baseoperator import BaseOperator
from airflow.operators.weekday import branch_ids, push_branch

Target = Union[_dt.datetime, _dt.time, None]


def target_times_as_dates(base: _dt.datetime, lower: Target,
                          upper: Target) -> Tuple[Optional[_dt.datetime],
                                                  Optional[_dt.datetime]]:
    """The targets as datetimes on the base's day (times), the upper moved a day on when it
    falls before the lower, as Airflow's."""
    if isinstance(lower, _dt.datetime) and isinstance(upper, _dt.datetime):
        return lower, upper
    lo = _dt.datetime.combine(base.date(), lower) if isinstance(lower, _dt.time) else lower
    up = _dt.datetime.combine(base.date(), upper) if isinstance(upper, _dt.time) else upper
    if lo is None or up is None:
        return lo, up
    if up < lo:
        up += _dt.timedelta(days=1)
    return lo, up


def _aware(value: Optional[_dt.datetime], tz: Any) -> Optional[_dt.datetime]:
    """A naive datetime read in the DAG's time zone (UTC without one)."""
    if value is None or value.tzinfo is not None:
        return value
    if tz is not None and hasattr(tz, "localize"):
        return tz.localize(value)  # type: ignore[no-any-return]
    return value.replace(tzinfo=tz or _dt.timezone.utc)


class BranchDateTimeOperator(BaseOperator):
    """Follows `follow_task_ids_if_true` when now is within [target_lower, target_upper]."""

    def __init__(self, *, follow_task_ids_if_true: Union[str, Iterable[str]],
                 follow_task_ids_if_false: Union[str, Iterable[str]],
                 target_lower: Target = None, target_upper: Target = None,
                 use_task_logical_date: bool = False, use_task_execution_date: bool = False,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        for name, value in (("target_lower", target_lower), ("target_upper", target_upper)):
            if value is not None and not isinstance(value, (_dt.datetime, _dt.time)):
                raise TypeError("Expected datetime.datetime or datetime.time type for %s. "
                                "Got %s." % (name, type(value)))
        if target_lower is None and target_upper is None:
            raise AirflowException("Both target_upper and target_lower are None. At least one "
                                   "must be defined to be compared to the current datetime")
        self.target_lower = target_lower
        self.target_upper = target_upper
        self.follow_task_ids_if_true = follow_task_ids_if_true
        self.follow_task_ids_if_false = follow_task_ids_if_false
        self.use_task_logical_date = use_task_logical_date or use_task_execution_date

    def choose_branch(self, context: Dict[str, Any]) -> Union[str, Iterable[str]]:
        """The ids to follow."""
        if self.use_task_logical_date:
            now = context["logical_date"]
        else:
            now = _dt.datetime.now(_dt.timezone.utc)
        tz = getattr(self.dag, "timezone", None)
        lower, upper = target_times_as_dates(now, self.target_lower, self.target_upper)
        lower, upper = _aware(lower, tz), _aware(upper, tz)
        if upper is not None and upper < now:
            return self.follow_task_ids_if_false
        if lower is not None and lower > now:
            return self.follow_task_ids_if_false
        return self.follow_task_ids_if_true

    def execute(self, context: Dict[str, Any]) -> Any:
        """Chooses."""
        return push_branch(context, self.choose_branch(context))

    @property
    def branch_targets(self) -> Sequence[str]:
        """Every task id it may follow."""
        return branch_ids(self.follow_task_ids_if_true, self.follow_task_ids_if_false)
