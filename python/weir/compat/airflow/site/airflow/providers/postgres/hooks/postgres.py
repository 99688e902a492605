"""airflow.providers.postgres.hooks.postgres: PostgresHook over psycopg2 (Debian's
python3-psycopg2), on the task's connection (default `postgres_default`)."""

from __future__ import annotations

from typing import Any, Optional, Sequence

from airflow.providers.common.sql.hooks.sql import DbApiHook

# The extra's keys that are libpq's connection options.
_LIBPQ_EXTRA = ("sslmode", "sslcert", "sslkey", "sslrootcert", "sslcrl", "application_name",
                "keepalives_idle", "options", "connect_timeout", "target_session_attrs")


class PostgresHook(DbApiHook):
    """PostgreSQL through psycopg2."""

    conn_name_attr = "postgres_conn_id"
    default_conn_name = "postgres_default"
    conn_type = "postgres"
    hook_name = "Postgres"

    def __init__(self, *args: Any, options: Optional[str] = None, **kwargs: Any) -> None:
        database = kwargs.pop("database", None)
        super().__init__(*args, **kwargs)
        self.database = database or self.schema
        self.options = options
        self.conn: Any = None

    def get_conn(self) -> Any:
        """A new psycopg2 connection."""
        try:
            import psycopg2
        except ImportError:
            raise ImportError("PostgresHook needs psycopg2 (Debian: python3-psycopg2)") from None
        c = self.get_connection(self.get_conn_id())
        args = {"host": c.host, "user": c.login, "password": c.password,
                "dbname": self.database or c.schema, "port": c.port}
        extra = c.extra_dejson
        for key in _LIBPQ_EXTRA:
            if key in extra:
                args[key] = extra[key]
        if self.options:
            args["options"] = self.options
        self.conn = psycopg2.connect(**{k: v for k, v in args.items() if v is not None})
        return self.conn

    def get_uri(self) -> str:
        """The connection as a postgresql:// URI."""
        uri = self.get_connection(self.get_conn_id()).get_uri()
        return "postgresql://" + uri.split("://", 1)[1]

    def copy_expert(self, sql: str, filename: str) -> None:
        """Runs a COPY ... FROM STDIN or TO STDOUT with the file (which is created when
        missing, as Airflow's)."""
        import os

        if not os.path.isfile(filename):
            open(filename, "w").close()
        with open(filename, "r+") as f:
            conn = self.get_conn()
            try:
                with conn.cursor() as cur:
                    cur.copy_expert(sql, f)
                    f.truncate(f.tell())
                conn.commit()
            finally:
                conn.close()

    def bulk_load(self, table: str, tmp_file: str) -> None:
        """Loads a tab-separated file into a table."""
        self.copy_expert("COPY %s FROM STDIN" % table, tmp_file)

    def bulk_dump(self, table: str, tmp_file: str) -> None:
        """Writes a table to a tab-separated file."""
        self.copy_expert("COPY %s TO STDOUT" % table, tmp_file)

    def _replace_verb(self) -> str:
        return "INSERT INTO"

    def _replace_tail(self, fields: Optional[Sequence[str]], kwargs: Any) -> str:
        keys = kwargs.get("replace_index")
        if not fields or not keys:
            raise ValueError("PostgreSQL ON CONFLICT upsert syntax requires column names "
                             "and a unique index (target_fields and replace_index)")
        keys = [keys] if isinstance(keys, str) else list(keys)
        rest = [f for f in fields if f not in keys]
        return " ON CONFLICT (%s) DO %s" % (", ".join(keys), (
            "UPDATE SET " + ", ".join("%s = excluded.%s" % (f, f) for f in rest)
            if rest else "NOTHING"))
