"""POST /api/v1/connections/test (Airflow's) and `weir connections test` against real
PostgreSQL, Redis, MariaDB, ClickHouse and SQLite (stores.py): a good connection answers
{"status": true}, a wrong password fails with the server's own words and never shows the
password (answer, log), a closed port fails, a port that accepts and never speaks fails at
the timeout while the server goes on answering, and a bad body is a 400 problem.
"""

import json
import socket
import sqlite3
import threading
import urllib.parse

from conftest import cli_describe, free_port
from stores import clickhouse, mariadb, pg, redis_server  # noqa: F401  (fixtures)

WRONG = "Wr0ng-Pa55word-zz9"


def fields(conn_id, uri):
    """Airflow's Connection fields from a URI of stores.py's form."""
    u = urllib.parse.urlsplit(uri)
    body = {"connection_id": conn_id,
            "conn_type": {"postgresql": "postgres"}.get(u.scheme, u.scheme),
            "host": u.hostname, "port": u.port}
    if u.username:
        body["login"] = urllib.parse.unquote(u.username)
    if u.password is not None:
        body["password"] = urllib.parse.unquote(u.password)
    if u.path.strip("/"):
        body["schema"] = u.path.strip("/")
    return body


def conn_test(server, body, timeout=60):
    st, ans = server.api("POST", "/api/v1/connections/test", body, timeout=timeout)
    assert st == 200, ans
    assert set(ans) == {"status", "message"}, ans
    return ans


def stores_uris(pg, redis_server, mariadb, clickhouse, password=None):
    kw = {} if password is None else {"password": password}
    return {"postgres": pg.uri("postgres", **kw), "redis": redis_server.uri(0, **kw),
            "mysql": mariadb.uri("mysql", **kw), "clickhouse": clickhouse.uri("default", **kw)}


def test_real_stores_answer(server, pg, redis_server, mariadb, clickhouse, tmp_path):
    for kind, uri in stores_uris(pg, redis_server, mariadb, clickhouse).items():
        ans = conn_test(server, fields("t_" + kind, uri))
        assert ans["status"] is True, (kind, ans)
        assert ans["message"] == "Connection successfully tested", ans

    db = tmp_path / "x.db"
    sqlite3.connect(str(db)).close()
    ans = conn_test(server, {"connection_id": "lite", "conn_type": "sqlite", "host": str(db)})
    assert ans["status"] is True, ans


def test_wrong_password_fails_with_the_servers_words(server, pg, redis_server, mariadb,
                                                     clickhouse):
    words = {"postgres": "password authentication failed", "redis": "WRONGPASS",
             "mysql": "Access denied", "clickhouse": "password"}
    uris = stores_uris(pg, redis_server, mariadb, clickhouse, password=WRONG)
    for kind, uri in uris.items():
        ans = conn_test(server, fields("bad_" + kind, uri))
        assert ans["status"] is False, (kind, ans)
        assert words[kind].lower() in ans["message"].lower(), (kind, ans)
        assert WRONG not in ans["message"], ans
    assert WRONG not in server.log_text()


def test_closed_port_fails(server):
    port = free_port()
    for kind in ("postgres", "redis", "mysql", "clickhouse", "http"):
        ans = conn_test(server, {"connection_id": "closed", "conn_type": kind,
                            "host": "127.0.0.1", "port": port, "password": WRONG})
        assert ans["status"] is False, (kind, ans)
        assert ans["message"], ans
        assert WRONG not in ans["message"]


def test_silent_port_times_out_and_the_server_goes_on(server):
    # a socket that listens and never accepts: the kernel completes every connect, and
    # no byte ever comes back
    silent = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    silent.bind(("127.0.0.1", 0))
    silent.listen(32)
    port = silent.getsockname()[1]
    answers = {}

    def run(kind):
        answers[kind] = conn_test(server, {"connection_id": "silent_" + kind, "conn_type": kind,
                                      "host": "127.0.0.1", "port": port, "password": WRONG},
                             timeout=120)

    try:
        threads = [threading.Thread(target=run, args=(k,))
                   for k in ("postgres", "redis", "mysql", "clickhouse")]
        for t in threads:
            t.start()
        # the tests are in the thread pool; the loop answers meanwhile
        st, lst = server.api("GET", "/api/v1/connections")
        assert st == 200, lst
        st, _ = server.api("GET", "/api/v1/health", token=False)
        assert st == 200
        in_progress = any(t.is_alive() for t in threads)
        for t in threads:
            t.join(150)
        assert in_progress, "every test ended before the other calls were answered"
    finally:
        silent.close()
    assert set(answers) == {"postgres", "redis", "mysql", "clickhouse"}, answers
    for kind, ans in answers.items():
        assert ans["status"] is False, (kind, ans)
        # MariaDB's client says it lost the connection in the handshake (errno 110:
        # ETIMEDOUT); the others say it timed out
        assert WRONG not in ans["message"] and "password=" not in ans["message"], ans
        msg = ans["message"].lower()
        assert "time" in msg or ("handshake" in msg and "110" in msg), (kind, ans)


