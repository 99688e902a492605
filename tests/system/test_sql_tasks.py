"""sql: tasks against real PostgreSQL, MariaDB, ClickHouse and SQLite servers (stores.py):
a script runs and its outputs are the task's, values from outside reach the database as
values, wrong credentials fail with the database's own words, and a DAG's sql task feeds
its downstream task through {{ outputs.TASK.KEY }}.

The subcommand (`weir task-sql`) is what a DAG task's job runs; most tests run it directly
with WEIR_CONN_<ID> in its environment, as the job's environment has it.
"""

import json
import os
import subprocess
import textwrap

from conftest import WEIR_BIN
from dagtest import make_dags  # noqa: F401  (the fixture)
from stores import (clickhouse, clickhouse_db, mariadb, mariadb_db, pg,  # noqa: F401
                    pg_db)

INJECTION = "'; DROP TABLE x; --"


def task(cmd, spec, conns, output=None):
    env = dict(os.environ)
    env.pop("WEIR_OUTPUT", None)
    for cid, uri in conns.items():
        env["WEIR_CONN_" + cid.upper()] = uri
    if output:
        env["WEIR_OUTPUT"] = str(output)
    return subprocess.run([WEIR_BIN, cmd, "--spec-json", json.dumps(spec)], env=env,
                          capture_output=True, text=True, timeout=300)


def outputs(r):
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


SCRIPT = {
    "pg": """
        CREATE TABLE x (id int PRIMARY KEY, note text);  -- a comment; with a ';'
        CREATE FUNCTION twice(n int) RETURNS int AS $$ BEGIN RETURN n * 2; END; $$ LANGUAGE plpgsql;
        INSERT INTO x VALUES (1, :note), (2, 'semi;colon');
        SELECT id, note, twice(id)::int AS t FROM x WHERE id >= :min ORDER BY id
    """,
    "mysql": """
        CREATE TABLE x (id int PRIMARY KEY, note text);  -- a comment; with a ';'
        INSERT INTO x VALUES (1, :note), (2, 'semi;colon');
        SELECT id, note, id * 2 AS t FROM x WHERE id >= :min ORDER BY id
    """,
    "ch": """
        CREATE TABLE x (id Int64, note String) ENGINE = MergeTree ORDER BY id;
        INSERT INTO x VALUES (1, :note), (2, 'semi;colon');
        SELECT id, note, id * 2 AS t FROM x WHERE id >= toInt64(:min) ORDER BY id
    """,
}


def check_script_outputs(out):
    assert out["columns"] == ["id", "note", "t"], out
    assert out["rows"] == [[1, INJECTION, 2], [2, "semi;colon", 4]], out
    assert out["row_count"] == 2 and out["value"] == 1, out


def test_postgres_script_binds_values_and_returns_rows(pg, pg_db):
    r = task("task-sql", {"conn": "pg", "statement": SCRIPT["pg"],
                          "parameters": {"note": INJECTION, "min": 1}}, {"pg": pg.uri(pg_db)})
    check_script_outputs(outputs(r))
    # the table survived, with the attack stored as text
    assert pg.query(pg_db, "SELECT note FROM x WHERE id = 1") == [(INJECTION,)]


def test_mariadb_script_binds_values_and_returns_rows(mariadb, mariadb_db):
    r = task("task-sql", {"conn": "my", "statement": SCRIPT["mysql"],
                          "parameters": {"note": INJECTION, "min": "1"}},
             {"my": mariadb.uri(mariadb_db)})
    check_script_outputs(outputs(r))
    assert mariadb.sql(mariadb_db, "SELECT note FROM x WHERE id = 1") == [[INJECTION]]


# values whose text would break a pasted literal: a backslash, quotes, UTF-8 (four-byte
# too), NULL, and one longer than the driver's first column buffer
AWKWARD = {"bs": "C:\\new\\table\\", "q": "it's \\' \"quoted\" `x`",
           "utf": "caf\u00e9 \u65e5\u672c \U0001f600", "none": None,
           "long": "\u00e9" * 3000 + INJECTION}


