"""airflow.utils.weekday: WeekDay, the days of the week numbered as isoweekday()."""

from __future__ import annotations

import enum
from typing import Any, Iterable, Set


@enum.unique
class WeekDay(enum.IntEnum):
    """Python's isoweekday numbers."""

    MONDAY = 1
    TUESDAY = 2
    WEDNESDAY = 3
    THURSDAY = 4
    FRIDAY = 5
    SATURDAY = 6
    SUNDAY = 7

    @classmethod
    def get_weekday_number(cls, week_day_str: str) -> int:
        """The number of a day's name (any case)."""
        name = week_day_str.upper()
        if name not in cls.__members__:
            raise AttributeError('Invalid Week Day passed: "%s"' % week_day_str)
        return int(cls[name])

    @classmethod
    def convert(cls, day: Any) -> int:
        """A day's number from its name or a WeekDay."""
        if isinstance(day, WeekDay):
            return int(day)
        return cls.get_weekday_number(day)

    @classmethod
    def validate_week_day(cls, week_day: Any) -> Set[int]:
        """The numbers of a day, or of a set, list or tuple of days."""
        if isinstance(week_day, str):
            return {cls.get_weekday_number(week_day)}
        if isinstance(week_day, WeekDay):
            return {int(week_day)}
        if isinstance(week_day, Iterable):
            return {cls.convert(d) for d in week_day}
        raise TypeError("Unsupported Type for week_day parameter: %s. Input should be "
                        "iterable type: str, set, list, dict or Weekday enum type"
                        % type(week_day))
