"""airflow.utils.dates: days_ago (deprecated in Airflow 2, still used by many DAG files)."""

import datetime as _dt


def days_ago(n: int, hour: int = 0, minute: int = 0, second: int = 0,
             microsecond: int = 0) -> _dt.datetime:
    """Midnight UTC (or the time given) `n` days before today."""
    today = _dt.datetime.now(_dt.timezone.utc).replace(
        hour=hour, minute=minute, second=second, microsecond=microsecond)
    return today - _dt.timedelta(days=n)
