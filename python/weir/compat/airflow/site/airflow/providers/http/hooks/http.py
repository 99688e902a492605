"""airflow.providers.http.hooks.http: HttpHook, HTTP requests to the task's connection's
base URL (default `http_default`) with the standard library (urllib): the connection's
login and password as basic auth, its extra as headers, an answer of 400 or more an
AirflowException, as Airflow's."""

from __future__ import annotations

import base64
import json as _json
import ssl
import sys
import urllib.error
import urllib.request
from typing import Any, Dict, Optional
from urllib.parse import urlencode

from airflow.exceptions import AirflowException
from airflow.hooks.base import BaseHook


class Response:
    """An answer: `status_code`, `reason`, `headers`, `content` (bytes), `text`, `json()`,
    `url`, `ok`, `raise_for_status()` (the part of requests' Response DAG code uses)."""

    def __init__(self, status: int, reason: str, headers: Dict[str, str], content: bytes,
                 url: str) -> None:
        self.status_code = status
        self.reason = reason
        self.headers = headers
        self.content = content
        self.url = url
        self.encoding = "utf-8"

    @property
    def text(self) -> str:
        """The body as text."""
        return self.content.decode(self.encoding, errors="replace")

    @property
    def ok(self) -> bool:
        """Whether the status is below 400."""
        return self.status_code < 400

    def json(self, **kwargs: Any) -> Any:
        """The body decoded as JSON."""
        return _json.loads(self.text, **kwargs)

    def raise_for_status(self) -> None:
        """Raises for a status of 400 or more."""
        if not self.ok:
            raise AirflowException("%d:%s" % (self.status_code, self.reason))

    def __repr__(self) -> str:
        return "<Response [%d]>" % self.status_code


class HttpHook(BaseHook):
    """HTTP requests on a connection: `run(endpoint, data, headers, extra_options)`."""

    conn_name_attr = "http_conn_id"
    default_conn_name = "http_default"
    conn_type = "http"
    hook_name = "HTTP"

    def __init__(self, method: str = "POST", http_conn_id: str = default_conn_name,
                 auth_type: Any = None, tcp_keep_alive: bool = True, **kwargs: Any) -> None:
        super().__init__()
        self.method = method.upper()
        self.http_conn_id = http_conn_id
        self.base_url = ""
        self.headers: Dict[str, str] = {}

    def get_conn(self, headers: Optional[Dict[str, Any]] = None) -> Any:
        """Reads the connection: the base URL and the headers (its extra, then `headers`)."""
        self.headers = {}
        if self.http_conn_id:
            c = self.get_connection(self.http_conn_id)
            host = c.host or ""
            if "://" in host:
                base = host
            else:
                scheme = c.schema or ("https" if c.conn_type == "https" else "http")
                base = "%s://%s" % (scheme, host)
            if c.port:
                base += ":%d" % c.port
            self.base_url = base
            if c.login:
                token = "%s:%s" % (c.login, c.password or "")
                self.headers["Authorization"] = "Basic " + base64.b64encode(
                    token.encode()).decode()
            for k, v in c.extra_dejson.items():
                if isinstance(v, (str, int, float)) and not isinstance(v, bool):
                    self.headers[str(k)] = str(v)
        self.headers.update({str(k): str(v) for k, v in (headers or {}).items()})
        return self

    def url_for(self, endpoint: Optional[str]) -> str:
        """The base URL joined with the endpoint, as Airflow's."""
        if not endpoint:
            return self.base_url
        if self.base_url and not self.base_url.endswith("/") and not endpoint.startswith("/"):
            return self.base_url + "/" + endpoint
        return (self.base_url or "") + endpoint

    def run(self, endpoint: Optional[str] = None, data: Any = None,
            headers: Optional[Dict[str, Any]] = None,
            extra_options: Optional[Dict[str, Any]] = None, **request_kwargs: Any) -> Response:
        """Sends the request; GET's data is the query string, others' the body (a dict
        form-encoded, a string as it is; `json=` sends JSON).  An answer of 400 or more
        raises AirflowException unless extra_options has check_response=False."""
        extra = extra_options or {}
        self.get_conn(headers)
        url = self.url_for(endpoint)
        body: Optional[bytes] = None
        hdrs = dict(self.headers)
        if "json" in request_kwargs:
            body = _json.dumps(request_kwargs["json"]).encode()
            hdrs.setdefault("Content-Type", "application/json")
        elif self.method in ("GET", "HEAD"):
            if data:
                query = data if isinstance(data, str) else urlencode(data, doseq=True)
                url += ("&" if "?" in url else "?") + query
        elif data is not None:
            if isinstance(data, (dict, list)):
                body = urlencode(data, doseq=True).encode()
                hdrs.setdefault("Content-Type", "application/x-www-form-urlencoded")
            else:
                body = data.encode() if isinstance(data, str) else bytes(data)
        print("Sending '%s' to url: %s" % (self.method, url), file=sys.stderr, flush=True)
        req = urllib.request.Request(url, data=body, headers=hdrs, method=self.method)
        ctx = None
        if url.startswith("https:") and extra.get("verify", True) is False:
            ctx = ssl._create_unverified_context()
        timeout = extra.get("timeout", 60)
        try:
            with urllib.request.urlopen(req, timeout=timeout, context=ctx) as r:
                resp = Response(r.status, r.reason, dict(r.headers.items()), r.read(), url)
        except urllib.error.HTTPError as e:
            resp = Response(e.code, str(e.reason), dict(e.headers.items()), e.read(), url)
        except urllib.error.URLError as e:
            raise AirflowException("%s %s: %s" % (self.method, url, e.reason)) from None
        if extra.get("check_response", True):
            self.check_response(resp)
        return resp

    def check_response(self, response: Response) -> None:
        """Raises AirflowException for an answer of 400 or more (its body in the log)."""
        if not response.ok:
            print("HTTP error: %s" % response.reason, file=sys.stderr)
            print(response.text, file=sys.stderr, flush=True)
            raise AirflowException("%d:%s" % (response.status_code, response.reason))

    def test_connection(self) -> Any:
        """Whether the base URL answers."""
        try:
            self.run()
            return True, "Connection successfully tested"
        except Exception as e:  # noqa: BLE001 (Airflow's contract: the message back)
            return False, str(e)
