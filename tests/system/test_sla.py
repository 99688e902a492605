"""SLAs (issue 14): a task not succeeded within its SLA (after the run's start or its logical
date) is recorded once, shown in weir's /slaMisses and the TI's `sla_miss`, and notified once
through on_sla_miss to a real HTTP receiver."""

import json

from conftest import wait_for
from dagtest import make_dags  # noqa: F401  (the fixture)
from notifytest import notifications, receiver  # noqa: F401  (fixtures)


def sla_misses(srv, path="/api/v1/slaMisses"):
    st, body = srv.api("GET", path)
    assert st == 200, (st, body)
    return body["sla_misses"]


def test_sla_miss_after_run_start_recorded_and_notified_once(make_dags, receiver):
    d = make_dags()
    hook = [{"webhook": {"url": receiver.url + "/sla"}}]
    d.write("s1.yaml", json.dumps({"dag_id": "s1", "tasks": [
        {"task_id": "slow", "command": "sleep 4", "sla": {"within": 1, "from": "run_start"},
         "on_sla_miss": hook},
        {"task_id": "quick", "command": "true", "sla": "1h", "on_sla_miss": hook},
    ]}))
    d.wait_dag("s1")
    d.trigger("s1", run_id="r1")
    misses = wait_for(lambda: sla_misses(d.srv) or None, 60, "an SLA miss")
    assert d.wait_run("s1", "r1")["state"] == "success"
    receiver.wait_count(1, "sla_miss")
    wait_for(lambda: all(n["state"] == "sent" for n in notifications(d.srv)), 30,
             "the SLA notification sent")

    misses = sla_misses(d.srv)
    assert len(misses) == 1, misses
    m = misses[0]
    assert (m["dag_id"], m["dag_run_id"], m["task_id"], m["map_index"]) == ("s1", "r1", "slow",
                                                                           -1)
    assert m["notified"] is True and m["state_when_missed"] in ("queued", "running")
    assert m["due_at"] <= m["recorded_at"]
    # Airflow's SLAMiss fields, beside weir's
    assert m["notification_sent"] is True and m["email_sent"] is False
    assert m["execution_date"] == d.run("s1", "r1")["logical_date"]
    assert m["timestamp"] == m["recorded_at"]
    assert m["description"] == "not succeeded within 1 s of the run's start"
    assert sla_misses(d.srv, "/api/v1/dags/s1/dagRuns/r1/slaMisses") == misses
    assert sla_misses(d.srv, "/api/v1/slaMisses?dag_id=other") == []

    posts = receiver.bodies("sla_miss")
    assert len(posts) == 1, posts
    assert posts[0]["task_id"] == "slow" and "within 1 s of the run's start" in posts[0]["reason"]
    notes = notifications(d.srv)
    assert [n["event"] for n in notes] == ["sla_miss"]

    tis = d.tis("s1", "r1")
    assert tis["slow"]["state"] == "success"  # a miss changes no state
    assert tis["slow"]["sla_miss"]["task_id"] == "slow"
    assert tis["quick"]["sla_miss"] is None
    ti = d.get("/dags/s1/dagRuns/r1/taskInstances/slow")
    assert ti["sla_miss"]["dag_run_id"] == "r1"


def test_sla_after_the_logical_date_default_args_and_the_dags_on_sla_miss(make_dags, receiver):
    d = make_dags()
    d.write("s2.yaml", json.dumps({
        "dag_id": "s2",
        "default_args": {"sla": "30m"},
        "on_sla_miss": [{"webhook": {"url": receiver.url + "/dag"}}],
        "tasks": [{"task_id": "a", "command": "sleep 2"},
                  {"task_id": "b", "command": "true", "depends_on": ["a"]}]}))
    d.wait_dag("s2")
    # a logical date long past: both tasks are late from the start
    d.trigger("s2", run_id="late", logical_date="2020-01-01T00:00:00+00:00")
    assert d.wait_run("s2", "late")["state"] == "success"
    wait_for(lambda: len(sla_misses(d.srv)) == 2 or None, 30, "two SLA misses")
    receiver.wait_count(2, "sla_miss")
    assert sorted(m["task_id"] for m in sla_misses(d.srv)) == ["a", "b"]
    assert sorted(p["task_id"] for p in receiver.bodies("sla_miss")) == ["a", "b"]
    assert all("30 min" not in p["reason"] and "logical date" in p["reason"]
               for p in receiver.bodies("sla_miss"))
