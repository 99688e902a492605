"""TLS (issue 14's webhooks, sensors and mail over https and SMTPS): a throwaway CA and a server
certificate for 127.0.0.1 and localhost made with the openssl command; a real https receiver
(http.server wrapped with ssl), a real https server for a sensor, and aiosmtpd with STARTTLS
(required, AUTH only after it) and with TLS from the first byte.  weir verifies every peer: with
the CA given (a connection's or a sensor's ca_file) it delivers; without it the delivery fails
with a certificate error, recorded, and the task keeps its state."""

import http.server
import json
import ssl
import subprocess
import threading

import pytest

from conftest import wait_for
from dagtest import make_dags  # noqa: F401  (the fixture)
from notifytest import Receiver, notifications, smtp_sink  # noqa: F401  (fixtures)

SMTP_PASSWORD = "tls-mail-pw-Zq81"


def openssl(*args, cwd):
    subprocess.run(["openssl"] + list(args), cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def pki(tmp_path):
    """ca.pem (the CA), server.pem and server.key (for localhost and 127.0.0.1, signed by the CA),
    and other-ca.pem (a CA that signed nothing here)."""
    d = tmp_path / "pki"
    d.mkdir()
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    for name in ("ca", "other-ca"):
        openssl("req", "-x509", *ec, "-keyout", name + ".key", "-out", name + ".pem", "-days",
                "2", "-subj", "/CN=weir test %s" % name,
                "-addext", "basicConstraints=critical,CA:TRUE",
                "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=d)
    openssl("req", "-new", *ec, "-keyout", "server.key", "-out", "server.csr", "-subj",
            "/CN=localhost", cwd=d)
    (d / "ext.cnf").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n"
                               "basicConstraints=CA:FALSE\n"
                               "keyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "ext.cnf", cwd=d)
    return d


def server_context(pki):
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(str(pki / "server.pem"), str(pki / "server.key"))
    return ctx


def add_conn(srv, **fields):
    if isinstance(fields.get("extra"), dict):
        fields["extra"] = json.dumps(fields["extra"])
    st, body = srv.api("POST", "/api/v1/connections", fields)
    assert st == 200, body


def settled(d, dag_id, run_id, n):
    def done():
        notes = notifications(
            d.srv, "/api/v1/dags/%s/dagRuns/%s/notifications" % (dag_id, run_id))
        return notes if len(notes) == n and all(x["state"] != "pending" for x in notes) else None
    return {x["target"]: x for x in wait_for(done, 60, "%d deliveries done" % n)}


def test_webhook_over_https_verified_with_the_ca_and_refused_without(make_dags, pki):
    rcv = Receiver(tls=server_context(pki))
    try:
        d = make_dags()
        ca = str(pki / "ca.pem")
        # by IP address (the certificate's IP SAN) and by name (its DNS SAN, with SNI)
        add_conn(d.srv, connection_id="hooks", conn_type="http",
                 host="https://127.0.0.1", port=rcv.port,
                 extra={"ca_file": ca, "X-Team": "data"})
        add_conn(d.srv, connection_id="named", conn_type="https", host="localhost",
                 port=rcv.port, extra={"ca_file": ca})
        add_conn(d.srv, connection_id="untrusted", conn_type="http",
                 host="https://127.0.0.1:%d" % rcv.port)
        add_conn(d.srv, connection_id="wrongca", conn_type="http",
                 host="https://localhost:%d" % rcv.port,
                 extra={"ca_file": str(pki / "other-ca.pem")})
        d.write("h1.yaml", json.dumps({"dag_id": "h1", "tasks": [
            {"task_id": "ok", "command": "true", "on_success": [
                {"webhook": {"conn": "hooks", "url": "/alerts"}},
                {"webhook": {"conn": "named", "url": "/named"}},
                {"webhook": {"conn": "untrusted", "url": "/never"}, "retries": 0},
                {"webhook": {"conn": "wrongca", "url": "/never"}, "retries": 0},
            ]}]}))
        d.wait_dag("h1")
        d.trigger("h1", run_id="r1")
        assert d.wait_run("h1", "r1")["state"] == "success"

        notes = settled(d, "h1", "r1", 4)
        assert notes["conn hooks /***"]["state"] == "sent", notes
        assert notes["conn named /***"]["state"] == "sent", notes
        for bad in ("conn untrusted /***", "conn wrongca /***"):
            n = notes[bad]
            assert n["state"] == "failed", n
            assert "certificate" in n["last_error"], n
            assert "/never" not in n["last_error"]  # the URL's path stays masked
        paths = sorted(p for p, _, _ in rcv.posts)
        assert paths == ["/alerts", "/named"], paths
        headers = dict(rcv.posts[[p for p, _, _ in rcv.posts].index("/alerts")][1])
        assert headers.get("X-Team") == "data" and "ca_file" not in headers
        assert rcv.bodies("task_success")[0]["task_id"] == "ok"
        # the failed deliveries changed nothing
        ti = d.tis("h1", "r1")["ok"]
        assert ti["state"] == "success", ti
    finally:
        rcv.close()


def test_a_changed_ca_file_is_read_again(make_dags, pki):
    """weir keeps a CA file's certificates loaded while the file is unchanged; a file replaced
    (a CA rotated) is read again at the next delivery."""
    rcv = Receiver(tls=server_context(pki))
    try:
        d = make_dags()
        ca = pki / "rotating.pem"
        ca.write_bytes((pki / "ca.pem").read_bytes())
        add_conn(d.srv, connection_id="hooks", conn_type="https", host="127.0.0.1",
                 port=rcv.port, extra={"ca_file": str(ca)})
        d.write("h4.yaml", json.dumps({"dag_id": "h4", "tasks": [
            {"task_id": "ok", "command": "true",
             "on_success": [{"webhook": {"conn": "hooks", "url": "/a"}, "retries": 0}]}]}))
        d.wait_dag("h4")
        for run, pem, state in (("r1", "ca.pem", "sent"), ("r2", "ca.pem", "sent"),
                                ("r3", "other-ca.pem", "failed"), ("r4", "ca.pem", "sent")):
            tmp = pki / "next.pem"
            tmp.write_bytes((pki / pem).read_bytes())
            tmp.replace(ca)  # a new file, as a rotation writes it
            d.trigger("h4", run_id=run)
            assert d.wait_run("h4", run)["state"] == "success"
            n = settled(d, "h4", run, 1)["conn hooks /***"]
            assert n["state"] == state, (run, n)
        assert len(rcv.posts) == 3
    finally:
        rcv.close()


def test_https_url_in_a_dag_file_is_accepted_and_a_bad_ca_file_refused(make_dags, pki):
    d = make_dags()
    d.write("h2.yaml", json.dumps({"dag_id": "h2", "tasks": [
        {"task_id": "t", "command": "true",
         "on_failure": [{"webhook": {"url": "https://hooks.example.com/services/x"}}]}]}))
    d.write("h3.yaml", "dag_id: h3\ntasks:\n  - task_id: w\n    sensor:\n"
            "      http: {url: \"https://localhost:1/\", ca_file: \"relative/ca.pem\"}\n")
    d.wait_dag("h2")

    def errors():
        st, body = d.srv.api("GET", "/api/v1/importErrors")
        errs = {e["filename"].rsplit("/", 1)[-1]: e["stack_trace"]
                for e in body.get("import_errors", [])}
        return errs if "h3.yaml" in errs else None
    errs = wait_for(errors, 30, "the import error of h3")
    assert "h2.yaml" not in errs
    assert "ca_file" in errs["h3.yaml"] and "absolute path" in errs["h3.yaml"]


class Health(http.server.BaseHTTPRequestHandler):
    hits = []

    def do_GET(self):
        Health.hits.append(self.path)
        body = b"status: ready\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass


def test_https_sensor_with_the_ca_and_without(make_dags, pki):
    Health.hits = []
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Health)
    httpd.socket = server_context(pki).wrap_socket(httpd.socket, server_side=True)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    port = httpd.server_address[1]
    ca = str(pki / "ca.pem")
    try:
        d = make_dags()
        add_conn(d.srv, connection_id="health", conn_type="https", host="localhost", port=port,
                 extra={"ca_file": ca})
        d.write("hs.yaml", """\
dag_id: hs
tasks:
  - task_id: by_url
    sensor:
      http: {url: "https://localhost:%(port)d/health", match: "status: ready", ca_file: "%(ca)s"}
      poke_interval: 0.2
      mode: reschedule
  - task_id: by_conn
    sensor:
      http: {conn: health, path: /via-conn}
      poke_interval: 0.2
      mode: reschedule
  - task_id: untrusted
    sensor:
      http: {url: "https://127.0.0.1:%(port)d/untrusted"}
      poke_interval: 0.2
      timeout: 2s
      soft_fail: true
      mode: reschedule
""" % {"port": port, "ca": ca})
        d.wait_dag("hs")
        run = d.trigger("hs")["dag_run_id"]
        d.wait_run("hs", run, timeout=60)
        tis = d.tis("hs", run)
        assert tis["by_url"]["state"] == "success", tis["by_url"]
        assert tis["by_conn"]["state"] == "success", tis["by_conn"]
        # the handshake failed at every poke: no request reached the server
        assert tis["untrusted"]["state"] == "skipped", tis["untrusted"]
        assert "certificate" in str(tis["untrusted"]), tis["untrusted"]
        assert "/health" in Health.hits and "/via-conn" in Health.hits
        assert "/untrusted" not in Health.hits

        # Airflow's connection test over https: verified the same way
        def conn_test(body):
            st, ans = d.srv.api("POST", "/api/v1/connections/test", body)
            assert st == 200, ans
            return ans
        ans = conn_test({"connection_id": "t1", "conn_type": "https", "host": "localhost",
                         "port": port, "extra": json.dumps({"ca_file": ca})})
        assert ans["status"] is True and "https://localhost:%d" % port in ans["message"], ans
        ans = conn_test({"connection_id": "t2", "conn_type": "http",
                         "host": "https://localhost:%d" % port})
        assert ans["status"] is False and "certificate" in ans["message"], ans
    finally:
        httpd.shutdown()


def mail_dag(d, dag_id, conns):
    d.write(dag_id + ".yaml", json.dumps({"dag_id": dag_id, "tasks": [
        {"task_id": "boom", "command": "exit 1", "on_failure": [
            {"email": {"conn": c, "to": "ops@example.com",
                       "subject": "%s via %s" % (dag_id, c)}, "retries": 0}
            for c in conns]}]}))
    d.wait_dag(dag_id)
    d.trigger(dag_id, run_id="r1")
    assert d.wait_run(dag_id, "r1")["state"] == "failed"
    return settled(d, dag_id, "r1", len(conns))


def test_mail_with_starttls_then_auth_and_with_implicit_tls(make_dags, smtp_sink, pki):
    cert = "%s,%s" % (pki / "server.pem", pki / "server.key")
    starttls = smtp_sink("alerts", SMTP_PASSWORD, tls_args=["STARTTLS=" + cert])
    implicit = smtp_sink("alerts", SMTP_PASSWORD, tls_args=["SSL=" + cert])
    d = make_dags()
    ca = str(pki / "ca.pem")
    common = {"conn_type": "smtp", "login": "alerts", "password": SMTP_PASSWORD}
    add_conn(d.srv, connection_id="tlsmail", host="localhost", port=starttls.port,
             extra={"starttls": True, "ca_file": ca, "from": "weir@example.com"}, **common)
    add_conn(d.srv, connection_id="untrusted", host="127.0.0.1", port=starttls.port,
             extra={"starttls": True}, **common)
    add_conn(d.srv, connection_id="plain", host="127.0.0.1", port=starttls.port,
             extra={"starttls": False}, **common)
    add_conn(d.srv, connection_id="smtps", host="127.0.0.1", port=implicit.port,
             extra={"ssl": "true", "ca_file": ca}, **common)
    notes = mail_dag(d, "m1", ["tlsmail", "untrusted", "plain", "smtps"])

    assert notes["smtp conn tlsmail to ops@example.com"]["state"] == "sent", notes
    assert notes["smtp conn smtps to ops@example.com"]["state"] == "sent", notes
    bad = notes["smtp conn untrusted to ops@example.com"]
    assert bad["state"] == "failed" and "certificate" in bad["last_error"], bad
    # without STARTTLS this server offers no AUTH, and weir sends no password
    plain = notes["smtp conn plain to ops@example.com"]
    assert plain["state"] == "failed" and "TLS" in plain["last_error"], plain

    mails = starttls.wait_count(1)
    assert len(mails) == 1, mails
    m = mails[0]
    assert m["tls"] and m["authenticated"] and m["login"] == "alerts", m
    assert "Subject: m1 via tlsmail" in m["data"]
    m = implicit.wait_count(1)[0]
    assert m["tls"] and m["authenticated"] and "Subject: m1 via smtps" in m["data"], m
    for t in (d.srv.log_text(), json.dumps(notes)):
        assert SMTP_PASSWORD not in t
