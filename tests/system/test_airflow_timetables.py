"""Airflow DAG files whose schedules are no cron run through a server (docs/airflow.md,
docs/dags.md "Schedules"): a relativedelta of a month catching up with the month ends clamped
as dateutil clamps them, each run's logical date and data interval checked in its task; an
EventsTimetable's runs at its past events (Airflow ignores start_date and catchup for it) and
a manual run's interval restricted to the events; @continuous starting each run after the
previous one ends, each interval from the previous one's end; the YAML forms; bad ones import
errors."""

import datetime as dt

from conftest import cli_describe, wait_for
from test_airflow_dags import airflow_dags, wait_import_error
from test_airflow_schedules import xcom


def utc(text):
    return text + "+00:00"


def test_a_monthly_relativedelta_catches_up_month_by_month(make_server, tmp_path):
    d = airflow_dags(make_server, tmp_path, ["timetables/beyond_cron.py"])
    dag = d.wait_dag("monthly")
    assert dag["schedule_interval"] == {"__type": "RelativeDelta", "years": 0, "months": 1,
                                        "days": 0, "hours": 0, "minutes": 0,
                                        "seconds": 0}, dag
    assert dag["timetable_description"] == "relativedelta(months=+1)", dag
    # Jan 31 + 1 month is Feb 29, then Mar 29: each step from the previous logical date;
    # end_date (1 May) ends them after the run of 29 April
    days = ["2024-01-31", "2024-02-29", "2024-03-29", "2024-04-29", "2024-05-29"]
    for ds, end in zip(days, days[1:]):
        rid = "scheduled__" + utc(ds + "T06:00:00")
        run = d.wait_run("monthly", rid)
        assert run["state"] == "success", d.tis("monthly", rid)
        assert (run["data_interval_start"], run["data_interval_end"]) == (
            utc(ds + "T06:00:00"), utc(end + "T06:00:00")), run
        got = xcom(d, "monthly", rid, "facts")
        assert got == {"ds": ds, "start": utc(ds + "T06:00:00"),
                       "end": utc(end + "T06:00:00"), "run_type": "scheduled"}, got
    runs = d.get("/dags/monthly/dagRuns")["dag_runs"]
    assert len(runs) == 4, runs
    assert d.get("/dags/monthly")["next_dagrun"] is None

    # a backfill: a run at --from and at each step after it, each a month long
    r = d.srv.cli("dags", "backfill", "monthly", "--from", "2023-10-31", "--to", "2023-12-31",
                  "--wait", timeout=120)
    assert r.returncode == 0, cli_describe(r)
    for ds, end in (("2023-10-31", "2023-11-30"), ("2023-11-30", "2023-12-30"),
                    ("2023-12-30", "2024-01-30")):
        rid = "backfill__" + utc(ds + "T00:00:00")
        run = d.wait_run("monthly", rid)
        assert run["state"] == "success", d.tis("monthly", rid)
        assert (run["data_interval_start"], run["data_interval_end"]) == (
            utc(ds + "T00:00:00"), utc(end + "T00:00:00")), run


def test_an_events_timetable_runs_at_its_events(make_server, tmp_path):
    d = airflow_dags(make_server, tmp_path, ["timetables/beyond_cron.py"])
    dag = d.wait_dag("match_days")
    # every event that has come, though before start_date and without catchup (Airflow's
    # EventsTimetable ignores both); 00:00 in Amsterdam is 23:00Z; the next is 2099's
    assert dag["next_dagrun"] == "2099-01-01T00:00:00+00:00", dag
    for at in ("2024-01-31T23:00:00", "2024-03-01T10:00:00"):
        rid = "scheduled__" + utc(at)
        run = d.wait_run("match_days", rid)
        assert run["state"] == "success", d.tis("match_days", rid)
        assert run["data_interval_start"] == run["data_interval_end"] == utc(at), run
    assert len(d.get("/dags/match_days/dagRuns")["dag_runs"]) == 2
    # a manual run (restrict_to_events): the latest event's instant as its interval
    status, run = d.srv.api("POST", "/api/v1/dags/match_days/dagRuns",
                            {"dag_run_id": "by_hand", "logical_date": "2024-05-01T00:00:00Z"})
    assert status == 200, run
    assert run["data_interval_start"] == run["data_interval_end"] == utc(
        "2024-03-01T10:00:00"), run
    # backfill refuses it: Airflow's walks the events, weir's CLI cuts cron and delta grids
    assert d.get("/dags/match_days/details")["schedule_kind"] == "events"
    r = d.srv.cli("dags", "backfill", "match_days", "--from", "2024-01-01", "--to", "2024-04-01")
    assert r.returncode != 0 and "the DAG's schedule is an EventsTimetable" in r.stderr, r.stderr


