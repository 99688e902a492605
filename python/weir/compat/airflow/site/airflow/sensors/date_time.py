"""airflow.sensors.date_time: DateTimeSensor (and DateTimeSensorAsync), until a datetime
(`target_time` is templated: "{{ data_interval_end + macros.timedelta(hours=1) }}")."""

from __future__ import annotations

import datetime as _dt
from typing import Any, Dict, Sequence, Union

from airflow.sensors.base import BaseSensorOperator
from airflow.sensors.time_delta import utc


class DateTimeSensor(BaseSensorOperator):
    """Met once now (UTC) is past `target_time`."""

    template_fields: Sequence[str] = ("target_time",)

    def __init__(self, *, target_time: Union[str, _dt.datetime], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if isinstance(target_time, _dt.datetime):
            self.target_time = target_time.isoformat()
        elif isinstance(target_time, str):
            self.target_time = target_time
        else:
            raise TypeError("task %s: target_time: expected a str or a datetime, got %r"
                            % (self.task_id, target_time))

    def target(self) -> _dt.datetime:
        """The rendered target as an aware datetime."""
        text = str(self.target_time).strip().replace("Z", "+00:00")
        try:
            return utc(_dt.datetime.fromisoformat(text))
        except ValueError:
            raise ValueError("task %s: target_time %r: expected an ISO 8601 datetime"
                             % (self.task_id, self.target_time)) from None

    def poke(self, context: Dict[str, Any]) -> bool:
        """Whether now is past the target."""
        return _dt.datetime.now(_dt.timezone.utc) > self.target()


class DateTimeSensorAsync(DateTimeSensor):
    """Deferrable in Airflow: waits in reschedule mode here."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("deferrable", True)
        super().__init__(**kwargs)


__all__ = ["DateTimeSensor", "DateTimeSensorAsync"]
