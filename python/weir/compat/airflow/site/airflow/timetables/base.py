"""airflow.timetables.base: what a custom timetable is written against (weir's
Airflow-compatible layer).  weir's scheduler runs its schedules in C and calls no Python, so a
DAG whose schedule is a Timetable subclass weir does not know is an import error naming the
class (_weir_airflow/spec.py, docs/airflow.md); these names let such a file import."""

from __future__ import annotations

import datetime as _dt
from typing import Any, NamedTuple, Optional


class DataInterval(NamedTuple):
    """A run's data interval."""

    start: _dt.datetime
    end: _dt.datetime

    @classmethod
    def exact(cls, at: _dt.datetime) -> "DataInterval":
        return cls(at, at)


class TimeRestriction(NamedTuple):
    """The DAG's start_date, end_date and catchup, as a timetable is told them."""

    earliest: Optional[_dt.datetime]
    latest: Optional[_dt.datetime]
    catchup: bool


class DagRunInfo(NamedTuple):
    """When a run is made and the interval it covers."""

    run_after: _dt.datetime
    data_interval: DataInterval

    @classmethod
    def exact(cls, at: _dt.datetime) -> "DagRunInfo":
        return cls(at, DataInterval.exact(at))

    @classmethod
    def interval(cls, start: _dt.datetime, end: _dt.datetime) -> "DagRunInfo":
        return cls(end, DataInterval(start, end))

    @property
    def logical_date(self) -> _dt.datetime:
        return self.data_interval.start


class Timetable:
    """The base of Airflow's timetables."""

    description: str = ""
    periodic: bool = True
    can_be_scheduled: bool = True
    run_ordering: Any = ("data_interval_end", "execution_date")
    active_runs_limit: Optional[int] = None

    @property
    def summary(self) -> str:
        return type(self).__name__
