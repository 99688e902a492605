"""pytest fixtures of the real database servers (tools/store_servers.py starts and stops them):
a session-scoped server per engine and a function-scoped clean database on it.  Test files
import them: `from stores import pg, pg_db, ...`.
"""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

from store_servers import ENGINES, lacking, tail  # noqa: E402


def _server_fixture(name):
    @pytest.fixture(scope="session")
    def fixture():
        need = lacking(name)
        if need:
            pytest.fail("%s: not installed: %s (run `make deps`)" % (name, ", ".join(need)))
        srv = ENGINES[name][0]()
        try:
            srv.start()
        except Exception as e:  # the server's own words, then stop what started
            log = tail(srv.log)
            srv.stop()
            pytest.fail("%s did not start: %s\n%s" % (name, e, log))
        yield srv
        srv.stop()

    return fixture


def _db_fixture(server_name):
    @pytest.fixture
    def fixture(request):
        srv = request.getfixturevalue(server_name)
        db = srv.fresh_db()
        yield db
        srv.drop_db(db)

    return fixture


pg = _server_fixture("postgres")
redis_server = _server_fixture("redis")
mariadb = _server_fixture("mariadb")
clickhouse = _server_fixture("clickhouse")
pg_db = _db_fixture("pg")
redis_db = _db_fixture("redis_server")
mariadb_db = _db_fixture("mariadb")
clickhouse_db = _db_fixture("clickhouse")
