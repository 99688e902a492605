"""The DAG-level parts of weir's document from Airflow DAG objects (_weir_airflow/spec.py):
the time zone of a schedule (from start_date's tzinfo, as Airflow takes it), Params as
schemas, timetables and dataset schedules."""

import datetime as dt
import sys
import zoneinfo

import pendulum
import pytest

from conftest import REPO

SITE = REPO / "python" / "weir" / "compat" / "airflow" / "site"
sys.path.insert(0, str(SITE))

from airflow import DAG  # noqa: E402
from airflow.models import Param  # noqa: E402
from airflow.models.param import ParamsDict  # noqa: E402
from airflow.exceptions import ParamValidationError  # noqa: E402
from airflow.operators.empty import EmptyOperator  # noqa: E402

from _weir_airflow.spec import SpecError, dag_to_spec  # noqa: E402


def doc_of(**kw):
    with DAG("d", **kw) as d:
        EmptyOperator(task_id="t")
    return dag_to_spec(d, "/dags/d.py", python="/usr/bin/python3")


AMS = "Europe/Amsterdam"


@pytest.mark.parametrize("start", [
    pendulum.datetime(2024, 3, 29, tz=AMS),
    dt.datetime(2024, 3, 29, tzinfo=zoneinfo.ZoneInfo(AMS)),
])
def test_the_zone_comes_from_start_date(start):
    doc = doc_of(schedule="0 6 * * *", start_date=start,
                 end_date=pendulum.datetime(2024, 4, 2, tz=AMS))
    assert doc["timezone"] == AMS
    # the dates themselves travel in UTC
    assert doc["start_date"] == "2024-03-28T23:00:00Z"
    assert doc["end_date"] == "2024-04-01T22:00:00Z"


@pytest.mark.parametrize("start", [
    dt.datetime(2024, 1, 1), pendulum.datetime(2024, 1, 1),
    dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)])
def test_a_utc_or_naive_start_date_has_no_zone(start):
    assert "timezone" not in doc_of(schedule="@daily", start_date=start)


def test_a_fixed_offset_is_an_etc_zone_and_a_timedelta_stays_utc():
    plus2 = dt.timezone(dt.timedelta(hours=2))
    doc = doc_of(schedule="0 6 * * *", start_date=dt.datetime(2024, 1, 1, tzinfo=plus2))
    assert doc["timezone"] == "Etc/GMT-2"
    with pytest.raises(SpecError, match="whole-hour offset"):
        doc_of(schedule="@daily", start_date=dt.datetime(
            2024, 1, 1, tzinfo=dt.timezone(dt.timedelta(minutes=90))))
    # a timedelta is a fixed duration: its grid is UTC's, from start_date in UTC
    doc = doc_of(schedule=dt.timedelta(days=1),
                 start_date=pendulum.datetime(2024, 3, 29, 6, tz=AMS))
    assert doc["schedule"] == "0 5 * * *" and "timezone" not in doc


def test_params_are_written_as_schemas():
    doc = doc_of(schedule=None, params={
        "n": Param(3, type="integer", minimum=1, maximum=10, description="how many"),
        "who": Param(type="string", enum=["a", "b"], values_display={"a": "A"}),
        "day": Param(dt.date(2024, 1, 31), type="string", format="date"),
        "any": Param(),
        "plain": 5,
        "looks": {"type": "x"},
        "nested": {"a": [1, 2]},
    })
    assert doc["params"] == {
        "n": {"type": "integer", "minimum": 1, "maximum": 10, "description": "how many",
              "default": 3},
        "who": {"type": "string", "enum": ["a", "b"]},
        "day": {"type": "string", "format": "date", "default": "2024-01-31"},
        "any": {"title": "any"},
        "plain": 5,
        "looks": {"default": {"type": "x"}},
        "nested": {"a": [1, 2]},
    }
    with pytest.raises(SpecError, match="params.xs: Param's 'anyOf'"):
        doc_of(schedule=None, params={"xs": Param([1], anyOf=[{"type": "array"}])})
    # JSON Schema's array and number keywords, and a format the checker does not know
    doc = doc_of(schedule=None, params={
        "xs": Param([1], type="array", minItems=1, maxItems=3, uniqueItems=True),
        "n": Param(10, type="integer", multipleOf=5),
        "text": Param("a\nb", type="string", format="multiline")})
    assert doc["params"] == {
        "xs": {"type": "array", "minItems": 1, "maxItems": 3, "uniqueItems": True,
               "default": [1]},
        "n": {"type": "integer", "multipleOf": 5, "default": 10},
        "text": {"type": "string", "format": "multiline", "default": "a\nb"}}
    with pytest.raises(SpecError, match="params.o: .*expected a JSON value"):
        doc_of(schedule=None, params={"o": object()})


