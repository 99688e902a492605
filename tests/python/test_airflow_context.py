"""The Airflow templating context (weir/compat/airflow/context.py, intervals.py, macros.py),
checked value by value against the values Airflow 2.x documents and computes: a @daily DAG in
UTC, a cron DAG in Europe/Amsterdam across both daylight-saving changes of 2024 (31 March and
27 October), manual runs, params overridden by the run's conf, variables, connections."""

import copy
import os
import pickle
import subprocess
import sys
import types
from datetime import datetime, timedelta, timezone

import jinja2
import pendulum
import pytest

from conftest import REPO
from weir.compat.airflow import macros
from weir.compat.airflow.context import (ConnectionNotFoundError, PreviousSuccess,
                                         VariableAccessor, build_context, resolve_params)
from weir.compat.airflow.intervals import interval_schedule
from weir.compat.airflow.templating import get_template_env, render_template


class FakeTI:
    """The task runner's task instance, reduced to a dict of XComs."""

    def __init__(self, dag_id, task_id, run_id, try_number=1, map_index=-1):
        self.dag_id, self.task_id, self.run_id = dag_id, task_id, run_id
        self.try_number, self.map_index = try_number, map_index
        self.xcoms = {}

    def xcom_push(self, key, value):
        self.xcoms[(self.task_id, key)] = value

    def xcom_pull(self, task_ids=None, dag_id=None, key="return_value", **_):
        return self.xcoms.get((task_ids, key))


def utc(*args):
    return pendulum.datetime(*args, tz="UTC")


def ctx(schedule="@daily", tz="UTC", logical=utc(2018, 1, 1), dag_id="etl", task_id="load",
        **kw):
    dag = types.SimpleNamespace(dag_id=dag_id, schedule=schedule, timezone=tz,
                                params=kw.pop("dag_params", {}))
    task = types.SimpleNamespace(task_id=task_id, dag_id=dag_id)
    run_id = kw.pop("run_id", "scheduled__" + logical.isoformat())
    ti = FakeTI(dag_id, task_id, run_id)
    return build_context(dag=dag, task=task, ti=ti, run_id=run_id, logical_date=logical, **kw)


def render(text, context):
    """`text` rendered as a task of a DAG file in /nowhere would render it."""
    env = get_template_env(types.SimpleNamespace(fileloc="/nowhere/dag.py"))
    return render_template(text, context, env)


def test_daily_utc_matches_airflows_documented_values():
    c = ctx()
    assert c["ds"] == "2018-01-01"
    assert c["ds_nodash"] == "20180101"
    assert c["ts"] == "2018-01-01T00:00:00+00:00"
    assert c["ts_nodash"] == "20180101T000000"
    assert c["ts_nodash_with_tz"] == "20180101T000000+0000"
    for key in ("logical_date", "execution_date", "data_interval_start", "data_interval_end"):
        assert isinstance(c[key], pendulum.DateTime), key
        assert c[key].utcoffset() == timedelta(0), key
    assert c["logical_date"] == c["execution_date"] == c["data_interval_start"] == utc(2018, 1, 1)
    assert c["data_interval_end"] == utc(2018, 1, 2)
    assert (c["prev_ds"], c["prev_ds_nodash"]) == ("2017-12-31", "20171231")
    assert (c["next_ds"], c["next_ds_nodash"]) == ("2018-01-02", "20180102")
    assert c["prev_execution_date"] == utc(2017, 12, 31)
    assert c["next_execution_date"] == utc(2018, 1, 2)
    assert (c["yesterday_ds"], c["yesterday_ds_nodash"]) == ("2017-12-31", "20171231")
    assert (c["tomorrow_ds"], c["tomorrow_ds_nodash"]) == ("2018-01-02", "20180102")
    assert c["task_instance_key_str"] == "etl__load__20180101"
    assert c["run_id"] == "scheduled__2018-01-01T00:00:00+00:00"
    for key in ("prev_data_interval_start_success", "prev_data_interval_end_success",
                "prev_start_date_success", "prev_end_date_success",
                "prev_execution_date_success", "expanded_ti_count"):
        assert c[key] is None, key
    assert c["inlets"] == [] and c["outlets"] == []
    assert c["test_mode"] is False
    assert c["macros"] is macros
    assert c["ti"] is c["task_instance"] and c["ti"].try_number == 1 and c["ti"].map_index == -1
    assert c["dag"].dag_id == "etl" and c["task"].task_id == "load"
    assert c["params"] == {}
    run = c["dag_run"]
    assert (run.dag_id, run.run_id, run.run_type, run.conf, run.external_trigger) == (
        "etl", c["run_id"], "scheduled", {}, False)
    assert run.logical_date == run.execution_date == c["logical_date"]
    assert (run.data_interval_start, run.data_interval_end) == (utc(2018, 1, 1), utc(2018, 1, 2))


