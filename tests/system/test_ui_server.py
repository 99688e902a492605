"""The web UI's server side against a real `weir server`: the embedded shell and files (with
their security headers), login by user/password or token, the session cookie, cookie
authentication of the API with its CSRF check, the cross-origin check, logout, and
token/Basic clients that go on as before."""

import base64
import http.client
import json
import re
from pathlib import Path

import pytest

from conftest import spec
from dagtest import BASIC_PASSWORD, BASIC_USER, make_dags  # noqa: F401 (fixture)

UI_SRC = Path(__file__).resolve().parents[2] / "ui"
CSP = ("default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
       "connect-src 'self'; frame-ancestors 'none'")
TYPES = {".html": "text/html; charset=utf-8", ".css": "text/css; charset=utf-8",
         ".js": "text/javascript; charset=utf-8", ".mjs": "text/javascript; charset=utf-8",
         ".json": "application/json", ".svg": "image/svg+xml", ".png": "image/png"}


def raw(srv, method, path, body=None, headers=None):
    """(status, headers with lower-case names, all Set-Cookie values, bytes), the path sent
    as it is (no client-side clean-up of '..')."""
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
    try:
        data = body if body is None or isinstance(body, bytes) else json.dumps(body).encode()
        hdrs = dict(headers or {})
        if data is not None and "Content-Type" not in hdrs:
            hdrs["Content-Type"] = "application/json"
        conn.request(method, path, body=data, headers=hdrs)
        r = conn.getresponse()
        payload = r.read()
        cookies = r.msg.get_all("Set-Cookie") or []
        return r.status, {k.lower(): v for k, v in r.getheaders()}, cookies, payload
    finally:
        conn.close()


def jbody(payload):
    return json.loads(payload.decode() or "null")


class Browser:
    """What a browser keeps after logging in: the cookie and the CSRF token."""

    def __init__(self, srv, cookie, csrf, user):
        self.srv, self.cookie, self.csrf, self.user = srv, cookie, csrf, user

    def call(self, method, path, body=None, csrf=True, headers=None):
        h = {"Cookie": "weir_session=" + self.cookie, "Sec-Fetch-Mode": "cors"}
        if csrf is True:
            h["X-CSRF-Token"] = self.csrf
        elif csrf:
            h["X-CSRF-Token"] = csrf
        h.update(headers or {})
        status, hdrs, _, payload = raw(self.srv, method, path, body, h)
        try:
            return status, hdrs, jbody(payload)
        except ValueError:
            return status, hdrs, payload


def login(srv, **creds):
    status, hdrs, cookies, payload = raw(srv, "POST", "/ui/login", creds)
    assert status == 200, (status, payload)
    body = jbody(payload)
    (cookie,) = cookies
    m = re.match(r"weir_session=([0-9a-f]{64});", cookie)
    assert m, cookie
    return Browser(srv, m.group(1), body["csrf_token"], body["user"]), cookie, hdrs


@pytest.fixture
def dags(make_dags):
    d = make_dags(users=True, files=("chain.yaml",))
    d.wait_dag("chain")
    return d


# -- the shell and files -------------------------------------------------------------------

def test_shell_and_every_ui_file_served_with_security_headers(server):
    status, hdrs, _, shell = raw(server, "GET", "/")
    assert status == 200
    assert hdrs["content-type"] == "text/html; charset=utf-8"
    assert hdrs["content-security-policy"] == CSP
    assert hdrs["x-content-type-options"] == "nosniff"
    assert hdrs["cache-control"] == "no-cache"
    assert shell == (UI_SRC / "index.html").read_bytes()
    assert raw(server, "GET", "/index.html")[3] == shell
    files = [p for p in UI_SRC.rglob("*") if p.is_file() and not p.name.startswith(".")]
    assert files
    for f in files:
        rel = f.relative_to(UI_SRC).as_posix()
        status, hdrs, _, data = raw(server, "GET", "/ui/" + rel)
        assert status == 200, rel
        assert data == f.read_bytes(), rel
        assert hdrs["content-security-policy"] == CSP, rel
        assert hdrs["x-content-type-options"] == "nosniff", rel
        if f.suffix in TYPES:
            assert hdrs["content-type"] == TYPES[f.suffix], rel
        # the ETag lets the browser revalidate without the bytes
        status, hdrs2, _, data = raw(server, "GET", "/ui/" + rel,
                                     headers={"If-None-Match": hdrs["etag"]})
        assert status == 304 and data == b"", rel
    # HEAD: the headers alone
    status, hdrs, _, data = raw(server, "HEAD", "/")
    assert status == 200 and data == b"" and hdrs["content-security-policy"] == CSP


