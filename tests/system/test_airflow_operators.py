"""Airflow's operators beyond Bash and Python, and the hooks a DAG's code calls, in Python DAG
files run by a real server (docs/airflow.md): SQL operators as weir's sql tasks on a real
PostgreSQL (templates and DB-API parameters bound, the rows as XCom), PostgresHook and
RedisHook in a PythonOperator on the connections the task lists (their secrets masked in its
log), TriggerDagRunOperator as weir's trigger_dag, HttpOperator against a local HTTP server,
EmailOperator to a real SMTP server, SparkSubmitOperator's command line, and
BranchDayOfWeekOperator."""

import email
import json
import os
import sys
import textwrap
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from conftest import free_port, wait_for
from dagtest import Dags, dag_config
from notifytest import smtp_sink  # noqa: F401  (the fixture)
from stores import mariadb, mariadb_db, pg, pg_db, redis_db, redis_server  # noqa: F401

INJECTION = "x'); DROP TABLE notes; --"


def server_with(make_server, tmp_path, files, env=None):
    """A server whose DAG folder holds FILES ({name: text}, @SIDE@ replaced)."""
    srv = make_server(config=dag_config(), start=False)
    srv.extra_env["WEIR_AIRFLOW_PYTHON"] = sys.executable  # the tasks' interpreter
    srv.extra_env.update(env or {})
    d = Dags(srv, tmp_path)
    for name, text in files.items():
        d.write(name, textwrap.dedent(text).replace("@SIDE@", str(d.side)))
    srv.start()
    return d


def run_ok(d, dag_id, timeout=90, **trigger):
    d.wait_dag(dag_id)
    run = d.trigger(dag_id, **trigger)
    run = d.wait_run(dag_id, run["dag_run_id"], timeout=timeout)
    return run


def xcom(d, dag_id, run_id, task_id, key="return_value"):
    body = d.get("/dags/%s/dagRuns/%s/taskInstances/%s/xcomEntries/%s?stringify=false"
                 % (dag_id, run_id, task_id, key))
    return body["value"]


SQL_DAG = '''\
from datetime import datetime
from airflow import DAG
from airflow.hooks.base import BaseHook
from airflow.operators.python import PythonOperator
from airflow.providers.common.sql.operators.sql import SQLExecuteQueryOperator
from airflow.providers.postgres.hooks.postgres import PostgresHook
from airflow.providers.postgres.operators.postgres import PostgresOperator
from airflow.providers.redis.hooks.redis import RedisHook

def check(ti, pg_conn_id, **_):
    rows = ti.xcom_pull(task_ids="pick")
    hook = PostgresHook(postgres_conn_id=pg_conn_id)
    hook.insert_rows("notes", [(3, "three")], target_fields=["id", "note"])
    records = hook.get_records("SELECT id, note FROM notes WHERE id >= %s ORDER BY id", (2,))
    first = hook.get_first("SELECT count(*) FROM notes")
    hook.copy_expert("COPY (SELECT id, note FROM notes ORDER BY id) TO STDOUT", "@SIDE@/copy.tsv")
    cache = RedisHook(redis_conn_id="cache").get_conn()
    cache.set("weir:rows", len(records))
    print("the password is", BaseHook.get_connection("pg").password)
    with open("@SIDE@/check.json", "w") as f:
        import json
        json.dump({"pulled": rows, "records": [list(r) for r in records], "first": list(first),
                   "redis": cache.get("weir:rows").decode()}, f)
    return len(records)

with DAG("sqlops", start_date=datetime(2024, 1, 1), schedule=None,
         params={"note": "plain"}, default_args={"connections": ["cache"]}):
    make = PostgresOperator(
        task_id="make", postgres_conn_id="pg",
        sql="""CREATE TABLE notes (id int PRIMARY KEY, note text, ds date);
               INSERT INTO notes VALUES (1, '{{ params.note }}', '{{ ds }}'),
                                        (%(two)s, 'it''s two', {{ ds }})""",
        parameters={"two": 2})
    pick = SQLExecuteQueryOperator(
        task_id="pick", conn_id="pg",
        sql="SELECT id, note FROM notes WHERE ds = '{{ ds }}' ORDER BY id")
    # the task lists pg by its op_kwargs' *conn_id, cache by the DAG's default_args
    use = PythonOperator(task_id="use", python_callable=check, op_kwargs={"pg_conn_id": "pg"})
    # a list's XCom is a list of each statement's rows: this one runs through PostgresHook
    both = SQLExecuteQueryOperator(task_id="both", conn_id="pg",
                                   sql=["SELECT 1 AS one", "SELECT count(*) FROM notes"])
    make >> pick >> use >> both
'''