def test_the_next_days_run_moves_every_date_by_one_day():
    c = ctx(logical=utc(2018, 1, 2), data_interval_start=utc(2018, 1, 2),
            data_interval_end=utc(2018, 1, 3))
    assert (c["prev_ds"], c["ds"], c["next_ds"]) == ("2018-01-01", "2018-01-02", "2018-01-03")
    assert c["ts_nodash_with_tz"] == "20180102T000000+0000"


def test_a_time_given_in_another_zone_is_templated_in_utc():
    # Airflow stores and templates dates in UTC, whatever zone the DAG has
    c = ctx(logical=datetime(2024, 7, 1, 1, 30, tzinfo=timezone(timedelta(hours=2))))
    assert c["ds"] == "2024-06-30"
    assert c["ts"] == "2024-06-30T23:30:00+00:00"
    assert c["logical_date"].timezone_name == "UTC"


AMS = "Europe/Amsterdam"


def test_amsterdam_cron_across_the_spring_change():
    # 01:00 local every day: 00:00Z in winter, 23:00Z the day before in summer
    sched = "0 1 * * *"
    before = ctx(schedule=sched, tz=AMS, logical=utc(2024, 3, 30, 0))
    assert before["data_interval_end"] == utc(2024, 3, 31, 0)
    assert (before["prev_ds"], before["ds"], before["next_ds"]) == (
        "2024-03-29", "2024-03-30", "2024-03-31")

    change = ctx(schedule=sched, tz=AMS, logical=utc(2024, 3, 31, 0))
    # the interval of the day that loses an hour is 23 hours long
    assert change["data_interval_end"] == utc(2024, 3, 31, 23)
    assert change["data_interval_end"] - change["data_interval_start"] == timedelta(hours=23)
    assert change["ts"] == "2024-03-31T00:00:00+00:00"
    assert (change["prev_ds"], change["ds"], change["next_ds"]) == (
        "2024-03-30", "2024-03-31", "2024-03-31")
    assert change["next_execution_date"] == utc(2024, 3, 31, 23)

    after = ctx(schedule=sched, tz=AMS, logical=utc(2024, 3, 31, 23))
    assert after["ds"] == "2024-03-31"  # the UTC date: 1 April 01:00 in Amsterdam
    assert after["ts_nodash_with_tz"] == "20240331T230000+0000"
    assert after["data_interval_end"] == utc(2024, 4, 1, 23)
    assert after["prev_execution_date"] == utc(2024, 3, 31, 0)
    assert (after["prev_ds"], after["next_ds"]) == ("2024-03-31", "2024-04-01")
    assert after["task_instance_key_str"] == "etl__load__20240331"


def test_amsterdam_cron_across_the_autumn_change():
    sched = "0 1 * * *"
    change = ctx(schedule=sched, tz=AMS, logical=utc(2024, 10, 26, 23))
    assert change["ds"] == "2024-10-26"  # 27 October 01:00 CEST is 26 October 23:00Z
    # the interval of the day that gains an hour is 25 hours long
    assert change["data_interval_end"] == utc(2024, 10, 28, 0)
    assert change["data_interval_end"] - change["data_interval_start"] == timedelta(hours=25)
    assert change["prev_execution_date"] == utc(2024, 10, 25, 23)
    assert (change["prev_ds"], change["next_ds"]) == ("2024-10-25", "2024-10-28")


def test_wall_clock_times_that_occur_twice_or_never():
    t = interval_schedule("30 2 * * *", AMS)
    # 31 March 02:30 does not exist: moved forward by the gap, 03:30 CEST
    assert t.next_after(utc(2024, 3, 30, 1, 30)) == utc(2024, 3, 31, 1, 30)
    # 27 October 02:30 occurs twice: the second one, 02:30 CET
    assert t.next_after(utc(2024, 10, 26, 0, 30)) == utc(2024, 10, 27, 1, 30)
    assert t.prev_before(utc(2024, 10, 28, 1, 30)) == utc(2024, 10, 27, 1, 30)
    c = ctx(schedule="30 2 * * *", tz=AMS, logical=utc(2024, 10, 26, 0, 30))
    assert c["data_interval_end"] == utc(2024, 10, 27, 1, 30)


