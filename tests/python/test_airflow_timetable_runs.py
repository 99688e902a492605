"""A custom Timetable's next runs as the DAG processor lists them (_weir_airflow/
timetable_runs.py): next_dagrun_info called run after run from the latest scheduled run the
server gives (WEIR_AIRFLOW_LAST_RUNS) under the DAG's restriction, at most RUNS_PER_PARSE; the
list's end when the timetable answers None; its summary and description; a timetable that
raises or gives no DagRunInfo."""

import datetime as dt
import json
import sys

import pendulum
import pytest

from conftest import REPO

SITE = REPO / "python" / "weir" / "compat" / "airflow" / "site"
sys.path.insert(0, str(SITE))

from airflow import DAG  # noqa: E402
from airflow.operators.empty import EmptyOperator  # noqa: E402
from airflow.timetables.base import DagRunInfo, DataInterval, Timetable  # noqa: E402

from _weir_airflow import timetable_runs  # noqa: E402
from _weir_airflow.spec import SpecError, dag_to_spec  # noqa: E402

UTC = pendulum.timezone("UTC")


class Halves(Timetable):
    """Two runs a day, [00:00, 12:00) and [12:00, 24:00), each made an hour after its end;
    none past restriction.latest."""

    description = "Twice a day, an hour late"

    @property
    def summary(self):
        return "halves"

    def infer_manual_data_interval(self, *, run_after):
        return DataInterval(run_after, run_after)

    def next_dagrun_info(self, *, last_automated_data_interval, restriction):
        if last_automated_data_interval is None:
            start = restriction.earliest
        else:
            start = last_automated_data_interval.end
        if restriction.latest is not None and start > restriction.latest:
            return None
        end = start.add(hours=12)
        return DagRunInfo(run_after=end.add(hours=1), data_interval=DataInterval(start, end))


def schedule(timetable, monkeypatch, last=None, **kw):
    if last is not None:
        monkeypatch.setenv("WEIR_AIRFLOW_LAST_RUNS", json.dumps({"d": last}))
    else:
        monkeypatch.delenv("WEIR_AIRFLOW_LAST_RUNS", raising=False)
    kw.setdefault("start_date", dt.datetime(2024, 1, 1))
    with DAG("d", schedule=timetable, **kw) as d:
        EmptyOperator(task_id="t")
    return dag_to_spec(d, "/dags/d.py", python="/usr/bin/python3")["schedule"]


def ms(text):
    return int(dt.datetime.fromisoformat(text).timestamp()) * 1000


def test_the_runs_are_listed_from_the_start_date(monkeypatch):
    s = schedule(Halves(), monkeypatch)
    assert len(s["runs"]) == timetable_runs.RUNS_PER_PARSE
    assert s["runs"][:2] == [
        {"start": "2024-01-01T00:00:00+00:00", "end": "2024-01-01T12:00:00+00:00",
         "after": "2024-01-01T13:00:00+00:00"},
        {"start": "2024-01-01T12:00:00+00:00", "end": "2024-01-02T00:00:00+00:00",
         "after": "2024-01-02T01:00:00+00:00"}]
    assert s["more"] is True and "after" not in s
    assert (s["summary"], s["description"]) == ("halves", "Twice a day, an hour late")


def test_the_runs_continue_the_latest_scheduled_run(monkeypatch):
    last = {"logical": ms("2024-01-05T12:00:00+00:00"),
            "start": ms("2024-01-05T12:00:00+00:00"), "end": ms("2024-01-06T00:00:00+00:00")}
    s = schedule(Halves(), monkeypatch, last, end_date=dt.datetime(2024, 1, 7, 12))
    assert s["after"] == "2024-01-05T12:00:00+00:00"
    # from the latest run's end to end_date (inclusive), then None: no more
    assert [r["start"][:16] for r in s["runs"]] == [
        "2024-01-06T00:00", "2024-01-06T12:00", "2024-01-07T00:00", "2024-01-07T12:00"]
    assert s["more"] is False


def test_a_faulty_timetable_is_an_error(monkeypatch):
    class Raises(Timetable):
        def next_dagrun_info(self, *, last_automated_data_interval, restriction):
            raise RuntimeError("no calendar")

    class Strange(Timetable):
        def next_dagrun_info(self, *, last_automated_data_interval, restriction):
            return "tomorrow"

    with pytest.raises(RuntimeError, match="no calendar"):
        schedule(Raises(), monkeypatch)
    with pytest.raises(SpecError, match=r"timetable Strange: next_dagrun_info returned "
                                        r"'tomorrow': expected a DagRunInfo or None"):
        schedule(Strange(), monkeypatch)
    # the base class's method: Airflow's NotImplementedError
    with pytest.raises(NotImplementedError):
        schedule(Timetable(), monkeypatch)
