"""Users kept in the store and person's tokens (docs/security.md, "Users" and "Tokens"): users
of each role made with `weir users`, logged in by HTTP Basic and the UI's login; a Viewer's
token reads and is refused a trigger, a User's token triggers and the event log names its
user and its name; a revoked token is refused at once, an expired one from its expiry;
`weir users delete` revokes the user's tokens; a token is never in clear in the store's
files, the server's log or an answer but the one that made it; bad flags are refused,
naming the flag.  A real server; the CLI and the Python package as users run them."""

import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import WEIR_BIN, wait_for
from dagtest import dag_config, password_hash

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))

import weir  # noqa: E402

ROLES = ["Viewer", "User", "Op", "Admin"]
PASSWORD = "pw of %s"
CONFIGURED = "cfgadmin"


def basic(user, password):
    return {"Authorization": "Basic " + base64.b64encode(
        ("%s:%s" % (user, password)).encode()).decode()}


def weir_cli(srv, *args, stdin=None, token=None):
    env = srv.cli_env({"WEIR_TOKEN": token} if token else None)
    return subprocess.run([WEIR_BIN] + list(args), capture_output=True, text=True, env=env,
                          input=stdin if stdin is not None else "", timeout=60)


def ok(r):
    assert r.returncode == 0, "exit %s\n%s\n%s" % (r.returncode, r.stdout, r.stderr)
    return r


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    from conftest import Server, free_port
    home = tmp_path_factory.mktemp("users") / "home"
    config = dag_config() + ('users:\n  - name: %s\n    password_hash: "%s"\n'
                             % (CONFIGURED, password_hash("cfg pw")))
    s = Server(home, free_port(), config)
    (home / "dags").mkdir(parents=True)
    (home / "dags" / "hello.yaml").write_text(
        "dag_id: hello\ntasks:\n  - task_id: a\n    command: 'true'\n")
    s.start()
    wait_for(lambda: s.api("GET", "/api/v1/dags/hello")[0] == 200, 30, "the DAG hello")
    # a user of each role; the Viewer's password from standard input
    for role in ROLES:
        name = role.lower() + "1"
        if role == "Viewer":
            ok(weir_cli(s, "users", "create", "--username", name, "--role", role,
                        "--email", "v@example.org", stdin=PASSWORD % name + "\n"))
        else:
            ok(weir_cli(s, "users", "create", "-u", name, "-r", role.lower(),
                        "--password", PASSWORD % name, "--firstname", "F", "--lastname", "L"))
    yield s
    s.cleanup()


def trigger(srv, headers, run_id):
    return srv.request("POST", "/api/v1/dags/hello/dagRuns", token=False, headers=headers,
                       raw_body=json.dumps({"dag_run_id": run_id}))[0]


def bearer(token):
    return {"Authorization": "Bearer " + token}


def make_token(srv, user, name, *extra):
    r = ok(weir_cli(srv, "tokens", "create", "--user", user, "--name", name, *extra))
    token = r.stdout.strip()
    assert token.startswith("weir_") and len(token) == 69, r.stdout
    assert "shown this once" in r.stderr
    return token


def records(srv, query):
    status, body = srv.api("GET", "/api/v1/eventLogs" + query)
    assert status == 200, body
    return body["event_logs"]


