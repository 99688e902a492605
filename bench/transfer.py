#!/usr/bin/python3
"""transfer: tasks beside their peers (issue 12): ROWS rows (id bigint, two text columns, an int)
from PostgreSQL to Redis hashes and to a PostgreSQL table, on real servers started here
(tools/store_servers.py), the same servers and data for every side.

PostgreSQL to Redis hashes (HSET user:ID a .. b .. n .., one a row):
  weir         `weir task-transfer` (mode append: one HSET a row, as the peers write;
               --before BIN: an earlier build beside it)
  weir/replace the same with mode replace (staged keys, EXPIRE and SADD a row, one EVAL at the end)
  pipe         psql -c "COPY ... TO STDOUT" | copy_to_resp (C, bench/copy_to_resp.c) | redis-cli --pipe
  python       psycopg2's server-side cursor, redis-py's pipeline of 10,000 commands
PostgreSQL to PostgreSQL (into an empty table of the same columns):
  weir         `weir task-transfer` (mode append: COPY FROM STDIN)
  pipe         psql -c "COPY src TO STDOUT" | psql -c "COPY dst FROM STDIN"

`weir task-transfer` is what a transfer task's job runs (`exec weir task-transfer`, the spec in
WEIR_DATA_SPEC); it is timed directly so that the figure is the transfer's, not a DAG run's
fixed start-up (a temporary home, store and launcher: `--dags-test` adds one such run per
target, for the difference).  Each side runs RUNS times (median), the sides' runs interleaved,
the target cleared between runs and checked after each (row count).  The weir task's peak memory is its maximum resident
set (GNU time's).  Figures, not assertions; docs/benchmarks.md records them.

    /usr/bin/python3 bench/transfer.py [--rows 1000000] [--runs 3] [--dags-test] [--before BIN]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))

from store_servers import PASSWORD, PG_BIN, started  # noqa: E402

WEIR_BIN = os.environ.get("WEIR_BIN") or str(REPO / "weir")
PEAK_LIMIT = 64 * 1024 * 1024

PYTHON_SIDE = r"""
import sys, psycopg2, redis
port, db, rport, rdb, pw = sys.argv[1:6]
pg = psycopg2.connect(host="127.0.0.1", port=int(port), user="weir", password=pw, dbname=db)
r = redis.Redis(host="127.0.0.1", port=int(rport), password=pw, db=int(rdb))
cur = pg.cursor(name="src")
cur.itersize = 10000
cur.execute("SELECT id, a, b, n FROM src")
p = r.pipeline(transaction=False)
k = 0
for id_, a, b, n in cur:
    p.hset("user:%d" % id_, mapping={"a": a, "b": b, "n": n})
    k += 1
    if k % 10000 == 0:
        p.execute()
