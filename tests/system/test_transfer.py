"""transfer: tasks between real servers (stores.py): PostgreSQL to Redis and to PostgreSQL with
1,000,000 rows and the task's memory flat (run alone, and as a DAG task on a server whose
memory stays flat too), a transfer killed half-way (kill -9) and run again
leaving exactly the source's rows, an append killed after its commit and before its report
(PostgreSQL, MariaDB, SQLite) whose retry finds the marker and loads nothing, Redis's replace
publishing at once, and files to tables and back.  The task's peak memory is the process's own (its maximum resident set, read by a
parent that runs only it), the figure weir's job limits watch.
"""

import json
import os
import signal
import subprocess
import sys
import textwrap

from conftest import WEIR_BIN, wait_for
from dagtest import make_dags  # noqa: F401  (the fixture)
from stores import mariadb, mariadb_db, pg, pg_db, redis_db, redis_server  # noqa: F401

ROWS = 1_000_000
LIMIT = 64 * 1024 * 1024

PEAK = ("import resource, subprocess, sys\n"
        "r = subprocess.run(sys.argv[1:])\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)\n"
        "sys.exit(r.returncode)\n")


def env_with(conns):
    env = dict(os.environ)
    env.pop("WEIR_OUTPUT", None)
    for cid, uri in conns.items():
        env["WEIR_CONN_" + cid.upper()] = uri
    return env


