"""Notifications (issue 14): on_failure, on_retry, on_success and a run's on_failure, delivered
to a real HTTP receiver, a real SMTP server (aiosmtpd, with AUTH) and a command; failed
deliveries retried with backoff, recorded and shown, never changing a task; the connections'
passwords in no answer, log or store file."""

import base64
import json

from conftest import free_port, wait_for
from dagtest import make_dags  # noqa: F401  (the fixture)
from notifytest import notifications, receiver, smtp_sink  # noqa: F401  (fixtures)
from test_connections import store_bytes

SMTP_PASSWORD = "mail-pw-7Hq2xZ"
HTTP_PASSWORD = "hook-pw-Kd93Lm"


def hook(url, **extra):
    d = {"webhook": {"url": url}}
    d.update(extra)
    return [d]


def dag_text(dag_id, tasks, **top):
    doc = {"dag_id": dag_id, "tasks": tasks}
    doc.update(top)
    return json.dumps(doc)  # JSON is YAML


def run_notes(d, dag_id, run_id):
    return notifications(d.srv, "/api/v1/dags/%s/dagRuns/%s/notifications" % (dag_id, run_id))


def test_retry_then_failure_once_per_try_and_success(make_dags, receiver):
    d = make_dags()
    url = receiver.url + "/hooks/ops"
    d.write("n1.yaml", dag_text("n1", [
        {"task_id": "flaky", "command": "echo trying; exit 3", "retries": 1, "retry_delay": 1,
         "on_retry": hook(url), "on_failure": hook(url)},
        {"task_id": "fine", "command": "true", "on_success": hook(url),
         "on_failure": hook(url)},
    ], on_failure=hook(url), on_success=hook(url)))
    d.wait_dag("n1")
    run = d.trigger("n1", run_id="r1")
    assert d.wait_run("n1", run["dag_run_id"])["state"] == "failed"
    receiver.wait_count(4)
    wait_for(lambda: all(n["state"] == "sent" for n in run_notes(d, "n1", "r1"))
             and len(run_notes(d, "n1", "r1")) == 4, 30, "four notifications sent")

    retry = receiver.bodies("task_retry")
    failure = receiver.bodies("task_failure")
    success = receiver.bodies("task_success")
    run_fail = receiver.bodies("run_failure")
    assert len(retry) == 1 and len(failure) == 1 and len(success) == 1, receiver.posts
    assert len(run_fail) == 1 and not receiver.bodies("run_success")
    r, f, s = retry[0], failure[0], success[0]
    assert (r["task_id"], r["try_number"], r["state"]) == ("flaky", 1, "up_for_retry")
    assert (f["task_id"], f["try_number"], f["state"]) == ("flaky", 2, "failed")
    assert (s["task_id"], s["try_number"], s["state"]) == ("fine", 1, "success")
    for b in (r, f, s):
        assert b["dag_id"] == "n1" and b["run_id"] == "r1" and b["map_index"] == -1
        assert b["log_url"].startswith(d.srv.url + "/api/v1/dags/n1/dagRuns/r1/taskInstances/")
        assert "n1" in b["text"] and b["task_id"] in b["text"]
    assert "3" in f["reason"], f
    assert f["log_url"].endswith("/taskInstances/flaky/logs/2")
    assert run_fail[0]["state"] == "failed" and "task_id" not in run_fail[0]
    paths = {p for p, _, _ in receiver.posts}
    assert paths == {"/hooks/ops"}
    assert all(h.get("Content-Type") == "application/json" for _, h, _ in receiver.posts)

    notes = run_notes(d, "n1", "r1")
    assert sorted(n["event"] for n in notes) == ["run_failure", "task_failure", "task_retry",
                                                 "task_success"]
    for n in notes:
        assert n["attempts"] == 1 and n["last_error"] == "" and n["target_kind"] == "webhook"
        # the URL's path is not shown: it may be a secret (Slack's are)
        assert n["target"] == "http://127.0.0.1:%d/***" % receiver.port, n
    # weir's own collection, filtered
    everything = notifications(d.srv, "/api/v1/notifications?dag_id=n1")
    assert len(everything) == 4
    assert notifications(d.srv, "/api/v1/notifications?state=failed") == []


