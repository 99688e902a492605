"""The HTTP side of weir.Client: one kept-alive connection per thread, the token, the
API's errors as exceptions (ApiError, ResourceError for a 422, ServerUnreachable)."""

import http.client
import json
import os
import ssl
import threading
import urllib.parse
from typing import Any, Dict, List, Mapping, NoReturn, Optional, Tuple, Union, cast

from .. import _config
from ..errors import ApiError, ResourceError, ServerUnreachable

PathLike = Union[str, "os.PathLike[str]"]


def _q(segment: Any) -> str:
    """One path segment, percent-encoded (slashes too)."""
    return urllib.parse.quote(str(segment), safe="")


class HttpClient:
    """The connection to one server and `request`, every route's way in; weir.Client adds
    the routes (client/jobs.py, dags.py, datasets.py)."""

    def __init__(self, server: Optional[str] = None, token: Optional[str] = None,
                 home: Optional[PathLike] = None, timeout: float = 60.0) -> None:
        s = _config.settings(server, token, str(home) if home else None)
        self.settings = s
        self.server = s.server
        self.timeout = timeout
        u = urllib.parse.urlsplit(s.server)
        if u.scheme not in ("http", "https"):
            raise ValueError("server %r: expected an http:// or https:// URL" % s.server)
        self._host = u.hostname or "127.0.0.1"
        self._port = u.port or (443 if u.scheme == "https" else 80)
        self._tls = _config.tls_context() if u.scheme == "https" else None
        self._prefix = u.path.rstrip("/")
        self._local = threading.local()

    def __repr__(self) -> str:
        return "weir.Client(%r)" % self.server

    # ---- HTTP ---------------------------------------------------------------------------
    def _conn(self, timeout: float) -> http.client.HTTPConnection:
        c: Optional[http.client.HTTPConnection] = getattr(self._local, "conn", None)
        if c is None:
            if self._tls is not None:
                c = http.client.HTTPSConnection(self._host, self._port, timeout=timeout,
                                                context=self._tls)
            else:
                c = http.client.HTTPConnection(self._host, self._port, timeout=timeout)
            self._local.conn = c
        c.timeout = timeout
        if c.sock is not None:
            c.sock.settimeout(timeout)
        return c

    def _drop(self) -> None:
        c: Optional[http.client.HTTPConnection] = getattr(self._local, "conn", None)
        self._local.conn = None
        if c is not None:
            c.close()

    def request(self, method: str, path: str, body: Any = None,
                params: Optional[Mapping[str, Any]] = None,
                headers: Optional[Mapping[str, str]] = None, timeout: Optional[float] = None,
                raw: bool = False, stream: bool = False) -> Any:
        """One API call: `path` under /api/v1 (e.g. "/jobs/3").  Returns the parsed JSON,
        the bytes with raw=True, or the open response with stream=True.  Raises ApiError
        on an error status, ServerUnreachable when nothing answers."""
        url = self._prefix + "/api/v1" + path
        if params:
            pairs: List[Tuple[str, str]] = []
            for k, v in params.items():
                if v is None:
                    continue
                for one in (v if isinstance(v, (list, tuple)) else [v]):
                    if isinstance(one, bool):
                        one = "true" if one else "false"
                    pairs.append((k, str(one)))
            if pairs:
                url += "?" + urllib.parse.urlencode(pairs)
        hdrs: Dict[str, str] = {"Accept": "application/json"}
        if self.settings.token:
            hdrs["Authorization"] = "Bearer " + self.settings.token
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            hdrs["Content-Type"] = "application/json"
        hdrs.update(headers or {})
        t = self.timeout if timeout is None else timeout
        for tries in (0, 1):
            conn = self._conn(t)
            try:
                conn.request(method, url, body=data, headers=hdrs)
                resp = conn.getresponse()
                break
            except (http.client.RemoteDisconnected, BrokenPipeError,
                    ConnectionResetError) as e:
                self._drop()  # a kept-alive connection the server closed: once more
                if tries:
                    raise ServerUnreachable("weir server at %s: %s" % (self.server, e)) from e
            except ssl.SSLCertVerificationError as e:
                self._drop()
                hint = ("reach it by a name or address its certificate carries"
                        if "mismatch" in str(e.verify_message).lower() else
                        "set WEIR_CA_FILE to the file of the CA that signed it")
                raise ServerUnreachable("the weir server at %s: its certificate did not "
                                        "verify: %s; %s" % (self.server, e.verify_message,
                                                            hint)) from e
            except OSError as e:
                self._drop()
                raise ServerUnreachable("cannot reach the weir server at %s: %s; is `weir "
                                        "server` running?" % (self.server, e)) from e
            except BaseException:
                self._drop()  # interrupted (Ctrl-C) half way: the connection is unusable
                raise
        try:
            if resp.status >= 400:
                text = resp.read()
                self._check_reuse(resp)
                self._raise(resp.status, text, method, path)
            if stream:
                self._local.conn = None  # the caller owns this connection now
                return resp
            payload = resp.read()
        except ApiError:
            raise
        except OSError as e:
            self._drop()
            raise ServerUnreachable("weir server at %s: %s" % (self.server, e)) from e
        except BaseException:
            self._drop()
            raise
        self._check_reuse(resp)
        if raw:
            return payload
        return json.loads(payload.decode() or "null")

    def _check_reuse(self, resp: http.client.HTTPResponse) -> None:
        if resp.will_close:
            self._drop()

    def _raise(self, status: int, text: bytes, method: str, path: str) -> NoReturn:
        body: Any = None
        message = text.decode(errors="replace").strip()
        try:
            body = json.loads(message)
            if isinstance(body, dict):
                message = str(body.get("error") or body.get("detail") or body.get("title")
                              or message)
        except ValueError:
            pass
        if status == 401:
            message += " (the token came from %s)" % self.settings.token_source
        cls = ResourceError if status == 422 else ApiError
        raise cls(status, message, method, path, body)

    def _obj(self, method: str, path: str, body: Any = None,
             params: Optional[Mapping[str, Any]] = None,
             timeout: Optional[float] = None) -> Dict[str, Any]:
        """request() of a route that answers a JSON object."""
        return cast(Dict[str, Any], self.request(method, path, body, params, timeout=timeout))

    def _list(self, key: str, method: str, path: str, body: Any = None,
              params: Optional[Mapping[str, Any]] = None) -> List[Dict[str, Any]]:
        """The list under `key` of a route's answer (a collection's)."""
        return cast(List[Dict[str, Any]], self._obj(method, path, body, params)[key])

    def _text(self, path: str, params: Mapping[str, Any]) -> str:
        """A route that answers text (a log)."""
        raw = self.request("GET", path, params=params, headers={"Accept": "text/plain"},
                           raw=True)
        return cast(bytes, raw).decode(errors="replace")

    def health(self) -> Dict[str, Any]:
        """GET /health: the server's status and version (no token needed)."""
        return self._obj("GET", "/health")

