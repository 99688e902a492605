"""Airflow 2.10's stable REST API v1 as weir serves it: every operation weir answers is called
on a real server and its answer checked against the fields, types and status codes of the
spec (airflow_schemas.py, written by hand from it); then what the changing operations do:
pools change and survive a restart, a task marked failed and its run cleared, a run deleted,
DAG statistics counted.  (The datasets and event log operations are checked by their own
tests.)"""

import json
import urllib.parse

from airflow_schemas import check
from conftest import wait_for
from dagtest import make_dags  # noqa: F401

DAG = "spec_probe"


def q(s):
    return urllib.parse.quote(s, safe="")


def call(d, method, path, body=None, status=200, schema=None, headers=None):
    code, hdrs, data = d.srv.request(method, "/api/v1" + path,
                                     body=None if body is None else body, headers=headers)
    text = data.decode(errors="replace")
    assert code == status, "%s %s -> %s (expected %s): %s" % (method, path, code, status, text)
    if code >= 400:
        problem = json.loads(text)
        check("Error", problem)
        assert hdrs.get("Content-Type", "").startswith("application/problem+json"), hdrs
        return problem
    if code == 204 or not data:
        return None
    out = json.loads(text) if hdrs.get("Content-Type", "").startswith("application/json") \
        else text
    if schema:
        check(schema, out)
    return out


def finished_run(d, run_id):
    d.trigger(DAG, run_id=run_id)
    return d.wait_run(DAG, run_id)


