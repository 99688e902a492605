"""The server's own TLS (docs/security.md, "TLS"): `tls: {cert, key}` makes the server
speak HTTPS only (tests/system/test_tls.py is weir's outgoing TLS).  A throwaway CA and certificates are made with openssl in the test's folder; the CLI, the
Python package and the server's own launchers verify the server's certificate (the system's
CAs and WEIR_CA_FILE) and its name; plain HTTP to the port gets no answer and the server
serves on; bad TLS files stop the start with a message naming the file; listening beyond
loopback without TLS is warned about."""

import json
import os
import select
import socket
import ssl
import subprocess
import sys
import time

import pytest

from conftest import DEFAULT_CONFIG, REPO, WEIR_BIN, cli_describe, free_port

PYTHONPATH = str(REPO / "python")


def openssl(*args, cwd):
    r = subprocess.run(["openssl"] + list(args), cwd=cwd, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, "openssl %s:\n%s" % (" ".join(args), r.stderr)


class Pki:
    """ca.pem; server.pem/server.key for 127.0.0.1 and localhost; other.pem/other.key
    for other.example only; all signed by the CA."""

    def __init__(self, d):
        self.dir = d
        d.mkdir(exist_ok=True)
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj",
                "/CN=weir test CA", cwd=d)
        self.ca = d / "ca.pem"
        self.cert, self.key = self.issue("server", "IP:127.0.0.1,DNS:localhost")
        self.other_cert, self.other_key = self.issue("other", "DNS:other.example")

    def issue(self, name, san):
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", name + ".key", "-out", name + ".csr", "-subj", "/CN=" + name,
                cwd=self.dir)
        (self.dir / (name + ".ext")).write_text(
            "subjectAltName=%s\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
            % san)
        openssl("x509", "-req", "-in", name + ".csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                "-CAcreateserial", "-out", name + ".pem", "-days", "2", "-extfile",
                name + ".ext", cwd=self.dir)
        os.chmod(self.dir / (name + ".key"), 0o600)
        return self.dir / (name + ".pem"), self.dir / (name + ".key")


@pytest.fixture
def pki(tmp_path):
    return Pki(tmp_path / "pki")


def tls_config(cert, key, extra=""):
    return DEFAULT_CONFIG + extra + "tls:\n  cert: %s\n  key: %s\n" % (cert, key)


def start_tls(make_server, pki, cert=None, key=None, extra="", env=None, check_name=True):
    """A server with tls:, its fixture's requests verified with the throwaway CA (and the
    name, unless check_name is False)."""
    srv = make_server(config=tls_config(cert or pki.cert, key or pki.key, extra),
                      start=False)
    srv.url = "https://127.0.0.1:%d" % srv.port
    srv.ssl_context = ssl.create_default_context(cafile=str(pki.ca))
    srv.ssl_context.check_hostname = check_name
    srv.extra_env.update(env or {})
    srv.start()
    return srv


@pytest.mark.parametrize("agent", ["0", "1"])
def test_the_cli_verifies_the_server_and_a_job_runs_over_tls(make_server, pki, tmp_path,
                                                              agent):
    # launchers as processes (WEIR_AGENT=0) report over HTTPS; both they and the agent's
    # shims ship the task's output there (log_transport: http)
    srv = start_tls(make_server, pki, extra="log_transport: http\n", env={"WEIR_AGENT": agent})
    assert "listening on https://127.0.0.1:%d" % srv.port in srv.log_text()
    r = srv.cli("jobs", "list", timeout=60)
    assert r.returncode == 3, cli_describe(r)
    assert "certificate" in r.stderr and "WEIR_CA_FILE" in r.stderr, cli_describe(r)
    trusted = {"WEIR_CA_FILE": str(pki.ca)}
    r = srv.cli("jobs", "list", env=trusted, timeout=60)
    assert r.returncode == 0, cli_describe(r)
    # the server's certificate itself in the file (what its launchers get by default)
    r = srv.cli("jobs", "list", env={"WEIR_CA_FILE": str(pki.cert)}, timeout=60)
    assert r.returncode == 0, cli_describe(r)
    job = tmp_path / "job.yaml"
    job.write_text("name: over-tls\nroles:\n  worker:\n    instances: 1\n    memory: 128m\n"
                   "    vcores: 1\n    command: \"echo hello-over-tls\"\n")
    r = srv.cli("submit", job, env=trusted, timeout=120)
    assert r.returncode == 0, cli_describe(r) + "\n" + srv.log_text()
    jobs = srv.api("GET", "/api/v1/jobs")[1]["jobs"]
    assert [j["state"] for j in jobs] == ["succeeded"], jobs
    assert "hello-over-tls" in srv.log(jobs[0]["id"])
    r = srv.cli("logs", str(jobs[0]["id"]), env=trusted, timeout=60)
    assert r.returncode == 0 and "hello-over-tls" in r.stdout, cli_describe(r)


