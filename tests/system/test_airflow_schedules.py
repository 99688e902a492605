"""Airflow DAG files whose schedules live in a time zone, and their Params, run through the
server (docs/airflow.md): the runs' logical dates and data intervals across a daylight-saving
change exactly as Airflow 2.x makes them, checked value by value in the tasks' context; a
backfill on the zoned grid; a trigger's conf checked against a Param's schema."""

from conftest import cli_describe
from test_airflow_dags import airflow_dags

ZONED = '''\
import pendulum
from airflow import DAG
from airflow.operators.python import PythonOperator


def facts(ds, ts, data_interval_start, data_interval_end, logical_date, prev_ds, next_ds,
          dag):
    return {"ds": ds, "ts": ts, "start": data_interval_start.isoformat(),
            "end": data_interval_end.isoformat(), "logical": logical_date.isoformat(),
            "prev_ds": prev_ds, "next_ds": next_ds, "tz": dag.timezone.name}


ams = "Europe/Amsterdam"
with DAG("zoned", schedule="0 6 * * *", catchup=True,
         start_date=pendulum.datetime(2024, 3, 29, tz=ams),
         end_date=pendulum.datetime(2024, 4, 2, tz=ams)):
    PythonOperator(task_id="facts", python_callable=facts)

with DAG("zoned_backfill", schedule="0 6 * * *", catchup=True,
         start_date=pendulum.datetime(2024, 10, 1, tz=ams),
         end_date=pendulum.datetime(2024, 10, 1, 12, tz=ams)):
    PythonOperator(task_id="facts", python_callable=facts)
'''

PARAMS = '''\
from airflow import DAG
from airflow.models import Param
from airflow.operators.python import PythonOperator


def seen(params):
    return {"n": params["n"], "mode": params["mode"], "plain": params["plain"]}


with DAG("with_params", schedule=None,
         params={"n": Param(3, type="integer", minimum=1, maximum=10),
                 "mode": Param("fast", enum=["fast", "slow"], description="how"),
                 "plain": 7}):
    PythonOperator(task_id="seen", python_callable=seen)
'''


def xcom(d, dag_id, run_id, task):
    return d.get("/dags/%s/dagRuns/%s/taskInstances/%s/xcomEntries/return_value"
                 "?stringify=false" % (dag_id, run_id, task))["value"]


def z(day_hour):
    return "2024-%s:00:00+00:00" % day_hour


def test_a_zoned_cron_catches_up_across_the_spring_change(make_server, tmp_path):
    d = airflow_dags(make_server, tmp_path, [])
    (d.dir / "zoned.py").write_text(ZONED)
    dag = d.wait_dag("zoned")
    details = d.get("/dags/zoned/details")
    assert details["timezone"] == "Timezone('Europe/Amsterdam')", details
    assert dag["is_paused"] is False, dag
    # 06:00 in Amsterdam: 05:00Z in winter, 04:00Z from 31 March; the interval of the day
    # that loses an hour is 23 hours long; end_date (2 April 00:00) ends the runs
    want = [("03-29T05", "03-30T05", "2024-03-29", "2024-03-28", "2024-03-30"),
            ("03-30T05", "03-31T04", "2024-03-30", "2024-03-29", "2024-03-31"),
            ("03-31T04", "04-01T04", "2024-03-31", "2024-03-30", "2024-04-01"),
            ("04-01T04", "04-02T04", "2024-04-01", "2024-03-31", "2024-04-02")]
    for start, end, ds, prev_ds, next_ds in want:
        rid = "scheduled__" + z(start)
        run = d.wait_run("zoned", rid)
        assert run["state"] == "success", d.tis("zoned", rid)
        assert (run["data_interval_start"], run["data_interval_end"]) == (
            z(start), z(end)), run
        got = xcom(d, "zoned", rid, "facts")
        assert got == {"ds": ds, "ts": z(start), "start": z(start), "end": z(end),
                       "logical": z(start), "prev_ds": prev_ds, "next_ds": next_ds,
                       "tz": "Europe/Amsterdam"}, got
    runs = d.get("/dags/zoned/dagRuns")["dag_runs"]
    assert sorted(r["dag_run_id"] for r in runs) == sorted(
        "scheduled__" + z(w[0]) for w in want), runs
    assert d.get("/dags/zoned")["next_dagrun"] is None


def test_a_backfill_follows_the_zoned_grid_across_the_autumn_change(make_server, tmp_path):
    d = airflow_dags(make_server, tmp_path, [])
    (d.dir / "zoned.py").write_text(ZONED)
    d.wait_dag("zoned_backfill")
    d.wait_run("zoned_backfill", "scheduled__" + z("10-01T04"))
    r = d.srv.cli("dags", "backfill", "zoned_backfill", "--from", "2024-10-26",
                  "--to", "2024-10-28", "--wait", timeout=120)
    assert r.returncode == 0, cli_describe(r)
    # 06:00 CEST on 26 October, 06:00 CET on 27 October: the day of 25 hours between them
    for start, end, ds in (("10-26T04", "10-27T05", "2024-10-26"),
                           ("10-27T05", "10-28T05", "2024-10-27")):
        rid = "backfill__" + z(start)
        run = d.wait_run("zoned_backfill", rid)
        assert run["state"] == "success", d.tis("zoned_backfill", rid)
        assert (run["data_interval_start"], run["data_interval_end"]) == (
            z(start), z(end)), run
        got = xcom(d, "zoned_backfill", rid, "facts")
        assert (got["ds"], got["start"], got["end"]) == (ds, z(start), z(end)), got


