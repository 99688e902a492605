"""Connections (issue 12): Airflow's /api/v1/connections on a real server, the CLI, the
sources and their precedence (configuration < store < the server's environment), a
task's WEIR_CONN_<ID>, and the password never in an answer, a log or the store's file.
"""

import json
import os
import subprocess

from conftest import DEFAULT_CONFIG, cli_describe, wait_for
from dagtest import Dags, dag_config

PASSWORD = "Pw-0f-the-Warehouse-9x"
URI = "postgresql://etl:%s@db.internal:5433/dw?sslmode=disable" % PASSWORD


def conn_body(conn_id="warehouse", **over):
    body = {"connection_id": conn_id, "conn_type": "postgres", "host": "db.internal",
            "port": 5433, "login": "etl", "password": PASSWORD, "schema": "dw",
            "extra": json.dumps({"sslmode": "disable", "api_token": "tok-XYZ-123456"}),
            "description": "the warehouse"}
    body.update(over)
    return body


def no_secret(text):
    for s in (PASSWORD, "tok-XYZ-123456"):
        assert s not in text, "a secret in: %s" % text[:2000]


def store_bytes(srv):
    data = b""
    for name in ("weir.db", "weir.db-wal"):
        p = srv.home / name
        if p.exists():
            data += p.read_bytes()
    return data


def test_crud_in_airflow_shapes(server):
    st, body = server.api("POST", "/api/v1/connections", conn_body())
    assert st == 200, body
    assert body["connection_id"] == "warehouse" and body["conn_type"] == "postgres"
    assert body["port"] == 5433 and body["login"] == "etl" and body["schema"] == "dw"
    assert "password" not in body
    assert json.loads(body["extra"]) == {"sslmode": "disable", "api_token": "***"}

    st, body = server.api("POST", "/api/v1/connections", conn_body())
    assert st == 409, body
    assert body["status"] == 409 and "warehouse" in body["detail"]

    st, got = server.api("GET", "/api/v1/connections/warehouse")
    assert st == 200 and got["host"] == "db.internal" and got["source"] == "store", got
    assert "password" not in got

    server.api("POST", "/api/v1/connections", conn_body("cache", conn_type="redis",
                                                       host="r1", port=6379))
    st, lst = server.api("GET", "/api/v1/connections")
    assert st == 200 and lst["total_entries"] == 2, lst
    assert [c["connection_id"] for c in lst["connections"]] == ["cache", "warehouse"]
    assert all("password" not in c and "extra" not in c for c in lst["connections"])
    st, lst = server.api("GET", "/api/v1/connections?order_by=-connection_id&limit=1")
    assert [c["connection_id"] for c in lst["connections"]] == ["warehouse"], lst
    assert lst["total_entries"] == 2
    st, lst = server.api("GET", "/api/v1/connections?offset=1")
    assert [c["connection_id"] for c in lst["connections"]] == ["warehouse"], lst
    st, bad = server.api("GET", "/api/v1/connections?order_by=nope")
    assert st == 400, bad

    # PATCH with update_mask changes only what it names
    st, p = server.api("PATCH", "/api/v1/connections/warehouse?update_mask=host",
                       {"connection_id": "warehouse", "conn_type": "postgres",
                        "host": "db2", "login": "ignored"})
    assert st == 200 and p["host"] == "db2" and p["login"] == "etl", p
    st, p = server.api("PATCH", "/api/v1/connections/warehouse", {"port": 6000})
    assert st == 200 and p["port"] == 6000 and p["host"] == "db2", p
    st, p = server.api("PATCH", "/api/v1/connections/warehouse?update_mask=connection_id",
                       {"connection_id": "other"})
    assert st == 400, p
    st, p = server.api("PATCH", "/api/v1/connections/warehouse", {"connection_id": "other"})
    assert st == 400, p
    st, p = server.api("PATCH", "/api/v1/connections/nope", {"host": "x"})
    assert st == 404, p

    # the password survived every change
    no_secret(store_bytes(server).decode("latin-1"))

    status, _, data = server.request("DELETE", "/api/v1/connections/cache")
    assert status == 204 and data == b""
    st, body = server.api("GET", "/api/v1/connections/cache")
    assert st == 404 and body["status"] == 404, body
    st, body = server.api("DELETE", "/api/v1/connections/cache")
    assert st == 404, body