def test_a_param_resolves_to_its_value():
    assert Param(3, type="integer").resolve() == 3
    assert Param(3).resolve(5) == 5
    with pytest.raises(ParamValidationError, match="no default"):
        Param(type="string").resolve()
    p = ParamsDict({"a": Param(1, type="integer"), "b": "x"})
    p["a"] = 2
    assert dict(p) == {"a": 2, "b": "x"} and p.get_param("a").schema == {"type": "integer"}


def test_timetables_and_dataset_schedules():
    from airflow.datasets import Dataset, DatasetAny
    from airflow.timetables.datasets import DatasetOrTimeSchedule
    from airflow.timetables.interval import (CronDataIntervalTimetable,
                                             DeltaDataIntervalTimetable)
    from airflow.timetables.trigger import CronTriggerTimetable

    start = pendulum.datetime(2024, 1, 1, tz=AMS)
    a, b, c = Dataset("s3://b/a"), Dataset("s3://b/b"), Dataset("file:///c")
    trig = CronTriggerTimetable("0 6 * * *", timezone="America/New_York",
                                interval=dt.timedelta(hours=2))
    cases = [
        (trig, {"trigger": "0 6 * * *", "interval": 7200}, "America/New_York"),
        (CronTriggerTimetable("@daily", timezone="UTC"), {"trigger": "@daily"}, None),
        (CronDataIntervalTimetable("0 6 * * *", pendulum.timezone(AMS)), "0 6 * * *", AMS),
        (DeltaDataIntervalTimetable(dt.timedelta(hours=6)), "0 5/6 * * *", None),
        ([a, b], ["s3://b/a", "s3://b/b"], AMS),
        (a, ["s3://b/a"], AMS),
        (a & (b & c), ["s3://b/a", "s3://b/b", "file:///c"], AMS),
        (DatasetOrTimeSchedule(timetable=trig, datasets=[a, b]),
         {"trigger": "0 6 * * *", "interval": 7200, "datasets": ["s3://b/a", "s3://b/b"]},
         "America/New_York"),
        (DatasetOrTimeSchedule(timetable=CronDataIntervalTimetable("@daily", "UTC"),
                               datasets=a & b),
         {"cron": "@daily", "datasets": ["s3://b/a", "s3://b/b"]}, None),
        # Airflow 2.9's | and nesting: a condition, as written
        (a | b, {"datasets": {"any": ["s3://b/a", "s3://b/b"]}}, AMS),
        ((a | b) & c, {"datasets": {"all": [{"any": ["s3://b/a", "s3://b/b"]}, "file:///c"]}},
         AMS),
        ([a, a | c], {"datasets": {"all": ["s3://b/a", {"any": ["s3://b/a", "file:///c"]}]}},
         AMS),
        (DatasetOrTimeSchedule(timetable=trig, datasets=a | b),
         {"trigger": "0 6 * * *", "interval": 7200,
          "datasets": {"any": ["s3://b/a", "s3://b/b"]}}, "America/New_York"),
    ]
    for schedule, want, zone in cases:
        doc = doc_of(schedule=schedule, start_date=start)
        assert doc["schedule"] == want, schedule
        assert doc.get("timezone") == zone, schedule
    # Airflow 2.2's timetable= argument
    with DAG("old", timetable=trig, start_date=start) as d:
        EmptyOperator(task_id="t")
    assert dag_to_spec(d, "/d.py")["schedule"]["trigger"] == "0 6 * * *"

    for schedule, match in ((DatasetAny(), "an empty DatasetAny names no dataset"),
                            (DatasetOrTimeSchedule(
                                timetable=DeltaDataIntervalTimetable(dt.timedelta(days=1)),
                                datasets=[a]), "expected a CronTriggerTimetable"),
                            (object(), "not supported yet")):
        with pytest.raises(SpecError, match=match):
            doc_of(schedule=schedule, start_date=start)