def test_unknown_file_404_and_dot_dot_refused(server):
    status, hdrs, _, _ = raw(server, "GET", "/ui/no/such.js")
    assert status == 404
    assert hdrs["content-security-policy"] == CSP
    for bad in ("/ui/../index.html", "/ui/js/../../token", "/ui/%2e%2e/index.html",
                "/ui/./index.html", "/ui//index.html", "/ui/"):
        status, _, _, data = raw(server, "GET", bad)
        assert status == 400, (bad, status)
        assert b"<html" not in data
    status, _, _, _ = raw(server, "POST", "/ui/index.html", b"x",
                          {"Content-Type": "text/plain"})
    assert status == 405


# -- login ---------------------------------------------------------------------------------

def test_login_with_user_and_password_sets_a_strict_http_only_cookie(dags):
    srv = dags.srv
    b, cookie, hdrs = login(srv, username=BASIC_USER, password=BASIC_PASSWORD)
    assert b.user == BASIC_USER
    assert re.fullmatch(r"[0-9a-f]{64}", b.csrf) and b.csrf != b.cookie
    attrs = [a.strip() for a in cookie.split(";")[1:]]
    assert "HttpOnly" in attrs and "SameSite=Strict" in attrs and "Path=/" in attrs
    assert not any(a.lower().startswith(("secure", "expires", "max-age")) for a in attrs)
    assert hdrs["cache-control"] == "no-store"
    status, _, body = b.call("GET", "/ui/session")
    assert status == 200 and body == {"user": BASIC_USER, "csrf_token": b.csrf}
    # a second login is a second session
    b2, _, _ = login(srv, username=BASIC_USER, password=BASIC_PASSWORD)
    assert b2.cookie != b.cookie and b2.csrf != b.csrf


def test_login_with_the_token(server):
    b, _, _ = login(server, token=server.token)
    assert b.user == "token"
    status, _, body = b.call("GET", "/api/v1/jobs")
    assert status == 200 and "jobs" in body


def test_wrong_credentials_401_and_no_cookie(dags):
    srv = dags.srv
    for creds in ({"username": BASIC_USER, "password": "wrong"},
                  {"username": "nobody", "password": BASIC_PASSWORD},
                  {"token": "not-the-token"}, {"token": ""}):
        status, hdrs, cookies, payload = raw(srv, "POST", "/ui/login", creds)
        assert status == 401, creds
        assert cookies == []
        assert hdrs["content-type"] == "application/problem+json"
        assert "wrong" in jbody(payload)["detail"]
    status, _, _, _ = raw(srv, "GET", "/ui/session")
    assert status == 401
    status, _, _, _ = raw(srv, "GET", "/ui/session", headers={"Cookie": "weir_session=" + "0" * 64})
    assert status == 401


def test_login_needs_json(server):
    status, _, cookies, payload = raw(server, "POST", "/ui/login",
                                      b"username=a&password=b",
                                      {"Content-Type": "application/x-www-form-urlencoded"})
    assert status == 415 and cookies == []
    assert "application/json" in jbody(payload)["detail"]
    for bad in (b"[]", b"{", b'{"username": "a"}', b'{"token": 1}',
                b'{"token": "t", "username": "a", "password": "b"}', b'{"tokn": "t"}'):
        status, _, cookies, _ = raw(server, "POST", "/ui/login", bad)
        assert status == 400 and cookies == [], bad
    status, _, _, _ = raw(server, "GET", "/ui/login")
    assert status == 405


# -- cookie authentication and CSRF --------------------------------------------------------

def test_cookie_authenticates_reads_and_csrf_guards_writes(server):
    b, _, _ = login(server, token=server.token)
    status, _, body = b.call("GET", "/api/v1/jobs", csrf=None)
    assert status == 200 and body["jobs"] == []
    job = spec({"worker": {"instances": 1, "command": "sleep 60"}})
    # POST without, then with a wrong, CSRF token: 403 and nothing stored
    for csrf in (None, "0" * 64, b.csrf[:-1], b.cookie):
        status, _, body = b.call("POST", "/api/v1/jobs", job, csrf=csrf)
        assert status == 403, (csrf, status, body)
        assert "CSRF" in body["error"]
    assert b.call("GET", "/api/v1/jobs")[2]["jobs"] == []
    status, _, created = b.call("POST", "/api/v1/jobs", job)
    assert status == 201, created
    jid = created["id"]
    status, _, body = b.call("DELETE", "/api/v1/jobs/%s" % jid, csrf=None)
    assert status == 403
    assert server.job(jid)["state"] not in ("killed",)
    status, _, body = b.call("DELETE", "/api/v1/jobs/%s" % jid)
    assert status == 202, body
    server.wait_job(jid)


