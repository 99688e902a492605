"""The previous and next schedule times of an Airflow DAG whose schedule is a data-interval
timetable (a cron expression or preset, a `timedelta` or a `relativedelta`), in the DAG's
time zone, with daylight saving handled as Airflow 2.x's `CronDataIntervalTimetable` and
`DeltaDataIntervalTimetable` handle it.  The templating context (context.py) uses it for
`prev_ds`, `next_ds` and a run's default data interval.

Cron: five fields (minute, hour, day of month, month, day of week; names such as `jan` and
`mon`, ranges, lists, steps; `7` is Sunday too) or a preset (`@hourly`, `@daily`,
`@midnight`, `@weekly`, `@monthly`, `@quarterly`, `@yearly`, `@annually`).  When both the
day of month and the day of week are restricted, a day matching either matches (cron's
rule).  Times are found on the DAG's wall clock, then placed on the time line:

- a wall-clock time that occurs twice (the autumn change) is its second occurrence;
- one that does not occur (the spring change) is moved forward by the gap (02:30 -> 03:30);
- an expression that fires at more than one time of day (more than one minute or hour:
  `0 * * * *`, `0 6,18 * * *`; Airflow's `_is_schedule_fixed` is false) steps by the
  wall-clock difference on the time line instead, so that an hourly DAG keeps firing every
  hour through both changes.  weir's scheduler (src/model/cron.c) follows the same rules.

Results are pendulum DateTimes in UTC, as Airflow stores and templates them, when pendulum
is imported; a task's process that has not imported it (no template, a DAG file that does not
use pendulum) gets aware `datetime`s in UTC instead, computed the same way for a DAG in UTC,
and pendulum is imported only for a DAG in another time zone.
"""

from __future__ import annotations

import sys
from datetime import date, datetime, timedelta
from datetime import time as dtime
from datetime import timezone as _dt_timezone
from datetime import tzinfo
from typing import TYPE_CHECKING, Any, Optional, Union

if TYPE_CHECKING:
    from dateutil.relativedelta import relativedelta
    from pendulum.datetime import DateTime
    from pendulum.tz.timezone import Timezone

Schedule = Union[str, timedelta, "relativedelta", None, object]
"""What a DAG's `schedule` may be; only strings and deltas are data-interval schedules."""

_PRESETS = {
    "@hourly": "0 * * * *",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@weekly": "0 0 * * 0",
    "@monthly": "0 0 1 * *",
    "@quarterly": "0 0 1 */3 *",
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
}
_NOT_INTERVAL = {"@once", "@continuous"}
_MONTHS = {
    name: i + 1
    for i, name in enumerate(
        ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    )
}
_WEEKDAYS = {name: i for i, name in enumerate(["sun", "mon", "tue", "wed", "thu", "fri", "sat"])}
# the longest wait between two matching days: 29 February can be 8 years away
_SEARCH_DAYS = 366 * 9


def _pendulum_loaded() -> bool:
    return "pendulum" in sys.modules


def as_timezone(tz: Union[str, tzinfo, None]) -> "Timezone":
    """A pendulum time zone from a name ("Europe/Amsterdam"), a pendulum zone, or a tzinfo
    with a `key` (zoneinfo) or `zone` (pytz) naming one; None is UTC.  An unknown name raises
    ValueError naming it.  UTC without pendulum imported is the standard library's."""
    if not _pendulum_loaded() and (tz is None or tz == "UTC" or tz is _dt_timezone.utc):
        return _dt_timezone.utc  # type: ignore[return-value]
    from pendulum.tz import timezone as _pendulum_timezone
    from pendulum.tz.timezone import Timezone

    if tz is None:
        return _pendulum_timezone("UTC")
    if isinstance(tz, Timezone):
        return tz
    name = tz if isinstance(tz, str) else getattr(tz, "key", None) or getattr(tz, "zone", None)
    if not isinstance(name, str):
        raise ValueError(f"time zone {tz!r}: expected a name such as 'Europe/Amsterdam'")
    try:
        return _pendulum_timezone(name)
    except Exception as exc:  # pendulum raises its own InvalidTimezone
        raise ValueError(f"time zone {name!r}: unknown ({exc})") from None