def test_sql_operators_and_hooks(make_server, tmp_path, pg, pg_db, redis_server, redis_db):
    pg_uri = pg.uri(pg_db)
    d = server_with(make_server, tmp_path, {"sqlops.py": SQL_DAG},
                    env={"WEIR_CONN_PG": pg_uri, "WEIR_CONN_CACHE": redis_server.uri(redis_db)})
    # a conf value that would break out of the quotes were it pasted into the SQL
    run = run_ok(d, "sqlops", conf={"note": INJECTION}, logical_date="2024-03-04T00:00:00Z")
    rid = run["dag_run_id"]
    assert run["state"] == "success", (run, d.log("sqlops", rid, "make"),
                                       d.log("sqlops", rid, "use"))
    tis = d.tis("sqlops", rid)
    # the SQL operators ran as weir's sql tasks (the C drivers), the Python one in Python
    assert "sql: statement 2 of 2 on pg" in d.log("sqlops", rid, "make")
    assert tis["pick"]["operator"] == "SQLExecuteQueryOperator", tis["pick"]
    # the SELECT's rows are its XCom, as Airflow's fetch_all_handler pushes them
    rows = [[1, INJECTION], [2, "it's two"]]
    assert xcom(d, "sqlops", rid, "pick") == rows
    out = json.loads((d.side / "check.json").read_text())
    assert out == {"pulled": rows, "records": [[2, "it's two"], [3, "three"]], "first": [3],
                   "redis": "2"}, out
    assert (d.side / "copy.tsv").read_text().splitlines()[2] == "3\tthree"
    assert redis_server.client(redis_db).get("weir:rows") == "2"
    log = d.log("sqlops", rid, "use")
    # the connection's password is masked in the task's log
    assert "the password is ***" in log and pg_uri.split(":")[2].split("@")[0] not in log, log
    assert pg.query(pg_db, "SELECT ds::text FROM notes WHERE id = 1") == [("2024-03-04",)]
    assert "Running statement: SELECT 1 AS one" in d.log("sqlops", rid, "both")  # the hook's
    assert xcom(d, "sqlops", rid, "both") == [[[1]], [[3]]]


MYSQL_DAG = """\
from datetime import datetime
from airflow import DAG
from airflow.providers.mysql.operators.mysql import MySqlOperator

with DAG("myops", start_date=datetime(2024, 1, 1), schedule=None, params={"note": "plain"}):
    MySqlOperator(task_id="load", mysql_conn_id="shop", sql=\"\"\"
        CREATE TABLE notes (id int PRIMARY KEY, note text);
        INSERT INTO notes VALUES (%s, '{{ params.note }}');
        SELECT id, note, '100%%' FROM notes\"\"\", parameters=[1])
"""


def test_mysql_operator_on_mariadb_without_a_python_driver(make_server, tmp_path, mariadb,
                                                           mariadb_db):
    d = server_with(make_server, tmp_path, {"myops.py": MYSQL_DAG},
                    env={"WEIR_CONN_SHOP": mariadb.uri(mariadb_db)})
    run = run_ok(d, "myops", conf={"note": INJECTION}, run_id="y1")
    assert run["state"] == "success", d.log("myops", "y1", "load")
    assert xcom(d, "myops", "y1", "load") == [[1, INJECTION, "100%"]]

MYSQL_HOOK_DAG = '''\
import json
from datetime import datetime
from airflow import DAG
from airflow.operators.python import PythonOperator
from airflow.providers.mysql.hooks.mysql import MySqlHook

def load(note):
    hook = MySqlHook(mysql_conn_id="shop")
    hook.run("CREATE TABLE items (id int PRIMARY KEY, note text)")
    hook.insert_rows("items", [(1, note), (2, "two")], target_fields=["id", "note"])
    hook.run("UPDATE items SET note = %s WHERE id = %s", parameters=("deux", 2))
    records = hook.get_records("SELECT id, note FROM items WHERE id >= %s ORDER BY id", (1,))
    first = hook.get_first("SELECT count(*) FROM items")
    with open("@SIDE@/mysql.json", "w") as f:
        json.dump({"records": [list(r) for r in records], "first": list(first)}, f)
    return len(records)

with DAG("myhook", start_date=datetime(2024, 1, 1), schedule=None, params={"note": "plain"}):
    PythonOperator(task_id="load", python_callable=load,
                   op_kwargs={"note": "{{ params.note }}"})
'''


