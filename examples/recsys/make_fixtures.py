#!/usr/bin/python3
"""The recommender pipeline's fixture data (examples/dags/recsys_daily.yaml), made up but the
same every time: a catalog and its users (the business data, in PostgreSQL) and two days of
views (the events, in ClickHouse).

    python3 make_fixtures.py OUT_DIR      # writes business.sql, clickhouse.sql and views.tsv

business.sql (PostgreSQL) creates and fills `items` (item_id, title, monetization: free, avod,
svod or tvod, available) and `users` (user_id, name, subscriber); clickhouse.sql creates
`views` (ts, user_id, item_id, seconds), which views.tsv fills (TabSeparated, no header):

    psql "$PG_URI" -f OUT_DIR/business.sql
    clickhouse-client --multiquery < OUT_DIR/clickhouse.sql
    clickhouse-client -q 'INSERT INTO views FORMAT TabSeparated' < OUT_DIR/views.tsv

generate() gives the same rows as Python lists, and load() puts them into servers started by
tools/store_servers.py (the demo and the system test use both).  Standard library only.
"""

import sys
from pathlib import Path

DAYS = ("2024-02-29", "2024-03-01")
MONETIZATION = ("free", "avod", "svod", "tvod")


class Lcg:
    """A 64-bit linear congruential generator: the same numbers on every Python."""

    def __init__(self, seed):
        self.x = seed & 0xFFFFFFFFFFFFFFFF

    def next(self, n):
        """An integer in [0, n)."""
        self.x = (self.x * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF
        return (self.x >> 33) % n


def generate(users=300, items=120, views_per_day=2000, days=DAYS, seed=4):
    """{"items": [(item_id, title, monetization, available)], "users": [(user_id, name,
    subscriber)], "views": [(ts, user_id, item_id, seconds)]}: a few thousand rows.  Popular
    items are viewed more (the item is the smaller of two draws)."""
    g = Lcg(seed)
    out = {"items": [], "users": [], "views": []}
    for i in range(1, items + 1):
        out["items"].append((i, "Title %d" % i, MONETIZATION[g.next(4)], g.next(15) != 0))
    for u in range(1, users + 1):
        out["users"].append((u, "user-%d" % u, g.next(10) < 4))
    for day in days:
        for _ in range(views_per_day):
            s = g.next(86400)
            ts = "%s %02d:%02d:%02d" % (day, s // 3600, s // 60 % 60, s % 60)
            item = min(g.next(items), g.next(items)) + 1
            out["views"].append((ts, g.next(users) + 1, item, 30 + g.next(5400)))
    return out


PG_SCHEMA = """\
CREATE TABLE items (item_id int PRIMARY KEY, title text NOT NULL,
                    monetization text NOT NULL, available boolean NOT NULL);
CREATE TABLE users (user_id int PRIMARY KEY, name text NOT NULL, subscriber boolean NOT NULL);
"""

CH_SCHEMA = ("CREATE TABLE views (ts DateTime, user_id UInt32, item_id UInt32, seconds UInt32) "
             "ENGINE = MergeTree ORDER BY (ts, user_id)")


def business_sql(data):
    def row(values):
        return "(%s)" % ", ".join(
            ("true" if v else "false") if isinstance(v, bool) else
            str(v) if isinstance(v, int) else "'%s'" % v.replace("'", "''") for v in values)
    return (PG_SCHEMA +
            "INSERT INTO items VALUES\n  %s;\n" % ",\n  ".join(map(row, data["items"])) +
            "INSERT INTO users VALUES\n  %s;\n" % ",\n  ".join(map(row, data["users"])))


def views_tsv(data):
    return "".join("%s\t%d\t%d\t%d\n" % v for v in data["views"])


def load(pg, pg_db, ch, ch_db, data):
    """The fixtures into a PostgreSQL database and a ClickHouse database of store_servers'
    servers (the tables must not exist yet)."""
    pg.query(pg_db, business_sql(data))
    ch.sql(CH_SCHEMA, ch_db)
    ch.sql("INSERT INTO views FORMAT TabSeparated\n" + views_tsv(data), ch_db)


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: make_fixtures.py OUT_DIR\n")
        return 2
    out = Path(argv[1])
    out.mkdir(parents=True, exist_ok=True)
    data = generate()
    (out / "business.sql").write_text(business_sql(data))
    (out / "clickhouse.sql").write_text(CH_SCHEMA + ";\n")
    (out / "views.tsv").write_text(views_tsv(data))
    print("%s: %d items, %d users, %d views" % (out, len(data["items"]), len(data["users"]),
                                                len(data["views"])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