def _field(text: str, lo: int, hi: int, names: dict[str, int], what: str, expr: str) -> list[int]:
    """The sorted values one cron field allows."""
    out: set[int] = set()

    def value(tok: str) -> int:
        tok = tok.lower()
        if tok in names:
            return names[tok]
        if not tok.isdigit():
            raise ValueError(f"cron expression {expr!r}: {what} {tok!r} is not a number")
        v = int(tok)
        if not lo <= v <= hi:
            raise ValueError(f"cron expression {expr!r}: {what} {v} is outside {lo}-{hi}")
        return v

    for part in text.split(","):
        step = 1
        if "/" in part:
            part, step_text = part.split("/", 1)
            if not step_text.isdigit() or int(step_text) == 0:
                raise ValueError(
                    f"cron expression {expr!r}: {what} step {step_text!r} is not a positive number"
                )
            step = int(step_text)
        if part in ("*", "?"):
            first, last = lo, hi
        elif "-" in part:
            a, b = part.split("-", 1)
            first, last = value(a), value(b)
            if first > last:
                raise ValueError(f"cron expression {expr!r}: {what} range {part!r} runs backwards")
        else:
            first = value(part)
            last = hi if step > 1 else first
        out.update(range(first, last + 1, step))
    return sorted(out)


class Cron:
    """A parsed five-field cron expression (or preset); `next_after` and `prev_before` work
    on naive wall-clock datetimes."""

    def __init__(self, expression: str) -> None:
        text = _PRESETS.get(expression.strip().lower(), expression.strip())
        fields = text.split()
        if len(fields) != 5:
            raise ValueError(
                f"cron expression {expression!r}: expected 5 fields (minute hour day-of-month "
                f"month day-of-week) or a preset such as @daily, got {len(fields)} fields"
            )
        self.expression = expression
        self.minutes = _field(fields[0], 0, 59, {}, "minute", expression)
        self.hours = _field(fields[1], 0, 23, {}, "hour", expression)
        self.days = set(_field(fields[2], 1, 31, {}, "day of month", expression))
        self.months = set(_field(fields[3], 1, 12, _MONTHS, "month", expression))
        weekdays = _field(fields[4], 0, 7, _WEEKDAYS, "day of week", expression)
        self.weekdays = {d % 7 for d in weekdays}
        self.any_day = fields[2] in ("*", "?")
        self.any_weekday = fields[4] in ("*", "?")
        # Airflow's _is_schedule_fixed: one time of day, placed on the wall clock
        self.fixed = len(self.minutes) == 1 and len(self.hours) == 1

    def _day_matches(self, d: date) -> bool:
        if d.month not in self.months:
            return False
        dom = d.day in self.days
        dow = (d.weekday() + 1) % 7 in self.weekdays
        if self.any_day and self.any_weekday:
            return True
        if self.any_day:
            return dow
        if self.any_weekday:
            return dom
        return dom or dow

    def next_after(self, naive: datetime) -> datetime:
        """The first matching minute strictly after `naive`."""
        start = naive.replace(second=0, microsecond=0, tzinfo=None, fold=0) + timedelta(minutes=1)
        day = start.date()
        for _ in range(_SEARCH_DAYS):
            if self._day_matches(day):
                for h in self.hours:
                    for m in self.minutes:
                        candidate = datetime.combine(day, dtime(h, m))
                        if candidate >= start:
                            return candidate
            day += timedelta(days=1)
        raise ValueError(f"cron expression {self.expression!r}: matches no time")

    def prev_before(self, naive: datetime) -> datetime:
        """The last matching minute strictly before `naive`."""
        end = naive.replace(tzinfo=None, fold=0)
        day = end.date()
        for _ in range(_SEARCH_DAYS):
            if self._day_matches(day):
                for h in reversed(self.hours):
                    for m in reversed(self.minutes):
                        candidate = datetime.combine(day, dtime(h, m))
                        if candidate < end:
                            return candidate
            day -= timedelta(days=1)
        raise ValueError(f"cron expression {self.expression!r}: matches no time")