def test_mariadb_binds_awkward_values_and_reads_them_back(mariadb, mariadb_db):
    r = task("task-sql", {"conn": "my", "statement": """
        CREATE TABLE v (id int, s longtext) DEFAULT CHARSET utf8mb4;
        INSERT INTO v VALUES (1, :bs), (2, :q), (3, :utf), (4, :none), (5, :long);
        SELECT id, s, :q AS echo, :none AS nothing FROM v WHERE id >= :min ORDER BY id
    """, "parameters": dict(AWKWARD, min="1")}, {"my": mariadb.uri(mariadb_db)})
    out = outputs(r)
    want = [AWKWARD[k] for k in ("bs", "q", "utf", "none", "long")]
    assert [row[1] for row in out["rows"]] == want, out["rows"]
    assert all(row[2] == AWKWARD["q"] and row[3] is None for row in out["rows"]), out["rows"]
    stored = mariadb.sql(mariadb_db, "SELECT id, s IS NULL, HEX(s) FROM v ORDER BY id")
    assert [(int(i), n == "1", bytes.fromhex(h).decode() if n == "0" else None)
            for i, n, h in stored] == list(zip(range(1, 6), [v is None for v in want], want))


def test_clickhouse_script_escapes_values_and_returns_rows(clickhouse, clickhouse_db):
    r = task("task-sql", {"conn": "ch", "statement": SCRIPT["ch"],
                          "parameters": {"note": INJECTION, "min": "1"}},
             {"ch": clickhouse.uri(clickhouse_db)})
    check_script_outputs(outputs(r))
    assert clickhouse.sql("SELECT note FROM x WHERE id = 1", clickhouse_db) == [[INJECTION]]


def test_sqlite_script_from_a_file(tmp_path):
    (tmp_path / "s.sql").write_text("CREATE TABLE x (id INTEGER, note TEXT);\n"
                                    "INSERT INTO x VALUES (1, :note), (2, 'semi;colon');\n"
                                    "SELECT id, note, id * 2 AS t FROM x WHERE id >= :min;\n")
    r = task("task-sql", {"conn": "lite", "file": str(tmp_path / "s.sql"),
                          "parameters": {"note": INJECTION, "min": 1}},
             {"lite": "sqlite:///%s" % (tmp_path / "x.db")})
    out = outputs(r)
    assert out["rows"] == [[1, INJECTION, 2], [2, "semi;colon", 4]], out


def test_a_failed_statement_rolls_the_script_back(pg, pg_db):
    r = task("task-sql", {"conn": "pg", "statement":
                          "CREATE TABLE y (id int); INSERT INTO y VALUES (1); SELECT * FROM nope"},
             {"pg": pg.uri(pg_db)})
    assert r.returncode == 1
    assert 'relation "nope" does not exist' in r.stderr and "statement 3" in r.stderr, r.stderr
    assert pg.query(pg_db, "SELECT to_regclass('y')") == [(None,)]


def test_wrong_credentials_fail_with_the_databases_words(pg, pg_db, mariadb, mariadb_db,
                                                         clickhouse, clickhouse_db):
    cases = [("pg", pg.uri(pg_db, password="wrong"), "password authentication failed"),
             ("my", mariadb.uri(mariadb_db, password="wrong"), "Access denied for user"),
             ("ch", clickhouse.uri(clickhouse_db, password="wrong"), "Wrong password")]
    for cid, uri, words in cases:
        r = task("task-sql", {"conn": cid, "statement": "SELECT 1"}, {cid: uri})
        assert r.returncode == 1, (cid, r.stdout)
        assert words in r.stderr, (cid, r.stderr)
        assert "wrong" not in r.stderr.replace("Wrong", ""), r.stderr  # no password echoed


def test_a_missing_parameter_and_a_missing_connection_are_named(pg, pg_db):
    r = task("task-sql", {"conn": "pg", "statement": "SELECT :nope"}, {"pg": pg.uri(pg_db)})
    assert r.returncode == 1 and ":nope" in r.stderr, r.stderr
    r = task("task-sql", {"conn": "other", "statement": "SELECT 1"}, {})
    assert r.returncode == 1 and "WEIR_CONN_OTHER is not set" in r.stderr, r.stderr


DAG = """\
dag_id: sqlflow
params: {note: "plain"}
tasks:
  - task_id: load
    sql:
      conn: pg
      statement: |
        CREATE TABLE IF NOT EXISTS notes (id serial PRIMARY KEY, note text, day text);
        INSERT INTO notes (note, day) VALUES (:note, :day);
        SELECT count(*) AS n, max(note) AS last FROM notes
      parameters: {note: "{{ params.note }}", day: "{{ ds }}"}
  - task_id: report
    depends_on: [load]
    command: printf '%s|%s\\n' {{ outputs.load.value }} {{ outputs.load.rows }} > @SIDE@/report
"""