def test_every_served_operation_answers_the_spec(make_dags):
    d = make_dags(pools={"gpu": 2}, files=["spec_probe.yaml", "broken.yaml"])
    dag = d.wait_dag(DAG)
    run = "r1"
    assert finished_run(d, run)["state"] == "failed"  # check fails: no `ok` file yet
    base = "/dags/%s/dagRuns/%s" % (DAG, run)

    # DAGs
    call(d, "GET", "/dags", schema="DAGCollection")
    check("DAG", call(d, "GET", "/dags/" + DAG))
    call(d, "GET", "/dags/%s/details" % DAG, schema="DAGDetail")
    call(d, "GET", "/dags/%s/tasks" % DAG, schema="TaskCollection")
    check("Task", call(d, "GET", "/dags/%s/tasks/prepare" % DAG))
    call(d, "GET", "/dags/%s/tasks/nope" % DAG, status=404)
    call(d, "PATCH", "/dags/" + DAG, {"is_paused": False}, schema="DAG")
    out = call(d, "PATCH", "/dags?dag_id_pattern=spec_pr", {"is_paused": False},
               schema="DAGCollection")
    assert [x["dag_id"] for x in out["dags"]] == [DAG] and out["total_entries"] == 1
    call(d, "PATCH", "/dags", {"is_paused": True}, status=400)  # dag_id_pattern required
    call(d, "PATCH", "/dags?dag_id_pattern=~&update_mask=owners", {"is_paused": True},
         status=400)

    # sources and re-parse through the DAG's file_token
    src = call(d, "GET", "/dagSources/" + dag["file_token"])
    assert "dag_id: spec_probe" in src["content"]
    text = call(d, "GET", "/dagSources/" + dag["file_token"], headers={"Accept": "text/plain"})
    assert text == src["content"]
    call(d, "GET", "/dagSources/" + dag["file_token"], headers={"Accept": "image/png"},
         status=406)
    call(d, "GET", "/dagSources/bm90LWEtZGFn", status=404)  # names a DAG that is not there
    call(d, "PUT", "/parseDagFile/" + dag["file_token"], status=201)

    # runs
    call(d, "GET", "/dags/%s/dagRuns" % DAG, schema="DAGRunCollection")
    call(d, "POST", "/dags/~/dagRuns/list", {"dag_ids": [DAG]}, schema="DAGRunCollection")
    check("DAGRun", call(d, "GET", base))
    call(d, "GET", "/dags/%s/dagRuns/nope" % DAG, status=404)

    # task instances
    call(d, "GET", base + "/taskInstances", schema="TaskInstanceCollection")
    call(d, "GET", "/dags/~/dagRuns/~/taskInstances", schema="TaskInstanceCollection")
    call(d, "POST", "/dags/~/dagRuns/~/taskInstances/list", {"dag_ids": [DAG]},
         schema="TaskInstanceCollection")
    check("TaskInstance", call(d, "GET", base + "/taskInstances/prepare"))
    check("TaskInstance", call(d, "GET", base + "/taskInstances/each/1"))
    call(d, "GET", base + "/taskInstances/each/7", status=404)
    call(d, "GET", base + "/taskInstances/prepare/tries", schema="TaskInstanceCollection")
    call(d, "GET", base + "/taskInstances/each/0/tries", schema="TaskInstanceCollection")
    t1 = call(d, "GET", base + "/taskInstances/prepare/tries/1", schema="TaskInstance")
    assert t1["try_number"] == 1 and t1["state"] == "success"
    call(d, "GET", base + "/taskInstances/each/1/tries/1", schema="TaskInstance")
    call(d, "GET", base + "/taskInstances/prepare/tries/9", status=404)
    mapped = call(d, "GET", base + "/taskInstances/each/listMapped",
                  schema="TaskInstanceCollection")
    assert [t["map_index"] for t in mapped["task_instances"]] == [0, 1]
    call(d, "GET", base + "/taskInstances/prepare/listMapped", status=404)  # not mapped
    log = call(d, "GET", base + "/taskInstances/each/logs/1?map_index=0",
               headers={"Accept": "application/json"})
    assert "content" in log

    # XCom entries: the outputs of prepare, one per key plus return_value
    xs = call(d, "GET", base + "/taskInstances/prepare/xcomEntries", schema="XComCollection")
    assert sorted(x["key"] for x in xs["xcom_entries"]) == ["models", "n", "return_value"]
    x = call(d, "GET", base + "/taskInstances/prepare/xcomEntries/models", schema="XCom")
    assert x["value"] == '["m1","m2"]'
    x = call(d, "GET", base + "/taskInstances/prepare/xcomEntries/return_value?stringify=false",
             schema="XCom")
    assert x["value"] == {"models": ["m1", "m2"], "n": 2}
    call(d, "GET", base + "/taskInstances/prepare/xcomEntries/nope", status=404)
    xs = call(d, "GET", base + "/taskInstances/check/xcomEntries", schema="XComCollection")
    assert xs["total_entries"] == 0

    # why a TI does not run, and its links
    deps = call(d, "GET", base + "/taskInstances/after/dependencies",
                schema="TaskInstanceDependencyCollection")
    assert deps["dependencies"], deps  # upstream_failed: it says so
    call(d, "GET", base + "/taskInstances/each/0/dependencies",
         schema="TaskInstanceDependencyCollection")
    links = call(d, "GET", base + "/taskInstances/prepare/links", schema="ExtraLinkCollection")
    # notes (tests/system/test_notes.py checks the rest)
    r = call(d, "PATCH", base + "/setNote", {"note": "probe"}, schema="DAGRun")
    assert r["note"] == "probe", r
    t = call(d, "PATCH", base + "/taskInstances/prepare/setNote", {"note": "p"},
             schema="TaskInstance")
    assert t["note"] == "p", t
    t = call(d, "PATCH", base + "/taskInstances/each/1/setNote", {"note": "e1"},
             schema="TaskInstance")
    assert t["note"] == "e1" and t["map_index"] == 1, t
    call(d, "PATCH", base + "/setNote", {"note": 1}, status=400)
    call(d, "PATCH", base + "/taskInstances/each/7/setNote", {"note": "x"}, status=404)
    assert any(link["href"].startswith("/#/jobs/") for link in links["extra_links"])

    # marks (dry runs change nothing)
    ref = call(d, "PATCH", base + "/taskInstances/check", {"new_state": "success"},
               schema="TaskInstanceReference")
    assert ref["task_id"] == "check"
    assert d.get(base + "/taskInstances/check")["state"] == "failed"
    call(d, "PATCH", base + "/taskInstances/check", {"new_state": "running"}, status=400)
    call(d, "PATCH", base + "/taskInstances/check", {"dry_run": True}, status=400)
    call(d, "PATCH", base + "/taskInstances/each/0", {"new_state": "failed"},
         schema="TaskInstanceReference")
    out = call(d, "POST", "/dags/%s/updateTaskInstancesState" % DAG,
               {"task_id": "check", "dag_run_id": run, "new_state": "success",
                "include_downstream": True}, schema="TaskInstanceReferenceCollection")
    assert sorted(t["task_id"] for t in out["task_instances"]) == ["after", "check"]
    call(d, "POST", "/dags/%s/updateTaskInstancesState" % DAG,
         {"task_id": "check", "new_state": "success"}, status=400)  # which run?
    call(d, "POST", "/dags/%s/updateTaskInstancesState" % DAG,
         {"task_id": "check", "dag_run_id": run, "new_state": "success", "bogus": 1},
         status=400)
    out = call(d, "POST", "/dags/%s/dagRuns/%s/clear" % (DAG, run), {},
               schema="TaskInstanceCollection")  # dry run by default
    assert len(out["task_instances"]) == 5
    call(d, "POST", "/dags/%s/clearTaskInstances" % DAG, {"dag_run_id": run},
         schema="TaskInstanceReferenceCollection")

    # pools
    call(d, "GET", "/pools", schema="PoolCollection")
    check("Pool", call(d, "GET", "/pools/gpu"))
    call(d, "GET", "/pools/nope", status=404)
    check("Pool", call(d, "POST", "/pools", {"name": "spare", "slots": 3}))
    call(d, "POST", "/pools", {"name": "spare", "slots": 3}, status=409)
    call(d, "POST", "/pools", {"name": "x"}, status=400)
    call(d, "POST", "/pools", {"name": "x", "slots": "3"}, status=400)
    check("Pool", call(d, "PATCH", "/pools/spare?update_mask=slots", {"slots": 5}))
    call(d, "PATCH", "/pools/default_pool", {"name": "other", "slots": 4}, status=400)
    call(d, "PATCH", "/pools/spare", {"name": "gpu", "slots": 1}, status=409)
    call(d, "DELETE", "/pools/default_pool", status=400)
    call(d, "DELETE", "/pools/spare", status=204)
    call(d, "DELETE", "/pools/spare", status=404)

    # the rest
    stats = call(d, "GET", "/dagStats?dag_ids=%s,nope" % DAG, schema="DagStatsCollectionSchema")
    assert [s["dag_id"] for s in stats["dags"]] == [DAG]
    for s in stats["dags"][0]["stats"]:
        check("DagStatsStateCollectionItem", s)
    call(d, "GET", "/dagStats", status=400)
    check("VersionInfo", call(d, "GET", "/version"))
    cfg = call(d, "GET", "/config", schema="Config")
    for s in cfg["sections"]:
        for o in s["options"]:
            check("ConfigOption", o)
    assert "[core]" in call(d, "GET", "/config", headers={"Accept": "text/plain"})
    one = call(d, "GET", "/config/section/core/option/executor", schema="Config")
    assert one["sections"][0]["options"] == [{"key": "executor", "value": "local"}]
    call(d, "GET", "/config/section/core/option/nope", status=404)
    call(d, "GET", "/config?section=nope", status=404)
    call(d, "GET", "/dagWarnings", schema="DagWarningCollection")
    call(d, "GET", "/dagWarnings?dag_id=" + DAG, schema="DagWarningCollection")
    call(d, "GET", "/plugins", schema="PluginCollection")
    call(d, "GET", "/providers", schema="ProviderCollection")
    errs = call(d, "GET", "/importErrors", schema="ImportErrorCollection")
    assert errs["import_errors"], "broken.yaml is an import error"
    check("ImportError", call(d, "GET", "/importErrors/%d"
                              % errs["import_errors"][0]["import_error_id"]))
    call(d, "GET", "/importErrors/999999", status=404)
    call(d, "GET", "/importErrors/x", status=400)
    check("HealthInfo", call(d, "GET", "/health"))

    # connections and variables
    call(d, "POST", "/connections", {"connection_id": "c1", "conn_type": "postgres",
                                     "host": "127.0.0.1", "password": "pw"},
         schema="Connection")
    call(d, "GET", "/connections", schema="ConnectionCollection")
    check("Connection", call(d, "GET", "/connections/c1"))
    call(d, "PATCH", "/connections/c1", {"connection_id": "c1", "conn_type": "postgres",
                                         "port": 5}, schema="Connection")
    call(d, "POST", "/connections/test", {"connection_id": "c1", "conn_type": "sqlite",
                                          "host": ":memory:"}, schema="ConnectionTest")
    call(d, "DELETE", "/connections/c1", status=204)
    call(d, "POST", "/variables", {"key": "v1", "value": "x"}, schema="Variable")
    call(d, "GET", "/variables", schema="VariableCollection")
    check("Variable", call(d, "GET", "/variables/v1"))
    call(d, "PATCH", "/variables/v1", {"key": "v1", "value": "y"}, schema="Variable")
    call(d, "DELETE", "/variables/v1", status=204)

    # deletes, last: the run, then the DAG's records
    call(d, "DELETE", base, status=204)
    call(d, "GET", base, status=404)
    call(d, "DELETE", base, status=404)
    call(d, "DELETE", "/dags/" + DAG, status=204)
    call(d, "DELETE", "/dags/nope", status=404)