def test_users_log_in_with_their_roles(srv):
    r = ok(weir_cli(srv, "users", "list"))
    for role in ROLES:
        assert role.lower() + "1" in r.stdout
    listed = json.loads(ok(weir_cli(srv, "users", "list", "-o", "json")).stdout)
    by_name = {u["username"]: u for u in listed}
    assert by_name["viewer1"]["role"] == "Viewer" and by_name["viewer1"]["source"] == "store"
    assert by_name["viewer1"]["email"] == "v@example.org"
    assert by_name[CONFIGURED]["source"] == "configuration"
    assert by_name[CONFIGURED]["role"] == "Admin"
    assert "password_hash" not in json.dumps(listed) and "pbkdf2" not in json.dumps(listed)

    viewer = basic("viewer1", PASSWORD % "viewer1")
    assert srv.request("GET", "/api/v1/dags", token=False, headers=viewer)[0] == 200
    assert trigger(srv, viewer, "by_viewer") == 403
    assert trigger(srv, basic("user1", PASSWORD % "user1"), "by_user1") == 200
    assert srv.request("GET", "/api/v1/weir/users", token=False,
                       headers=basic("op1", PASSWORD % "op1"))[0] == 403
    assert srv.request("GET", "/api/v1/weir/users", token=False,
                       headers=basic("admin1", PASSWORD % "admin1"))[0] == 200
    assert srv.request("GET", "/api/v1/dags", token=False,
                       headers=basic("viewer1", "wrong"))[0] == 401
    # the UI's login takes a user of the store too
    status, headers, data = srv.request("POST", "/ui/login", token=False,
                                        raw_body=json.dumps({"username": "op1",
                                                             "password": PASSWORD % "op1"}))
    assert status == 200, data
    cookie = {"Cookie": headers["Set-Cookie"].split(";")[0]}
    assert srv.request("GET", "/api/v1/connections", token=False, headers=cookie)[0] == 200
    # the session has its user's role of now, not of its login
    ok(weir_cli(srv, "users", "set-role", "--username", "op1", "--role", "Viewer"))
    assert srv.request("GET", "/api/v1/connections", token=False, headers=cookie)[0] == 403
    ok(weir_cli(srv, "users", "set-role", "--username", "op1", "--role", "Op"))
    assert srv.request("GET", "/api/v1/connections", token=False, headers=cookie)[0] == 200

    # a new role holds from the next request; a new password replaces the old one
    ok(weir_cli(srv, "users", "set-role", "--username", "viewer1", "--role", "User"))
    assert trigger(srv, viewer, "by_viewer_now_user") == 200
    ok(weir_cli(srv, "users", "set-role", "--username", "viewer1", "--role", "Viewer"))
    assert trigger(srv, viewer, "by_viewer_again") == 403
    ok(weir_cli(srv, "users", "reset-password", "--username", "viewer1",
                stdin="a new one\n"))
    assert srv.request("GET", "/api/v1/dags", token=False, headers=viewer)[0] == 401
    assert srv.request("GET", "/api/v1/dags", token=False,
                       headers=basic("viewer1", "a new one"))[0] == 200
    ok(weir_cli(srv, "users", "reset-password", "--username", "viewer1",
                "--password", PASSWORD % "viewer1"))


def test_configured_name_is_refused(srv):
    r = weir_cli(srv, "users", "create", "--username", CONFIGURED, "--role", "Viewer",
                 "--password", "x")
    assert r.returncode == 1 and "configuration" in r.stderr, r.stderr
    r = weir_cli(srv, "users", "set-role", "--username", CONFIGURED, "--role", "Viewer")
    assert r.returncode == 1 and "configuration" in r.stderr, r.stderr
    r = weir_cli(srv, "users", "create", "--username", "user1", "--role", "Viewer",
                 "--password", "x")
    assert r.returncode == 1 and "exists" in r.stderr, r.stderr


def test_tokens_act_as_their_user(srv):
    viewer_token = make_token(srv, "viewer1", "viewer-script")
    user_token = make_token(srv, "user1", "ops-script", "--expires", "90d")

    # a Viewer's token reads and may not trigger; nor make tokens
    assert srv.request("GET", "/api/v1/dags", token=viewer_token)[0] == 200
    assert trigger(srv, bearer(viewer_token), "by_viewer_token") == 403
    assert srv.request("GET", "/api/v1/weir/tokens", token=viewer_token)[0] == 403

    # a User's token triggers, and the event log names the user and the token
    assert trigger(srv, bearer(user_token), "by_ops_script") == 200
    rec = [r for r in records(srv, "?owner=user1&event=api.post_dag_run")
           if r["run_id"] == "by_ops_script"]
    assert len(rec) == 1, rec
    assert json.loads(rec[0]["extra"])["token"] == "ops-script"

    # the CLI and the Python package with the token in WEIR_TOKEN act as its user
    r = ok(weir_cli(srv, "dags", "trigger", "hello", "--run-id", "by_cli_token",
                    token=user_token))
    client = weir.Client(server=srv.url, token=user_token)
    client.trigger("hello", run_id="by_python_token")
    for run_id in ("by_cli_token", "by_python_token"):
        rec = [r for r in records(srv, "?owner=user1") if r["run_id"] == run_id]
        assert rec and json.loads(rec[0]["extra"])["token"] == "ops-script", (run_id, rec)

    # the creation itself is recorded under the home's token, naming the token made
    made = [r for r in records(srv, "?event=weir.token_create")
            if json.loads(r["extra"]).get("token_name") == "ops-script"]
    assert made and made[0]["owner"] == "token"

    listed = json.loads(ok(weir_cli(srv, "tokens", "list", "-o", "json")).stdout)
    ops = [t for t in listed if t["name"] == "ops-script"][0]
    assert ops["user"] == "user1" and ops["state"] == "active" and ops["expires"]
    assert ops["last_used"]

    # revoked: refused by the very next request
    ok(weir_cli(srv, "tokens", "revoke", "ops-script"))
    assert srv.request("GET", "/api/v1/dags", token=user_token)[0] == 401
    r = weir_cli(srv, "dags", "list", token=user_token)
    assert r.returncode != 0
    listed = json.loads(ok(weir_cli(srv, "tokens", "list", "-o", "json")).stdout)
    assert [t["state"] for t in listed if t["name"] == "ops-script"] == ["revoked"]
    # the name stays taken
    r = weir_cli(srv, "tokens", "create", "--user", "user1", "--name", "ops-script")
    assert r.returncode == 1 and "exists" in r.stderr, r.stderr

    # never in clear: the store's files, the server's log, the lists
    for token in (viewer_token, user_token):
        for name in ("weir.db", "weir.db-wal"):
            path = srv.home / name
            if path.exists():
                assert token.encode() not in path.read_bytes(), name
        assert token not in srv.log_text()
        assert token not in json.dumps(listed)
        assert token not in json.dumps(records(srv, "?limit=1000"))


