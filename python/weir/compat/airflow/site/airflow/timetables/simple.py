"""airflow.timetables.simple: NullTimetable (None), OnceTimetable (@once) and
ContinuousTimetable (@continuous) (weir's Airflow-compatible layer)."""

from __future__ import annotations

from airflow.timetables.base import Timetable


class NullTimetable(Timetable):
    """No schedule: runs only when triggered."""

    can_be_scheduled = False
    periodic = False
    description = "Never, external triggers only"


class OnceTimetable(Timetable):
    """One run, at start_date."""

    periodic = False
    description = "Once, as soon as possible"


class ContinuousTimetable(Timetable):
    """A run as soon as the previous one ends: max_active_runs must be 1."""

    active_runs_limit = 1
    description = "As frequently as possible, but only one run at a time."