def test_failed_delivery_retried_recorded_and_task_unchanged(make_dags, receiver):
    receiver.status = 500
    d = make_dags()
    d.write("n2.yaml", dag_text("n2", [
        {"task_id": "ok", "command": "true",
         "on_success": hook(receiver.url + "/down", retries=2, retry_delay=1)},
    ]))
    d.wait_dag("n2")
    d.trigger("n2", run_id="r1")
    assert d.wait_run("n2", "r1")["state"] == "success"

    def failed():
        notes = notifications(d.srv, "/api/v1/notifications?state=failed")
        return notes if notes else None
    notes = wait_for(failed, 60, "the delivery failed for good")
    assert len(notes) == 1
    n = notes[0]
    assert n["attempts"] == 3 and n["max_attempts"] == 3, n
    assert "HTTP 500" in n["last_error"], n
    assert n["next_attempt_at"] is None
    assert len(receiver.bodies("task_success")) == 3  # one POST per attempt
    tis = d.tis("n2", "r1")
    assert tis["ok"]["state"] == "success"
    assert d.run("n2", "r1")["state"] == "success"
    st, _, page = d.srv.request("GET", "/metrics")
    assert st == 200
    assert 'weir_notifications_total{result="failed"} 1' in page.decode(), page.decode()[-3000:]
    st, bad = d.srv.api("GET", "/api/v1/notifications?state=lost")
    assert st == 400 and "pending, sent or failed" in bad["detail"], bad
    st, bad = d.srv.api("GET", "/api/v1/notifications?nope=1")
    assert st == 400, bad