def test_csrf_on_airflow_routes(dags):
    b, _, _ = login(dags.srv, username=BASIC_USER, password=BASIC_PASSWORD)
    status, _, body = b.call("GET", "/api/v1/dags/chain", csrf=None)
    assert status == 200 and body["dag_id"] == "chain"
    status, hdrs, body = b.call("PATCH", "/api/v1/dags/chain", {"is_paused": True}, csrf=None)
    assert status == 403 and hdrs["content-type"] == "application/problem+json"
    assert body["detail"] == "missing or wrong CSRF token"
    assert dags.get("/dags/chain")["is_paused"] is False
    status, _, body = b.call("PATCH", "/api/v1/dags/chain", {"is_paused": True}, csrf="x")
    assert status == 403
    status, _, body = b.call("PATCH", "/api/v1/dags/chain", {"is_paused": True})
    assert status == 200 and body["is_paused"] is True
    status, _, body = b.call("POST", "/api/v1/dags/chain/dagRuns", {"dag_run_id": "ui1"},
                             csrf=None)
    assert status == 403
    status, _, body = b.call("POST", "/api/v1/dags/chain/dagRuns", {"dag_run_id": "ui1"})
    assert status == 200, body


def test_cross_origin_writes_refused(server):
    b, _, _ = login(server, token=server.token)
    job = spec({"worker": {"instances": 1, "command": "true"}})
    evil = {"Origin": "http://evil.example"}
    status, _, body = b.call("POST", "/api/v1/jobs", job, headers=evil)
    assert status == 403 and "Origin" in body["error"]
    status, _, body = b.call("POST", "/api/v1/jobs", job,
                             headers={"Sec-Fetch-Site": "cross-site"})
    assert status == 403
    # a browser's cached Basic credentials or a token do not get around it either
    status, _ = server.api("POST", "/api/v1/jobs", job, headers=evil)
    assert status == 403
    status, _, _, _ = raw(server, "POST", "/ui/login", {"token": server.token}, evil)
    assert status == 403
    assert server.api("GET", "/api/v1/jobs")[1]["jobs"] == []
    # the page's own origin is fine
    status, _, body = b.call("POST", "/api/v1/jobs", job,
                             headers={"Origin": "http://127.0.0.1:%d" % server.port,
                                      "Sec-Fetch-Site": "same-origin"})
    assert status == 201, body
    server.wait_job(body["id"])


def test_logout_ends_the_session(server):
    b, _, _ = login(server, token=server.token)
    other, _, _ = login(server, token=server.token)
    status, _, _ = b.call("POST", "/ui/logout", csrf=None)
    assert status == 403
    assert b.call("GET", "/ui/session")[0] == 200
    status, hdrs, cookies, payload = raw(server, "POST", "/ui/logout", b"",
                                         {"Cookie": "weir_session=" + b.cookie,
                                          "X-CSRF-Token": b.csrf})
    assert status == 200, payload
    assert any(c.startswith("weir_session=;") and "Max-Age=0" in c for c in cookies)
    assert b.call("GET", "/ui/session")[0] == 401
    status, hdrs, _ = b.call("GET", "/api/v1/jobs")
    assert status == 401
    # the UI's fetch() must not get a Basic challenge (the browser's own dialog)
    assert not hdrs.get("www-authenticate", "").startswith("Basic")
    assert b.call("POST", "/ui/logout")[0] == 401
    # other sessions live on
    assert other.call("GET", "/api/v1/jobs")[0] == 200


def test_sessions_end_with_the_server(server):
    b, _, _ = login(server, token=server.token)
    assert b.call("GET", "/api/v1/jobs")[0] == 200
    assert server.terminate() == 0
    server.start()
    assert b.call("GET", "/ui/session")[0] == 401
    assert b.call("GET", "/api/v1/jobs")[0] == 401
    # nothing secret reaches the log
    log = server.log_text()
    assert "token logged in" in log and "a failed login" not in log
    assert b.cookie not in log and b.csrf not in log and server.token not in log
    status, _, _, _ = raw(server, "POST", "/ui/login", {"token": "nope-" + "x" * 20})
    assert status == 401
    assert "a failed login (token)" in server.log_text()
    assert "nope-" not in server.log_text()


# -- other clients -------------------------------------------------------------------------

def test_token_and_basic_clients_need_no_csrf(dags):
    srv = dags.srv
    job = spec({"worker": {"instances": 1, "command": "true"}})
    status, created = srv.api("POST", "/api/v1/jobs", job)
    assert status == 201
    srv.wait_job(created["id"])
    basic = "Basic " + base64.b64encode(
        ("%s:%s" % (BASIC_USER, BASIC_PASSWORD)).encode()).decode()
    status, hdrs, _, payload = raw(srv, "PATCH", "/api/v1/dags/chain", {"is_paused": True},
                                   {"Authorization": basic})
    assert status == 200, payload
    # a plain client without credentials still gets the Basic challenge
    status, hdrs, _, _ = raw(srv, "GET", "/api/v1/dags")
    assert status == 401 and hdrs["www-authenticate"].startswith("Basic")
    # a cookie that is not a session's does not authenticate
    status, _, _, _ = raw(srv, "GET", "/api/v1/jobs", headers={"Cookie": "weir_session=abc"})
    assert status == 401
