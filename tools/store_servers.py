"""Real database servers: PostgreSQL 15, Redis 7, MariaDB and ClickHouse from Debian's packages,
each in a temporary directory on a free loopback port, stopped by the pid it recorded.  Nothing
is mocked.  The system tests (tests/system/stores.py has their pytest fixtures), `make
demo-pipeline` (examples/recsys/demo_pipeline.py) and bench/transfer.py start them from here.

Each class starts one server (start()), says how to reach it (uri() in Airflow's form, the one
WEIR_CONN_<ID> carries), makes a clean database (fresh_db()/drop_db()) and stops (stop():
SIGTERM to the recorded pid, then SIGKILL).  started() starts several and stops them all on
the way out, whatever happened.  Standard library, plus python3-psycopg2 and python3-redis for
the clients.

PostgreSQL refuses to run as root: when the tests run as root, its directory is given to the
user `nobody` and initdb, pg_ctl and the server run as nobody through runuser (the directory is
made with mkdtemp outside pytest's private tmp, which nobody cannot enter).  MariaDB runs as
the current user (--user=root when that is root, which mariadbd allows when told).
"""

import contextlib
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request
import uuid
from pathlib import Path

PG_BIN = Path("/usr/lib/postgresql/15/bin")
PASSWORD = "s3cret-pw"


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc, what, timeout=60, log=None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError("%s exited with %s before it listened:\n%s"
                               % (what, proc.returncode, tail(log)))
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("%s did not listen on %d within %ss:\n%s" % (what, port, timeout, tail(log)))


def tail(path, n=4000):
    try:
        return Path(path).read_text(errors="replace")[-n:] if path else ""
    except OSError:
        return ""


def stop_pid(pid, timeout=20):
    """SIGTERM, then SIGKILL, to the pid the server recorded."""
    if not pid:
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except OSError:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except OSError:
            return
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
        time.sleep(0.1)
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass


def missing(*programs):
    """The programs of `programs` that are not installed (`make deps` installs them)."""
    return [p for p in programs if not (shutil.which(p) or Path(p).exists())]


class Store:
    kind = ""

    def __init__(self):
        self.dir = Path(tempfile.mkdtemp(prefix="weir-%s-" % self.kind))
        self.port = free_port()
        self.pid = None
        self.proc = None
        self.log = self.dir / "server.log"

    def stop(self):
        stop_pid(self.pid)
        if self.proc is not None:
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                pass
        shutil.rmtree(self.dir, ignore_errors=True)

    def env_uri(self, db):
        return self.uri(db)


class Postgres(Store):
    kind = "pg"
    user = "weir"

    def __init__(self):
        super().__init__()
        self.data = self.dir / "data"
        self.as_user = []
        if os.geteuid() == 0:
            nobody = pwd.getpwnam("nobody")
            os.chown(self.dir, nobody.pw_uid, nobody.pw_gid)
            self.as_user = ["runuser", "-u", "nobody", "--"]

    def run(self, *args, **kw):
        return subprocess.run(self.as_user + list(args), check=True, capture_output=True,
                              text=True, timeout=120, cwd=str(self.dir), **kw)

    def start(self):
        pwfile = self.dir / "pw"
        pwfile.write_text(PASSWORD + "\n")
        if self.as_user:
            nobody = pwd.getpwnam("nobody")
            os.chown(pwfile, nobody.pw_uid, nobody.pw_gid)
        self.run(str(PG_BIN / "initdb"), "-D", str(self.data), "-U", self.user,
                 "--pwfile", str(pwfile), "--auth=scram-sha-256", "-E", "UTF8", "--no-sync")
        opts = ("-c listen_addresses=127.0.0.1 -p %d -k %s -c fsync=off "
                "-c synchronous_commit=off -c full_page_writes=off -c max_connections=50"
                % (self.port, self.data))
        self.run(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-o", opts,
                 "-w", "-t", "60", "start")
        self.pid = int((self.data / "postmaster.pid").read_text().split()[0])
        return self

    def stop(self):
        try:
            self.run(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
            pass
        super().stop()

    def uri(self, db="postgres", password=PASSWORD):
        return "postgresql://%s:%s@127.0.0.1:%d/%s" % (self.user, urllib.parse.quote(password, safe=""),
                                                      self.port, db)

    def connect(self, db="postgres"):
        import psycopg2
        conn = psycopg2.connect(host="127.0.0.1", port=self.port, user=self.user,
                                password=PASSWORD, dbname=db)
        conn.autocommit = True
        return conn

    def query(self, db, sql, args=None):
        conn = self.connect(db)
        try:
            with conn.cursor() as cur:
                cur.execute(sql, args)
                return cur.fetchall() if cur.description else None
        finally:
            conn.close()

    def fresh_db(self):
        name = "t_" + uuid.uuid4().hex[:12]
        self.query("postgres", "CREATE DATABASE %s" % name)
        return name

    def drop_db(self, name):
        self.query("postgres", "DROP DATABASE IF EXISTS %s WITH (FORCE)" % name)


class Redis(Store):
    kind = "redis"

    def start(self):
        logf = open(self.log, "ab")
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
             "--requirepass", PASSWORD, "--dir", str(self.dir), "--save", "",
             "--appendonly", "no", "--daemonize", "no", "--databases", "64"],
            stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT,
            start_new_session=True)
        logf.close()
        self.pid = self.proc.pid
        wait_port(self.port, self.proc, "redis-server", log=self.log)
        self.next_db = 1
        return self

    def uri(self, db=0, password=PASSWORD):
        return "redis://:%s@127.0.0.1:%d/%d" % (urllib.parse.quote(password, safe=""), self.port, db)

    def client(self, db=0):
        import redis
        return redis.Redis(host="127.0.0.1", port=self.port, password=PASSWORD, db=db,
                           decode_responses=True)

    def fresh_db(self):
        db = self.next_db
        self.next_db = self.next_db % 63 + 1
        self.client(db).flushdb()
        return db

    def drop_db(self, db):
        self.client(db).flushdb()