p.execute()
pg.close()
"""


def timed(cmd, env=None, shell=False, peak_file=None):
    """(seconds, peak resident bytes or None) of a command that must succeed.  The peak is GNU
    time's (`make deps` installs it): a process forked from this one would count this Python's
    pages as its own until it execs."""
    if peak_file:
        cmd = ["/usr/bin/time", "-f", "%M", "-o", str(peak_file)] + cmd
    t0 = time.monotonic()
    r = subprocess.run(cmd, env=env, shell=shell, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE)
    took = time.monotonic() - t0
    if r.returncode != 0:
        raise RuntimeError("%s exited %d: %s" % (cmd if not shell else cmd[:200], r.returncode,
                                                 r.stderr.decode(errors="replace")[-2000:]))
    return took, int(peak_file.read_text().split()[-1]) * 1024 if peak_file else None


class Bench:
    def __init__(self, pg, rd, rows, runs, work, before=None):
        self.pg, self.rd, self.rows, self.runs, self.work = pg, rd, rows, runs, work
        self.before = before
        self.db = pg.fresh_db()
        self.rdb = 1
        self.cache = rd.client(self.rdb)
        self.results = {}
        self.env = dict(os.environ, PGPASSWORD=PASSWORD, WEIR_CONN_PG=pg.uri(self.db),
                        WEIR_CONN_CACHE=rd.uri(self.rdb))
        self.env.pop("WEIR_OUTPUT", None)
        self.psql = "%s -X -q -h 127.0.0.1 -p %d -U weir -d %s" % (
            PG_BIN / "psql", pg.port, self.db)
        self.redis_cli = "redis-cli -h 127.0.0.1 -p %d -a %s --no-auth-warning -n %d" % (
            rd.port, PASSWORD, self.rdb)

    def setup(self):
        self.pg.query(self.db, "CREATE TABLE src (id bigint PRIMARY KEY, a text, b text, n int)")
        self.pg.query(self.db, "INSERT INTO src SELECT g, 'user-' || g, md5(g::text), g %% 1000 "
                               "FROM generate_series(1, %s) g", (self.rows,))
        self.pg.query(self.db, "CREATE TABLE dst (id bigint, a text, b text, n int)")
        self.pg.query(self.db, "VACUUM ANALYZE src")
        conv = self.work / "copy_to_resp"
        subprocess.run(["cc", "-O2", "-o", str(conv), str(REPO / "bench" / "copy_to_resp.c")],
                       check=True)
        self.conv = conv

    def sides(self, target, sides, clear):
        """Each of `sides` ((name, command, check, shell, peak)) RUNS times, interleaved (run 1
        of each, then run 2 of each, ...) so that a change in the machine's load falls on all
        of them; the target cleared before each run, `check` after it."""
        secs = {name: [] for name, *_ in sides}
        peaks = {name: [] for name, *_ in sides}
        for _ in range(self.runs):
            for name, cmd, check, shell, peak in sides:
                clear()
                took, rss = timed(cmd, env=self.env, shell=shell,
                                  peak_file=self.work / "peak" if peak else None)
                got = check()
                if got != self.rows:
                    raise RuntimeError("%s %s: %d rows landed, expected %d" % (
                        target, name, got, self.rows))
                secs[name].append(took)
                peaks[name].append(rss)
        for name, cmd, check, shell, peak in sides:
            t = statistics.median(secs[name])
            top = max(peaks[name]) if peak else None
            self.results[(target, name)] = (self.rows / t, top)
            print("  %-14s %9.0f rows/s  (median %.2f s of %s)%s" % (
                name, self.rows / t, t, ", ".join("%.2f" % x for x in secs[name]),
                "  peak %.1f MB" % (top / 1e6) if peak else ""), flush=True)

    def weir(self, spec, binary=WEIR_BIN):
        return [binary, "task-transfer", "--spec-json", json.dumps(spec)]

    def dags_test(self, spec):
        dag = self.work / ("bench_%d.yaml" % len(self.results))
        dag.write_text(json.dumps({"dag_id": "bench_transfer", "tasks": [
            {"task_id": "t", "transfer": spec, "resources": {"memory": "1g"}}]}))
        return [WEIR_BIN, "dags", "test", str(dag)]

    def to_redis(self, dags_test):
        clear = self.cache.flushdb

        def check():
            return self.cache.dbsize()

        def check_replace():  # the hashes and the list of what was published
            return self.cache.dbsize() - 1

        src = {"conn": "pg", "query": "SELECT id, a, b, n FROM src"}
        to = {"conn": "cache", "redis": "hash", "key": "user:{id}", "fields": ["a", "b", "n"]}
        print("PostgreSQL to Redis hashes, %d rows" % self.rows, flush=True)
        append = {"from": src, "to": dict(to, mode="append")}
        sides = [("weir", self.weir(append), check, False, True)]
        if self.before:
            sides.append(("weir-before", self.weir(append, self.before), check, False, True))
        sides.append(("weir/replace", self.weir({"from": src, "to": dict(to, mode="replace")}),
                      check_replace, False, True))
        if dags_test:
            sides.append(("weir/dags-test", self.dags_test(append), check, False, False))
        sides.append(("pipe", "%s -c 'COPY (SELECT id, a, b, n FROM src) TO STDOUT' | %s user: a b n"
                      " | %s --pipe >/dev/null" % (self.psql, self.conv, self.redis_cli),
                      check, True, False))
        sides.append(("python", ["/usr/bin/python3", "-c", PYTHON_SIDE, str(self.pg.port),
                                 self.db, str(self.rd.port), str(self.rdb), PASSWORD],
                      check, False, False))
        self.sides("redis", sides, clear)

    def to_pg(self, dags_test):
        def clear():
            self.pg.query(self.db, "TRUNCATE dst")

        def check():
            return self.pg.query(self.db, "SELECT count(*) FROM dst")[0][0]

        spec = {"from": {"conn": "pg", "query": "SELECT id, a, b, n FROM src"},
                "to": {"conn": "pg", "table": "dst", "mode": "append"}}
        print("PostgreSQL to PostgreSQL, %d rows" % self.rows, flush=True)
        sides = [("weir", self.weir(spec), check, False, True)]
        if self.before:
            sides.append(("weir-before", self.weir(spec, self.before), check, False, True))
        if dags_test:
            sides.append(("weir/dags-test", self.dags_test(spec), check, False, False))
        sides.append(("pipe", "%s -c 'COPY src TO STDOUT' | %s -c 'COPY dst FROM STDIN'"
                      % (self.psql, self.psql), check, True, False))
        self.sides("pg", sides, clear)

    def report(self):
        r = self.results
        print("ratios (weir's rows/s over the peer's) and targets:")
        lines = [("redis", "pipe", 1.0), ("redis", "python", 3.0), ("pg", "pipe", 0.9)]
        for target, peer, want in lines:
            ratio = r[(target, "weir")][0] / r[(target, peer)][0]
            print("  %-5s weir / %-6s %5.2fx  (target >= %.1fx: %s)" % (
                target, peer, ratio, want, "met" if ratio >= want else "MISSED"))
        for key, (_, peak) in sorted(r.items()):
            if peak:
                print("  peak memory %-18s %5.1f MB  (target < 64 MB: %s)" % (
                    "/".join(key), peak / 1e6, "met" if peak < PEAK_LIMIT else "MISSED"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--dags-test", action="store_true",
                    help="also time the transfer as a one-task DAG run of `weir dags test`")
    ap.add_argument("--only", choices=("redis", "pg"))
    ap.add_argument("--before", metavar="BIN",
                    help="another weir binary (an earlier build) timed beside this one")
    args = ap.parse_args()
    print("machine: %d cores, load %s" % (os.cpu_count(), os.getloadavg()[0]))
    work = Path(tempfile.mkdtemp(prefix="weir-bench-transfer."))
    try:
        with started("postgres", "redis") as (pg, rd):
            b = Bench(pg, rd, args.rows, args.runs, work, args.before)
            b.setup()
            if args.only != "pg":
                b.to_redis(args.dags_test)
            if args.only != "redis":
                b.to_pg(args.dags_test)
            if not args.only:
                b.report()
        print("uptime: %s" % subprocess.run(["uptime"], capture_output=True,
                                            text=True).stdout.strip())
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
