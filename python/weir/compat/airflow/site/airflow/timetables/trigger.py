"""airflow.timetables.trigger: CronTriggerTimetable (weir's Airflow-compatible layer)."""

from __future__ import annotations

import datetime as _dt
from typing import Any


class CronTriggerTimetable:
    """A run at each fire time F of `cron` on the wall clock of `timezone`; its logical date
    and data interval start at F - `interval` (default: none) and end at F."""

    def __init__(self, cron: str, *, timezone: Any,
                 interval: _dt.timedelta = _dt.timedelta()) -> None:
        self._expression = cron
        self._timezone = timezone
        self._interval = interval

    @property
    def summary(self) -> str:
        return self._expression
