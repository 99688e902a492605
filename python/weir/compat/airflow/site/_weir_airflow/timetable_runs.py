"""A custom Timetable's next runs, listed when the DAG processor parses the file.

weir's server schedules in C and calls no Python, so the processor calls the timetable's
`next_dagrun_info` as Airflow's scheduler does, one run after the other: the first time with
the DAG's latest scheduled run (its data interval, which the server gives the processor in
WEIR_AIRFLOW_LAST_RUNS: {dag_id: {logical, start, end}} in ms since the epoch, or None for a
DAG without one), then with each run it gave, at most RUNS_PER_PARSE times, under the DAG's
TimeRestriction (start_date, end_date, catchup).  The schedule it writes:

    {"runs": [{"start": T, "end": T, "after": T}, ...], "summary": S, "description": D,
     "after": T, "more": B}

each run's data interval (its logical date is the start) and run_after; `after` the latest
scheduled run's logical date the list continues (absent: none); `more` whether the timetable
may have runs past the list (False once it answered None).  The server makes the runs as they
come due and asks for the file to be parsed again when the list is used up or no longer
continues its latest run (src/server/dag_manager/timetable.c).  A timetable that raises is the
file's import error, and one that hangs is killed with the file's parse
(docs/internals/airflow.md, "Custom timetables").
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from typing import Any, Dict, List, Optional

from _weir_airflow.spec import SpecError

# How many runs one parse lists: a parse of the file for every RUNS_PER_PARSE runs.
RUNS_PER_PARSE = 10
_UTC = _dt.timezone.utc


def last_runs() -> Dict[str, Dict[str, int]]:
    """What the server gave: the latest scheduled run of each DAG of the file."""
    try:
        got = json.loads(os.environ.get("WEIR_AIRFLOW_LAST_RUNS") or "{}")
    except ValueError:
        return {}
    return got if isinstance(got, dict) else {}


def moment(ms: int) -> _dt.datetime:
    """An aware UTC time: pendulum's DateTime where pendulum is installed (timetables written
    for Airflow use its methods), else a datetime."""
    at = _dt.datetime.fromtimestamp(ms / 1000.0, _UTC)
    return _pendulum(at)


def _pendulum(at: _dt.datetime) -> _dt.datetime:
    try:
        import pendulum
    except ImportError:
        return at
    return pendulum.instance(at)


def _aware(value: Any) -> Optional[_dt.datetime]:
    """start_date or end_date as the restriction holds it (naive: UTC, as weir reads it)."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=_UTC)
    return _pendulum(value)


def ms_of(value: Any, what: str, line: int) -> int:
    """A time the timetable gave, in whole seconds' ms (a naive one is UTC)."""
    if not isinstance(value, _dt.datetime):
        raise SpecError("%s: expected a datetime, got %r" % (what, value), line)
    if value.tzinfo is None:
        value = value.replace(tzinfo=_UTC)
    return int(value.timestamp()) * 1000


def text_of(ms: int) -> str:
    """"2024-01-31T06:00:00+00:00"."""
    return _dt.datetime.fromtimestamp(ms // 1000, _UTC).isoformat()


def custom_runs(tt: Any, dag: Any) -> Dict[str, Any]:
    """The schedule of a DAG on custom timetable `tt` (see the module's doc)."""
    from airflow.timetables.base import DataInterval, TimeRestriction

    name = type(tt).__name__
    last = last_runs().get(dag.dag_id)
    interval: Optional[Any] = None
    prev: Optional[int] = None
    if isinstance(last, dict) and all(isinstance(last.get(k), int)
                                      for k in ("logical", "start", "end")):
        interval = DataInterval(moment(last["start"]), moment(last["end"]))
        prev = last["logical"]
    else:
        last = None
    restriction = TimeRestriction(_aware(dag.start_date), _aware(dag.end_date),
                                  bool(dag.catchup))
    runs: List[Dict[str, str]] = []
    more = True
    for _ in range(RUNS_PER_PARSE):
        info = tt.next_dagrun_info(last_automated_data_interval=interval,
                                   restriction=restriction)
        if info is None:
            more = False
            break
        di = getattr(info, "data_interval", None)
        if not hasattr(info, "run_after") or di is None:
            raise SpecError("timetable %s: next_dagrun_info returned %r: expected a DagRunInfo "
                            "or None" % (name, info), dag.lineno)
        what = "timetable %s: next_dagrun_info's" % name
        start = ms_of(di.start, what + " data_interval.start", dag.lineno)
        end = ms_of(di.end, what + " data_interval.end", dag.lineno)
        after = ms_of(info.run_after, what + " run_after", dag.lineno)
        if end < start:
            raise SpecError("%s data interval ends (%s) before it starts (%s)"
                            % (what, text_of(end), text_of(start)), dag.lineno)
        if prev is not None and start <= prev:
            raise SpecError("timetable %s: next_dagrun_info gave a run at %s after the run at "
                            "%s: expected each run after the one before (a timetable that does "
                            "not move forward would make the same run again)"
                            % (name, text_of(start), text_of(prev)), dag.lineno)
        runs.append({"start": text_of(start), "end": text_of(end), "after": text_of(after)})
        interval, prev = di, start
    out: Dict[str, Any] = {"runs": runs, "more": more, "summary": str(tt.summary)[:120]}
    description = getattr(tt, "description", None)
    if description:
        out["description"] = str(description)
    if last is not None:
        out["after"] = text_of(last["logical"])
    return out