def test_token_expires(srv):
    token = make_token(srv, "op1", "short-lived", "--expires", "2s")
    assert srv.request("GET", "/api/v1/connections", token=token)[0] in (200, 401)
    # refused from its expiry on: waited for, not slept
    wait_for(lambda: srv.request("GET", "/api/v1/dags", token=token)[0] == 401, 30,
             "the token's expiry")
    listed = json.loads(ok(weir_cli(srv, "tokens", "list", "-o", "json")).stdout)
    assert [t["state"] for t in listed if t["name"] == "short-lived"] == ["expired"]


def test_delete_revokes_tokens(srv):
    ok(weir_cli(srv, "users", "create", "--username", "leaver", "--role", "User",
                "--password", "bye"))
    token = make_token(srv, "leaver", "leaver-cron")
    assert srv.request("GET", "/api/v1/dags", token=token)[0] == 200
    status, headers, _ = srv.request("POST", "/ui/login", token=False,
                                     raw_body=json.dumps({"username": "leaver",
                                                          "password": "bye"}))
    assert status == 200
    session = {"Cookie": headers["Set-Cookie"].split(";")[0]}
    assert srv.request("GET", "/api/v1/dags", token=False, headers=session)[0] == 200
    r = ok(weir_cli(srv, "users", "delete", "--username", "leaver"))
    assert "1 token(s) revoked" in r.stdout
    assert srv.request("GET", "/api/v1/dags", token=token)[0] == 401
    assert srv.request("GET", "/api/v1/dags", token=False, headers=basic("leaver", "bye"))[0] \
        == 401
    # a session of the deleted user ends with it
    assert srv.request("GET", "/api/v1/dags", token=False, headers=session)[0] == 401
    listed = json.loads(ok(weir_cli(srv, "tokens", "list", "-o", "json")).stdout)
    assert [t["state"] for t in listed if t["name"] == "leaver-cron"] == ["revoked"]
    deleted = records(srv, "?event=weir.user_delete")
    assert deleted and json.loads(deleted[-1]["extra"])["username"] == "leaver"
    r = weir_cli(srv, "users", "delete", "--username", "leaver")
    assert r.returncode == 1 and "no user" in r.stderr, r.stderr
    r = weir_cli(srv, "tokens", "create", "--user", "nobody", "--name", "x")
    assert r.returncode == 1 and "no user" in r.stderr, r.stderr


@pytest.mark.parametrize("args, words", [
    (["users", "create", "--username", "a"], "--role is required"),
    (["users", "create", "--role", "Viewer"], "--username is required"),
    (["users", "create", "--username", "a", "--role", "boss"], "expected Viewer, User, Op"),
    (["users", "create", "--username", "a b", "--role", "User"], "--username \"a b\""),
    (["users", "create", "--username", "a", "--role", "User"], "the password"),
    (["users", "create", "--username", "token", "--role", "User", "-p", "x"], "reserved"),
    (["users", "delete"], "--username is required"),
    (["users", "delete", "--username", "a", "--role", "User"], "--role does not apply"),
    (["users", "set-role", "--username", "a"], "--role is required"),
    (["users", "frobnicate"], "unknown subcommand"),
    (["users", "list", "-o", "yaml"], "expected table or json"),
    (["tokens", "create", "--user", "a"], "--name is required"),
    (["tokens", "create", "--name", "n"], "--user is required"),
    (["tokens", "create", "--user", "a", "--name", "n", "--expires", "soon"], "--expires"),
    (["tokens", "create", "--user", "a", "--name", "n", "--bogus", "1"], "unknown flag"),
    (["tokens", "revoke"], "NAME is required"),
])
def test_bad_flags(srv, args, words):
    r = weir_cli(srv, *args)
    assert r.returncode == 2, (args, r.returncode, r.stderr)
    assert words in r.stderr, (args, r.stderr)


def test_help_lists_the_groups(srv):
    top = ok(weir_cli(srv, "--help")).stdout
    assert "users" in top and "tokens" in top
    assert "reset-password" in ok(weir_cli(srv, "help", "users")).stdout
    assert "revoke" in ok(weir_cli(srv, "tokens", "--help")).stdout