def test_mysql_hook_on_mariadb(make_server, tmp_path, mariadb, mariadb_db):
    """MySqlHook in a Python task, through Debian's MySQLdb driver, against MariaDB."""
    d = server_with(make_server, tmp_path, {"myhook.py": MYSQL_HOOK_DAG},
                    env={"WEIR_CONN_SHOP": mariadb.uri(mariadb_db)})
    run = run_ok(d, "myhook", conf={"note": INJECTION}, run_id="h1")
    assert run["state"] == "success", d.log("myhook", "h1", "load")
    out = json.loads((d.side / "mysql.json").read_text())
    assert out == {"records": [[1, INJECTION], [2, "deux"]], "first": [2]}, out
    assert xcom(d, "myhook", "h1", "load") == 2


TRIGGER_DAGS = {
    "parent.py": '''\
        from datetime import datetime
        from airflow import DAG
        from airflow.operators.trigger_dagrun import TriggerDagRunOperator

        with DAG("parent", start_date=datetime(2024, 1, 1), schedule=None):
            TriggerDagRunOperator(task_id="start_child", trigger_dag_id="child",
                                  trigger_run_id="from_{{ run_id }}",
                                  conf={"day": "{{ ds }}", "n": 3},
                                  wait_for_completion=True, poke_interval=5)
        ''',
    "child.py": '''\
        import json
        from datetime import datetime
        from airflow import DAG
        from airflow.operators.python import PythonOperator

        def record(dag_run, params):
            with open("@SIDE@/child.json", "w") as f:
                json.dump({"conf": dag_run.conf, "run_id": dag_run.run_id}, f)

        with DAG("child", start_date=datetime(2024, 1, 1), schedule=None,
                 params={"day": "", "n": 0}):
            PythonOperator(task_id="record", python_callable=record)
        ''',
}


def test_trigger_dag_run_operator_waits_for_the_run(make_server, tmp_path):
    d = server_with(make_server, tmp_path, TRIGGER_DAGS)
    d.wait_dag("child")
    run = run_ok(d, "parent", logical_date="2024-05-06T00:00:00Z", run_id="p1")
    assert run["state"] == "success", (run, d.log("parent", "p1", "start_child"))
    child = json.loads((d.side / "child.json").read_text())
    assert child == {"conf": {"day": "2024-05-06", "n": 3}, "run_id": "from_p1"}, child
    # the parent's task ended once the child's run had: it was success then
    assert d.run("child", "from_p1")["state"] == "success"
    ti = d.tis("parent", "p1")["start_child"]
    assert ti["state"] == "success" and ti["operator"] == "TriggerDagRunOperator", ti


class Api:
    """A local HTTP server: GET /items?kind=K answers JSON, POST /fail answers 500."""

    def __init__(self):
        self.seen = []
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                api.seen.append((self.command, self.path, self.headers.get("X-Team"),
                                 self.headers.get("Authorization")))
                body = json.dumps({"items": [1, 2, 3], "path": self.path}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self):
                api.seen.append((self.command, self.path, None, None))
                self.send_response(500)
                self.send_header("Content-Length", "4")
                self.end_headers()
                self.wfile.write(b"oops")

            def log_message(self, *a):
                pass

        self.port = free_port()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