def test_an_hourly_cron_keeps_every_hour_through_the_changes():
    t = interval_schedule("@hourly", AMS)
    times, at = [], utc(2024, 10, 26, 23)
    for _ in range(4):
        at = t.next_after(at)
        times.append(at)
    assert times == [utc(2024, 10, 27, h) for h in range(0, 4)]
    times, at = [], utc(2024, 3, 31, 4)
    for _ in range(4):
        at = t.prev_before(at)
        times.append(at)
    assert times == [utc(2024, 3, 31, h) for h in (3, 2, 1, 0)]


def test_cron_fields_names_ranges_steps_and_either_day():
    t = interval_schedule("15 9-17/4 * jan-mar mon,fri", "UTC")
    # 2024-01-01 is a Monday
    assert t.next_after(utc(2024, 1, 1)) == utc(2024, 1, 1, 9, 15)
    assert t.next_after(utc(2024, 1, 1, 17, 15)) == utc(2024, 1, 5, 9, 15)
    assert t.next_after(utc(2024, 3, 29, 17, 15)) == utc(2025, 1, 3, 9, 15)
    # day of month and day of week both restricted: either matches (cron's rule)
    both = interval_schedule("0 0 13 * 5", "UTC")
    assert both.next_after(utc(2024, 9, 1)) == utc(2024, 9, 6)
    assert both.next_after(utc(2024, 9, 10)) == utc(2024, 9, 13)
    assert interval_schedule("0 0 29 2 *", "UTC").next_after(utc(2024, 3, 1)) == utc(2028, 2, 29)
    assert interval_schedule("@quarterly", "UTC").next_after(utc(2024, 1, 1)) == utc(2024, 4, 1)
    assert interval_schedule("0 0 * * 7", "UTC").next_after(utc(2024, 1, 1)) == utc(2024, 1, 7)


def test_bad_schedules_run_types_and_zones_are_named():
    with pytest.raises(ValueError, match=r"'0 25 \* \* \*': hour 25 is outside 0-23"):
        ctx(schedule="0 25 * * *")
    with pytest.raises(ValueError, match="expected 5 fields"):
        ctx(schedule="0 0 *")
    with pytest.raises(ValueError, match="Mars/Olympus"):
        ctx(schedule="@daily", tz="Mars/Olympus")
    with pytest.raises(ValueError, match="run_type 'nightly'"):
        ctx(run_type="nightly")


def test_a_delta_schedule():
    c = ctx(schedule=timedelta(hours=6), logical=utc(2024, 5, 1, 6))
    assert c["data_interval_end"] == utc(2024, 5, 1, 12)
    assert c["prev_execution_date"] == utc(2024, 5, 1, 0)
    assert c["next_execution_date"] == utc(2024, 5, 1, 12)


def test_a_manual_run_has_prev_and_next_equal_to_its_own_date():
    c = ctx(logical=utc(2024, 5, 7, 13, 45, 12), run_type="manual",
            run_id="manual__2024-05-07T13:45:12+00:00", conf={"k": "v"},
            data_interval_start=utc(2024, 5, 6), data_interval_end=utc(2024, 5, 7))
    assert c["prev_ds"] == c["next_ds"] == c["ds"] == "2024-05-07"
    assert c["ts_nodash"] == "20240507T134512"
    assert c["dag_run"].external_trigger is True and c["dag_run"].run_type == "manual"
    assert c["dag_run"].conf == {"k": "v"}
    assert c["data_interval_start"] == utc(2024, 5, 6)


def test_no_interval_schedule_leaves_prev_and_next_unknown():
    for schedule in (None, "@once", object()):
        c = ctx(schedule=schedule, run_type="dataset_triggered", logical=utc(2024, 5, 7))
        assert c["prev_ds"] is None and c["next_ds"] is None and c["prev_ds_nodash"] is None
        assert c["data_interval_start"] == c["data_interval_end"] == utc(2024, 5, 7)
    # the runner may know better and say so
    c = ctx(schedule=None, prev_logical_date=utc(2024, 5, 1), next_logical_date=None)
    assert (c["prev_ds"], c["next_ds"]) == ("2024-05-01", None)