def test_bad_bodies_are_400(server):
    cases = [
        {"conn_type": "postgres"},                                 # no id
        {"connection_id": "x"},                                    # no type
        {"connection_id": "a b", "conn_type": "postgres"},         # bad id
        {"connection_id": "x", "conn_type": "postgres", "port": "5432"},
        {"connection_id": "x", "conn_type": "postgres", "port": 70000},
        {"connection_id": "x", "conn_type": "postgres", "extra": "[1]"},
        {"connection_id": "x", "conn_type": "postgres", "nope": 1},
        {"connection_id": "x", "conn_type": "postgres", "host": 5},
    ]
    for body in cases:
        st, r = server.api("POST", "/api/v1/connections", body)
        assert st == 400, (body, st, r)
        assert r["status"] == 400 and r["detail"], r
    st, _, _ = server.request("POST", "/api/v1/connections", raw_body="{not json")
    assert st == 400
    st, r = server.api("GET", "/api/v1/connections/a%20b")
    assert st == 400, r
    st, r = server.api("PUT", "/api/v1/connections")
    assert st == 405, r
    st, r = server.api("GET", "/api/v1/connections", token="wrong")
    assert st == 401


def test_password_sealed_and_key_file(server):
    server.api("POST", "/api/v1/connections", conn_body())
    key = server.home / "secret.key"
    assert key.exists() and (key.stat().st_mode & 0o777) == 0o600
    data = store_bytes(server)
    assert b"db.internal" in data  # the plain fields are there
    assert PASSWORD.encode() not in data and b"tok-XYZ-123456" not in data
    # a restart reads them back with the same key
    server.terminate()
    server.start()
    st, got = server.api("GET", "/api/v1/connections/warehouse")
    assert st == 200 and got["login"] == "etl", got


def test_sources_and_precedence(make_server):
    config = DEFAULT_CONFIG + (
        "connections:\n"
        "  from_config: redis://:cfgpw-77@cfg-host:6379/0\n"
        "  shadowed:\n"
        "    conn_type: postgres\n"
        "    host: config-host\n"
        "  env_wins: postgres://u@config-host/db\n")
    srv = make_server(config=config, start=False)
    srv.extra_env = {"WEIR_CONN_ENV_WINS": "postgres://u:envpw-55@env-host:1/db",
                     "WEIR_CONN_ONLY_ENV": "mysql://m@env-only:3306/shop"}
    srv.start()
    st, got = srv.api("GET", "/api/v1/connections/from_config")
    assert st == 200 and got["host"] == "cfg-host" and got["source"] == "config", got
    # the store wins over the configuration
    st, _ = srv.api("POST", "/api/v1/connections", {"connection_id": "shadowed",
                                                     "conn_type": "postgres",
                                                     "host": "store-host"})
    assert st == 200
    st, got = srv.api("GET", "/api/v1/connections/shadowed")
    assert got["host"] == "store-host" and got["source"] == "store", got
    # the environment wins over the store and the configuration
    srv.api("POST", "/api/v1/connections", {"connection_id": "env_wins",
                                             "conn_type": "postgres", "host": "store-host"})
    st, got = srv.api("GET", "/api/v1/connections/env_wins")
    assert got["host"] == "env-host" and got["source"] == "environment", got
    # an environment-only connection is listed, its id lower-cased (Airflow's rule)
    st, lst = srv.api("GET", "/api/v1/connections")
    ids = {c["connection_id"]: c["source"] for c in lst["connections"]}
    assert ids == {"env_wins": "environment", "from_config": "config",
                   "only_env": "environment", "shadowed": "store"}, ids
    st, got = srv.api("GET", "/api/v1/connections/ONLY_ENV")
    assert st == 200 and got["host"] == "env-only", got
    # writes are the store's: the environment's is changed in the environment
    st, body = srv.api("DELETE", "/api/v1/connections/only_env")
    assert st == 404 and "environment" in body["detail"], body
    no_secret(json.dumps(lst))
    for s in ("cfgpw-77", "envpw-55"):
        assert s not in json.dumps(lst) and s not in json.dumps(got)