def test_by_id_uses_the_stored_connection(server, pg):
    body = fields("warehouse", pg.uri("postgres"))
    st, ans = server.api("POST", "/api/v1/connections", body)
    assert st == 200, ans
    ans = conn_test(server, {"connection_id": "warehouse"})
    assert ans["status"] is True, ans

    st, ans = server.api("POST", "/api/v1/connections/test", {"connection_id": "nowhere"})
    assert st == 404 and ans["status"] == 404, ans
    # a connection named "test" is still a connection
    st, ans = server.api("GET", "/api/v1/connections/test")
    assert st == 404, ans


def test_other_kinds(server, tmp_path):
    ans = conn_test(server, {"connection_id": "folder", "conn_type": "fs", "host": str(tmp_path)})
    assert ans["status"] is True, ans
    f = tmp_path / "a_file"
    f.write_text("x")
    ans = conn_test(server, {"connection_id": "folder", "conn_type": "fs", "host": str(f)})
    assert ans["status"] is False and "not a folder" in ans["message"], ans
    ans = conn_test(server, {"connection_id": "gone", "conn_type": "fs",
                        "host": str(tmp_path / "gone")})
    assert ans["status"] is False and "No such file" in ans["message"], ans

    # weir's own server is an http endpoint that answers
    u = urllib.parse.urlsplit(server.url)
    ans = conn_test(server, {"connection_id": "web", "conn_type": "http", "host": u.hostname,
                        "port": u.port})
    assert ans["status"] is True, ans

    ans = conn_test(server, {"connection_id": "mail", "conn_type": "smtp", "host": "127.0.0.1"})
    assert ans == {"status": False,
                   "message": "weir cannot test connections of type smtp"}, ans


def test_bad_bodies_are_400(server):
    for body, word in (({"conn_type": "postgres"}, "connection_id"),
                       ({"connection_id": "x", "host": "h"}, "conn_type"),
                       ({"connection_id": "x", "conn_type": "postgres", "colour": "red"},
                        "colour"),
                       ({"connection_id": "bad id!", "conn_type": "postgres"},
                        "connection_id"),
                       ({"connection_id": "x", "conn_type": "postgres", "port": "many"},
                        "port")):
        st, ans = server.api("POST", "/api/v1/connections/test", body)
        assert st == 400, (body, ans)
        assert ans["status"] == 400 and word in ans["detail"], (body, ans)
    for raw in ("{not json", '"not an object"', ""):
        st, _, data = server.request("POST", "/api/v1/connections/test", raw_body=raw)
        assert st == 400, (raw, data)
        assert json.loads(data)["status"] == 400, data


def test_cli(server, pg):
    st, ans = server.api("POST", "/api/v1/connections", fields("warehouse", pg.uri("postgres")))
    assert st == 200, ans
    r = server.cli("connections", "test", "warehouse")
    assert r.returncode == 0, cli_describe(r)
    assert "Connection successfully tested" in r.stdout, cli_describe(r)

    r = server.cli("connections", "test", "--conn-uri", pg.uri("postgres"))
    assert r.returncode == 0, cli_describe(r)

    r = server.cli("connections", "test", "--conn-uri", pg.uri("postgres", password=WRONG))
    assert r.returncode == 1, cli_describe(r)
    assert "password authentication failed" in r.stderr, cli_describe(r)
    assert WRONG not in r.stdout + r.stderr

    r = server.cli("connections", "test", "nowhere")
    assert r.returncode == 1 and "nowhere" in r.stderr, cli_describe(r)
    r = server.cli("connections", "test")
    assert r.returncode == 2, cli_describe(r)
    assert WRONG not in server.log_text()