def to_utc(dt: datetime) -> "DateTime":
    """An aware datetime as a pendulum DateTime in UTC (naive ones are taken as UTC); an
    aware datetime in UTC when pendulum is not imported."""
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=_dt_timezone.utc)
    if not _pendulum_loaded():
        return dt.astimezone(_dt_timezone.utc)  # type: ignore[return-value]
    import pendulum

    return pendulum.instance(dt).in_timezone("UTC")


def _local(dt: datetime, tz: Any) -> Any:
    return dt.in_timezone(tz) if hasattr(dt, "in_timezone") else dt.astimezone(tz)


def _naive(dt: Any) -> datetime:
    return dt.naive() if hasattr(dt, "naive") else dt.replace(tzinfo=None)  # type: ignore[no-any-return]


class IntervalSchedule:
    """A data-interval timetable: a cron expression in a time zone, or a fixed delta."""

    def __init__(
        self,
        schedule: Union[str, timedelta, relativedelta],
        timezone: Union[str, tzinfo, None],
    ) -> None:
        self.timezone: Any = as_timezone(timezone)  # pendulum's, or the standard UTC
        self.cron = Cron(schedule) if isinstance(schedule, str) else None
        self.delta = None if isinstance(schedule, str) else schedule

    def _aware(self, naive: datetime) -> DateTime:
        # the second of two occurrences, the gap skipped forward (Airflow's make_aware)
        if self.timezone is _dt_timezone.utc:
            return to_utc(naive.replace(tzinfo=_dt_timezone.utc))
        return to_utc(self.timezone.convert(naive.replace(fold=1)))

    def next_after(self, current: datetime) -> DateTime:
        """The first schedule time after `current` (Airflow's `_get_next`)."""
        now = to_utc(current)
        if self.cron is None:
            return to_utc(now + self.delta)
        local = _local(now, self.timezone)
        naive = _naive(local)
        scheduled = self.cron.next_after(naive)
        if self.cron.fixed:
            return self._aware(scheduled)
        return to_utc(local + (scheduled - naive))

    def prev_before(self, current: datetime) -> DateTime:
        """The last schedule time before `current` (Airflow's `_get_prev`)."""
        now = to_utc(current)
        if self.cron is None:
            return to_utc(now - self.delta)
        local = _local(now, self.timezone)
        naive = _naive(local)
        scheduled = self.cron.prev_before(naive)
        if self.cron.fixed:
            return self._aware(scheduled)
        return to_utc(local - (naive - scheduled))

    def align_to_prev(self, current: datetime) -> DateTime:
        """`current` itself when it is a schedule time, else the one before it."""
        now = to_utc(current)
        if self.cron is None:
            return now
        prev = self.prev_before(now)
        return now if self.next_after(prev) == now else prev


def interval_schedule(
    schedule: Schedule, timezone: Union[str, tzinfo, None]
) -> IntervalSchedule | None:
    """The data-interval timetable of a DAG's `schedule`, or None when it is none (None,
    "@once", "@continuous", a timetable object, datasets).  A bad cron expression raises
    ValueError naming it."""
    if isinstance(schedule, str):
        if schedule.strip().lower() in _NOT_INTERVAL:
            return None
        return IntervalSchedule(schedule, timezone)
    if isinstance(schedule, timedelta) or type(schedule).__name__ == "relativedelta":
        return IntervalSchedule(schedule, timezone)
    return None


def next_interval_end(dag: Any, end: datetime) -> Optional[DateTime]:
    """The end of the data interval after the one that ends at `end`, by the DAG's schedule
    (LatestOnlyOperator's window); None for a DAG without an interval schedule."""
    schedule = getattr(dag, "schedule", getattr(dag, "schedule_interval", None))
    timetable = interval_schedule(schedule, getattr(dag, "timezone", None))
    return timetable.next_after(to_utc(end)) if timetable is not None else None