def test_email_with_auth_webhook_by_connection_and_no_password_anywhere(make_dags, receiver,
                                                                        smtp_sink):
    sink = smtp_sink("alerts", SMTP_PASSWORD)
    d = make_dags()
    srv = d.srv
    st, body = srv.api("POST", "/api/v1/connections", {
        "connection_id": "mail", "conn_type": "smtp", "host": "127.0.0.1", "port": sink.port,
        "login": "alerts", "password": SMTP_PASSWORD,
        "extra": json.dumps({"from": "weir@example.com", "starttls": False})})
    assert st == 200, body
    st, body = srv.api("POST", "/api/v1/connections", {
        "connection_id": "tlsmail", "conn_type": "smtp", "host": "127.0.0.1",
        "port": sink.port, "login": "alerts", "password": SMTP_PASSWORD,
        "extra": json.dumps({"starttls": True})})
    assert st == 200, body
    st, body = srv.api("POST", "/api/v1/connections", {
        "connection_id": "hooks", "conn_type": "http", "host": "127.0.0.1",
        "port": receiver.port, "login": "weir", "password": HTTP_PASSWORD,
        "extra": json.dumps({"X-Team": "data"})})
    assert st == 200, body
    d.write("n3.yaml", dag_text("n3", [
        {"task_id": "boom", "command": "exit 1", "on_failure": [
            {"email": {"conn": "mail", "to": ["ops@example.com", "lead@example.com"],
                       "subject": "{{ dag_id }}.{{ task_id }} {{ state }} (try {{ try_number }})"}},
            {"webhook": {"conn": "hooks", "url": "/alerts", "headers": {"X-Source": "weir"}}},
            {"email": {"conn": "tlsmail", "to": "ops@example.com"}, "retries": 0},
        ]},
    ]))
    d.wait_dag("n3")
    d.trigger("n3", run_id="r1")
    assert d.wait_run("n3", "r1")["state"] == "failed"

    mails = sink.wait_count(1)
    m = mails[0]
    assert m["authenticated"] and m["login"] == "alerts"
    assert m["from"] == "weir@example.com"
    assert sorted(m["to"]) == ["lead@example.com", "ops@example.com"]
    assert "Subject: n3.boom failed (try 1)" in m["data"], m["data"]
    assert "dag_id: n3" in m["data"] and "task_id: boom" in m["data"]

    posts = receiver.wait_count(1, "task_failure")
    path, headers, body = receiver.posts[0]
    assert path == "/alerts"
    assert headers.get("X-Team") == "data" and headers.get("X-Source") == "weir"
    assert headers.get("Authorization") == "Basic " + base64.b64encode(
        ("weir:" + HTTP_PASSWORD).encode()).decode()
    assert posts[0]["task_id"] == "boom"

    def all_done():
        notes = run_notes(d, "n3", "r1")
        return notes if len(notes) == 3 and all(n["state"] != "pending" for n in notes) \
            else None
    notes = {n["target"]: n for n in wait_for(all_done, 60, "three deliveries done")}
    assert notes["smtp conn mail to ops@example.com, lead@example.com"]["state"] == "sent"
    assert notes["conn hooks /***"]["state"] == "sent"
    tls = notes["smtp conn tlsmail to ops@example.com"]
    assert tls["state"] == "failed" and "does not offer STARTTLS" in tls["last_error"], tls
    assert len(sink.messages()) == 1  # the STARTTLS one never reached the server

    # the passwords: in no API answer, log or store file
    texts = [json.dumps(srv.api("GET", p)[1]) for p in (
        "/api/v1/notifications", "/api/v1/dags/n3/dagRuns/r1/notifications",
        "/api/v1/connections", "/api/v1/connections/mail", "/api/v1/connections/hooks",
        "/api/v1/dags/n3/dagRuns/r1/taskInstances", "/api/v1/dags/n3/details",
        "/api/v1/slaMisses")]
    texts.append(srv.log_text())
    texts.append(d.log("n3", "r1", "boom"))
    for t in texts:
        assert SMTP_PASSWORD not in t and HTTP_PASSWORD not in t, t[:2000]
    raw = store_bytes(srv)
    for secret in (SMTP_PASSWORD, HTTP_PASSWORD,
                   base64.b64encode(("weir:" + HTTP_PASSWORD).encode()).decode()):
        assert secret.encode() not in raw


def test_auth_login_a_wrong_password_and_a_restart_with_deliveries_pending(make_dags,
                                                                           smtp_sink):
    login_only = smtp_sink("alerts", SMTP_PASSWORD, only_login=True)
    d = make_dags()
    srv = d.srv
    for cid, pw in (("mail", SMTP_PASSWORD), ("badmail", "not-the-password")):
        st, body = srv.api("POST", "/api/v1/connections", {
            "connection_id": cid, "conn_type": "smtp", "host": "127.0.0.1",
            "port": login_only.port, "login": "alerts", "password": pw})
        assert st == 200, body
    # nothing listens on this port: each attempt is refused, the next is far off
    dead = "http://127.0.0.1:%d/x" % free_port()
    d.write("n5.yaml", dag_text("n5", [
        {"task_id": "t", "command": "true", "on_success": [
            {"email": {"conn": "mail", "to": "ops@example.com"}},
            {"email": {"conn": "badmail", "to": "ops@example.com"}, "retries": 0},
            {"webhook": {"url": dead}, "retries": 5, "retry_delay": "1h"},
        ]}]))
    d.wait_dag("n5")
    d.trigger("n5", run_id="r1")
    assert d.wait_run("n5", "r1")["state"] == "success"
    m = login_only.wait_count(1)[0]
    assert m["authenticated"] and m["login"] == "alerts"  # by AUTH LOGIN: PLAIN is not offered

    def settled():
        notes = {n["target_kind"] + " " + n["target"].split(" ")[2]
                 if n["target_kind"] == "email" else "webhook": n
                 for n in run_notes(d, "n5", "r1")}
        ok = (len(notes) == 3 and notes["email mail"]["state"] == "sent"
              and notes["email badmail"]["state"] == "failed"
              and notes["webhook"]["attempts"] == 1)
        return notes if ok else None
    notes = wait_for(settled, 60, "the mails settled and the webhook's first attempt failed")
    assert "AUTH LOGIN" in notes["email badmail"]["last_error"], notes["email badmail"]
    assert "535" in notes["email badmail"]["last_error"]
    hook_note = notes["webhook"]
    assert hook_note["state"] == "pending" and hook_note["next_attempt_at"], hook_note
    assert "refused" in hook_note["last_error"] or "connect" in hook_note["last_error"]

    srv.terminate()
    srv.start()
    after = {n["id"]: n for n in run_notes(d, "n5", "r1")}[hook_note["id"]]
    assert after["state"] == "failed" and after["next_attempt_at"] is None
    assert after["last_error"] == "the server stopped before delivering it"
    assert SMTP_PASSWORD not in srv.log_text()


