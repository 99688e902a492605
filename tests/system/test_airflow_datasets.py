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


BAD_ALIAS = '''\
from airflow import DAG
from airflow.datasets import DatasetAlias
from airflow.operators.empty import EmptyOperator

with DAG("bad_alias", schedule=[DatasetAlias(3)]):
    EmptyOperator(task_id="t")
'''


BAD_INLET = '''\
from airflow import DAG
from airflow.operators.empty import EmptyOperator

with DAG("bad_inlet", schedule=None):
    EmptyOperator(task_id="t", inlets=["s3://lake/raw"])
'''


def test_a_bad_dataset_expression_is_an_import_error(make_server, tmp_path):
    d = airflow_dags(make_server, tmp_path, [])
    (d.dir / "bad_expr.py").write_text(BAD)
    (d.dir / "bad_alias.py").write_text(BAD_ALIAS)
    (d.dir / "bad_inlet.py").write_text(BAD_INLET)
    err = wait_import_error(d, "bad_expr.py")
    assert "expected datasets" in err["stack_trace"] and "s3://b" in err["stack_trace"], err
    err = wait_import_error(d, "bad_alias.py")
    assert "DatasetAlias: expected a name (a non-empty string of at most 3000 characters), " \
        "got 3" in err["stack_trace"], err
    err = wait_import_error(d, "bad_inlet.py")
    assert "bad_inlet.py:5: task t: inlets: 's3://lake/raw' is not a Dataset or a " \
        "DatasetAlias" in err["stack_trace"], err


DAY = "s3://exports/2024-01-01"
LATE = "s3://exports/late-2024-01-01"
SUMMARY = "s3://exports/summary"


def run_dag(d, dag_id, run_id):
    status, run = d.srv.api("POST", "/api/v1/dags/%s/dagRuns" % dag_id,
                            {"dag_run_id": run_id, "logical_date": "2024-01-01T00:00:00Z"})
    assert status == 200, run
    assert d.wait_run(dag_id, run_id)["state"] == "success", d.tis(dag_id, run_id)


def new_run(d, dag_id, seen):
    """The one run of `dag_id` not in `seen` (waited for), ended in success."""
    got = wait_for(lambda: [r for r in runs(d, dag_id) if r["dag_run_id"] not in seen],
                   30, "a new run of " + dag_id)
    assert len(got) == 1, got
    rid = got[0]["dag_run_id"]
    assert d.wait_run(dag_id, rid)["state"] == "success", d.tis(dag_id, rid)
    seen.add(rid)
    return rid


def test_a_dag_on_an_alias_metadata_and_inlet_events(make_server, tmp_path):
    d = airflow_dags(make_server, tmp_path, ["datasets/alias_consumers.py"])
    for dag in ("export_daily", "summarize", "on_exports", "on_exports_or_summary", "audit"):
        d.wait_dag(dag)
    # the alias resolves to nothing yet: an update of the day's dataset runs no DAG on it
    assert announce(d, DAY) == []
    on_exports, either = set(), set()

    # an event added through the alias links the alias to its dataset: both DAGs on it run,
    # with that event alone (the one before the link is not theirs)
    run_dag(d, "export_daily", "e1")
    rid = new_run(d, "on_exports", on_exports)
    assert xcom(d, "on_exports", rid, "load") == {DAY: [{"day": "2024-01-01"}]}
    rid = new_run(d, "on_exports_or_summary", either)
    assert xcom(d, "on_exports_or_summary", rid, "refresh") == [DAY]

    # from then on any update of that dataset runs them, as Airflow's resolved alias does
    assert announce(d, DAY) == ["on_exports", "on_exports_or_summary"]
    rid = new_run(d, "on_exports", on_exports)
    assert xcom(d, "on_exports", rid, "load") == {DAY: [{}]}
    new_run(d, "on_exports_or_summary", either)

    # yield Metadata: the outlet's extra, through an alias too; the generator's return value
    run_dag(d, "summarize", "s1")
    assert xcom(d, "summarize", "s1", "count_rows") == "counted"
    evs = d.get("/datasets/events?dataset_id=%d" % d.get(
        "/datasets/%s" % urllib.parse.quote(SUMMARY, safe=""))["id"])["dataset_events"]
    assert [(e["extra"], e["source_task_id"]) for e in evs] == [({"rows": 7}, "count_rows")], evs
    rid = new_run(d, "on_exports", on_exports)
    assert xcom(d, "on_exports", rid, "load") == {LATE: [{"late": True}]}
    # either DAG: the summary's and the late partition's events (one run or two)
    wait_for(lambda: len([r for r in runs(d, "on_exports_or_summary")
                          if r["state"] == "success"]) >= 3, 30, "the summary's run")

    # inlet_events: each inlet's events so far, oldest first; an alias's those added through it
    run_dag(d, "audit", "a1")
    got = xcom(d, "audit", "a1", "check")
    assert got == {
        "summary": {"rows": 7},
        "summary_by_index": "count_rows",
        "through_alias": [[DAY, {"day": "2024-01-01"}, "export_daily"],
                          [LATE, {"late": True}, "summarize"]],
        "day": [[{}, None], [{"day": "2024-01-01"}, "export_daily"], [{}, None]],
        "day_latest_aware": True,
        "by_uri": 3,
        "inlets": 3,
    }, got
