#!/usr/bin/python3
"""demo_pipeline.py (`make demo-pipeline`): the recommender pipeline end to end on real stores.

Starts PostgreSQL, ClickHouse and Redis (Debian's, `make deps`) in temporary directories on free
loopback ports (tools/store_servers.py, as the system tests do), loads make_fixtures.py's data
(the catalog and users into PostgreSQL, two days of views into ClickHouse), runs

    weir dags test examples/dags/recsys_daily.yaml --logical-date 2024-03-01

with the three connections in its environment (WEIR_CONN_EVENTS, WEIR_CONN_BUSINESS,
WEIR_CONN_CACHE), shows what landed in Redis (a few users' top-N lists, a catalog hash), then
stops the servers by their recorded pids whatever happened (an error, Ctrl-C, SIGTERM), and
exits with `dags test`'s status.  WEIR_BIN picks the binary (default ./weir).
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "tools"))

import make_fixtures  # noqa: E402
from store_servers import started  # noqa: E402

DAG = REPO / "examples" / "dags" / "recsys_daily.yaml"
DS = "2024-03-01"
SHOW_USERS = 3


def stop_on_signal(signum, frame):
    raise SystemExit(128 + signum)  # unwinds through started(): the servers stop


def run_dags_test(cmd, env, cwd):
    """`weir dags test`'s status; interrupted, it gets SIGINT (it stops its tasks and removes its
    home, as on Ctrl-C) and a while to end before the stores stop."""
    p = subprocess.Popen(cmd, env=env, cwd=str(cwd))
    try:
        return p.wait()
    except BaseException:
        p.send_signal(signal.SIGINT)
        try:
            p.wait(60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        raise


def show_redis(cache):
    keys = sorted(cache.scan_iter("recs:*"), key=lambda k: int(k.split(":")[1]))
    print("== in Redis: %d top-N lists (recs:USER, sorted sets ranked 1..N), %d catalog hashes"
          % (len(keys), sum(1 for _ in cache.scan_iter("item:*"))))
    for key in keys[:SHOW_USERS]:
        items = cache.zrange(key, 0, -1)
        print("%-9s %s  (ttl %ss)" % (key, " ".join(items), cache.ttl(key)))
        for item in items[:2]:
            h = cache.hgetall("item:%s" % item)
            print("          item:%-4s %s" % (item, json.dumps(h, sort_keys=True)))


def main():
    weir = os.environ.get("WEIR_BIN") or str(REPO / "weir")
    if not os.access(weir, os.X_OK):
        sys.stderr.write("demo-pipeline: no weir binary at %s (run make)\n" % weir)
        return 2
    for s in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, stop_on_signal)
    work = Path(tempfile.mkdtemp(prefix="weir-demo-pipeline."))
    try:
        print("== starting PostgreSQL, ClickHouse and Redis on free loopback ports")
        with started("postgres", "clickhouse", "redis") as (pg, ch, rd):
            shop, events = pg.fresh_db(), ch.fresh_db()
            data = make_fixtures.generate()
            make_fixtures.load(pg, shop, ch, events, data)
            print("   PostgreSQL 127.0.0.1:%d (pid %d): %d items, %d users in %s"
                  % (pg.port, pg.pid, len(data["items"]), len(data["users"]), shop))
            print("   ClickHouse 127.0.0.1:%d (pid %d): %d views over %s in %s"
                  % (ch.port, ch.pid, len(data["views"]), ", ".join(make_fixtures.DAYS), events))
            print("   Redis      127.0.0.1:%d (pid %d)" % (rd.port, rd.pid))
            env = dict(os.environ, WEIR_CONN_EVENTS=ch.uri(events),
                       WEIR_CONN_BUSINESS=pg.uri(shop), WEIR_CONN_CACHE=rd.uri(0))
            env.pop("WEIR_OUTPUT", None)
            conf = {"data_dir": str(work / "data")}
            cmd = [weir, "dags", "test", str(DAG), "--logical-date", DS, "--conf",
                   json.dumps(conf)]
            print("== weir dags test %s --logical-date %s (connections from the environment)"
                  % (DAG.relative_to(REPO), DS), flush=True)
            rc = run_dags_test(cmd, env, work)
            show_redis(rd.client(0))
            print("== weir dags test exited %d; stopping the stores" % rc, flush=True)
            return rc
    except RuntimeError as e:
        sys.stderr.write("demo-pipeline: %s\n" % e)
        return 3
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