def test_continuous_starts_each_run_after_the_previous_one_ends(make_server, tmp_path):
    d = airflow_dags(make_server, tmp_path, ["timetables/beyond_cron.py"])
    d.wait_dag("forever")

    def ended():
        runs = d.get("/dags/forever/dagRuns?order_by=execution_date")["dag_runs"]
        done = [r for r in runs if r["state"] == "success"]
        return runs if len(done) >= 3 else None

    runs = wait_for(ended, 60, "three runs of forever")
    status, _ = d.srv.api("PATCH", "/api/v1/dags/forever?update_mask=is_paused",
                          {"is_paused": True})
    assert status == 200
    runs = d.get("/dags/forever/dagRuns?order_by=execution_date")["dag_runs"]
    # never two at a time: each run starts after the previous one ended, and its data
    # interval starts at the previous one's end (the first at start_date)
    assert runs[0]["data_interval_start"] == utc("2024-01-01T00:00:00"), runs[0]
    for prev, run in zip(runs, runs[1:]):
        assert prev["state"] == "success", prev
        assert run["logical_date"] == run["data_interval_start"] == prev["data_interval_end"]
        assert dt.datetime.fromisoformat(run["start_date"]) >= dt.datetime.fromisoformat(
            prev["end_date"]), (prev, run)
        assert run["run_type"] == "scheduled", run


YAML_MONTHLY = """\
dag_id: yaml_monthly
schedule: {delta: {months: 1}}
start_date: 2024-01-31
end_date: 2024-03-01
catchup: true
tasks:
  - task_id: t
    command: "true"
"""

YAML_EVENTS = """\
dag_id: yaml_events
schedule: {events: ["2024-03-01T10:00:00Z", "2024-02-01"]}
start_date: 2024-01-01
tasks:
  - task_id: t
    command: "true"
"""

BAD_CONTINUOUS = '''\
import pendulum
from airflow import DAG
from airflow.operators.empty import EmptyOperator

with DAG("too_many", schedule="@continuous", start_date=pendulum.datetime(2024, 1, 1)):
    EmptyOperator(task_id="t")
'''


def test_yaml_forms_and_bad_schedules(make_server, tmp_path):
    d = airflow_dags(make_server, tmp_path, [])
    (d.dir / "yaml_monthly.yaml").write_text(YAML_MONTHLY)
    (d.dir / "yaml_events.yaml").write_text(YAML_EVENTS)
    (d.dir / "bad_yaml.yaml").write_text(
        "dag_id: bad\nschedule: {delta: {fortnights: 1}}\nstart_date: 2024-01-01\n"
        "tasks: [{task_id: t, command: 'true'}]\n")
    (d.dir / "too_many.py").write_text(BAD_CONTINUOUS)
    for rid in ("scheduled__2024-01-31T00:00:00+00:00", "scheduled__2024-02-29T00:00:00+00:00"):
        assert d.wait_run("yaml_monthly", rid)["state"] == "success"
    for rid in ("scheduled__2024-02-01T00:00:00+00:00", "scheduled__2024-03-01T10:00:00+00:00"):
        assert d.wait_run("yaml_events", rid)["state"] == "success"
    err = wait_import_error(d, "too_many.py")
    assert "ContinuousTimetable requires max_active_runs <= 1" in err["stack_trace"], err
    err = wait_import_error(d, "bad_yaml.yaml")
    assert "schedule.delta.fortnights: expected years, months, weeks" in err["stack_trace"], err
