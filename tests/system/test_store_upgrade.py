"""A home written by the previous weir (store schema 3, fixtures/store_v3.sql and the logs it
wrote, made by fixtures/gen_store_v3.py) upgrades in place: this server finds every job, task,
run, try and log again, and the kill that was waiting for its last task when that server died
ends the job as killed."""

import re
import shutil
import sqlite3
import subprocess
from pathlib import Path

from conftest import wait_for
from dagtest import Dags, dag_config

FIXTURES = Path(__file__).resolve().parent / "fixtures"
# the version this build writes, as src/store/schema.h says (migrations are appended)
SCHEMA_VERSION = re.search(r"#define STORE_SCHEMA_VERSION (\d+)", (
    Path(__file__).resolve().parents[2] / "src" / "store" / "schema.h").read_text()).group(1)


def load_home(srv, side):
    """The dump into HOME/weir.db with @HOME@/@SIDE@ rewritten; the logs under HOME/jobs."""
    srv.home.mkdir(parents=True, exist_ok=True)
    dump = (FIXTURES / "store_v3.sql").read_text()
    dump = dump.replace("@HOME@", str(srv.home)).replace("@SIDE@", str(side))
    db = srv.home / "weir.db"
    with sqlite3.connect(db) as c:
        c.executescript(dump)
        # the waiting kill's launcher is gone: give it a pid that surely is
        p = subprocess.Popen(["true"])
        p.wait()
        c.execute("UPDATE tasks SET launcher_pid = ?, pid = ? WHERE state = 'running'",
                  (p.pid, p.pid))
    shutil.copytree(FIXTURES / "logs_v3" / "jobs", srv.home / "jobs")


def schema_version():
    """The version this build writes, as src/store/schema.h says."""
    text = (Path(__file__).resolve().parents[2] / "src/store/schema.h").read_text()
    return re.search(r"#define STORE_SCHEMA_VERSION (\d+)", text).group(1)


def test_previous_store_is_found_again(make_server, tmp_path):
    srv = make_server(config=dag_config(), start=False)
    d = Dags(srv, tmp_path)
    d.install("flaky.yaml")
    d.install("timeout.yaml")
    load_home(srv, d.side)
    srv.start()
    with sqlite3.connect(srv.home / "weir.db") as c:
        assert c.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] \
            == schema_version()
        # the TI tables rebuilt for up_for_reschedule, every row kept; sensor_pokes
        assert c.execute("SELECT count(*) FROM task_instances").fetchone()[0] == 3
        assert c.execute("SELECT count(*) FROM task_instance_tries").fetchone()[0] == 4
        assert c.execute("SELECT count(*) FROM sensor_pokes").fetchone()[0] == 0
        # the state CHECKs as comparisons, as strict as before
        assert c.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table'"
                         " AND sql LIKE '%CHECK (state IN%'").fetchone()[0] == 0
        try:
            c.execute("UPDATE jobs SET state = 'sleeping' WHERE id = 1")
            raise AssertionError("a job state outside the CHECK was stored")
        except sqlite3.IntegrityError:
            pass
        # version 5: the connections and variables tables, empty
        assert c.execute("SELECT count(*) FROM connections").fetchone()[0] == 0
        assert c.execute("SELECT count(*) FROM variables").fetchone()[0] == 0
        # the pools table, seeded by the configuration (default_pool at least)
        assert c.execute("SELECT count(*) FROM pools WHERE name = 'default_pool'"
                         ).fetchone()[0] == 1
        # the event log, empty
        assert c.execute("SELECT count(*) FROM event_log").fetchone()[0] == 0
        # the notifications and SLA misses, empty
        for table in ("notifications", "sla_misses"):
            assert c.execute("SELECT count(*) FROM %s" % table).fetchone()[0] == 0
        # the datasets' migration: its tables, empty
        for table in ("datasets", "dataset_events", "dataset_queue", "dag_run_dataset_events",
                      "dag_run_triggers"):
            assert c.execute("SELECT count(*) FROM %s" % table).fetchone()[0] == 0, table
        # version 13: jobs' sealed specs, empty; the meta row saying for which sensitive
        # names the secret variables a version before wrote in clear were masked
        assert c.execute("SELECT count(*) FROM job_sealed_specs").fetchone()[0] == 0
        assert c.execute("SELECT value FROM meta WHERE key = 'secrets_masked_names'"
                         ).fetchone()[0] == ""
        assert c.execute("SELECT count(*) FROM meta WHERE key NOT IN ('schema_version',"
                         " 'secrets_masked_names')").fetchone()[0] == 0

    status, jobs = srv.api("GET", "/api/v1/jobs")
    assert status == 200, jobs
    jobs = jobs["jobs"] if isinstance(jobs, dict) else jobs
    by_name = {}
    for j in jobs:
        by_name.setdefault(j["name"], []).append(j)
    assert len(jobs) == 10, [j["name"] for j in jobs]
    assert by_name["ok"][0]["state"] == "succeeded"
    assert by_name["bad"][0]["state"] == "failed"
    assert by_name["bad"][0]["exit_code"] == 1
    assert by_name["flaky"][0]["attempt"] == 2
    assert by_name["slow"][0]["reason"] == "execution timeout after 1s"
    assert by_name["killed"][0]["state"] == "killed"

    # the kill that waited in the old meta table ends the job now that its task is gone
    stubborn = by_name["stubborn"][0]["id"]
    job = srv.wait_job(stubborn, timeout=30)
    assert job["state"] == "killed", job

    # every task of every attempt, and their logs
    tasks = srv.tasks(by_name["flaky"][0]["id"], attempt="all")
    assert [(t["attempt"], t["state"], t["exit_code"]) for t in tasks] == \
        [(1, "failed", 137), (2, "succeeded", 0)], tasks
    assert "hello from ok" in srv.log(by_name["ok"][0]["id"])
    assert "about to fail" in srv.log(by_name["bad"][0]["id"])
    for attempt in (1, 2):
        assert "attempt=%d" % attempt in srv.log(by_name["flaky"][0]["id"], attempt=attempt)
    assert "stubborn" in srv.log(stubborn)

    # the DAG runs, their task instances, every try and its log
    d.wait_dag("flaky")
    assert d.run("flaky", "flaky_run")["state"] == "success"
    assert d.run("timeout", "timeout_run")["state"] == "failed"
    tis = d.tis("flaky", "flaky_run")
    assert tis["flaky"]["state"] == "success" and tis["flaky"]["try_number"] == 3, tis
    for n in (1, 2, 3):
        assert "try %d of flaky" % n in d.log("flaky", "flaky_run", "flaky", n)
    tis = d.tis("timeout", "timeout_run")
    assert tis["slow"]["state"] == "failed" and tis["after"]["state"] == "upstream_failed", tis

    # and the upgraded store takes new work
    job = srv.submit({"name": "after-upgrade", "framework": "none",
                      "roles": {"worker": {"instances": 1, "memory": "256m", "vcores": 1,
                                           "command": "echo fine"}}})
    job = srv.wait_job(job["id"], timeout=60)
    assert job["state"] == "succeeded", job
    wait_for(lambda: "fine" in srv.log(job["id"]), 10, "the new job's log")
