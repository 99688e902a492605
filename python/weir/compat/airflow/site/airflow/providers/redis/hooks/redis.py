"""airflow.providers.redis.hooks.redis: RedisHook, a redis-py client (Debian's
python3-redis) on the task's connection (default `redis_default`)."""

from __future__ import annotations

from typing import Any, Dict, Optional

from airflow.hooks.base import BaseHook


class RedisHook(BaseHook):
    """Redis: `get_conn()` is a `redis.Redis`.  The database is the extra's `db`, else the
    connection's schema (weir's URI form: redis://:pw@host:6379/0), else 0."""

    conn_name_attr = "redis_conn_id"
    default_conn_name = "redis_default"
    conn_type = "redis"
    hook_name = "Redis"

    def __init__(self, redis_conn_id: str = default_conn_name, **kwargs: Any) -> None:
        super().__init__()
        self.redis_conn_id = redis_conn_id
        self.redis: Any = None
        self.host: Optional[str] = None
        self.port: Optional[int] = None
        self.password: Optional[str] = None
        self.db: Optional[int] = None

    def get_conn(self) -> Any:
        """The client (made once)."""
        if self.redis is not None:
            return self.redis
        try:
            import redis
        except ImportError:
            raise ImportError("RedisHook needs redis-py (Debian: python3-redis)") from None
        c = self.get_connection(self.redis_conn_id)
        extra = c.extra_dejson
        db = extra.get("db", c.schema if c.schema and c.schema.isdigit() else 0)
        self.host, self.port, self.password, self.db = (c.host or "localhost",
                                                        c.port or 6379, c.password, int(db))
        args: Dict[str, Any] = {"host": self.host, "port": self.port, "password": self.password,
                "db": self.db, "username": c.login or None}
        if extra.get("ssl"):
            args["ssl"] = True
            for k in ("ssl_cert_reqs", "ssl_ca_certs", "ssl_keyfile", "ssl_certfile"):
                if k in extra:
                    args[k] = extra[k]
        self.redis = redis.Redis(**args)
        return self.redis
