"""What a request may hold (docs/security.md, "Requests: ids, headers, auth schemes and
cookies"): no control character in a path or an id, one Content-Length, the Bearer scheme in
any case, and the session cookie's Secure attribute."""

import json
import socket

import pytest

from conftest import DEFAULT_CONFIG


def raw(port, data, timeout=30):
    """Sends `data` as it is; the status code of the answer and its bytes."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        s.sendall(data)
        got = b""
        while b"\r\n\r\n" not in got:
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
        # the rest of a short answer, if the server closes after it
        s.settimeout(2)
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                got += chunk
        except (socket.timeout, ConnectionResetError):
            pass
    finally:
        s.close()
    assert got.startswith(b"HTTP/1."), got
    return int(got.split(b" ", 2)[1]), got


@pytest.mark.parametrize("method,path", [
    ("DELETE", "/api/v1/variables/k4%00zzz"),
    ("GET", "/api/v1/variables/k4%00"),
    ("GET", "/api/v1/variables/k4%0a"),
    ("PATCH", "/api/v1/variables/k4%1b"),
    ("GET", "/api/v1/connections/c%00x"),
    ("GET", "/api/v1/dags/d%0Ax"),
    ("GET", "/api/v1/jobs/1%00"),
    ("GET", "/api/v1/health%00"),
    ("GET", "/api/v1/variables?key=k%1b"),
    ("GET", "/ui/%00"),
])
def test_a_control_character_in_a_path_is_refused(server, method, path):
    status, body = server.api("POST", "/api/v1/variables", {"key": "k4", "value": "four"})
    assert status == 200, body
    body = {"value": "x"} if method == "PATCH" else None
    status, answer = server.api(method, path, body)
    assert status == 400, (method, path, status, answer)
    assert "control character" in json.dumps(answer), answer
    # nothing was done to the key the cut path would have named
    status, var = server.api("GET", "/api/v1/variables/k4")
    assert status == 200 and var["value"] == "four", (status, var)


def test_ids_without_control_characters_still_work(server):
    status, body = server.api("POST", "/api/v1/variables", {"key": "k-5.x", "value": "v"})
    assert status == 200, body
    status, body = server.api("GET", "/api/v1/variables/k-5%2Ex")
    assert status == 200 and body["key"] == "k-5.x", body
    status, body = server.api("DELETE", "/api/v1/variables/k-5.x")
    assert status == 204, body


def test_two_different_content_lengths_are_refused(server):
    body = b'{"key": "cl", "value": "v"}'
    head = ("POST /api/v1/variables HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            "Authorization: Bearer %s\r\nContent-Type: application/json\r\n"
            "Content-Length: %d\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
            % (server.token, len(body), len(body) - 5)).encode()
    status, answer = raw(server.port, head + body)
    assert status == 400, answer
    assert b"Content-Length" in answer, answer
    status, _ = server.api("GET", "/api/v1/variables/cl")
    assert status == 404
    # the same length twice is one length
    head = ("POST /api/v1/variables HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            "Authorization: Bearer %s\r\nContent-Type: application/json\r\n"
            "Content-Length: %d\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
            % (server.token, len(body), len(body))).encode()
    status, answer = raw(server.port, head + body)
    assert status == 200, answer


@pytest.mark.parametrize("scheme", ["bearer", "BEARER", "Bearer", "bEaReR"])
def test_the_bearer_scheme_in_any_case(server, scheme):
    status, _, body = server.request("GET", "/api/v1/jobs", token=False,
                                     headers={"Authorization": "%s %s" % (scheme, server.token)})
    assert status == 200, body
    status, _, body = server.request("GET", "/api/v1/jobs", token=False,
                                     headers={"Authorization": "%s nope" % scheme})
    assert status == 401, body


def login_cookie(srv):
    status, headers, body = srv.request("POST", "/ui/login", {"token": srv.token}, token=False)
    assert status == 200, body
    cookie = [v for k, v in headers.items() if k.lower() == "set-cookie"]
    assert cookie, headers
    return cookie[0]


def test_the_session_cookie_is_not_secure_over_plain_http(server):
    cookie = login_cookie(server)
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie, cookie
    assert "Secure" not in cookie, cookie


def test_the_session_cookie_is_secure_when_configured(make_server):
    """Behind a proxy that speaks https, the server is told so (http.secure_cookie)."""
    srv = make_server(config=DEFAULT_CONFIG + "http:\n  secure_cookie: true\n")
    cookie = login_cookie(srv)
    attrs = [a.strip() for a in cookie.split(";")]
    assert "Secure" in attrs, cookie