def test_dag_sql_task_binds_conf_and_feeds_downstream(make_dags, pg, pg_db):
    d = make_dags(start=False)
    # the server's environment carries the connection (the task lists it: sql.conn)
    d.srv.extra_env["WEIR_CONN_PG"] = pg.uri(pg_db)
    d.write("sqlflow.yaml", DAG.replace("@SIDE@", str(d.side)))
    d.srv.start()
    d.wait_dag("sqlflow")
    run = d.trigger("sqlflow", conf={"note": INJECTION})
    run = d.wait_run("sqlflow", run["dag_run_id"], timeout=90)
    assert run["state"] == "success", (run, d.log("sqlflow", run["dag_run_id"], "load"))
    assert pg.query(pg_db, "SELECT note FROM notes") == [(INJECTION,)]
    line = d.side_lines("report")[0]
    value, rows = line.split("|", 1)
    assert value == "1" and json.loads(rows) == [[1, INJECTION]], line
    assert "sql: statement 3 of 3" in d.log("sqlflow", run["dag_run_id"], "load")


def test_dag_mariadb_sql_task_binds_conf(make_dags, mariadb, mariadb_db):
    d = make_dags(start=False)
    d.srv.extra_env["WEIR_CONN_MY"] = mariadb.uri(mariadb_db)
    d.write("myflow.yaml", textwrap.dedent("""\
        dag_id: myflow
        params: {note: "plain"}
        tasks:
          - task_id: load
            sql:
              conn: my
              statement: |
                CREATE TABLE IF NOT EXISTS x (id int AUTO_INCREMENT PRIMARY KEY, note text);
                INSERT INTO x (note) VALUES (:note);
                SELECT count(*) AS n, max(note) AS last FROM x WHERE note = :note
              parameters: {note: "{{ params.note }}"}
        """))
    d.srv.start()
    d.wait_dag("myflow")
    run = d.trigger("myflow", conf={"note": INJECTION})
    run = d.wait_run("myflow", run["dag_run_id"], timeout=90)
    assert run["state"] == "success", (run, d.log("myflow", run["dag_run_id"], "load"))
    # the table survived, with the attack stored as text
    assert mariadb.sql(mariadb_db, "SELECT note FROM x") == [[INJECTION]]


def test_dag_file_refuses_a_bad_sql_task(make_dags):
    d = make_dags()
    d.write("bad.yaml", textwrap.dedent("""\
        dag_id: bad
        tasks:
          - task_id: a
            sql: {conn: pg, statement: "SELECT 1", file: x.sql}
        """))
    status, body = d.srv.api("GET", "/api/v1/importErrors")
    import time
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and "bad.yaml" not in json.dumps(body):
        time.sleep(0.2)
        status, body = d.srv.api("GET", "/api/v1/importErrors")
    assert "tasks[0].sql: expected exactly one of statement and file" in json.dumps(body), body


def test_return_rows_gives_the_last_statements_rows_as_return_value(pg, pg_db):
    conns = {"pg": pg.uri(pg_db)}
    out = outputs(task("task-sql", {"conn": "pg", "return_rows": True, "statement":
                                    "CREATE TABLE r (n int); INSERT INTO r VALUES (1), (2);"
                                    "SELECT n, n * 10 FROM r ORDER BY n"}, conns))
    assert out["return_value"] == [[1, 10], [2, 20]] and out["weir_return"] == [out["rows"]]
    # a last statement without rows: no return_value (Airflow pushes no None), [null] on
    out = outputs(task("task-sql", {"conn": "pg", "return_rows": True, "statement":
                                    "SELECT 1; UPDATE r SET n = n"}, conns))
    assert "return_value" not in out and out["weir_return"] == [None], out
    # rows past what weir keeps fail the try rather than pushing a part of them
    r = task("task-sql", {"conn": "pg", "return_rows": True, "max_rows": 10000,
                          "statement": "SELECT repeat('x', 100) FROM generate_series(1, 1000)"},
             conns)
    assert r.returncode == 1 and "more than weir keeps as a task's XCom" in r.stderr, r.stderr
