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
    with pytest.raises(SpecError, match="params.xs: Param's 'minItems'"):
        doc_of(schedule=None, params={"xs": Param([1], type="array", minItems=1)})
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