def test_cli(server):
    r = server.cli("connections", "add", "warehouse", "--conn-uri", URI)
    assert r.returncode == 0, cli_describe(r)
    r = server.cli("connections", "add", "warehouse", "--conn-uri", URI)
    assert r.returncode == 1 and "exist" in r.stderr, cli_describe(r)
    r = server.cli("connections", "add", "api", "--conn-type", "http", "--conn-host",
                   "api.example", "--conn-port", "8443", "--conn-login", "bot",
                   "--conn-password", PASSWORD, "--conn-extra", '{"timeout": "5"}')
    assert r.returncode == 0, cli_describe(r)
    r = server.cli("connections", "add", "bad", "--conn-uri", "no-scheme")
    assert r.returncode == 2 and "--conn-uri" in r.stderr, cli_describe(r)
    r = server.cli("connections", "add", "bad", "--conn-type", "x", "--conn-port", "abc")
    assert r.returncode == 2, cli_describe(r)

    r = server.cli("connections", "list")
    assert r.returncode == 0, cli_describe(r)
    assert "warehouse" in r.stdout and "db.internal" in r.stdout and "api.example" in r.stdout
    no_secret(r.stdout + r.stderr)
    r = server.cli("connections", "list", "-o", "json")
    items = json.loads(r.stdout)
    assert {c["connection_id"] for c in items} == {"api", "warehouse"}
    r = server.cli("connections", "get", "warehouse", "-o", "json")
    got = json.loads(r.stdout)
    assert got["port"] == 5433 and got["schema"] == "dw" and "password" not in got, got
    r = server.cli("connections", "get", "warehouse")
    assert "db.internal" in r.stdout and "sslmode" in r.stdout, cli_describe(r)
    no_secret(r.stdout)
    r = server.cli("connections", "delete", "api")
    assert r.returncode == 0, cli_describe(r)
    r = server.cli("connections", "get", "api")
    assert r.returncode == 1 and "not defined" in r.stderr, cli_describe(r)
    r = server.cli("connections", "delete", "api")
    assert r.returncode == 1, cli_describe(r)


TASK_DAG = """\
dag_id: conns
params:
  side: "@SIDE@"
tasks:
  - task_id: uses
    connections: [warehouse]
    command: |
      echo "$WEIR_CONN_WAREHOUSE" > {{ params.side }}/uri
      echo "other=${WEIR_CONN_CACHE:-none} env=${WEIR_CONN_FROM_ENV:-none}" > {{ params.side }}/others
      echo "uri: $WEIR_CONN_WAREHOUSE"
      pw=$(echo "$WEIR_CONN_WAREHOUSE" | sed 's|^[a-z]*://[^:]*:\\([^@]*\\)@.*|\\1|')
      echo "bare: $pw and again $pw"
      echo "host from template: {{ conn.warehouse.host }} port {{ conn.warehouse.port }}"
  - task_id: lists_none
    command: |
      echo "none=${WEIR_CONN_WAREHOUSE:-none}" > {{ params.side }}/none
"""