def test_plain_http_to_the_tls_port_gets_no_answer(make_server, pki):
    srv = start_tls(make_server, pki)
    with socket.create_connection(("127.0.0.1", srv.port), timeout=30) as s:
        s.sendall(b"GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        got = b""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            ready, _, _ = select.select([s], [], [], 1)
            if not ready:
                continue
            try:
                chunk = s.recv(4096)
            except ConnectionResetError:
                break
            if not chunk:
                break
            got += chunk
        else:
            pytest.fail("the server kept a plain HTTP connection open")
    assert b"HTTP/1." not in got and b"health" not in got, got
    # it serves on, over TLS
    assert srv.api("GET", "/api/v1/health", token=False)[0] == 200
    r = srv.cli("jobs", "list", env={"WEIR_CA_FILE": str(pki.ca),
                                     "WEIR_SERVER": "http://127.0.0.1:%d" % srv.port})
    assert r.returncode == 3 and "https://" in r.stderr, cli_describe(r)


def test_a_certificate_for_another_name_is_refused(make_server, pki):
    srv = start_tls(make_server, pki, cert=pki.other_cert, key=pki.other_key,
                    check_name=False)
    r = srv.cli("jobs", "list", env={"WEIR_CA_FILE": str(pki.ca)}, timeout=60)
    assert r.returncode == 3, cli_describe(r)
    assert "does not match" in r.stderr and "its certificate carries" in r.stderr, \
        cli_describe(r)
    out = python_client(srv, {"WEIR_CA_FILE": str(pki.ca)})
    assert out["error"] and "mismatch" in out["error"], out
    assert "its certificate carries" in out["error"], out


PY_CLIENT = """
import json, sys
import weir
try:
    c = weir.Client()
    print(json.dumps({"health": c.health().get("status"), "error": None}))
except Exception as e:
    print(json.dumps({"health": None, "error": "%s: %s" % (type(e).__name__, e)}))
"""


def python_client(srv, env):
    e = dict(os.environ)
    e.pop("WEIR_CA_FILE", None)
    e.update(PYTHONPATH=PYTHONPATH, WEIR_SERVER=srv.url, WEIR_TOKEN=srv.token)
    e.update(env)
    r = subprocess.run([sys.executable, "-c", PY_CLIENT], capture_output=True, text=True,
                       env=e, timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_the_python_package_verifies_the_server(make_server, pki):
    srv = start_tls(make_server, pki)
    out = python_client(srv, {})
    assert out["health"] is None and "certificate" in out["error"], out
    assert "WEIR_CA_FILE" in out["error"], out
    out = python_client(srv, {"WEIR_CA_FILE": str(pki.ca)})
    assert out == {"health": "ok", "error": None}, out
    # the server's own certificate in the file, as the server gives its tasks by default
    out = python_client(srv, {"WEIR_CA_FILE": str(pki.cert)})
    assert out == {"health": "ok", "error": None}, out


def test_the_session_cookie_is_secure_over_tls(make_server, pki):
    srv = start_tls(make_server, pki)
    status, headers, body = srv.request("POST", "/ui/login", {"token": srv.token},
                                        token=False)
    assert status == 200, body
    cookie = [v for k, v in headers.items() if k.lower() == "set-cookie"][0]
    assert "Secure" in [a.strip() for a in cookie.split(";")], cookie


def run_server(home, *args, wait_for_line="listening on", timeout=60):
    """`weir server` started by hand: (returncode or None while it runs, its output so far,
    the process)."""
    home.mkdir(parents=True, exist_ok=True)
    p = subprocess.Popen([WEIR_BIN, "server", "--home", str(home)] + [str(a) for a in args],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         stdin=subprocess.DEVNULL, start_new_session=True)
    out = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([p.stdout], [], [], 1)
        if ready:
            chunk = os.read(p.stdout.fileno(), 65536)
            if not chunk:
                break
            out += chunk
            if wait_for_line and wait_for_line.encode() in out:
                return None, out.decode(errors="replace"), p
    p.wait(30)
    return p.returncode, out.decode(errors="replace"), p


def stop(p):
    if p.poll() is None:
        p.terminate()
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(10)


def test_listening_beyond_loopback_without_tls_is_warned_about(tmp_path, pki):
    rc, out, p = run_server(tmp_path / "home", "--listen", "0.0.0.0:%d" % free_port())
    try:
        assert rc is None, out
        warn = [line for line in out.splitlines() if "without TLS" in line]
        assert len(warn) == 1 and "in clear" in warn[0] and "0.0.0.0" in warn[0], out
    finally:
        stop(p)
    # with TLS, and on loopback without it: no such line
    rc, out, p = run_server(tmp_path / "home2", "--listen", "0.0.0.0:%d" % free_port(),
                            "--tls-cert", pki.cert, "--tls-key", pki.key)
    try:
        assert rc is None and "without TLS" not in out and "https://0.0.0.0" in out, out
    finally:
        stop(p)
    rc, out, p = run_server(tmp_path / "home3", "--listen", "127.0.0.1:%d" % free_port())
    try:
        assert rc is None and "without TLS" not in out, out
    finally:
        stop(p)


def bad_start(tmp_path, *args):
    rc, out, p = run_server(tmp_path / "bad-home", "--listen", "127.0.0.1:%d" % free_port(),
                            *args, wait_for_line=None)
    stop(p)
    return rc, out


def test_bad_tls_files_stop_the_start_naming_the_file(tmp_path, pki):
    missing = tmp_path / "nope.pem"
    rc, out = bad_start(tmp_path, "--tls-cert", missing, "--tls-key", pki.key)
    assert rc == 2 and "tls.cert %s" % missing in out, out
    rc, out = bad_start(tmp_path, "--tls-cert", pki.cert, "--tls-key", missing)
    assert rc == 2 and "tls.key %s" % missing in out, out
    # a key that is not the certificate's
    rc, out = bad_start(tmp_path, "--tls-cert", pki.cert, "--tls-key", pki.other_key)
    assert rc == 2 and "is not the key of the certificate" in out, out
    assert str(pki.other_key) in out and str(pki.cert) in out, out
    # the files swapped: a key where the certificate goes
    rc, out = bad_start(tmp_path, "--tls-cert", pki.key, "--tls-key", pki.cert)
    assert rc == 2 and "tls.cert %s" % pki.key in out, out
    # a key with a passphrase
    enc = pki.dir / "enc.key"
    openssl("pkey", "-in", str(pki.key), "-aes256", "-passout", "pass:secret", "-out",
            str(enc), cwd=pki.dir)
    rc, out = bad_start(tmp_path, "--tls-cert", pki.cert, "--tls-key", enc)
    assert rc == 2 and "tls.key %s" % enc in out and "passphrase" in out, out
    # one flag without the other, and a tls: without its key
    rc, out = bad_start(tmp_path, "--tls-cert", pki.cert)
    assert rc == 2 and "--tls-key" in out, out
    cfg = tmp_path / "half.yaml"
    cfg.write_text("tls:\n  cert: %s\n" % pki.cert)
    rc, out = bad_start(tmp_path, "--config", cfg)
    assert rc == 2 and "tls:" in out and "key" in out, out


def test_a_key_others_may_read_is_warned_about(tmp_path, pki):
    os.chmod(pki.key, 0o644)
    rc, out, p = run_server(tmp_path / "home", "--listen", "127.0.0.1:%d" % free_port(),
                            "--tls-cert", pki.cert, "--tls-key", pki.key)
    try:
        assert rc is None, out
        assert "tls.key %s" % pki.key in out and "chmod 600" in out, out
    finally:
        stop(p)