def transfer(spec, conns, peak=False):
    """(outputs, peak bytes or None)."""
    args = [WEIR_BIN, "task-transfer", "--spec-json", json.dumps(spec)]
    if peak:
        args = [sys.executable, "-c", PEAK] + args
    r = subprocess.run(args, env=env_with(conns), capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    return json.loads(lines[0]), (int(lines[-1]) if peak else None)


def kill_when(args, env, mark):
    """Start args, read its log until `mark`, then kill -9 it there."""
    p = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stderr.readline()
    while line and mark not in line:
        line = p.stderr.readline()
    assert mark in line, "a DEVELOPER=1 build is needed: %r" % line
    p.send_signal(signal.SIGKILL)
    p.wait(30)
    p.stderr.close()
    p.stdout.close()


def make_source(pg, db, n=ROWS):
    pg.query(db, "CREATE TABLE src (id bigint PRIMARY KEY, a text, b text, n int)")
    pg.query(db, "INSERT INTO src SELECT g, 'user-' || g, md5(g::text), g %% 1000 "
                 "FROM generate_series(1, %s) g", (n,))


def test_postgres_to_redis_hashes_a_million_rows_in_flat_memory(pg, pg_db, redis_server,
                                                                redis_db):
    make_source(pg, pg_db)
    r = redis_server.client(redis_db)
    r.hset("user:0", mapping={"a": "yesterday"})  # published by an earlier load: replaced
    r.sadd("weir:published:user:{id}", "user:0")
    spec = {"from": {"conn": "pg", "query": "SELECT id, a, b, n FROM src"},
            "to": {"conn": "cache", "redis": "hash", "key": "user:{id}", "fields": ["a", "b", "n"],
                   "ttl": 86400, "mode": "replace"}}
    out, peak = transfer(spec, {"pg": pg.uri(pg_db), "cache": redis_server.uri(redis_db)},
                         peak=True)
    assert out["rows"] == ROWS and out["rows_per_second"] > 0, out
    print("peak %d bytes" % peak)
    assert peak < LIMIT, "peak %d bytes" % peak
    assert r.hgetall("user:77") == {"a": "user-77", "b": __import__("hashlib").md5(b"77").hexdigest(),
                                    "n": "77"}
    assert 0 < r.ttl("user:77") <= 86400
    assert not r.exists("user:0")  # the old day's key went in the same step
    # every key published, nothing staged left: the hashes, and the list of what was published
    assert r.dbsize() == ROWS + 1, r.dbsize()


def test_postgres_to_postgres_a_million_rows_in_flat_memory(pg, pg_db):
    make_source(pg, pg_db)
    spec = {"from": {"conn": "pg", "query": "SELECT id, a, b, n FROM src"},
            "to": {"conn": "pg", "table": "dst", "mode": "replace"}}
    out, peak = transfer(spec, {"pg": pg.uri(pg_db)}, peak=True)
    assert out["rows"] == ROWS, out
    print("peak %d bytes" % peak)
    assert peak < LIMIT, "peak %d bytes" % peak
    assert pg.query(pg_db, "SELECT count(*), sum(n), max(a) FROM dst") == \
        pg.query(pg_db, "SELECT count(*), sum(n), max(a) FROM src")


def rss_bytes(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS for pid %d" % pid)


def test_a_million_rows_through_a_dag_run_keep_the_server_and_the_task_flat(make_dags, pg,
                                                                            pg_db):
    """The same transfer as a DAG task on a real server: the peak memory weir records for
    the task stays under the limit, and the server's resident memory does not grow with the
    rows (it sees the task's progress lines, never its rows)."""
    make_source(pg, pg_db)
    d = make_dags(start=False)
    d.srv.extra_env["WEIR_CONN_PG"] = pg.uri(pg_db)
    d.write("million.yaml", textwrap.dedent("""\
        dag_id: million
        tasks:
          - task_id: copy
            transfer:
              from: {conn: pg, query: "SELECT id, a, b, n FROM src"}
              to: {conn: pg, table: dst, mode: replace}
        """))
    d.srv.start()
    d.wait_dag("million")
    before = rss_bytes(d.srv.proc.pid)
    run = d.trigger("million")
    run = d.wait_run("million", run["dag_run_id"], timeout=300)
    assert run["state"] == "success", (run, d.log("million", run["dag_run_id"], "copy"))
    after = rss_bytes(d.srv.proc.pid)
    print("server rss %d -> %d bytes" % (before, after))
    assert after - before < 16 * 1024 * 1024, (before, after)
    ti = d.tis("million", run["dag_run_id"])["copy"]
    (task,) = d.srv.job(ti["job_id"])["tasks"]
    print("task peak %s bytes" % task["peak_memory_bytes"])
    assert task["peak_memory_bytes"] and task["peak_memory_bytes"] < LIMIT, task
    assert pg.query(pg_db, "SELECT count(*), sum(n) FROM dst") == \
        pg.query(pg_db, "SELECT count(*), sum(n) FROM src")


def test_a_transfer_killed_half_way_then_retried_leaves_exactly_the_source(pg, pg_db):
    make_source(pg, pg_db, 400_000)
    pg.query(pg_db, "CREATE TABLE dst (id bigint PRIMARY KEY, a text, b text, n int)")
    for mode in ("append", "replace"):
        pg.query(pg_db, "TRUNCATE dst")
        spec = {"from": {"conn": "pg", "query": "SELECT id, a, b, n FROM src"},
                "to": {"conn": "pg", "table": "dst", "mode": mode}, "batch": 1000}
        # a DEVELOPER build stops after 200,000 rows (sent, not published) to be killed there
        env = dict(env_with({"pg": pg.uri(pg_db)}), WEIR_TEST_TRANSFER_PAUSE_AT="200000")
        kill_when([WEIR_BIN, "task-transfer", "--spec-json", json.dumps(spec)], env,
                  "paused at 200000 rows")
        # the killed client's session gone from the server: what it sent is all done with
        wait_for(lambda: pg.query(pg_db, "SELECT count(*) FROM pg_stat_activity WHERE"
                                  " backend_type = 'client backend' AND datname ="
                                  " current_database() AND pid <> pg_backend_pid()") == [(0,)],
                 30, "the killed transfer's session to end")
        assert pg.query(pg_db, "SELECT count(*) FROM dst") == [(0,)]  # nothing published
        out, _ = transfer(spec, {"pg": pg.uri(pg_db)})
        assert out["rows"] == 400_000
        assert pg.query(pg_db, "SELECT count(*), count(DISTINCT id) FROM dst") == [(400_000, 400_000)]


def test_file_to_tables_and_back(tmp_path, pg, pg_db, mariadb, mariadb_db):
    src = tmp_path / "in.csv"
    src.write_text('id,name,note\n1,ann,"a, quoted ""note"""\n2,bob,\n3,"multi\nline",""\n')
    conns = {"pg": pg.uri(pg_db), "my": mariadb.uri(mariadb_db)}
    out, _ = transfer({"from": {"file": str(src)}, "to": {"conn": "pg", "table": "people",
                                                          "mode": "create"}}, conns)
    assert out["rows"] == 3
    assert pg.query(pg_db, "SELECT id, name, note FROM people ORDER BY id") == [
        ("1", "ann", 'a, quoted "note"'), ("2", "bob", None), ("3", "multi\nline", "")]
    # create refuses a table that has rows: a second load would double them
    r = subprocess.run([WEIR_BIN, "task-transfer", "--spec-json", json.dumps(
        {"from": {"file": str(src)}, "to": {"conn": "pg", "table": "people", "mode": "create"}})],
        env=env_with(conns), capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "already has rows" in r.stderr, r.stderr
    # upsert into MariaDB on a key, then the table out to JSON lines and CSV again
    for _ in range(2):
        transfer({"from": {"conn": "pg", "query": "SELECT id::int AS id, name, note FROM people"},
                  "to": {"conn": "my", "table": "people", "mode": "upsert", "key": "id"}}, conns)
    assert mariadb.sql(mariadb_db, "SELECT count(*) FROM people") == [["3"]]
    transfer({"from": {"conn": "my", "query": "SELECT id, name, note FROM people ORDER BY id"},
              "to": {"file": str(tmp_path / "out" / "people.jsonl")}}, conns)
    rows = [json.loads(x) for x in (tmp_path / "out" / "people.jsonl").read_text().splitlines()]
    assert rows == [{"id": 1, "name": "ann", "note": 'a, quoted "note"'},
                    {"id": 2, "name": "bob", "note": None},
                    {"id": 3, "name": "multi\nline", "note": ""}], rows
    transfer({"from": {"file": str(tmp_path / "out" / "people.jsonl")},
              "to": {"file": str(tmp_path / "back.csv")}}, conns)
    assert (tmp_path / "back.csv").read_text() == src.read_text()
    assert not [p for p in os.listdir(tmp_path) if ".weir-" in p]  # no temporary left


def test_an_append_that_committed_then_died_is_not_loaded_again(tmp_path, pg, pg_db, mariadb,
                                                                 mariadb_db):
    import sqlite3
    make_source(pg, pg_db, 5_000)
    lite = tmp_path / "t.db"
    conns = {"pg": pg.uri(pg_db), "my": mariadb.uri(mariadb_db), "lite": "sqlite:///%s" % lite}
    task = {"WEIR_DAG_ID": "daily", "WEIR_RUN_ID": "manual__1", "WEIR_TASK_ID": "load"}

    def lite_count():
        with sqlite3.connect(str(lite)) as c:
            return c.execute("SELECT count(*) FROM dst").fetchone()[0]
    for conn, count in (("pg", lambda: pg.query(pg_db, "SELECT count(*) FROM dst")[0][0]),
                        ("my", lambda: int(mariadb.sql(mariadb_db, "SELECT count(*) FROM dst")[0][0])),
                        ("lite", lite_count)):
        spec = {"from": {"conn": "pg", "query": "SELECT id, a, b, n FROM src"},
                "to": {"conn": conn, "table": "dst", "mode": "append"}, "batch": 1000}
        args = [WEIR_BIN, "task-transfer", "--spec-json", json.dumps(spec)]
        env = dict(env_with(conns), **task)
        # the try commits, then is killed before it reports: the window a retry falls in
        kill_when(args, dict(env, WEIR_TEST_TRANSFER_PAUSE_PUBLISHED="1"), "paused after publishing")
        assert count() == 5_000
        r = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout.strip().splitlines()[0])
        assert out["rows"] == 5_000 and out["earlier_try"] is True, out
        assert "earlier try of this task already published 5000 rows" in r.stderr, r.stderr
        assert count() == 5_000  # exactly the source's rows, not twice
        # another instance of a foreach task has a key of its own: it loads
        r = subprocess.run(args, env=dict(env, WEIR_MAP_INDEX="1"), capture_output=True,
                           text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout.strip().splitlines()[0]).get("earlier_try") is None
        assert count() == 10_000
    # outside a DAG there is no key and no marker: an append appends
    spec["to"]["conn"] = "pg"
    out, _ = transfer(spec, conns)
    assert out["rows"] == 5_000 and "earlier_try" not in out
    assert pg.query(pg_db, "SELECT count(*) FROM weir_transfers") == [(2,)]
