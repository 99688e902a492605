"""The recommender example end to end (examples/dags/recsys_daily.yaml, issue 12 item 6): real
PostgreSQL, ClickHouse and Redis (stores.py), the fixtures of examples/recsys/make_fixtures.py
loaded, `weir dags test` run with the connections in its environment, and the Redis lists
checked against what this test computes from the rows it loaded: every user has one, of the
right length, in the right order; the catalog's hashes are there; a run of another day with
another top_n replaces them all.
"""

import collections
import json
import os
import subprocess
import sys

from conftest import EXAMPLES, WEIR_BIN
from stores import (clickhouse, clickhouse_db, pg, pg_db, redis_db,  # noqa: F401
                    redis_server)

sys.path.insert(0, str(EXAMPLES / "recsys"))
import make_fixtures  # noqa: E402

DAG = EXAMPLES / "dags" / "recsys_daily.yaml"
TASKS = {"prepare", "daily_views", "features", "export_features", "train", "load_scores[0]",
         "load_scores[1]", "top_n", "publish", "publish_catalog"}


def expected_lists(data, ds, n):
    """{user_id: [item_id, ...]}: the day's views of available items scored per item by the
    seconds watched; each user's best n by score, then item id, among the items scored that
    day that the user did not view, svod items only for subscribers."""
    items = {i: (mon, avail) for i, _, mon, avail in data["items"]}
    seen = collections.defaultdict(set)
    score = collections.Counter()
    for ts, user, item, seconds in data["views"]:
        if ts.startswith(ds) and items[item][1]:
            seen[user].add(item)
            score[item] += seconds
    ranked = sorted(score, key=lambda i: (-score[i], i))
    out = {}
    for user, _, subscriber in data["users"]:
        ok = [i for i in ranked if i not in seen[user] and (items[i][0] != "svod" or subscriber)]
        out[user] = ok[:n]
    return out


def run_pipeline(tmp_path, conns, ds, top_n):
    env = dict(os.environ, TMPDIR=str(tmp_path))
    env.pop("WEIR_OUTPUT", None)
    env.update(("WEIR_CONN_" + k.upper(), v) for k, v in conns.items())
    conf = {"data_dir": str(tmp_path / "data"), "top_n": top_n}
    r = subprocess.run([WEIR_BIN, "dags", "test", str(DAG), "--logical-date", ds, "--conf",
                        json.dumps(conf)], env=env, capture_output=True, text=True, timeout=300,
                       cwd=str(tmp_path))
    assert r.returncode == 0, "exit %s\n%s\n%s" % (r.returncode, r.stdout, r.stderr)
    for task in TASKS:
        assert "%s success" % task in r.stdout, (task, r.stdout)
    assert "dag run manual__%sT00:00:00+00:00 of recsys_daily success" % ds in r.stdout
    return r


def check_lists(cache, data, ds, n):
    want = expected_lists(data, ds, n)
    assert all(len(v) == n for v in want.values())  # the fixtures give everyone n candidates
    keys = set(cache.scan_iter("recs:*"))
    assert keys == {"recs:%d" % u for u in want}, sorted(keys - {"recs:%d" % u for u in want})
    for user, items in want.items():
        got = cache.zrange("recs:%d" % user, 0, -1, withscores=True)
        assert got == [(str(i), float(rank)) for rank, i in enumerate(items, 1)], (user, got)
    assert 0 < cache.ttl("recs:1") <= 172800


def test_recsys_pipeline_publishes_every_users_top_n(tmp_path, pg, pg_db, clickhouse,
                                                     clickhouse_db, redis_server, redis_db):
    data = make_fixtures.generate()
    make_fixtures.load(pg, pg_db, clickhouse, clickhouse_db, data)
    conns = {"events": clickhouse.uri(clickhouse_db), "business": pg.uri(pg_db),
             "cache": redis_server.uri(redis_db)}
    cache = redis_server.client(redis_db)

    run_pipeline(tmp_path, conns, "2024-03-01", 10)
    check_lists(cache, data, "2024-03-01", 10)
    # the 2-worker job wrote one part of the model per rank, which both loaded
    parts = [tmp_path / "data" / ("model-2024-03-01.%d.csv" % r) for r in (0, 1)]
    assert all(p.exists() for p in parts)
    n_scored = sum(len(p.read_text().splitlines()) - 1 for p in parts)
    assert pg.query(pg_db, "SELECT count(*) FROM item_scores WHERE ds = '2024-03-01'") == \
        [(n_scored,)]
    # the catalog of available items, as hashes
    available = [(i, t, m) for i, t, m, a in data["items"] if a]
    assert len(list(cache.scan_iter("item:*"))) == len(available)
    i, title, mon = available[0]
    assert cache.hgetall("item:%d" % i) == {"title": title, "monetization": mon}

    # another day, shorter lists: the day's lists replace the previous ones whole
    run_pipeline(tmp_path, conns, "2024-02-29", 3)
    check_lists(cache, data, "2024-02-29", 3)
    # the first day's rows in PostgreSQL are kept beside the second's
    assert pg.query(pg_db, "SELECT ds::text, count(*) FROM recs GROUP BY ds ORDER BY ds") == \
        [("2024-02-29", 3 * len(data["users"])), ("2024-03-01", 10 * len(data["users"]))]