def test_command_runs_without_a_shell_with_the_event_in_its_environment(make_dags):
    d = make_dags()
    script = d.side / "note.sh"
    script.write_text('printf "%s %s %s %s\\n" "$WEIR_EVENT" "$WEIR_TASK_ID" '
                      '"$WEIR_TRY_NUMBER" "$WEIR_STATE" >> "$0.out"\n')
    d.write("n4.yaml", dag_text("n4", [
        {"task_id": "t", "command": "true",
         "on_success": [{"command": "/bin/sh %s" % script}]},
        {"task_id": "bad", "command": "false", "on_failure": [
            {"command": "/bin/false", "retries": 1, "retry_delay": 1}]},
    ]))
    d.wait_dag("n4")
    d.trigger("n4", run_id="r1")
    assert d.wait_run("n4", "r1")["state"] == "failed"
    out = d.side / "note.sh.out"
    wait_for(lambda: out.exists() and out.read_text().strip(), 30, "the command ran")
    assert out.read_text().splitlines() == ["task_success t 1 success"]

    def done():
        notes = run_notes(d, "n4", "r1")
        return notes if len(notes) == 2 and all(n["state"] != "pending" for n in notes) \
            else None
    notes = {n["task_id"]: n for n in wait_for(done, 60, "both commands done")}
    assert notes["t"]["state"] == "sent" and notes["t"]["target"] == "/bin/sh …"
    assert notes["bad"]["state"] == "failed" and notes["bad"]["attempts"] == 2
    assert "exited with status 1" in notes["bad"]["last_error"]
    assert d.tis("n4", "r1")["bad"]["state"] == "failed"


def test_bad_notification_keys_are_import_errors(make_dags):
    d = make_dags()
    d.write("bad1.yaml", dag_text("bad1", [
        {"task_id": "t", "command": "true",
         "on_failure": [{"webhook": {"url": "ftp://hooks.example.com/x"}}]}]))
    d.write("bad2.yaml", dag_text("bad2", [
        {"task_id": "t", "command": "true", "on_retry": [{"email": {"to": ["a@b.c"]}}]}]))
    d.write("bad3.yaml", dag_text("bad3", [
        {"task_id": "t", "command": "true", "sla": {"within": "5m", "from": "midnight"}}]))

    def errors():
        st, body = d.srv.api("GET", "/api/v1/importErrors")
        errs = {e["filename"].rsplit("/", 1)[-1]: e["stack_trace"]
                for e in body.get("import_errors", [])}
        return errs if len(errs) >= 3 else None
    errs = wait_for(errors, 30, "three import errors")
    assert "tasks[0].on_failure[0].webhook.url" in errs["bad1.yaml"]
    assert "expected http[s]://HOST" in errs["bad1.yaml"]
    assert "tasks[0].on_retry[0].email.conn" in errs["bad2.yaml"]
    assert "tasks[0].sla.from" in errs["bad3.yaml"]
    assert "logical_date or run_start" in errs["bad3.yaml"]