def test_relativedelta_events_and_continuous_schedules():
    from dateutil.relativedelta import relativedelta

    from airflow.timetables.base import DagRunInfo, Timetable
    from airflow.timetables.events import EventsTimetable
    from airflow.timetables.interval import DeltaDataIntervalTimetable
    from airflow.timetables.simple import ContinuousTimetable

    start = pendulum.datetime(2024, 1, 31, tz="UTC")
    e1, e2 = pendulum.datetime(2024, 3, 1, 10, tz="UTC"), pendulum.datetime(2024, 2, 1, tz=AMS)
    cases = [
        (relativedelta(months=1), {"delta": {"months": 1}}),
        (relativedelta(years=1, months=2, days=3, hours=4),
         {"delta": {"months": 14, "seconds": 3 * 86400 + 4 * 3600}}),
        (DeltaDataIntervalTimetable(relativedelta(weeks=2)), {"delta": {"seconds": 14 * 86400}}),
        # a timedelta that is no cron interval: a step too, as Airflow's
        (dt.timedelta(hours=5), {"delta": {"seconds": 5 * 3600}}),
        (EventsTimetable([e1, e2, e1], restrict_to_events=True),
         {"events": [e2.isoformat(), e1.isoformat(), e1.isoformat()],
          "restrict_to_events": True}),
        (ContinuousTimetable(), "@continuous"),
    ]
    for schedule, want in cases:
        doc = doc_of(schedule=schedule, start_date=start, max_active_runs=1)
        assert doc["schedule"] == want, schedule
    assert doc_of(schedule="@continuous", start_date=start,
                  max_active_runs=1)["schedule"] == "@continuous"

    class Sunsets(Timetable):
        def next_dagrun_info(self, **kw):
            return DagRunInfo.exact(start)

    for schedule, match, runs in (
            ("@continuous", "ContinuousTimetable requires max_active_runs <= 1", 16),
            (relativedelta(day=1, months=1), "day is not supported", 1),
            (relativedelta(months=-1), "expected a step forward", 1),
            # a custom timetable that gives the same run again
            (Sunsets(), r"timetable Sunsets: next_dagrun_info gave a run at "
             r"2024-01-31T00:00:00\+00:00 after the run at 2024-01-31T00:00:00\+00:00", 1)):
        with pytest.raises(SpecError, match=match):
            doc_of(schedule=schedule, start_date=start, max_active_runs=runs)


def test_a_manual_runs_interval_is_airflows_inference():
    """`manual_interval`: Airflow's infer_manual_data_interval for the schedules whose manual
    runs weir's own rule gives another interval; none for the others."""
    from dateutil.relativedelta import relativedelta

    from airflow.timetables.interval import CronDataIntervalTimetable
    from airflow.timetables.trigger import CronTriggerTimetable

    start = pendulum.datetime(2024, 1, 1, tz="UTC")
    for schedule, want in (("@daily", "ending"), ("5 4 * * *", "ending"),
                           (CronDataIntervalTimetable("@hourly", "UTC"), "ending"),
                           (relativedelta(months=1), "ending"),
                           (dt.timedelta(hours=1), {"before": 3600}),
                           (dt.timedelta(hours=5), {"before": 18000}),
                           (None, None), ("@once", None),
                           (CronTriggerTimetable("@daily", timezone="UTC"), None)):
        doc = doc_of(schedule=schedule, start_date=start)
        assert doc.get("manual_interval") == want, schedule