def test_the_previous_successful_run():
    ams = pendulum.timezone(AMS)
    c = ctx(prev_success=PreviousSuccess(
        logical_date=utc(2017, 12, 30), data_interval_start=utc(2017, 12, 30),
        data_interval_end=utc(2017, 12, 31),
        start_date=pendulum.datetime(2017, 12, 31, 1, 0, 5, tz=ams),
        end_date=utc(2017, 12, 31, 0, 2)))
    assert c["prev_data_interval_start_success"] == utc(2017, 12, 30)
    assert c["prev_data_interval_end_success"] == utc(2017, 12, 31)
    assert c["prev_start_date_success"] == utc(2017, 12, 31, 0, 0, 5)
    assert isinstance(c["prev_start_date_success"], pendulum.DateTime)
    assert c["prev_start_date_success"].timezone_name == "UTC"
    assert c["prev_end_date_success"] == utc(2017, 12, 31, 0, 2)
    assert c["prev_execution_date_success"] == utc(2017, 12, 30)


class FakeParam:
    """A `Param`: a value and a schema (here: a type) checked by resolve()."""

    def __init__(self, value, kind):
        self.value, self.kind = value, kind

    def resolve(self):
        if not isinstance(self.value, self.kind):
            raise ValueError(f"{self.value!r} is not a {self.kind.__name__}")
        return self.value


def test_conf_overrides_params_as_airflows_default_does():
    declared = FakeParam(3, int)
    dag_params = {"days": declared, "table": "events", "mode": "full"}
    c = ctx(dag_params=dag_params, task_params={"mode": "delta"},
            conf={"days": 7, "extra": [1, 2]})
    assert c["params"] == {"days": 7, "table": "events", "mode": "delta", "extra": [1, 2]}
    assert declared.value == 3  # the DAG's Param is left as it was
    # the conf value is checked against the Param's schema
    with pytest.raises(ValueError, match="'seven' is not a int"):
        ctx(dag_params=dag_params, conf={"days": "seven"})
    # [core] dag_run_conf_overrides_params = False
    c = ctx(dag_params=dag_params, conf={"days": 7}, conf_overrides_params=False)
    assert c["params"] == {"days": 3, "table": "events", "mode": "full"}
    assert c["dag_run"].conf == {"days": 7}
    assert resolve_params(None, None, {"a": 1}) == {"a": 1}


def test_variables_by_value_and_json_and_a_missing_one():
    store = {"bucket": "s3://raw", "limits": '{"rows": 10}'}
    c = ctx(variable_lookup=store.get)
    assert c["var"]["value"].bucket == "s3://raw"
    assert c["var"]["json"].limits == {"rows": 10}
    assert c["var"]["value"].get("nope", "fallback") == "fallback"
    assert c["var"]["json"].get("nope", default_var=None) is None
    assert render("{{ var.value.bucket }}/{{ var.json.limits.rows }}", c) == "s3://raw/10"
    assert render("{{ var.value.get('nope', 'x') }}", c) == "x"
    with pytest.raises(KeyError, match="Variable nope does not exist"):
        c["var"]["value"].nope
    with pytest.raises(KeyError, match="Variable nope does not exist"):
        render("{{ var.value.nope }}", c)
    # copying and pickling look no variable up
    assert copy.deepcopy(c["var"])["value"].get("bucket") == "s3://raw"
    assert pickle.loads(pickle.dumps(VariableAccessor(None, True))).get("x", 1) == 1


def test_connections_and_a_missing_one():
    conns = {"warehouse": types.SimpleNamespace(host="db.internal", port=5432)}
    c = ctx(connection_lookup=conns.get)
    assert render("{{ conn.warehouse.host }}:{{ conn.warehouse.port }}", c) == "db.internal:5432"
    assert c["conn"].get("nope") is None
    with pytest.raises(ConnectionNotFoundError, match="The conn_id `nope` isn't defined"):
        c["conn"].nope

    class AirflowNotFoundException(Exception):
        pass

    c = ctx(connection_lookup=conns.get, connection_error=AirflowNotFoundException)
    with pytest.raises(AirflowNotFoundException):
        render("{{ conn.nope.host }}", c)


