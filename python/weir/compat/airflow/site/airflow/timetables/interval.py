"""airflow.timetables.interval: data-interval timetables, the ones a cron string or a
timedelta schedule stands for (weir's Airflow-compatible layer)."""

from __future__ import annotations

import datetime as _dt
from typing import Any


class CronDataIntervalTimetable:
    """A run per interval between two fire times of `cron`, due when it ends, on the wall
    clock of `timezone` (a name or a tzinfo)."""

    def __init__(self, cron: str, timezone: Any) -> None:
        self._expression = cron
        self._timezone = timezone

    @property
    def summary(self) -> str:
        return self._expression


class DeltaDataIntervalTimetable:
    """A run per fixed `delta` from start_date."""

    def __init__(self, delta: _dt.timedelta) -> None:
        self._delta = delta

    @property
    def summary(self) -> str:
        return str(self._delta)