HTTP_DAG = '''\
import json
from datetime import datetime
from airflow import DAG
from airflow.operators.python import PythonOperator
from airflow.providers.http.operators.http import HttpOperator, SimpleHttpOperator

def keep(ti):
    with open("@SIDE@/http.json", "w") as f:
        json.dump(ti.xcom_pull(task_ids="get_items"), f)

with DAG("httpops", start_date=datetime(2024, 1, 1), schedule=None):
    get_items = HttpOperator(task_id="get_items", http_conn_id="api", method="GET",
                             endpoint="items", data={"kind": "{{ ds }}"},
                             headers={"X-Team": "etl"},
                             response_check=lambda r: r.json()["items"] == [1, 2, 3],
                             response_filter=lambda r: r.json())
    get_items >> PythonOperator(task_id="keep", python_callable=keep)
    SimpleHttpOperator(task_id="post_fails", http_conn_id="api", endpoint="/fail",
                       data="x", retries=0)
'''


def test_http_operator(make_server, tmp_path):
    api = Api()
    try:
        d = server_with(make_server, tmp_path, {"httpops.py": HTTP_DAG},
                        env={"WEIR_CONN_API": "http://bot:t0ken@127.0.0.1:%d" % api.port})
        run = run_ok(d, "httpops", logical_date="2024-02-03T00:00:00Z", run_id="h1")
        tis = d.tis("httpops", "h1")
        assert tis["get_items"]["state"] == "success", d.log("httpops", "h1", "get_items")
        assert tis["keep"]["state"] == "success", d.log("httpops", "h1", "keep")
        # the filter's value is the XCom, read downstream
        got = json.loads((d.side / "http.json").read_text())
        assert got == {"items": [1, 2, 3], "path": "/items?kind=2024-02-03"}, got
        assert ("GET", "/items?kind=2024-02-03", "etl", "Basic Ym90OnQwa2Vu") in api.seen
        # an answer of 500 fails the task, the status in its log
        assert tis["post_fails"]["state"] == "failed"
        assert "500:Internal Server Error" in d.log("httpops", "h1", "post_fails")
        assert run["state"] == "failed"
    finally:
        api.close()


EMAIL_DAG = '''\
from datetime import datetime
from airflow import DAG
from airflow.operators.email import EmailOperator

with DAG("mailops", start_date=datetime(2024, 1, 1), schedule=None, params={"n": 7}):
    EmailOperator(task_id="mail", to=["ops@example.com", "lead@example.com"],
                  cc="cc@example.com", bcc=["audit@example.com"],
                  subject="Load of {{ ds }}", html_content="<b>done</b> {{ params.n }}",
                  files=["@SIDE@/report.csv"])
'''


def test_email_operator_sends_through_the_smtp_connection(make_server, tmp_path, smtp_sink):
    sink = smtp_sink("mailer", "s3cret")
    d = server_with(make_server, tmp_path, {"mail.py": EMAIL_DAG}, env={
        "WEIR_CONN_SMTP_DEFAULT": json.dumps({
            "conn_type": "smtp", "host": "127.0.0.1", "port": sink.port, "login": "mailer",
            "password": "s3cret", "extra": {"from_email": "weir@example.com"}})})
    (d.side / "report.csv").write_text("a,b\n1,2\n")
    run = run_ok(d, "mailops", logical_date="2024-07-08T00:00:00Z", run_id="m1")
    assert run["state"] == "success", d.log("mailops", "m1", "mail")
    msg = sink.wait_count(1)[0]
    assert msg["from"] == "weir@example.com" and msg["login"] == "mailer", msg
    assert sorted(msg["to"]) == ["audit@example.com", "cc@example.com", "lead@example.com",
                                 "ops@example.com"]
    mail = email.message_from_string(msg["data"])
    assert mail["Subject"] == "Load of 2024-07-08" and mail["Bcc"] is None, msg
    html, report = mail.get_payload()
    assert html.get_payload(decode=True) == b"<b>done</b> 7"
    assert report.get_filename() == "report.csv"
    assert report.get_payload(decode=True) == b"a,b\n1,2\n"


SPARK_DAG = '''\
from datetime import datetime
from airflow import DAG
from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator

with DAG("sparkops", start_date=datetime(2024, 1, 1), schedule=None):
    SparkSubmitOperator(task_id="submit", application="/jobs/etl.py",
                        conf={"spark.sql.shuffle.partitions": "8"},
                        files="a.txt,b.txt", py_files="deps.zip", jars="x.jar",
                        driver_memory="2g", executor_memory="4g", executor_cores=2,
                        num_executors=3, name="etl-{{ ds }}",
                        application_args=["--day", "{{ ds }}"],
                        env_vars={"STAGE": "prod"}, verbose=True)
'''

