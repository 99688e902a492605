"""airflow.sensors.time_delta: TimeDeltaSensor (and TimeDeltaSensorAsync), until the end of
the run's data interval plus a delta."""

from __future__ import annotations

import datetime as _dt
from typing import Any, Dict

from airflow.sensors.base import BaseSensorOperator


def utc(value: _dt.datetime) -> _dt.datetime:
    """An aware UTC datetime of the standard library (a naive one is UTC).  A pendulum
    DateTime (the context's dates) becomes a plain datetime: pendulum's astimezone() to a
    standard tzinfo gives a DateTime that cannot add a timedelta."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=_dt.timezone.utc)
    return _dt.datetime.fromtimestamp(value.timestamp(), _dt.timezone.utc)


class TimeDeltaSensor(BaseSensorOperator):
    """Met once now is past the run's data_interval_end plus `delta`."""

    def __init__(self, *, delta: _dt.timedelta, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if not isinstance(delta, _dt.timedelta):
            raise TypeError("task %s: delta: expected a timedelta, got %r"
                            % (self.task_id, delta))
        self.delta = delta

    def poke(self, context: Dict[str, Any]) -> bool:
        """Whether now is past the target."""
        end = context.get("data_interval_end") or context["logical_date"]
        target = utc(end) + self.delta
        return _dt.datetime.now(_dt.timezone.utc) > target


class TimeDeltaSensorAsync(TimeDeltaSensor):
    """Deferrable in Airflow: waits in reschedule mode here."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("deferrable", True)
        super().__init__(**kwargs)


__all__ = ["TimeDeltaSensor", "TimeDeltaSensorAsync"]
