"""airflow.timetables.base: what a custom timetable is written against (weir's
Airflow-compatible layer).  weir's scheduler runs its schedules in C and calls no Python: the
DAG processor calls a custom timetable's next_dagrun_info when it parses the file and hands the
server the next runs it gave (_weir_airflow/timetable_runs.py, docs/airflow.md "Custom
timetables")."""

from __future__ import annotations

import datetime as _dt
from typing import Any, Dict, NamedTuple, Optional


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
        """What the UI shows as the schedule: the class's name unless the timetable says."""
        return type(self).__name__

    def validate(self) -> None:
        """Raises AirflowTimetableInvalid when the timetable cannot work (none here)."""

    def serialize(self) -> Dict[str, Any]:
        return {}

    @classmethod
    def deserialize(cls, data: Dict[str, Any]) -> "Timetable":
        return cls()

    def infer_manual_data_interval(self, *, run_after: _dt.datetime) -> DataInterval:
        """A manual run's data interval (a subclass says; weir's server does not call it)."""
        raise NotImplementedError()

    def next_dagrun_info(self, *, last_automated_data_interval: Optional[DataInterval],
                         restriction: TimeRestriction) -> Optional[DagRunInfo]:
        """The run after the latest scheduled one (None: no more); a subclass says."""
        raise NotImplementedError()