def test_pools_change_and_survive_a_restart(make_dags):
    d = make_dags(pools={"gpu": 2})
    call(d, "PATCH", "/pools/gpu", {"name": "gpu", "slots": 7, "description": "two cards"})
    call(d, "POST", "/pools", {"name": "added", "slots": 1})
    call(d, "DELETE", "/pools/added", status=204)
    call(d, "POST", "/pools", {"name": "kept", "slots": 4})
    d.srv.terminate()
    d.srv.start()
    pools = {p["name"]: p for p in call(d, "GET", "/pools", schema="PoolCollection")["pools"]}
    # the store's change wins over weir.yaml's gpu: 2; a deleted pool stays deleted
    assert pools["gpu"]["slots"] == 7 and pools["gpu"]["description"] == "two cards"
    assert pools["kept"]["slots"] == 4 and "added" not in pools
    assert "default_pool" in pools
    # a pool renamed keeps its slots and the old name is free again
    call(d, "PATCH", "/pools/kept", {"name": "renamed", "slots": 4})
    call(d, "GET", "/pools/kept", status=404)
    assert call(d, "GET", "/pools/renamed")["slots"] == 4


def test_mark_failed_then_clear_runs_it_again(make_dags):
    d = make_dags(files=["spec_probe.yaml"])
    d.wait_dag(DAG)
    (d.side / "ok").write_text("")
    run = "marked"
    assert finished_run(d, run)["state"] == "success"
    base = "/dags/%s/dagRuns/%s" % (DAG, run)
    out = call(d, "POST", "/dags/%s/updateTaskInstancesState" % DAG,
               {"task_id": "check", "dag_run_id": run, "new_state": "failed", "dry_run": False},
               schema="TaskInstanceReferenceCollection")
    assert [t["task_id"] for t in out["task_instances"]] == ["check"]
    assert d.get(base + "/taskInstances/check")["state"] == "failed"
    # as in Airflow, a mark does not decide a finished run again
    assert d.get(base)["state"] == "success"
    deps = call(d, "GET", base + "/taskInstances/check/dependencies")
    assert any("clear" in x["reason"] for x in deps["dependencies"]), deps
    # clearing the run runs every task again, and it ends as before
    got = call(d, "POST", base + "/clear", {"dry_run": False}, schema="DAGRun")
    assert got["state"] in ("queued", "running"), got
    assert d.wait_run(DAG, run)["state"] == "success"
    tries = d.get(base + "/taskInstances/prepare/tries")
    assert tries["total_entries"] == 2
    # a single TI marked by PATCH, for real this time
    call(d, "PATCH", base + "/taskInstances/after", {"new_state": "failed", "dry_run": False},
         schema="TaskInstanceReference")
    assert d.get(base + "/taskInstances/after")["state"] == "failed"


