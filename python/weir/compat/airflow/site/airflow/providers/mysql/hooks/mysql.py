"""airflow.providers.mysql.hooks.mysql: MySqlHook (MySQL and MariaDB) over MySQLdb
(Debian's python3-mysqldb) or PyMySQL (python3-pymysql), whichever is installed, on the
task's connection (default `mysql_default`)."""

from __future__ import annotations

from typing import Any

from airflow.providers.common.sql.hooks.sql import DbApiHook


class MySqlHook(DbApiHook):
    """MySQL and MariaDB."""

    conn_name_attr = "mysql_conn_id"
    default_conn_name = "mysql_default"
    conn_type = "mysql"
    hook_name = "MySQL"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        database = kwargs.pop("database", None)
        super().__init__(*args, **kwargs)
        self.database = database or self.schema

    def set_autocommit(self, conn: Any, autocommit: bool) -> None:
        """Sets the connection's autocommit."""
        conn.autocommit(autocommit)

    def get_conn(self) -> Any:
        """A new connection (MySQLdb, else PyMySQL)."""
        c = self.get_connection(self.get_conn_id())
        args = {"host": c.host or "localhost", "user": c.login or "",
                "passwd": c.password or "", "port": c.port or 3306,
                "db": self.database or c.schema or ""}
        extra = c.extra_dejson
        if extra.get("charset"):
            args["charset"] = extra["charset"]
        try:
            import MySQLdb
            return MySQLdb.connect(**args)
        except ImportError:
            pass
        try:
            import pymysql
        except ImportError:
            raise ImportError("MySqlHook needs MySQLdb or PyMySQL (Debian: python3-mysqldb "
                              "or python3-pymysql)") from None
        args["password"] = args.pop("passwd")
        args["database"] = args.pop("db")
        return pymysql.connect(**args)

    def get_uri(self) -> str:
        """The connection as a mysql:// URI."""
        return self.get_connection(self.get_conn_id()).get_uri()
