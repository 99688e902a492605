"""Sensors whose fields are templates, on a real server: a file sensor on data/{{ ds }}/_SUCCESS
in mode reschedule (the server renders it) and in mode poke (the job's spec is rendered), a SQL
sensor on SQLite with the day as a bound parameter, an HTTP sensor on /status/{{ ds_nodash }}
against a real HTTP server in the test's thread, and a rendered path that leaves the folder
failing the try with its reason, in both modes.
"""

import sqlite3

import pytest

from conftest import find_procs, wait_for
from dagtest import make_dags  # noqa: F401  (the fixture)
from test_sensors import Quiet, after_next_poke, dag, http_server, start, wait_ti

DAY = "2026-03-01T00:00:00+00:00"


@pytest.mark.parametrize("mode", ["reschedule", "poke"])
def test_file_sensor_on_the_days_folder(make_dags, mode):
    d = make_dags(start=False)
    start(d, "ft", dag("ft", """\
        - task_id: wait
          sensor:
            file: {path: "data/{{ ds }}/_SUCCESS", folder: "%s"}
            poke_interval: 0.2
            mode: %s
        """ % (d.side, mode)))
    run = d.trigger("ft", logical_date=DAY)["dag_run_id"]
    # the pokes look for the day's file, not for the template: the server's say so in
    # the TI's reason, the process's in the try's log
    if mode == "reschedule":
        wait_ti(d, "ft", run, "wait", lambda t: t["state"] == "up_for_reschedule"
                and "poke 2" in str(t) and "data/2026-03-01/_SUCCESS" in str(t), "two pokes")
    else:
        wait_ti(d, "ft", run, "wait", lambda t: t["state"] == "running", "the poking job runs")
        wait_for(lambda: find_procs("task-sensor") or None, 30, "a weir task-sensor process")
        wait_for(lambda: "data/2026-03-01/_SUCCESS" in d.log("ft", run, "wait") or None, 30,
                 "a poke of the day's path in the log")
    # another day's marker does not count
    (d.side / "data" / "2026-02-28").mkdir(parents=True)
    (d.side / "data" / "2026-02-28" / "_SUCCESS").write_text("")
    ti = after_next_poke(d, "ft", run, "wait", mode)
    assert ti["state"] in ("up_for_reschedule", "running"), ti
    (d.side / "data" / "2026-03-01").mkdir()
    (d.side / "data" / "2026-03-01" / "_SUCCESS").write_text("")
    assert d.wait_run("ft", run, timeout=30)["state"] == "success"


def test_sql_sensor_binds_the_day(make_dags, tmp_path):
    db = tmp_path / "loads.db"
    c = sqlite3.connect(db)
    c.execute("CREATE TABLE loads (ds text)")
    c.execute("INSERT INTO loads VALUES ('2026-02-28')")
    c.commit()
    d = make_dags(start=False)
    d.srv.extra_env["WEIR_CONN_LITE"] = "sqlite:///%s" % db
    start(d, "sq", dag("sq", """\
        - task_id: wait
          sensor:
            sql: {conn: lite, query: "SELECT count(*) > 0 FROM loads WHERE ds = :ds",
                  parameters: {ds: "{{ ds }}"}}
            poke_interval: 0.2
            mode: reschedule
        """))
    run = d.trigger("sq", logical_date=DAY)["dag_run_id"]
    wait_ti(d, "sq", run, "wait", lambda t: "returned 0" in str(t), "a false first cell")
    c.execute("INSERT INTO loads VALUES ('2026-03-01')")
    c.commit()
    assert d.wait_run("sq", run, timeout=30)["state"] == "success"


class DayStatus(Quiet):
    hits = []

    def do_GET(self):
        DayStatus.hits.append(self.path)
        ok = self.path == "/status/20260301" and len(DayStatus.hits) > 1
        self.reply(200 if ok else 404, b"done" if ok else b"not yet")


def test_http_sensor_path_with_the_day(make_dags):
    DayStatus.hits = []
    with http_server(DayStatus) as port:
        d = make_dags(start=False)
        start(d, "hs", dag("hs", """\
            - task_id: wait
              sensor:
                http: {url: "http://127.0.0.1:%d", path: "/status/{{ ds_nodash }}", match: done}
                poke_interval: 0.2
            - task_id: again
              sensor:
                http: {url: "http://127.0.0.1:%d", path: "/status/{{ ds_nodash }}", match: done}
                poke_interval: 0.2
                mode: reschedule
            """ % (port, port)))
        run = d.trigger("hs", logical_date=DAY)["dag_run_id"]
        r = d.wait_run("hs", run, timeout=30)
        assert r["state"] == "success", r
        assert set(DayStatus.hits) == {"/status/20260301"}, DayStatus.hits


def test_a_rendered_path_that_escapes_fails_the_try(make_dags):
    d = make_dags(start=False)
    start(d, "esc", dag("esc", """\
        - task_id: resched
          retries: 2
          sensor:
            file: {path: "{{ params.p }}/_SUCCESS", folder: "%s"}
            poke_interval: 0.2
            mode: reschedule
        - task_id: poke
          retries: 2
          sensor:
            file: {path: "{{ params.p }}/_SUCCESS", folder: "%s"}
            poke_interval: 0.2
        - task_id: novar
          retries: 1
          retry_delay: 0
          sensor:
            file: {path: "{{ var.value.landing }}/_SUCCESS", folder: "%s"}
            poke_interval: 0.2
            mode: reschedule
        """ % (d.side, d.side, d.side), extra="params: {p: ok}\n"))
    run = d.trigger("esc", conf={"p": "../x"})["dag_run_id"]
    assert d.wait_run("esc", run, timeout=30)["state"] == "failed"
    tis = d.tis("esc", run)
    for name in ("resched", "poke"):
        ti = tis[name]
        # a value the checks refuse does not get better with a retry
        assert ti["state"] == "failed" and ti["try_number"] == 1, ti
        why = str(ti)
        assert "sensor.file.path" in why and "../x/_SUCCESS" in why, ti
        assert "inside the folder" in why, ti
    # a variable not defined names itself, and a retry may find it
    ti = tis["novar"]
    assert ti["state"] == "failed" and ti["try_number"] == 2, ti
    assert "sensor.file.path" in str(ti) and "landing" in str(ti), ti

