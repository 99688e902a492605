"""Airflow DAG files on custom timetables run through a server (docs/airflow.md, "Custom
timetables"): the DAG processor calls the timetable and lists the next runs, the server makes
them and has the file parsed again for more.  A timetable from the plugins folder (beside the
DAG folder) and one written in the DAG file; each run's logical date, data interval and the
time it was made checked over several parses of the file (10 runs a parse); the timetable's
summary and description in the API; a manual run; a timetable that raises or hangs is its
file's import error, the other files unaffected."""

import datetime as dt
import sys

from conftest import wait_for
from dagtest import DAGS_SRC, Dags, dag_config
from test_airflow_dags import import_errors, place, wait_import_error
from test_airflow_schedules import xcom


def custom_dags(make_server, tmp_path, files, timeout=None):
    """A server whose DAG folder holds tests/system/dags/airflow/FILES and whose plugins
    folder (beside it, as AIRFLOW_HOME's) holds the workday timetable."""
    config = dag_config() + ("dagbag_import_timeout: %s\n" % timeout if timeout else "")
    srv = make_server(config=config, start=False)
    srv.extra_env["WEIR_AIRFLOW_PYTHON"] = sys.executable
    d = Dags(srv, tmp_path)
    plugins = d.dir.parent / "plugins"
    plugins.mkdir(exist_ok=True)
    src = DAGS_SRC / "airflow" / "timetables" / "plugins" / "workday_timetable.py"
    (plugins / "workday_timetable.py").write_text(src.read_text())
    for name in files:
        place(d, name)
    srv.start()
    return d


def utc(text):
    return text + "+00:00"


def runs_of(d, dag_id):
    body = d.get("/dags/%s/dagRuns?limit=100&order_by=execution_date" % dag_id)
    return [r for r in body["dag_runs"] if r["run_type"] == "scheduled"]


def workdays():
    """The 30 workdays from 1 January to 9 February 2024 (a Monday to a Friday)."""
    day, out = dt.date(2024, 1, 1), []
    while day <= dt.date(2024, 2, 9):
        if day.weekday() < 5:
            out.append(day)
        day += dt.timedelta(days=1)
    return out


def test_custom_timetables_run_over_several_lists(make_server, tmp_path):
    d = custom_dags(make_server, tmp_path, ["timetables/custom.py"])
    dag = d.wait_dag("workdays")
    assert dag["timetable_description"] == \
        "One run for each workday, made when the day is over", dag
    assert dag["schedule_interval"]["value"] == "after each workday", dag
    assert d.wait_dag("shifts")["timetable_description"] == "each shift"

    # the plugin's timetable: a run per workday, its interval that day, three lists of 10
    # and a fourth parse that finds none past end_date
    days = workdays()
    assert len(days) == 30
    got = wait_for(lambda: (lambda r: r if len(r) == 30 else None)(runs_of(d, "workdays")),
                   120, "30 runs of workdays")
    for day, run in zip(days, got):
        ds, end = day.isoformat(), (day + dt.timedelta(days=1)).isoformat()
        assert run["dag_run_id"] == "scheduled__" + utc(ds + "T00:00:00"), run
        assert run["logical_date"] == utc(ds + "T00:00:00"), run
        assert (run["data_interval_start"], run["data_interval_end"]) == (
            utc(ds + "T00:00:00"), utc(end + "T00:00:00")), run
    wait_for(lambda: d.get("/dags/workdays")["next_dagrun"] is None, 60,
             "workdays to have no next run")
    # 10 runs a parse: the first parse and three more at least (a parse asked for by one
    # DAG lists the next runs of both)
    # (the fourth may still be under way when the third list is used up: waited for)
    log = wait_for(lambda: (lambda t: t if t.count("timetables/custom.py: processed in") >= 4
                            else None)(d.srv.log_path.read_text(errors="replace")),
                   60, "a fourth parse of custom.py")
    assert "its timetable's list of runs is used up" in log, log[-4000:]

    # the file's own timetable: 12 shifts, each run's task sees its interval
    want = []
    for day in ("01", "02", "03", "04"):
        for a, b, e in (("06", "14", day), ("14", "22", day), ("22", "06", None)):
            end_day = e or "%02d" % (int(day) + 1)
            want.append((utc("2024-03-%sT%s:00:00" % (day, a)),
                         utc("2024-03-%sT%s:00:00" % (end_day, b))))
    for start, end in want:
        rid = "scheduled__" + start
        run = d.wait_run("shifts", rid, timeout=120)
        assert run["state"] == "success", d.tis("shifts", rid)
        assert (run["logical_date"], run["data_interval_start"],
                run["data_interval_end"]) == (start, start, end), run
        assert xcom(d, "shifts", rid, "facts") == {
            "start": start, "end": end, "logical": start, "run_type": "scheduled"}
    assert len(runs_of(d, "shifts")) == 12
    assert d.get("/dags/shifts")["next_dagrun"] is None

    # a manual run: its logical date as its data interval (the server calls no
    # infer_manual_data_interval)
    status, run = d.srv.api("POST", "/api/v1/dags/shifts/dagRuns",
                            {"dag_run_id": "by_hand", "logical_date": "2024-05-01T09:00:00Z"})
    assert status == 200, run
    assert run["data_interval_start"] == run["data_interval_end"] == utc(
        "2024-05-01T09:00:00"), run
    assert import_errors(d, "custom.py") == []

    # backfill refuses a timetable's schedule (its summary is no cron to cut the range on)
    assert d.get("/dags/shifts/details")["schedule_kind"] == "timetable"
    r = d.srv.cli("dags", "backfill", "shifts", "--from", "2024-03-01", "--to", "2024-03-02")
    assert r.returncode != 0 and "shifts: the DAG's schedule is a custom timetable " \
        "(\"each shift\"): backfill cuts cron and delta schedules only" in r.stderr, r.stderr

    # a restart: the first parse knows no run yet, so its lists start at start_date; they
    # do not continue the latest runs, and the file is parsed again with them
    d.srv.terminate()
    d.srv.start()

    def stale_seen():
        return "its timetable's list of runs is stale" in \
            d.srv.log_path.read_text(errors="replace")

    wait_for(stale_seen, 60, "the stale list noticed")
    wait_for(lambda: d.get("/dags/workdays")["next_dagrun"] is None, 60,
             "workdays' list from its latest run")
    assert len(runs_of(d, "workdays")) == 30
    assert len(runs_of(d, "shifts")) == 12


def test_a_faulty_timetable_is_its_files_import_error(make_server, tmp_path):
    d = custom_dags(make_server, tmp_path, ["timetables/custom.py", "timetables/custom_faulty.py",
                                            "timetables/custom_hangs.py"], timeout=10)
    err = wait_import_error(d, "custom_faulty.py")
    assert "ValueError: the holiday calendar is not reachable" in err["stack_trace"], err
    err = wait_import_error(d, "custom_hangs.py", timeout=60)
    assert "took longer than dagbag_import_timeout" in err["stack_trace"], err
    # the other file's DAGs run
    run = d.wait_run("workdays", "scheduled__" + utc("2024-01-01T00:00:00"), timeout=120)
    assert run["data_interval_end"] == utc("2024-01-02T00:00:00"), run
    for dag_id in ("no_calendar", "forever_asking"):
        status, _ = d.srv.api("GET", "/api/v1/dags/" + dag_id)
        assert status == 404, dag_id
