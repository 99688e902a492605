"""`weir hash-password` makes a hash the server accepts for HTTP Basic auth."""

import base64
import subprocess

from conftest import DEFAULT_CONFIG, WEIR_BIN


def _hash(password):
    r = subprocess.run([WEIR_BIN, "hash-password", "--iterations", "2000"], input=password + "\n",
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_cli_hash_logs_in_with_basic_auth(make_server):
    h = _hash("s3cret:with:colons")
    assert h.startswith("pbkdf2-sha256$2000$"), h
    config = DEFAULT_CONFIG + 'users:\n  - name: ops\n    password_hash: "%s"\n' % h
    srv = make_server(config=config)

    def basic(user, password):
        cred = base64.b64encode(("%s:%s" % (user, password)).encode()).decode()
        return srv.api("GET", "/api/v1/jobs", token=False,
                       headers={"Authorization": "Basic " + cred})[0]

    assert basic("ops", "s3cret:with:colons") == 200
    assert basic("ops", "wrong") == 401
    assert basic("nobody", "s3cret:with:colons") == 401


def test_password_comes_only_from_stdin():
    r = subprocess.run([WEIR_BIN, "hash-password", "hunter2"], input="", capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 2 and "standard input" in r.stderr, r
    r = subprocess.run([WEIR_BIN, "hash-password"], input="\n", capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 2 and "empty" in r.stderr, r
