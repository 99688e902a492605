"""Airflow DAG files on datasets run through a server (docs/airflow.md, "Datasets"): runs
started by `|` and `(a | b) & c` exactly when Airflow 2.9+ starts them, each consuming the
events queued for it; the events that triggered a run in its tasks' context
(`triggering_dataset_events`); an extra a task sets with `outlet_events[dataset].extra`
stored with the event and returned by the REST API; a bad dataset schedule an import error."""

import urllib.parse

from conftest import wait_for
from test_airflow_dags import airflow_dags, wait_import_error
from test_airflow_schedules import xcom

RAW, FIXES, REF = "s3://lake/raw", "s3://lake/fixes", "file:///ref/table.csv"


def runs(d, dag_id):
    return sorted((r for r in d.get("/dags/%s/dagRuns" % dag_id)["dag_runs"]),
                  key=lambda r: r["dag_run_id"])


def announce(d, uri):
    status, ev = d.srv.api("POST", "/api/v1/datasets/events", {"dataset_uri": uri})
    assert status == 200, ev
    return sorted(r["dag_id"] for r in ev["created_dagruns"])


def test_any_and_nested_expressions_run_as_airflow_with_their_events(make_server, tmp_path):
    d = airflow_dags(make_server, tmp_path, ["datasets/expressions.py"])
    for dag in ("produce_raw", "on_either", "on_nested"):
        d.wait_dag(dag)
    # the producer's update of raw: `raw | fixes` runs; `(raw | fixes) & ref` waits for ref
    status, run = d.srv.api("POST", "/api/v1/dags/produce_raw/dagRuns", {"dag_run_id": "p1"})
    assert status == 200, run
    assert d.wait_run("produce_raw", "p1")["state"] == "success", d.tis("produce_raw", "p1")
    first = wait_for(lambda: runs(d, "on_either"), 30, "a run of on_either")
    # both consumers were decided in the same dataset pass
    assert runs(d, "on_nested") == [], runs(d, "on_nested")
    assert len(first) == 1 and first[0]["dag_run_id"].startswith("dataset_triggered__"), first
    rid = first[0]["dag_run_id"]
    assert d.wait_run("on_either", rid)["state"] == "success", d.tis("on_either", rid)
    got = xcom(d, "on_either", rid, "seen")
    raw_event = {"extra": {"rows": 42, "inlets": [REF]}, "dag": "produce_raw",
                 "task": "write", "run": "p1", "uri": RAW, "aware": True}
    assert got == {"conf": {}, "events": {RAW: [raw_event]}}, got

    # the extra is the event's, in Airflow's dataset events routes
    evs = d.get("/datasets/events?dataset_id=%d" % d.get(
        "/datasets/%s" % urllib.parse.quote(RAW, safe=""))["id"])["dataset_events"]
    assert [(e["extra"], e["source_task_id"], e["source_run_id"]) for e in evs] == [
        ({"rows": 42, "inlets": [REF]}, "write", "p1")], evs

    # ref: the nested condition is now true (raw and ref queued); on_either is not on ref
    assert announce(d, REF) == ["on_nested"]
    nested = runs(d, "on_nested")
    assert len(nested) == 1, nested
    nrid = nested[0]["dag_run_id"]
    assert d.wait_run("on_nested", nrid)["state"] == "success", d.tis("on_nested", nrid)
    got = xcom(d, "on_nested", nrid, "seen")
    assert got["events"][RAW] == [raw_event], got
    assert [(e["extra"], e["dag"], e["uri"]) for e in got["events"][REF]] == [
        ({}, None, REF)], got

    # fixes: on_either again; on_nested consumed its queue and needs ref again
    assert announce(d, FIXES) == ["on_either"]
    assert announce(d, REF) == ["on_nested"]
    assert len(runs(d, "on_either")) == 2 and len(runs(d, "on_nested")) == 2
    # two updates before a pass: one run consuming both (Airflow's queue holds one row each)
    assert announce(d, RAW) == ["on_either"]


def test_a_dataset_alias_adds_events_of_the_datasets_a_task_learns(make_server, tmp_path):
    d = airflow_dags(make_server, tmp_path, ["datasets/alias.py"])
    d.wait_dag("read_partition")
    status, run = d.srv.api("POST", "/api/v1/dags/write_partition/dagRuns",
                            {"dag_run_id": "w1", "logical_date": "2024-01-01T00:00:00Z"})
    assert status == 200, run
    assert d.wait_run("write_partition", "w1")["state"] == "success", d.tis(
        "write_partition", "w1")
    uri = "s3://lake/part/2024-01-01"
    got = wait_for(lambda: runs(d, "read_partition"), 30, "a run of read_partition")
    rid = got[0]["dag_run_id"]
    assert d.wait_run("read_partition", rid)["state"] == "success", d.tis("read_partition", rid)
    assert xcom(d, "read_partition", rid, "read") == {uri: [[{"day": "2024-01-01"}, "write"]]}
    ds = d.get("/datasets/%s" % urllib.parse.quote(uri, safe=""))
    evs = d.get("/datasets/events?dataset_id=%d" % ds["id"])["dataset_events"]
    assert [(e["extra"], e["source_dag_id"]) for e in evs] == [
        ({"day": "2024-01-01"}, "write_partition")], evs


BAD = '''\
from airflow import DAG
from airflow.datasets import Dataset
from airflow.operators.empty import EmptyOperator

with DAG("bad_expr", schedule=Dataset("s3://a") | "s3://b"):
    EmptyOperator(task_id="t")
'''


ON_ALIAS = '''\
from airflow import DAG
from airflow.datasets import DatasetAlias
from airflow.operators.empty import EmptyOperator

with DAG("on_alias", schedule=[DatasetAlias("partitions")]):
    EmptyOperator(task_id="t")
'''


def test_a_bad_dataset_expression_is_an_import_error(make_server, tmp_path):
    d = airflow_dags(make_server, tmp_path, [])
    (d.dir / "bad_expr.py").write_text(BAD)
    (d.dir / "on_alias.py").write_text(ON_ALIAS)
    err = wait_import_error(d, "bad_expr.py")
    assert "expected datasets" in err["stack_trace"] and "s3://b" in err["stack_trace"], err
    err = wait_import_error(d, "on_alias.py")
    assert "on_alias.py:5: schedule [DatasetAlias('partitions')]: a DAG scheduled on a " \
        "DatasetAlias is not supported yet" in err["stack_trace"], err