def test_delete_a_run_and_dag_stats(make_dags):
    d = make_dags(files=["spec_probe.yaml"])
    d.wait_dag(DAG)
    finished_run(d, "one")                      # failed: no `ok`
    (d.side / "ok").write_text("")
    finished_run(d, "two")                      # success
    stats = call(d, "GET", "/dagStats?dag_ids=" + DAG)["dags"][0]["stats"]
    counts = {s["state"]: s["count"] for s in stats}
    assert counts == {"queued": 0, "running": 0, "success": 1, "failed": 1}, counts
    call(d, "DELETE", "/dags/%s/dagRuns/one" % DAG, status=204)
    counts = {s["state"]: s["count"]
              for s in call(d, "GET", "/dagStats?dag_ids=" + DAG)["dags"][0]["stats"]}
    assert counts["failed"] == 0 and counts["success"] == 1
    assert d.get("/dags/%s/dagRuns" % DAG)["total_entries"] == 1
    # the DAG's records go; its file brings it back, with no history
    call(d, "DELETE", "/dags/" + DAG, status=204)
    wait_for(lambda: d.srv.api("GET", "/api/v1/dags/" + DAG)[0] == 200, 30, "DAG back")
    assert d.get("/dags/%s/dagRuns" % DAG)["total_entries"] == 0
