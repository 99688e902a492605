"""Airflow's SqlSensor and HttpSensor with Python callables, in DAG files run by a real
server (docs/airflow.md, "Sensors"): with `success`, `failure`, `selector` or
`fail_on_empty` a SqlSensor pokes in Python through the connection's hook on a real
PostgreSQL, with Airflow's ends (the failure criteria fail the task, soft_fail skips, no row
fails with fail_on_empty); an HttpSensor with `response_check` (taking the context's `ds`)
against a local HTTP server, a 404 "not yet" and a 500 a failure, as Airflow's; without a
callable both stay weir's own sensors, Airflow's `%(name)s` placeholders bound."""

import json

from stores import pg, pg_db  # noqa: F401  (the fixtures)
from test_airflow_operators import run_ok, server_with
from test_sensors import Quiet, http_server

SQL_DAG = '''\
from datetime import datetime
from airflow import DAG
from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator
from airflow.providers.common.sql.sensors.sql import SqlSensor

with DAG("sqlsense", start_date=datetime(2024, 1, 1), schedule=None,
         default_args={"retries": 0}):
    make = SQLExecuteQueryOperator(task_id="make", conn_id="pg", sql=[
        "CREATE SEQUENCE s1", "CREATE SEQUENCE s2", "CREATE SEQUENCE s3"])
    # each poke moves the sequence on: met at the third, in reschedule and in poke mode
    third = SqlSensor(task_id="third", conn_id="pg", sql="SELECT nextval('s1')",
                      success=lambda n: n >= 3, mode="reschedule", poke_interval=0.1)
    picked = SqlSensor(task_id="picked", conn_id="pg",
                       sql="SELECT 'label', nextval('s2') >= %(at)s",
                       parameters={"at": 2}, selector=lambda row: row[1],
                       poke_interval=0.1)
    bad = SqlSensor(task_id="bad", conn_id="pg", sql="SELECT 'broken'",
                    failure=lambda v: v == "broken", success=lambda v: False,
                    poke_interval=0.1)
    soft = SqlSensor(task_id="soft", conn_id="pg", sql="SELECT nextval('s3') - 1",
                     failure=lambda n: n >= 1, soft_fail=True, poke_interval=0.1,
                     mode="reschedule")
    empty = SqlSensor(task_id="empty", conn_id="pg", sql="SELECT 1 WHERE false",
                      fail_on_empty=True, poke_interval=0.1)
    # no callable: weir's own sql sensor, the placeholder bound
    plain = SqlSensor(task_id="plain", conn_id="pg", sql="SELECT %(d)s = '2024-03-04'",
                      parameters={"d": "{{ ds }}"}, poke_interval=0.1, mode="reschedule")
    make >> [third, picked, bad, soft, empty, plain]
'''


def test_sql_sensor_callables_poke_in_python(make_server, tmp_path, pg, pg_db):
    d = server_with(make_server, tmp_path, {"sqlsense.py": SQL_DAG},
                    env={"WEIR_CONN_PG": pg.uri(pg_db)})
    run = run_ok(d, "sqlsense", logical_date="2024-03-04T00:00:00Z")
    rid = run["dag_run_id"]
    tis = d.tis("sqlsense", rid)
    assert tis["make"]["state"] == "success", d.log("sqlsense", rid, "make")
    for t in ("third", "picked", "plain"):
        assert tis[t]["state"] == "success" and tis[t]["try_number"] == 1, \
            (tis[t], d.log("sqlsense", rid, t))
    # the third poke met it; a process a poke in reschedule mode
    assert pg.query(pg_db, "SELECT last_value FROM s1") == [(3,)]
    assert "Poking: SELECT nextval('s1')" in d.log("sqlsense", rid, "third")
    assert pg.query(pg_db, "SELECT last_value FROM s2") == [(2,)]
    assert tis["bad"]["state"] == "failed", tis["bad"]
    assert "Failure criteria met. self.failure('broken') returned True" in \
        d.log("sqlsense", rid, "bad")
    # the failure criteria with soft_fail: skipped, at the second poke
    assert tis["soft"]["state"] == "skipped", (tis["soft"], d.log("sqlsense", rid, "soft"))
    assert pg.query(pg_db, "SELECT last_value FROM s3") == [(2,)]
    assert tis["empty"]["state"] == "failed"
    assert "No rows returned, raising as per fail_on_empty flag" in \
        d.log("sqlsense", rid, "empty")
    assert run["state"] == "failed"


class Api(Quiet):
    """GET /ready answers {"ready": true} from the second GET on, /boom 500, else 404."""

    seen = []

    def do_GET(self):
        Api.seen.append(self.path)
        if self.path.startswith("/ready"):
            n = sum(1 for p in Api.seen if p.startswith("/ready"))
            self.reply(200, json.dumps({"ready": n >= 2}).encode())
        elif self.path == "/boom":
            self.reply(500, b"oops")
        else:
            self.reply(404, b"no")


HTTP_DAG = '''\
from datetime import datetime
from airflow import DAG
from airflow.providers.http.sensors.http import HttpSensor


def ready(response, ds):
    with open("@SIDE@/checked", "a") as f:
        f.write(ds + "\\n")
    return response.json()["ready"]


with DAG("httpsense", start_date=datetime(2024, 1, 1), schedule=None,
         default_args={"retries": 0}):
    HttpSensor(task_id="ready", http_conn_id="api", endpoint="ready", request_params={"day": "{{ ds }}"},
               response_check=ready, poke_interval=0.1, mode="reschedule")
    HttpSensor(task_id="boom", http_conn_id="api", endpoint="boom", response_check=lambda r: True,
               poke_interval=0.1)
    HttpSensor(task_id="missing", http_conn_id="api", endpoint="missing", response_check=lambda r: True,
               poke_interval=0.1, timeout=0.5, soft_fail=True)
'''


def test_http_sensor_response_check_pokes_in_python(make_server, tmp_path):
    Api.seen = []
    with http_server(Api) as port:
        d = server_with(make_server, tmp_path, {"httpsense.py": HTTP_DAG},
                        env={"WEIR_CONN_API": "http://127.0.0.1:%d" % port})
        run = run_ok(d, "httpsense", logical_date="2024-02-03T00:00:00Z")
        rid = run["dag_run_id"]
        tis = d.tis("httpsense", rid)
        assert tis["ready"]["state"] == "success" and tis["ready"]["try_number"] == 1, \
            (tis["ready"], d.log("httpsense", rid, "ready"))
        # the check saw the context's ds, once a poke: met at the second
        assert d.side_lines("checked") == ["2024-02-03", "2024-02-03"]
        assert Api.seen.count("/ready?day=2024-02-03") == 2, Api.seen
        # an error other than 404 fails the try; 404 is "not yet" until the timeout
        assert tis["boom"]["state"] == "failed"
        assert "500:Internal Server Error" in d.log("httpsense", rid, "boom")
        assert tis["missing"]["state"] == "skipped", tis["missing"]
        assert "/missing" in Api.seen
        assert run["state"] == "failed"
