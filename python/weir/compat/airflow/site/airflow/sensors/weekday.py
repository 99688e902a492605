"""airflow.sensors.weekday: DayOfWeekSensor, until one of some days of the week."""

from __future__ import annotations

import datetime as _dt
from typing import Any, Dict, Set

from airflow.sensors.base import BaseSensorOperator
from airflow.utils.weekday import WeekDay


class DayOfWeekSensor(BaseSensorOperator):
    """Met on one of `week_day` ("Monday", a WeekDay, or a set/list of them): today's (UTC)
    day, or the run's logical date's with `use_task_logical_date`."""

    def __init__(self, *, week_day: Any, use_task_logical_date: bool = False,
                 **kwargs: Any) -> None:
        if "use_task_execution_day" in kwargs:  # the old name
            use_task_logical_date = bool(kwargs.pop("use_task_execution_day"))
        super().__init__(**kwargs)
        self.week_day = week_day
        self.use_task_logical_date = use_task_logical_date
        self._days: Set[int] = WeekDay.validate_week_day(week_day)

    def poke(self, context: Dict[str, Any]) -> bool:
        """Whether the day is one of the days."""
        if self.use_task_logical_date:
            day = context["logical_date"]
        else:
            day = _dt.datetime.now(_dt.timezone.utc)
        return int(day.isoweekday()) in self._days


__all__ = ["DayOfWeekSensor"]