# A test double of the `spark-submit` command (real Spark is not in Debian): it records the
# argv it was given, which is what is under test, and prints as a driver does.
FAKE_SPARK = """#!/bin/sh
/usr/bin/python3 -c 'import json, os, sys; json.dump({"argv": sys.argv[1:], "STAGE": os.environ.get("STAGE")}, open("%s/spark.json", "w"))' "$@"
echo "driver: starting"
echo "driver: done"
"""


def test_spark_submit_operator_runs_airflows_command_line(make_server, tmp_path):
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir()
    d = server_with(make_server, tmp_path, {"spark.py": SPARK_DAG}, env={
        "PATH": "%s:%s" % (bin_dir, os.environ["PATH"]),
        "WEIR_CONN_SPARK_DEFAULT": "spark://yarn?queue=root.etl&deploy-mode=client"})
    (bin_dir / "spark-submit").write_text(FAKE_SPARK % d.side)
    (bin_dir / "spark-submit").chmod(0o755)
    run = run_ok(d, "sparkops", logical_date="2024-09-10T00:00:00Z", run_id="s1")
    log = d.log("sparkops", "s1", "submit")
    assert run["state"] == "success", log
    got = json.loads((d.side / "spark.json").read_text())
    # Airflow's SparkSubmitHook's order: master, conf, env (yarn: the app master's), files,
    # py-files, jars, executors, memory, name, verbose, queue, deploy mode, the application
    assert got["argv"] == [
        "--master", "yarn",
        "--conf", "spark.sql.shuffle.partitions=8",
        "--conf", "spark.yarn.appMasterEnv.STAGE=prod",
        "--files", "a.txt,b.txt", "--py-files", "deps.zip", "--jars", "x.jar",
        "--num-executors", "3", "--executor-cores", "2", "--executor-memory", "4g",
        "--driver-memory", "2g", "--name", "etl-2024-09-10", "--verbose",
        "--queue", "root.etl", "--deploy-mode", "client",
        "/jobs/etl.py", "--day", "2024-09-10"], got
    # the driver's output is in the task's log
    assert "driver: starting" in log and "driver: done" in log, log


BRANCH_DAG = '''\
from datetime import datetime
from airflow import DAG
from airflow.operators.bash import BashOperator
from airflow.operators.weekday import BranchDayOfWeekOperator
from airflow.utils.weekday import WeekDay

with DAG("weekly", start_date=datetime(2024, 1, 1), schedule=None):
    pick = BranchDayOfWeekOperator(task_id="pick", week_day={WeekDay.SATURDAY, "Sunday"},
                                   follow_task_ids_if_true="weekend",
                                   follow_task_ids_if_false=["weekday", "report"],
                                   use_task_logical_date=True)
    pick >> [BashOperator(task_id="weekend", bash_command="echo weekend >> @SIDE@/days"),
             BashOperator(task_id="weekday", bash_command="echo weekday >> @SIDE@/days"),
             BashOperator(task_id="report", bash_command="echo report >> @SIDE@/days")]
'''


def test_branch_day_of_week_operator(make_server, tmp_path):
    d = server_with(make_server, tmp_path, {"weekly.py": BRANCH_DAG})
    # 2024-06-08 is a Saturday, 2024-06-10 a Monday
    sat = run_ok(d, "weekly", logical_date="2024-06-08T12:00:00Z", run_id="sat")
    assert sat["state"] == "success", d.log("weekly", "sat", "pick")
    states = {k: v["state"] for k, v in d.tis("weekly", "sat").items()}
    assert states == {"pick": "success", "weekend": "success", "weekday": "skipped",
                      "report": "skipped"}, states
    assert xcom(d, "weekly", "sat", "pick", "branch") == "weekend"
    mon = run_ok(d, "weekly", logical_date="2024-06-10T12:00:00Z", run_id="mon")
    assert mon["state"] == "success"
    states = {k: v["state"] for k, v in d.tis("weekly", "mon").items()}
    assert states == {"pick": "success", "weekend": "skipped", "weekday": "success",
                      "report": "success"}, states
    wait_for(lambda: len(d.side_lines("days")) == 3, 10, "three tasks' lines")
    assert sorted(d.side_lines("days")) == ["report", "weekday", "weekend"]
