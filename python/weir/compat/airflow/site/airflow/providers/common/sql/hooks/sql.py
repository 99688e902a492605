"""airflow.providers.common.sql.hooks.sql: DbApiHook, the DB-API methods a DAG's code calls
on a database hook (get_records, get_first, run, insert_rows, get_pandas_df), and the
result handlers fetch_all_handler and fetch_one_handler."""

from __future__ import annotations

import sys
from contextlib import closing
from typing import Any, Callable, Iterable, List, Optional, Sequence, Union

from airflow.hooks.base import BaseHook


def fetch_all_handler(cursor: Any) -> Optional[List[Any]]:
    """All rows of the cursor (None for a statement that returns none)."""
    return list(cursor.fetchall()) if cursor.description is not None else None


def fetch_one_handler(cursor: Any) -> Any:
    """The first row of the cursor (None for a statement that returns none)."""
    return cursor.fetchone() if cursor.description is not None else None


def split_statements(sql: str) -> List[str]:
    """A script's statements: split at ';' outside quotes and comments (each stripped, the
    empty ones left out)."""
    out: List[str] = []
    cur: List[str] = []
    i, n = 0, len(sql)
    while i < n:
        c = sql[i]
        if c in ("'", '"'):
            j = i + 1
            while j < n and not (sql[j] == c and (j + 1 >= n or sql[j + 1] != c)):
                j += 2 if sql[j] == c else 1
            cur.append(sql[i:j + 1])
            i = j + 1
            continue
        if sql.startswith("--", i):
            j = sql.find("\n", i)
            j = n if j < 0 else j
            cur.append(sql[i:j])
            i = j
            continue
        if sql.startswith("/*", i):
            j = sql.find("*/", i + 2)
            j = n if j < 0 else j + 2
            cur.append(sql[i:j])
            i = j
            continue
        if c == ";":
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        i += 1
    out.append("".join(cur).strip())
    return [s for s in out if s]


class DbApiHook(BaseHook):
    """A database hook over a DB-API 2 driver; a subclass gives get_conn()."""

    conn_name_attr = "conn_id"
    default_conn_name = "default_conn_id"
    placeholder = "%s"

    def __init__(self, *args: Any, schema: Optional[str] = None, log_sql: bool = True,
                 **kwargs: Any) -> None:
        super().__init__()
        attr = self.conn_name_attr
        if args:
            setattr(self, attr, args[0])
        elif attr in kwargs:
            setattr(self, attr, kwargs.pop(attr))
        else:
            setattr(self, attr, self.default_conn_name)
        self.schema = schema
        self.log_sql = log_sql
        self.descriptions: List[Any] = []
        self.last_description: Any = None

    def get_conn_id(self) -> str:
        """The connection id this hook uses."""
        return str(getattr(self, self.conn_name_attr))

    def get_records(self, sql: Union[str, List[str]], parameters: Any = None) -> Any:
        """All rows of a query (of the last query of a list)."""
        return self.run(sql=sql, parameters=parameters, handler=fetch_all_handler)

    def get_first(self, sql: Union[str, List[str]], parameters: Any = None) -> Any:
        """The first row of a query."""
        return self.run(sql=sql, parameters=parameters, handler=fetch_one_handler)

    def get_pandas_df(self, sql: str, parameters: Any = None, **kwargs: Any) -> Any:
        """The query's rows as a pandas DataFrame (pandas must be installed)."""
        try:
            import pandas
        except ImportError:
            raise ImportError("get_pandas_df needs pandas (Debian: python3-pandas)") from None
        with closing(self.get_conn()) as conn:
            return pandas.read_sql(sql, con=conn, params=parameters, **kwargs)

    def run(self, sql: Union[str, Iterable[str]], autocommit: bool = False,
            parameters: Any = None, handler: Optional[Callable[[Any], Any]] = None,
            split_statements: bool = False, return_last: bool = True) -> Any:
        """Runs a statement or a list of them in one transaction (committed at the end
        unless autocommit); with a handler, its result for the last statement (for each of
        them when return_last is False or the statements are a list)."""
        single = isinstance(sql, str)
        if isinstance(sql, str):
            statements = globals()["split_statements"](sql) if split_statements else [sql]
        else:
            statements = list(sql)
        if not statements:
            raise ValueError("List of SQL statements is empty")
        results: List[Any] = []
        self.descriptions = []
        with closing(self.get_conn()) as conn:
            self.set_autocommit(conn, autocommit)
            with closing(conn.cursor()) as cur:
                for stmt in statements:
                    if self.log_sql:
                        print("Running statement: %s, parameters: %s" % (stmt, parameters),
                              file=sys.stderr, flush=True)
                    if parameters:
                        cur.execute(stmt, parameters)
                    else:
                        cur.execute(stmt)
                    if cur.rowcount >= 0:
                        print("Rows affected: %s" % cur.rowcount, file=sys.stderr, flush=True)
                    if handler is not None:
                        results.append(handler(cur))
                        self.descriptions.append(cur.description)
                    self.last_description = cur.description
            if not autocommit:
                conn.commit()
        if handler is None:
            return None
        if single and (return_last or not split_statements):
            return results[-1]
        return results

    def set_autocommit(self, conn: Any, autocommit: bool) -> None:
        """Sets the connection's autocommit."""
        conn.autocommit = autocommit

    def insert_rows(self, table: str, rows: Iterable[Sequence[Any]],
                    target_fields: Optional[Sequence[str]] = None, commit_every: int = 1000,
                    replace: bool = False, **kwargs: Any) -> None:
        """Inserts rows into a table, committing every `commit_every` rows; the values are
        bound by the driver, the table and field names are written as given."""
        fields = "(%s)" % ", ".join(target_fields) if target_fields else ""
        done = 0
        with closing(self.get_conn()) as conn:
            self.set_autocommit(conn, False)
            with closing(conn.cursor()) as cur:
                for row in rows:
                    row = list(row)
                    marks = ", ".join([self.placeholder] * len(row))
                    verb = self._replace_verb() if replace else "INSERT INTO"
                    cur.execute("%s %s %s VALUES (%s)%s" % (
                        verb, table, fields, marks,
                        self._replace_tail(target_fields, kwargs) if replace else ""), row)
                    done += 1
                    if commit_every and done % commit_every == 0:
                        conn.commit()
            conn.commit()
        print("Done loading. Loaded a total of %d rows into %s" % (done, table),
              file=sys.stderr, flush=True)

    def _replace_verb(self) -> str:
        return "REPLACE INTO"

    def _replace_tail(self, fields: Optional[Sequence[str]], kwargs: Any) -> str:
        return ""
