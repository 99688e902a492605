"""Receivers for the notification tests: a real HTTP server (http.server in a thread) that
records every POST, and a real SMTP server (Debian's aiosmtpd, tests/system/smtp_sink.py) as a
process on a free port, stopped by its pid."""

import json
import os
import signal
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from conftest import free_port, wait_for

HERE = Path(__file__).resolve().parent


class Receiver:
    """POSTs to http://127.0.0.1:PORT/..., each kept as (path, headers, parsed body); answers
    `status` (settable).  With `tls` (an ssl.SSLContext for a server) it speaks https."""

    def __init__(self, status=200, tls=None):
        self.status = status
        self.posts = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n)
                try:
                    body = json.loads(raw.decode())
                except ValueError:
                    body = raw.decode(errors="replace")
                with outer.lock:
                    outer.posts.append((self.path, dict(self.headers), body))
                self.send_response(outer.status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *a):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.url = "http%s://127.0.0.1:%d" % ("s" if tls else "", self.port)
        if tls:
            self.httpd.socket = tls.wrap_socket(self.httpd.socket, server_side=True)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def bodies(self, event=None):
        with self.lock:
            return [b for _, _, b in self.posts
                    if event is None or (isinstance(b, dict) and b.get("event") == event)]

    def wait_count(self, n, event=None, timeout=60):
        return wait_for(lambda: self.bodies(event) if len(self.bodies(event)) >= n else None,
                        timeout, "%d POSTs%s to the receiver" % (n, " of " + event if event
                                                                   else ""))

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.close()


class SmtpSink:
    def __init__(self, tmp, user, password, only_login=False, tls_args=()):
        self.port = free_port()
        self.out = Path(tmp) / ("smtp-%d.jsonl" % self.port)
        self.log = Path(tmp) / ("smtp-%d.log" % self.port)
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen(
                ["/usr/bin/python3", str(HERE / "smtp_sink.py"), str(self.port), user, password,
                 str(self.out)] + (["LOGIN"] if only_login else []) + list(tls_args), stdout=subprocess.PIPE, stderr=log, start_new_session=True,
                text=True)
        line = self.proc.stdout.readline()
        if "ready" not in line:
            self.stop()
            pytest.fail("the SMTP server did not start: %s" % self.log.read_text())

    def messages(self):
        try:
            return [json.loads(l) for l in self.out.read_text().splitlines() if l.strip()]
        except FileNotFoundError:
            return []

    def wait_count(self, n, timeout=60):
        return wait_for(lambda: self.messages() if len(self.messages()) >= n else None,
                        timeout, "%d mails at the SMTP server" % n)

    def stop(self):
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)


@pytest.fixture
def smtp_sink(tmp_path):
    sinks = []

    def make(user, password, only_login=False, tls_args=()):
        s = SmtpSink(tmp_path, user, password, only_login, tls_args)
        sinks.append(s)
        return s
    yield make
    for s in sinks:
        s.stop()


def notifications(srv, path="/api/v1/notifications"):
    status, body = srv.api("GET", path)
    assert status == 200, "GET %s -> %s %r" % (path, status, body)
    return body["notifications"]


__all__ = ["Receiver", "receiver", "smtp_sink", "notifications", "sys"]
