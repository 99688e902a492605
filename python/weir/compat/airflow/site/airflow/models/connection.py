"""airflow.models.connection: Connection, a connection's fields (host, login, password,
schema, port, extra) as Airflow gives them, read from Airflow's URI form or its JSON form:
what weir passes a task in WEIR_CONN_<ID> (docs/connections.md)."""

from __future__ import annotations

import json
from typing import Any, Dict, Optional
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit

# Schemes read as another connection type (Airflow's postgresql; weir's mariadb and file).
_SCHEME_TYPES = {"postgresql": "postgres", "mariadb": "mysql", "file": "fs"}


class Connection:
    """A connection: `conn_type`, `host`, `schema`, `login`, `password`, `port`, `extra` (a JSON
    text; `extra_dejson` is it decoded)."""

    def __init__(self, conn_id: Optional[str] = None, conn_type: Optional[str] = None,
                 description: Optional[str] = None, host: Optional[str] = None,
                 login: Optional[str] = None, password: Optional[str] = None,
                 schema: Optional[str] = None, port: Optional[int] = None,
                 extra: Any = None, uri: Optional[str] = None) -> None:
        self.conn_id = conn_id
        self.description = description
        self.conn_type = conn_type
        self.host = host
        self.login = login
        self.password = password
        self.schema = schema
        self.port = port
        self.extra: Optional[str] = (json.dumps(extra) if isinstance(extra, dict) else extra)
        if uri is not None:
            if any(v is not None for v in (conn_type, host, login, password, schema, port)):
                raise ValueError("Connection %s: give uri or the fields, not both" % conn_id)
            self._parse_from_uri(uri)

    def _parse_from_uri(self, uri: str) -> None:
        parts = urlsplit(uri)
        scheme = parts.scheme.replace("-", "_")
        self.conn_type = _SCHEME_TYPES.get(scheme, scheme)
        host = unquote(parts.hostname or "") if parts.netloc else ""
        # Airflow's form for a host that has a scheme of its own: http://https%3A%2F%2Fh
        if "://" in host or not host and "%3A%2F%2F" in parts.netloc:
            host = unquote(parts.netloc.rsplit("@", 1)[-1].rsplit(":", 1)[0])
        self.host = host or None
        path = parts.path[1:] if parts.path.startswith("/") else parts.path
        self.schema = unquote(path) or None
        self.login = unquote(parts.username) if parts.username else None
        self.password = unquote(parts.password) if parts.password else None
        self.port = parts.port
        query = dict(parse_qsl(parts.query, keep_blank_values=True))
        if "__extra__" in query:
            self.extra = query["__extra__"]
        elif query:
            self.extra = json.dumps(query)

    @classmethod
    def from_json(cls, value: str, conn_id: Optional[str] = None) -> "Connection":
        """Airflow's JSON form: {"conn_type", "host", "login", "password", "schema", "port",
        "extra"}."""
        d = json.loads(value)
        if not isinstance(d, dict):
            raise ValueError("connection %s: expected a JSON object" % conn_id)
        port: Any = d.get("port")
        return cls(conn_id=conn_id, conn_type=d.get("conn_type"),
                   description=d.get("description"), host=d.get("host"),
                   login=d.get("login"), password=d.get("password"), schema=d.get("schema"),
                   port=int(port) if port not in (None, "") else None, extra=d.get("extra"))

    @property
    def extra_dejson(self) -> Dict[str, Any]:
        """The extra decoded ({} when there is none or it is no JSON object)."""
        if not self.extra:
            return {}
        try:
            value = json.loads(self.extra)
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}

    def get_uri(self) -> str:
        """The connection in Airflow's URI form."""
        scheme = (self.conn_type or "").replace("_", "-")
        uri = scheme + "://"
        auth = ""
        if self.login is not None:
            auth = quote(self.login, safe="")
        if self.password is not None:
            auth += ":" + quote(self.password, safe="")
        if auth:
            uri += auth + "@"
        host = self.host or ""
        uri += quote(host, safe="") if "://" in host else host
        if self.port:
            uri += ":%d" % self.port
        if self.schema:
            uri += "/" + quote(self.schema, safe="")
        extra = self.extra_dejson
        if extra:
            flat = all(isinstance(v, str) for v in extra.values())
            uri += ("/" if not self.schema else "") + "?" + (
                urlencode(extra) if flat else urlencode({"__extra__": self.extra}))
        return uri

    @classmethod
    def get_connection_from_secrets(cls, conn_id: str) -> "Connection":
        """Airflow's lookup through its secrets backends: here the connection the task was
        given (BaseHook.get_connection: AirflowNotFoundException when it has none)."""
        from airflow.hooks.base import BaseHook

        return BaseHook.get_connection(conn_id)

    def get_hook(self, *, hook_params: Optional[Dict[str, Any]] = None) -> Any:
        """The hook of this connection's type (postgres, mysql, http, redis)."""
        from airflow.hooks.base import hook_for

        return hook_for(self, hook_params or {})

    def __repr__(self) -> str:
        return self.conn_id or ""
