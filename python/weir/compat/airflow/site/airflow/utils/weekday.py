"""airflow.utils.weekday: WeekDay, the days of the week as ISO numbers (Monday 1)."""

from __future__ import annotations

import enum
from typing import Any, Set


class WeekDay(enum.IntEnum):
    """A day of the week."""

    MONDAY = 1
    TUESDAY = 2
    WEDNESDAY = 3
    THURSDAY = 4
    FRIDAY = 5
    SATURDAY = 6
    SUNDAY = 7

    @classmethod
    def get_weekday_number(cls, week_day_str: str) -> int:
        """The ISO number of a day's name ("Monday": 1; any case)."""
        try:
            return int(cls[week_day_str.upper()])
        except KeyError:
            raise AttributeError('Invalid Week Day passed: "%s"' % week_day_str) from None

    @classmethod
    def convert(cls, day: Any) -> Set[int]:
        """A day, or a set / list of them, as ISO numbers."""
        if isinstance(day, WeekDay):
            return {int(day)}
        if isinstance(day, str):
            return {cls.get_weekday_number(day)}
        if isinstance(day, (set, frozenset, list, tuple)):
            out: Set[int] = set()
            for d in day:
                out |= cls.convert(d)
            return out
        raise TypeError("week_day: expected a day's name, a WeekDay or a set of them, got %r"
                        % (day,))


__all__ = ["WeekDay"]
