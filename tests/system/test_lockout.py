"""No unauthenticated lockout (docs/security.md, "Connections, slow clients and passwords"):
half-open connections are closed after the header timeout and crowd out only each other,
wrong passwords are checked off the event loop and throttled per address, and meanwhile
health answers, launchers reach their routes and a DAG run succeeds."""

import base64
import hashlib
import resource
import socket
import threading
import time
import urllib.error
import urllib.request

from conftest import DEFAULT_CONFIG
from dagtest import Dags, make_dags  # noqa: F401  (the fixture)

HALF_OPEN = 2000
FLOOD = 200
FLOOD_THREADS = 40


def slow_hash(password, iterations=600000, salt=b"weir-lockout-salt"):
    """The default cost of `weir hash-password`: about 70 ms a check."""
    key = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations, 32)
    return "pbkdf2-sha256$%d$%s$%s" % (iterations, salt.hex(), key.hex())


def raise_nofile(need):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(need, hard), hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def half_open(port, n):
    """n connections that send a request line and one header, and never finish."""
    socks = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        s.sendall(b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\n")
        socks.append(s)
    return socks


def basic(user, password):
    return "Basic " + base64.b64encode(("%s:%s" % (user, password)).encode()).decode()


def flood(url, statuses, n, user):
    """n requests with wrong passwords (for `user`, known or not); their statuses."""
    for i in range(n):
        req = urllib.request.Request(url + "/api/v1/dags", headers={
            "Authorization": basic(user, "wrong-%d" % i)})
        try:
            with urllib.request.urlopen(req, timeout=120) as r:
                statuses.append(r.status)
        except urllib.error.HTTPError as e:
            statuses.append(e.code)
        except OSError as e:
            statuses.append(repr(e))


def closed_by_server(sock, timeout=60):
    """Waits for the server to end the connection: True when recv saw its end."""
    sock.settimeout(timeout)
    try:
        while True:
            data = sock.recv(4096)
            if not data:
                return True
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


def test_half_open_connections_and_a_password_flood_lock_no_one_out(make_dags):
    have = raise_nofile(HALF_OPEN + 600)
    assert have >= HALF_OPEN + 600, "the test needs %d open files, has %d" % (
        HALF_OPEN + 600, have)
    d = make_dags(files=["diamond.yaml"], start=False)
    d.srv.config += 'users:\n  - name: ops\n    password_hash: "%s"\n' % slow_hash("right")
    # a launcher process per task: they register, wait for their gang and report over HTTP
    d.srv.extra_env["WEIR_AGENT"] = "0"
    d.srv.start()
    d.wait_dag("diamond")

    # a user who logged in before the flood: a success remembered passes the throttle
    status, _, body = d.srv.request("GET", "/api/v1/dags", token=False, headers={
        "Authorization": basic("ops", "right")})
    assert status == 200, body

    socks = half_open(d.srv.port, HALF_OPEN)
    statuses = []
    threads = [threading.Thread(target=flood, args=(
        d.srv.url, statuses, FLOOD // FLOOD_THREADS, "ops" if i % 2 else "nobody"))
        for i in range(FLOOD_THREADS)]
    try:
        for t in threads:
            t.start()
        t0 = time.monotonic()
        status, body = d.srv.api("GET", "/api/v1/health", token=False, timeout=60)
        health_s = time.monotonic() - t0
        assert status == 200, body
        print("health answered in %.3f s with %d half-open connections and %d password "
              "checks under way" % (health_s, HALF_OPEN, FLOOD))
        run = d.trigger("diamond")
        run = d.wait_run("diamond", run["dag_run_id"], timeout=120)
        assert run["state"] == "success", run
        for t in threads:
            t.join(180)
        assert len(statuses) == FLOOD, statuses
        # wrong passwords: 401 while this address has checks left, then 429 without a hash
        assert set(statuses) <= {401, 429}, statuses
        assert statuses.count(429) > 0, statuses
        print("password flood: %d answered 401, %d answered 429"
              % (statuses.count(401), statuses.count(429)))
        # the flood spent this address's share: a new password check waits for the
        # window's end, the user seen before still passes
        status, headers, _ = d.srv.request("GET", "/api/v1/dags", token=False, headers={
            "Authorization": basic("ops", "other")})
        assert status == 429 and int(headers["Retry-After"]) > 0, (status, headers)
        status, _, body = d.srv.request("GET", "/api/v1/dags", token=False, headers={
            "Authorization": basic("ops", "right")})
        assert status == 200, body
    finally:
        for s in socks:
            s.close()


def test_a_silent_client_is_closed_by_the_server(server):
    """The default header timeout: nothing sent, the server hangs up."""
    s = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    try:
        assert closed_by_server(s), "a silent connection was still open after 60 s"
    finally:
        s.close()


def trickle(sock, data):
    """Sends data a byte each 0.5 s until the server hangs up; the bytes sent."""
    sent = 0
    for b in data:
        try:
            sock.sendall(bytes([b]))
        except OSError:
            break  # closed while sending
        sent += 1
        sock.settimeout(0.5)
        try:
            if sock.recv(4096) == b"":
                break
        except socket.timeout:
            pass
        except ConnectionResetError:
            break
    return sent


def test_a_trickled_head_is_closed_at_its_deadline(make_server):
    """A byte each half second keeps an idle timeout away, not the header timeout."""
    srv = make_server(config=DEFAULT_CONFIG + "http:\n  header_timeout_seconds: 2\n")
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=30)
    head = b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 200
    try:
        sent = trickle(s, head)
        assert sent < len(head), "the server read a head trickled over %d s" % (len(head) / 2)
        assert closed_by_server(s)
    finally:
        s.close()


def test_a_trickled_body_is_closed_at_its_deadline(make_server):
    """A whole head, then a body a byte each half second: cut at the body's deadline,
    before any credentials are looked at."""
    srv = make_server(config=DEFAULT_CONFIG + "http:\n  body_timeout_seconds: 2\n")
    body = b'{"key": "slow", "value": "' + b"v" * 200 + b'"}'
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=30)
    try:
        s.sendall(b"POST /api/v1/variables HTTP/1.1\r\nHost: x\r\n"
                  b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body))
        sent = trickle(s, body)
        assert sent < len(body), "the server read a body trickled over %d s" % (len(body) / 2)
        assert closed_by_server(s)
    finally:
        s.close()
    # a body sent at once is read as ever
    status, answer = srv.api("POST", "/api/v1/variables", {"key": "quick", "value": "v"})
    assert status == 200, answer


def test_a_long_poll_outlives_the_timeouts(make_server):
    """A suspended request is the server's own wait, not the client's idleness."""
    srv = make_server(config=DEFAULT_CONFIG + "http:\n  header_timeout_seconds: 1\n"
                      "  idle_timeout_seconds: 1\n")
    from conftest import spec
    job = srv.submit(spec({"worker": {"instances": 1, "command": "sleep 30"}}))
    job_id = job["id"]
    srv.wait_running(job_id)
    status, body = srv.api("GET", "/api/v1/jobs/%s" % job_id)
    version = body["version"]
    t0 = time.monotonic()
    status, body = srv.api("GET", "/api/v1/jobs/%s?wait=4&since=%s" % (job_id, version),
                           timeout=60)
    waited = time.monotonic() - t0
    assert status == 200, body
    print("a long poll of 4 s with 1 s timeouts answered after %.1f s" % waited)
    srv.api("DELETE", "/api/v1/jobs/%s" % job_id)
    srv.wait_job(job_id)
