"""Airflow 2.x's `macros` namespace, the object that templates see as `{{ macros }}`.

DAG files also import it as `airflow.macros` (the `airflow` package under `site/` re-exports
this module).  It holds what Airflow's own module holds: the standard-library helpers
`datetime` (the class), `timedelta`, `time`, `uuid`, `json`, `random` (the function
`random.random`, as in Airflow), the `dateutil` package (with `parser`, `relativedelta` and
`tz` loaded), and the date helpers `ds_add`, `ds_format` and `datetime_diff_for_humans`.

`dateutil`, `uuid`, `random` and pendulum are imported when first used (a task's process that never reads
`macros.dateutil` does not pay for them: docs/internals/airflow.md).
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta
from typing import Optional

from typing import Any

__all__ = [
    "dateutil",
    "datetime",
    "datetime_diff_for_humans",
    "ds_add",
    "ds_format",
    "json",
    "random",
    "time",
    "timedelta",
    "uuid",
]


def __getattr__(name: str) -> Any:
    """`macros.dateutil` (with its `parser`, `relativedelta`, `tz`), `macros.uuid` and
    `macros.random` (the function), imported on first use."""
    if name == "uuid":
        import uuid

        globals()["uuid"] = uuid
        return uuid
    if name == "random":
        from random import random

        globals()["random"] = random
        return random
    if name == "dateutil":
        import dateutil
        import dateutil.parser
        import dateutil.relativedelta
        import dateutil.tz

        globals()["dateutil"] = dateutil
        return dateutil
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


def ds_add(ds: str, days: int) -> str:
    """The date `ds` ("YYYY-MM-DD") moved by `days` (negative: back), as "YYYY-MM-DD".

    `ds_add("2015-01-01", 5)` is "2015-01-06"; `ds_add("2015-01-06", -5)` is "2015-01-01".
    A `ds` that is no "YYYY-MM-DD" date raises ValueError, as in Airflow."""
    if not days:
        return str(ds)
    moved = datetime.strptime(str(ds), "%Y-%m-%d") + timedelta(days=days)
    return moved.strftime("%Y-%m-%d")


def ds_format(ds: str, input_format: str, output_format: str) -> str:
    """`ds` read with the strptime format `input_format`, written with `output_format`.

    `ds_format("2015-01-01", "%Y-%m-%d", "%m-%d-%y")` is "01-01-15"."""
    return datetime.strptime(str(ds), input_format).strftime(output_format)


def datetime_diff_for_humans(dt: datetime, since: Optional[datetime] = None) -> str:
    """How far `dt` is from `since` (from now when None) in words, as pendulum says it:
    "1 hour ago", "in 2 days"."""
    import pendulum

    other = pendulum.instance(since) if since is not None else None
    return pendulum.instance(dt).diff_for_humans(other)