def test_a_params_schema_refuses_a_bad_conf(make_server, tmp_path):
    d = airflow_dags(make_server, tmp_path, [])
    (d.dir / "params.py").write_text(PARAMS)
    d.wait_dag("with_params")
    details = d.get("/dags/with_params/details")
    assert details["params"]["n"]["value"] == 3, details["params"]
    for conf, name in (({"n": 12}, "params.n"), ({"n": "x"}, "params.n"),
                       ({"mode": "medium"}, "params.mode")):
        status, body = d.srv.api("POST", "/api/v1/dags/with_params/dagRuns", {"conf": conf})
        assert status == 400 and name in body["detail"], (conf, status, body)
    assert d.get("/dags/with_params/dagRuns")["total_entries"] == 0
    run = d.trigger("with_params", conf={"n": 4}, run_id="good")
    assert d.wait_run("with_params", "good")["state"] == "success", d.tis("with_params", "good")
    assert xcom(d, "with_params", "good", "seen") == {"n": 4, "mode": "fast", "plain": 7}
    assert run["conf"] == {"n": 4}


TIMETABLES = '''\
import datetime
import pendulum
from airflow import DAG
from airflow.datasets import Dataset
from airflow.operators.python import PythonOperator
from airflow.timetables.datasets import DatasetOrTimeSchedule
from airflow.timetables.trigger import CronTriggerTimetable


def facts(ds, data_interval_start, data_interval_end, dag_run):
    return {"ds": ds, "start": data_interval_start.isoformat(),
            "end": data_interval_end.isoformat(), "run_type": dag_run.run_type}


ams = "Europe/Amsterdam"
with DAG("at_six", catchup=True,
         schedule=CronTriggerTimetable("0 6 * * *", timezone=ams,
                                       interval=datetime.timedelta(hours=1)),
         start_date=pendulum.datetime(2024, 3, 29, tz=ams),
         end_date=pendulum.datetime(2024, 4, 1, tz=ams)):
    PythonOperator(task_id="facts", python_callable=facts)

with DAG("six_or_data", catchup=True,
         schedule=DatasetOrTimeSchedule(
             timetable=CronTriggerTimetable("0 6 * * *", timezone=ams),
             datasets=[Dataset("s3://b/in")]),
         start_date=pendulum.datetime(2024, 3, 29, tz=ams),
         end_date=pendulum.datetime(2024, 3, 30, tz=ams)):
    PythonOperator(task_id="facts", python_callable=facts)
'''


def test_a_cron_trigger_timetable_runs_at_its_fire_times(make_server, tmp_path):
    d = airflow_dags(make_server, tmp_path, [])
    (d.dir / "timetables.py").write_text(TIMETABLES)
    d.wait_dag("at_six")
    # a run at each 06:00 in Amsterdam; its logical date and data interval start an hour
    # before (interval=1h) and end at the fire time; end_date (1 April 00:00) is the last
    for logical, fire, ds in (("03-29T04", "03-29T05", "2024-03-29"),
                              ("03-30T04", "03-30T05", "2024-03-30"),
                              ("03-31T03", "03-31T04", "2024-03-31")):
        rid = "scheduled__" + z(logical)
        run = d.wait_run("at_six", rid)
        assert run["state"] == "success", d.tis("at_six", rid)
        assert (run["data_interval_start"], run["data_interval_end"]) == (
            z(logical), z(fire)), run
        got = xcom(d, "at_six", rid, "facts")
        assert got == {"ds": ds, "start": z(logical), "end": z(fire),
                       "run_type": "scheduled"}, got
    assert len(d.get("/dags/at_six/dagRuns")["dag_runs"]) == 3


def test_a_dataset_or_time_schedule_runs_on_both(make_server, tmp_path):
    d = airflow_dags(make_server, tmp_path, [])
    (d.dir / "timetables.py").write_text(TIMETABLES)
    d.wait_dag("six_or_data")
    # its time: the one fire time before end_date (a trigger cron: no interval)
    rid = "scheduled__" + z("03-29T05")
    assert d.wait_run("six_or_data", rid)["state"] == "success", d.tis("six_or_data", rid)
    # and its dataset: an update announced over REST starts a run
    status, ev = d.srv.api("POST", "/api/v1/datasets/events", {"dataset_uri": "s3://b/in"})
    assert status == 200, ev
    assert [r["dag_id"] for r in ev["created_dagruns"]] == ["six_or_data"], ev
    drid = ev["created_dagruns"][0]["run_id"]
    assert d.wait_run("six_or_data", drid)["state"] == "success", d.tis("six_or_data", drid)
    assert xcom(d, "six_or_data", drid, "facts")["run_type"] == "dataset_triggered"
