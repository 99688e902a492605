"""airflow.timetables.events: EventsTimetable (weir's Airflow-compatible layer): a run at each
listed time; _weir_airflow/spec.py writes it as weir's `schedule: {events: [...]}`."""

from __future__ import annotations

import datetime as _dt
from typing import Iterable, Optional

from airflow.timetables.base import Timetable


class EventsTimetable(Timetable):
    """A run at each of `event_dates` (duplicates ignored), each one's data interval the
    instant itself; `restrict_to_events`: a manual run's data interval is the latest event
    before it (the first when none is); `presorted`: the dates are in order already."""

    def __init__(self, event_dates: Iterable[_dt.datetime], restrict_to_events: bool = False,
                 presorted: bool = False, description: Optional[str] = None) -> None:
        self.event_dates = list(event_dates)
        if not self.event_dates:
            raise ValueError("EventsTimetable: expected at least one event date")
        if not presorted:
            self.event_dates = sorted(self.event_dates)
        self.restrict_to_events = restrict_to_events
        if description is None:
            self.description = "%d Events between %s and %s" % (
                len(self.event_dates), self.event_dates[0], self.event_dates[-1])
            self._summary = "%d Events" % len(self.event_dates)
        else:
            self.description = self._summary = description

    @property
    def summary(self) -> str:
        return self._summary

    def __repr__(self) -> str:
        return self._summary