def test_macros():
    assert macros.ds_add("2015-01-06", -5) == "2015-01-01"
    assert macros.ds_add("2015-01-01", 5) == "2015-01-06"
    assert macros.ds_add("2024-02-28", 1) == "2024-02-29"
    assert macros.ds_add("2015-01-01", 0) == "2015-01-01"
    assert macros.ds_format("2015-01-01", "%Y-%m-%d", "%m-%d-%y") == "01-01-15"
    assert macros.ds_format("1/5/2015", "%m/%d/%Y", "%Y-%m-%d") == "2015-01-05"
    with pytest.raises(ValueError):
        macros.ds_add("2015/01/01", 1)
    assert macros.datetime is datetime and macros.timedelta is timedelta
    assert macros.dateutil.relativedelta.relativedelta(months=1)
    assert macros.dateutil.parser.parse("2015-01-01").year == 2015
    assert 0 <= macros.random() < 1
    assert len(str(macros.uuid.uuid4())) == 36
    assert macros.json.loads("[1]") == [1] and macros.time.time() > 0
    assert macros.datetime_diff_for_humans(utc(2024, 1, 1), utc(2024, 1, 3)) == "2 days before"
    out = render(
        "{{ macros.ds_add(ds, 7) }} {{ macros.ds_format(ds, '%Y-%m-%d', '%d/%m/%Y') }} "
        "{{ (logical_date + macros.timedelta(days=1)) | ds_nodash }} "
        "{{ (logical_date - macros.dateutil.relativedelta.relativedelta(months=1)) | ds }}", ctx())
    assert out == "2018-01-08 01/01/2018 20180102 2017-12-01"


def test_airflow_macros_is_importable_from_a_dag_file():
    site = REPO / "python" / "weir" / "compat" / "airflow" / "site"
    env = dict(os.environ, PYTHONPATH=str(site))  # no `weir` package: a task's path
    code = ("from airflow.macros import ds_add, ds_format\n"
            "import airflow.macros as m\n"
            "assert ds_add('2015-01-06', -5) == '2015-01-01', ds_add('2015-01-06', -5)\n"
            "assert m.datetime.__name__ == 'datetime' and m.dateutil and m.uuid\n"
            "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


PENDULUM_FREE = """
import sys, types
from datetime import datetime, timezone
from _weir_airflow.context import build_context
dag = types.SimpleNamespace(dag_id="d", schedule=sys.argv[1], timezone=sys.argv[2] or None)
task = types.SimpleNamespace(task_id="t")
ti = types.SimpleNamespace(dag_id="d", task_id="t", run_id="r", try_number=1, map_index=-1)
c = build_context(dag=dag, task=task, ti=ti, run_id="scheduled__x",
                  logical_date=datetime(2018, 1, 1, tzinfo=timezone.utc))
print(c["prev_ds"], c["next_ds"], c["data_interval_end"].isoformat(), "pendulum" in sys.modules,
      c["macros"].ds_add(c["ds"], 1), "dateutil" in sys.modules)
"""


@pytest.mark.parametrize("zone, want", [
    ("", "2017-12-31 2018-01-02 2018-01-02T00:00:00+00:00 False 2018-01-02 False"),
    ("Europe/Amsterdam", "2017-12-31 2018-01-02 2018-01-02T00:00:00+00:00 True 2018-01-02 "
                         "True"),
])
def test_a_dag_in_utc_gets_its_context_without_importing_pendulum(zone, want):
    # a task's process: pendulum (30-50 ms) only for a DAG in another zone; the values agree
    site = REPO / "python" / "weir" / "compat" / "airflow" / "site"
    env = dict(os.environ, PYTHONPATH=str(site))
    cron = "0 0 * * *" if not zone else "0 1 * * *"
    out = subprocess.run([sys.executable, "-c", PENDULUM_FREE, cron, zone], env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    if zone:  # 01:00 in Amsterdam is 00:00 UTC in winter
        assert out.stdout.split()[0:2] == want.split()[0:2], out.stdout
        assert out.stdout.split()[3] == "True", out.stdout
    else:
        assert out.stdout.strip() == want, out.stdout


def test_context_in_a_template_dag_run_conf_ti_and_types():
    c = ctx(run_type="manual", conf={"table": "events"}, logical=utc(2024, 5, 7))
    c["ti"].xcoms[("extract", "return_value")] = 42
    out = render(
        "{{ dag_run.conf['table'] }} {{ params.table }} {{ ti.xcom_pull(task_ids='extract') }} "
        "{{ task_instance_key_str }} {{ dag.dag_id }}.{{ task.task_id }} "
        "{{ data_interval_start.in_timezone('Europe/Amsterdam').hour }}", c)
    assert out == "events events 42 etl__load__20240507 etl.load 2"
    assert isinstance(c["logical_date"], pendulum.DateTime)
    assert jinja2  # the module is Debian's python3-jinja2