def test_task_gets_only_its_connections_and_its_log_is_masked(make_server, tmp_path):
    srv = make_server(config=dag_config(), start=False)
    srv.extra_env = {"WEIR_CONN_FROM_ENV": "redis://:envpw-66@r:6379/0"}
    d = Dags(srv, tmp_path)
    d.write("conns.yaml", TASK_DAG.replace("@SIDE@", str(d.side)))
    srv.start()
    srv.api("POST", "/api/v1/connections", conn_body())
    srv.api("POST", "/api/v1/connections", conn_body("cache", conn_type="redis", host="r"))
    d.wait_dag("conns")
    run = d.trigger("conns")
    run = d.wait_run("conns", run["dag_run_id"])
    assert run["state"] == "success", run
    # the task got the URI, password included, and nothing it did not list
    uri = (d.side / "uri").read_text().strip()
    assert uri.startswith("postgresql://etl:%s@db.internal:5433/dw" % PASSWORD), uri
    assert (d.side / "others").read_text().strip() == "other=none env=none"
    assert (d.side / "none").read_text().strip() == "none=none"
    # its log shows *** wherever the password or the URI stood
    log = d.log("conns", run["dag_run_id"], "uses")
    assert "uri: ***" in log and "bare: *** and again ***" in log, log
    assert "host from template: db.internal port 5433" in log, log
    no_secret(log)
    # nor is it in any API answer about the run, its job, or the UI's data
    tis = d.get("/dags/conns/dagRuns/%s/taskInstances" % run["dag_run_id"])
    answers = [json.dumps(tis)]
    for ti in tis["task_instances"]:
        st, job = srv.api("GET", "/api/v1/jobs/%s" % ti["job_id"])
        assert st == 200, (st, job)
        answers.append(json.dumps(job))
        st, ev = srv.api("GET", "/api/v1/jobs/%s/events" % ti["job_id"])
        answers.append(json.dumps(ev))
    ti_path = "/api/v1/dags/conns/dagRuns/%s/taskInstances/uses" % run["dag_run_id"]
    for path in ("/api/v1/jobs", "/api/v1/dags/conns", "/api/v1/dags/conns/details",
                 "/api/v1/dags/conns/tasks", "/api/v1/ui/dags", "/api/v1/ui/dags/conns/grid",
                 "/api/v1/ui/dags/conns/stats", ti_path, ti_path + "/tries",
                 "/api/v1/connections", "/api/v1/connections/warehouse"):
        st, body = srv.api("GET", path)
        assert st == 200, (path, st, body)
        answers.append(json.dumps(body))
    for a in answers:
        no_secret(a)
        assert "envpw-66" not in a
    no_secret(store_bytes(srv).decode("latin-1"))
    no_secret(srv.log_text())


def test_missing_connection_fails_the_try_saying_which(make_server, tmp_path):
    srv = make_server(config=dag_config(), start=False)
    d = Dags(srv, tmp_path)
    d.write("missing.yaml", "dag_id: missing\ntasks:\n  - task_id: t\n"
                            "    connections: [nowhere]\n    command: 'true'\n")
    srv.start()
    d.wait_dag("missing")
    run = d.wait_run("missing", d.trigger("missing")["dag_run_id"])
    assert run["state"] == "failed", run
    ti = d.tis("missing", run["dag_run_id"])["t"]
    assert "nowhere" in json.dumps(ti), ti
    log = d.log("missing", run["dag_run_id"], "t")
    assert 'connection "nowhere" is not defined' in log, log


def test_a_job_spec_lists_connections(server, tmp_path):
    out = tmp_path / "job-uri"
    server.api("POST", "/api/v1/connections", conn_body())
    job = server.submit({"name": "conn-job", "framework": "none",
                         "connections": ["warehouse"],
                         "roles": {"worker": {"instances": 1, "memory": "128m",
                                              "command": 'echo "$WEIR_CONN_WAREHOUSE" > %s; '
                                                         'echo "$WEIR_CONN_WAREHOUSE"' % out}}})
    job = server.wait_job(job["id"])
    assert job["state"] == "succeeded", job
    assert PASSWORD in out.read_text()
    no_secret(server.log(job["id"]))
    assert "***" in server.log(job["id"])
    st, shown = server.api("GET", "/api/v1/jobs/%d" % job["id"])
    no_secret(json.dumps(shown))
    st, bad = server.api("POST", "/api/v1/jobs", {"name": "x", "connections": ["a b"],
                                                   "roles": {"w": {"command": "true"}}})
    assert st == 400 and "connections" in json.dumps(bad), bad


def test_masked_when_the_log_is_shipped_over_http(make_server, tmp_path):
    srv = make_server(config=DEFAULT_CONFIG + "log_transport: http\n")
    srv.api("POST", "/api/v1/connections", conn_body())
    cmd = ('echo "uri=$WEIR_CONN_WAREHOUSE"; '
           'pw=$(echo "$WEIR_CONN_WAREHOUSE" | sed "s|^[a-z]*://[^:]*:\\([^@]*\\)@.*|\\1|"); '
           'i=0; while [ $i -lt 2000 ]; do printf "line %d %s\\n" $i "$pw"; i=$((i+1)); done')
    job = srv.submit({"name": "shipped", "framework": "none", "connections": ["warehouse"],
                      "roles": {"worker": {"instances": 1, "memory": "128m",
                                           "command": cmd}}})
    job = srv.wait_job(job["id"])
    assert job["state"] == "succeeded", job
    log = srv.log(job["id"])
    assert "uri=***" in log and "line 1999 ***" in log, log[-2000:]
    no_secret(log)
