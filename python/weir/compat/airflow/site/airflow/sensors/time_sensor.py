"""airflow.sensors.time_sensor: TimeSensor (and TimeSensorAsync), until a time of day."""

from __future__ import annotations

import datetime as _dt
from typing import Any, Dict

from airflow.sensors.base import BaseSensorOperator


class TimeSensor(BaseSensorOperator):
    """Met once the current time of day (UTC) is past `target_time`, as Airflow's (whose
    default time zone is UTC)."""

    def __init__(self, *, target_time: _dt.time, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not isinstance(target_time, _dt.time):
            raise TypeError("task %s: target_time: expected a datetime.time, got %r"
                            % (self.task_id, target_time))
        self.target_time = target_time

    def poke(self, context: Dict[str, Any]) -> bool:
        """Whether now's time of day is past the target."""
        now = _dt.datetime.now(_dt.timezone.utc)
        target = self.target_time
        if target.tzinfo is not None:
            now = now.astimezone(target.tzinfo)
            target = target.replace(tzinfo=None)
        return now.time().replace(tzinfo=None) > target


class TimeSensorAsync(TimeSensor):
    """Deferrable in Airflow: waits in reschedule mode here."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("deferrable", True)
        super().__init__(**kwargs)


__all__ = ["TimeSensor", "TimeSensorAsync"]