class MariaDB(Store):
    kind = "mariadb"

    def start(self):
        data = self.dir / "data"
        self.sock = self.dir / "mysqld.sock"
        user = pwd.getpwuid(os.geteuid()).pw_name
        subprocess.run(["mariadb-install-db", "--no-defaults", "--datadir=%s" % data,
                        "--user=%s" % user, "--auth-root-authentication-method=normal",
                        "--skip-test-db"],
                       check=True, capture_output=True, timeout=180)
        logf = open(self.log, "ab")
        self.proc = subprocess.Popen(
            ["mariadbd", "--no-defaults", "--datadir=%s" % data, "--user=%s" % user,
             "--port=%d" % self.port, "--bind-address=127.0.0.1", "--socket=%s" % self.sock,
             "--pid-file=%s" % (self.dir / "mysqld.pid"), "--skip-log-bin",
             "--innodb-flush-log-at-trx-commit=0", "--innodb-buffer-pool-size=64M",
             "--log-error=%s" % self.log],
            stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT,
            start_new_session=True)
        logf.close()
        self.pid = self.proc.pid
        wait_port(self.port, self.proc, "mariadbd", log=self.log)
        self.sql(None, "CREATE USER 'weir'@'127.0.0.1' IDENTIFIED BY '%s'; "
                       "GRANT ALL ON *.* TO 'weir'@'127.0.0.1'; FLUSH PRIVILEGES" % PASSWORD)
        return self

    def sql(self, db, text):
        """Runs `text` as root through the socket; the rows, tab-separated."""
        args = ["mariadb", "--no-defaults", "--socket=%s" % self.sock, "-uroot", "-N", "-B"]
        if db:
            args.append(db)
        r = subprocess.run(args + ["-e", text], capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            raise RuntimeError("mariadb: %s" % r.stderr)
        return [line.split("\t") for line in r.stdout.splitlines()]

    def uri(self, db, password=PASSWORD):
        return "mysql://weir:%s@127.0.0.1:%d/%s" % (urllib.parse.quote(password, safe=""),
                                                   self.port, db)

    def fresh_db(self):
        name = "t_" + uuid.uuid4().hex[:12]
        self.sql(None, "CREATE DATABASE %s" % name)
        return name

    def drop_db(self, name):
        self.sql(None, "DROP DATABASE IF EXISTS %s" % name)


CH_CONFIG = """<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>{dir}/server.log</log><errorlog>{dir}/error.log</errorlog>
    <console>0</console></logger>
  <http_port>{http}</http_port>
  <tcp_port>{tcp}</tcp_port>
  <listen_host>127.0.0.1</listen_host>
  <path>{dir}/data/</path>
  <tmp_path>{dir}/tmp/</tmp_path>
  <user_files_path>{dir}/user_files/</user_files_path>
  <format_schema_path>{dir}/format_schemas/</format_schema_path>
  <users_config>{dir}/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>5368709120</mark_cache_size>
</yandex>
"""

CH_USERS = """<?xml version="1.0"?>
<yandex>
  <profiles><default></default></profiles>
  <users><weir><password>{pw}</password><networks><ip>127.0.0.1</ip></networks>
    <profile>default</profile><quota>default</quota></weir></users>
  <quotas><default></default></quotas>
</yandex>
"""


def _tsv_unescape(cell):
    out, i = [], 0
    while i < len(cell):
        if cell[i] == "\\" and i + 1 < len(cell):
            out.append({"n": "\n", "t": "\t", "r": "\r", "0": "\0"}.get(cell[i + 1], cell[i + 1]))
            i += 2
        else:
            out.append(cell[i])
            i += 1
    return "".join(out)


class ClickHouse(Store):
    """Debian's clickhouse-server (18.16), its configuration written into the directory."""
    kind = "clickhouse"

    def start(self):
        self.tcp = free_port()
        for d in ("data", "tmp", "user_files", "format_schemas"):
            (self.dir / d).mkdir()
        (self.dir / "config.xml").write_text(CH_CONFIG.format(dir=self.dir, http=self.port,
                                                              tcp=self.tcp))
        (self.dir / "users.xml").write_text(CH_USERS.format(pw=PASSWORD))
        logf = open(self.dir / "stdout.log", "ab")
        self.proc = subprocess.Popen(
            ["clickhouse-server", "--config-file=%s" % (self.dir / "config.xml")],
            stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT,
            start_new_session=True, cwd=str(self.dir))
        logf.close()
        self.pid = self.proc.pid
        self.log = self.dir / "error.log"
        wait_port(self.port, self.proc, "clickhouse-server", timeout=90, log=self.log)
        deadline = time.monotonic() + 60
        while True:
            try:
                self.sql("SELECT 1")
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        return self

    def sql(self, text, db=None):
        params = {"user": "weir", "password": PASSWORD}
        if db:
            params["database"] = db
        url = "http://127.0.0.1:%d/?%s" % (self.port, urllib.parse.urlencode(params))
        req = urllib.request.Request(url, data=text.encode(), method="POST")
        with urllib.request.urlopen(req, timeout=60) as r:
            body = r.read().decode()
        return [[_tsv_unescape(c) for c in line.split("\t")] for line in body.splitlines()]

    def uri(self, db, password=PASSWORD):
        return "clickhouse://weir:%s@127.0.0.1:%d/%s" % (urllib.parse.quote(password, safe=""),
                                                        self.port, db)

    def fresh_db(self):
        name = "t_" + uuid.uuid4().hex[:12]
        self.sql("CREATE DATABASE %s" % name)
        return name

    def drop_db(self, name):
        self.sql("DROP DATABASE IF EXISTS %s" % name)


ENGINES = {
    "postgres": (Postgres, [str(PG_BIN / "initdb"), "runuser"], "python3-psycopg2"),
    "redis": (Redis, ["redis-server"], "python3-redis"),
    "mariadb": (MariaDB, ["mariadb-install-db", "mariadbd", "mariadb"], None),
    "clickhouse": (ClickHouse, ["clickhouse-server"], None),
}


def lacking(name):
    """What engine `name` (a key of ENGINES) needs that is not installed, as a list."""
    cls, programs, module = ENGINES[name]
    out = missing(*programs)
    if module:
        try:
            __import__(module.replace("python3-", ""))
        except ImportError:
            out.append(module)
    return out


@contextlib.contextmanager
def started(*names):
    """Starts the servers of ENGINES named, in order; yields them as a list and stops every one
    that started when the block ends, whatever happened.  A server that does not start raises
    RuntimeError with its log's tail (after stopping the others)."""
    servers = []
    try:
        for name in names:
            need = lacking(name)
            if need:
                raise RuntimeError("%s: not installed: %s (run `make deps`)"
                                   % (name, ", ".join(need)))
            srv = ENGINES[name][0]()
            servers.append(srv)
            try:
                srv.start()
            except Exception as e:
                raise RuntimeError("%s did not start: %s\n%s" % (name, e, tail(srv.log))) from e
        yield servers
    finally:
        for srv in reversed(servers):
            srv.stop()
