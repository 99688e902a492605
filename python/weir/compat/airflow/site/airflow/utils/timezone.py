"""airflow.utils.timezone: aware datetimes in UTC, as DAG files make them
(`timezone.datetime(2024, 1, 1)`, `timezone.utcnow()`)."""

from __future__ import annotations

import datetime as _dt
from typing import Any, Optional

utc = _dt.timezone.utc


def utcnow() -> _dt.datetime:
    """Now, aware, in UTC."""
    return _dt.datetime.now(utc)


def datetime(*args: Any, **kwargs: Any) -> _dt.datetime:
    """A datetime, UTC when no tzinfo is given (Airflow's)."""
    if "tzinfo" not in kwargs and len(args) < 8:
        kwargs["tzinfo"] = utc
    return _dt.datetime(*args, **kwargs)


def is_localized(value: _dt.datetime) -> bool:
    """Whether the datetime is aware."""
    return value.utcoffset() is not None


def is_naive(value: _dt.datetime) -> bool:
    """Whether the datetime is naive."""
    return value.utcoffset() is None


def make_aware(value: _dt.datetime, timezone: Optional[_dt.tzinfo] = None) -> _dt.datetime:
    """A naive datetime placed in `timezone` (UTC by default)."""
    if is_localized(value):
        raise ValueError("make_aware expects a naive datetime, got %s" % value)
    return value.replace(tzinfo=timezone or utc)


def convert_to_utc(value: Optional[_dt.datetime]) -> Optional[_dt.datetime]:
    """The datetime in UTC (a naive one is taken as UTC)."""
    if value is None:
        return None
    if is_naive(value):
        return value.replace(tzinfo=utc)
    return value.astimezone(utc)


def parse(text: str) -> _dt.datetime:
    """An ISO 8601 text as an aware datetime (UTC when it names no offset)."""
    value = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    return value if is_localized(value) else value.replace(tzinfo=utc)


__all__ = ["convert_to_utc", "datetime", "is_localized", "is_naive", "make_aware", "parse",
           "utc", "utcnow"]
