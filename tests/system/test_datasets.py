"""Datasets on a real server: a task's outlets start the DAG scheduled on them; a DAG on two
URIs waits for both; an update announced over REST (POST /api/v1/datasets/events) starts a run
whose upstreamDatasetEvents lists it; a paused DAG's queue waits for it; the Python client's
dataset calls; and Airflow's dataset routes: their fields, the queued
events of a DAG and of a URI, 404 for an unknown URI or DAG, 400 for a bad body or order."""

import json
import sys
import urllib.parse

import pytest

from airflow_schemas import check
from conftest import REPO, wait_for
from dagtest import make_dags  # noqa: F401

sys.path.insert(0, str(REPO / "python"))
import weir  # noqa: E402

ORDERS = "s3://bucket/orders/2024"
CUSTOMERS = "file:///data/customers.csv"

PRODUCER = """\
dag_id: producer
tasks:
  - task_id: make
    command: echo made >> @SIDE@/producer
    outlets: ["%s"]
""" % ORDERS

CONSUMER = """\
dag_id: consumer
schedule: ["%s"]
tasks:
  - task_id: use
    command: printf '%%s' "$WEIR_PARAM_triggering_dataset_events" > @SIDE@/consumer-$WEIR_RUN_ID
""" % ORDERS

BOTH = """\
dag_id: both
schedule: ["%s", "%s"]
tasks:
  - task_id: join
    command: echo joined >> @SIDE@/both
""" % (ORDERS, CUSTOMERS)


def q(uri):
    return urllib.parse.quote(uri, safe="")


def start_dags(make_dags):
    d = make_dags()
    for name, text in (("producer.yaml", PRODUCER), ("consumer.yaml", CONSUMER),
                       ("both.yaml", BOTH)):
        d.write(name, text.replace("@SIDE@", str(d.side)))
    for dag in ("producer", "consumer", "both"):
        d.wait_dag(dag)
    return d


def runs(d, dag_id):
    return d.get("/dags/%s/dagRuns" % dag_id)["dag_runs"]


def wait_runs(d, dag_id, n, timeout=60):
    return wait_for(lambda: (lambda r: r if len(r) >= n else None)(runs(d, dag_id)), timeout,
                    "%d run(s) of %s" % (n, dag_id))


def problem(d, method, path, body=None, raw=None):
    status, hdrs, data = d.srv.request(method, "/api/v1" + path, body, raw_body=raw)
    assert hdrs.get("Content-Type", "").startswith("application/problem+json"), (status, hdrs)
    check("Error", json.loads(data))
    return status, json.loads(data)


def test_outlets_start_the_dependent_dag_and_two_uris_wait_for_both(make_dags):
    d = start_dags(make_dags)
    dag = d.get("/dags/consumer")
    assert dag["timetable_description"] == "Triggered by datasets", dag
    make = d.get("/dags/producer/tasks")["tasks"][0]
    assert make["outlets"] == [ORDERS], make

    run = d.trigger("producer")
    d.wait_run("producer", run["dag_run_id"])
    # the producer's success is an event of ORDERS, and consumer runs on it
    got = wait_runs(d, "consumer", 1)
    crun = got[0]
    assert crun["dag_run_id"].startswith("dataset_triggered__"), crun
    assert crun["run_type"] == "dataset_triggered" and not crun["external_trigger"], crun
    crun = d.wait_run("consumer", crun["dag_run_id"])
    assert crun["state"] == "success", crun
    ev = crun["conf"]["triggering_dataset_events"][ORDERS]
    assert len(ev) == 1 and ev[0]["source_dag_id"] == "producer", ev
    assert ev[0]["source_task_id"] == "make" and ev[0]["source_run_id"] == run["dag_run_id"]
    # the task saw the same events in its environment
    seen = json.loads((d.side / ("consumer-" + crun["dag_run_id"])).read_text())
    assert seen[ORDERS][0]["source_run_id"] == run["dag_run_id"], seen
    up = d.get("/dags/consumer/dagRuns/%s/upstreamDatasetEvents" % crun["dag_run_id"])
    assert up["total_entries"] == 1 and up["dataset_events"][0]["dataset_uri"] == ORDERS, up

    # both waits for CUSTOMERS too: no run, one event queued for it
    assert runs(d, "both") == []
    queued = d.get("/dags/both/datasets/queuedEvent")
    assert [(e["uri"], e["dag_id"]) for e in queued["datasets"]] == [(ORDERS, "both")], queued
    assert queued["total_entries"] == 1
    one = d.get("/dags/both/datasets/queuedEvent/%s" % q(ORDERS))
    check("QueuedEvent", one)
    assert one["uri"] == ORDERS and one["dag_id"] == "both" and one["created_at"], one
    status, body = problem(d, "GET", "/dags/both/datasets/queuedEvent/%s" % q(CUSTOMERS))
    assert status == 404, body

    # a second producer run is one more event of ORDERS; still no run of both
    run2 = d.trigger("producer", run_id="second")
    d.wait_run("producer", run2["dag_run_id"])
    wait_runs(d, "consumer", 2)
    assert runs(d, "both") == []

    # CUSTOMERS announced from outside completes both
    status, ev = d.srv.api("POST", "/api/v1/datasets/events",
                           {"dataset_uri": CUSTOMERS, "extra": {"rows": 12}})
    assert status == 200, ev
    assert ev["dataset_uri"] == CUSTOMERS and ev["extra"] == {"rows": 12}, ev
    assert ev["source_dag_id"] is None and ev["source_map_index"] is None, ev
    assert [r["dag_id"] for r in ev["created_dagruns"]] == ["both"], ev
    brun = wait_runs(d, "both", 1)[0]
    d.wait_run("both", brun["dag_run_id"])
    up = d.get("/dags/both/dagRuns/%s/upstreamDatasetEvents" % brun["dag_run_id"])
    # every event since its last dataset run: the two of ORDERS and the one of CUSTOMERS
    assert sorted(e["dataset_uri"] for e in up["dataset_events"]) == [CUSTOMERS, ORDERS, ORDERS]
    # consumed: nothing queued for both any more
    status, body = problem(d, "GET", "/dags/both/datasets/queuedEvent")
    assert status == 404, body
    assert len(runs(d, "both")) == 1 and d.side_lines("both") == ["joined"]


def test_an_update_announced_over_rest_starts_a_run(make_dags):
    d = start_dags(make_dags)
    status, ev = d.srv.api("POST", "/api/v1/datasets/events",
                           {"dataset_uri": ORDERS, "extra": {"from": "ingest"}})
    assert status == 200, ev
    check("DatasetEvent", ev)
    run = wait_runs(d, "consumer", 1)[0]
    assert ev["created_dagruns"][0]["run_id"] == run["dag_run_id"], ev
    check("BasicDAGRun", ev["created_dagruns"][0])
    run = d.wait_run("consumer", run["dag_run_id"])
    assert run["state"] == "success", run
    up = d.get("/dags/consumer/dagRuns/%s/upstreamDatasetEvents" % run["dag_run_id"])
    assert up["total_entries"] == 1, up
    e = up["dataset_events"][0]
    assert e["dataset_uri"] == ORDERS and e["extra"] == {"from": "ingest"}, e
    assert e["created_dagruns"][0]["dag_id"] == "consumer", e
    # both got one of its two; its queue says so
    byuri = d.get("/datasets/queuedEvent/%s" % q(ORDERS))
    assert [x["dag_id"] for x in byuri["datasets"]] == ["both"], byuri
    # deleting that queue: both forgets the update
    status, _, _ = d.srv.request("DELETE", "/api/v1/datasets/queuedEvent/%s" % q(ORDERS))
    assert status == 204
    status, body = problem(d, "DELETE", "/datasets/queuedEvent/%s" % q(ORDERS))
    assert status == 404, body
    # both state-changing requests are in the event log, named by Airflow's operations
    events = [e["event"] for e in d.get("/eventLogs?limit=100")["event_logs"]]
    assert "api.create_dataset_event" in events, events
    assert "api.delete_dataset_queued_events" in events, events
    # an upstreamDatasetEvents of a run no dataset started is empty; of no run, 404
    mrun = d.trigger("consumer", run_id="by_hand")
    assert d.get("/dags/consumer/dagRuns/by_hand/upstreamDatasetEvents")["dataset_events"] == []
    d.wait_run("consumer", mrun["dag_run_id"])
    status, body = problem(d, "GET", "/dags/consumer/dagRuns/nope/upstreamDatasetEvents")
    assert status == 404, body


def test_dataset_routes_fields_and_codes(make_dags):
    d = start_dags(make_dags)
    lst = d.get("/datasets")
    check("DatasetCollection", lst)
    assert lst["total_entries"] == 2, lst
    by = {x["uri"]: x for x in lst["datasets"]}
    assert set(by) == {ORDERS, CUSTOMERS}, by
    o = by[ORDERS]
    for c in o["consuming_dags"]:
        check("DagScheduleDatasetReference", c)
    for p in o["producing_tasks"]:
        check("TaskOutletDatasetReference", p)
    assert sorted(c["dag_id"] for c in o["consuming_dags"]) == ["both", "consumer"], o
    assert [(p["dag_id"], p["task_id"]) for p in o["producing_tasks"]] == [("producer", "make")]
    assert by[CUSTOMERS]["producing_tasks"] == [], by
    # filters and pages
    assert d.get("/datasets?uri_pattern=customers")["total_entries"] == 1
    assert [x["uri"] for x in d.get("/datasets?dag_ids=producer")["datasets"]] == [ORDERS]
    page = d.get("/datasets?limit=1&offset=1&order_by=-uri")
    assert page["total_entries"] == 2 and [x["uri"] for x in page["datasets"]] == [CUSTOMERS]
    # one dataset by its URI, percent-encoded slashes and all
    one = d.get("/datasets/%s" % q(ORDERS))
    check("Dataset", one)
    assert one["uri"] == ORDERS and one["id"] == o["id"], one

    # 404s: an unknown URI, for GET and for an event; an unknown DAG's queue
    status, body = problem(d, "GET", "/datasets/%s" % q("s3://bucket/none"))
    assert status == 404 and "s3://bucket/none" in body["detail"], body
    status, body = problem(d, "POST", "/datasets/events", {"dataset_uri": "s3://bucket/none"})
    assert status == 404, body
    status, body = problem(d, "GET", "/dags/nodag/datasets/queuedEvent")
    assert status == 404, body
    # 400s: a body without dataset_uri, a bad extra, an unknown field, no JSON; bad queries
    for body, words in (({}, "dataset_uri: is required"),
                        ({"dataset_uri": 5}, "dataset_uri: expected a string"),
                        ({"dataset_uri": ORDERS, "extra": [1]}, "extra: expected a JSON object"),
                        ({"dataset_uri": ORDERS, "uri": "x"}, "uri")):
        status, pb = problem(d, "POST", "/datasets/events", body)
        assert status == 400 and words in pb["detail"], (body, status, pb)
    status, pb = problem(d, "POST", "/datasets/events", raw="{not json")
    assert status == 400, pb
    status, pb = problem(d, "GET", "/datasets/events?order_by=bogus")
    assert status == 400 and "order_by" in pb["detail"], pb
    status, pb = problem(d, "GET", "/datasets/events?dataset_id=abc")
    assert status == 400, pb
    status, pb = problem(d, "GET", "/datasets?color=red")
    assert status == 400, pb
    status, pb = problem(d, "GET", "/dags/both/datasets/queuedEvent?before=yesterday")
    assert status == 400, pb
    status, pb = problem(d, "PUT", "/datasets")
    assert status == 405, pb
    # no credentials: 401, as every route
    status, _, _ = d.srv.request("GET", "/api/v1/datasets", token=False)
    assert status == 401

    # events: listed, filtered, their fields
    for _ in range(2):
        status, ev = d.srv.api("POST", "/api/v1/datasets/events", {"dataset_uri": CUSTOMERS})
        assert status == 200, ev
    evs = d.get("/datasets/events?dataset_id=%d" % by[CUSTOMERS]["id"])
    check("DatasetEventCollection", evs)
    assert evs["total_entries"] == 2 and len(evs["dataset_events"]) == 2, evs
    assert all(e["created_dagruns"] == [] for e in evs["dataset_events"]), evs
    assert d.get("/datasets/events?source_dag_id=producer")["total_entries"] == 0
    # both has CUSTOMERS queued once (a queue row per DAG and URI), then deleted by DAG and URI
    queued = d.get("/dags/both/datasets/queuedEvent")
    check("QueuedEventCollection", queued)
    assert queued["total_entries"] == 1, queued
    status, _, _ = d.srv.request("DELETE",
                                 "/api/v1/dags/both/datasets/queuedEvent/%s" % q(CUSTOMERS))
    assert status == 204
    status, body = problem(d, "DELETE", "/dags/both/datasets/queuedEvent")
    assert status == 404, body


def test_a_paused_dag_keeps_its_queue_until_unpaused(make_dags):
    d = start_dags(make_dags)
    status, dag = d.srv.api("PATCH", "/api/v1/dags/consumer?update_mask=is_paused",
                            {"is_paused": True})
    assert status == 200 and dag["is_paused"], dag
    status, ev = d.srv.api("POST", "/api/v1/datasets/events", {"dataset_uri": ORDERS})
    assert status == 200 and ev["created_dagruns"] == [], ev
    assert d.get("/dags/consumer/datasets/queuedEvent")["total_entries"] == 1
    assert runs(d, "consumer") == []
    status, dag = d.srv.api("PATCH", "/api/v1/dags/consumer?update_mask=is_paused",
                            {"is_paused": False})
    assert status == 200 and not dag["is_paused"], dag
    run = wait_runs(d, "consumer", 1)[0]
    assert d.wait_run("consumer", run["dag_run_id"])["state"] == "success"
    up = d.get("/dags/consumer/dagRuns/%s/upstreamDatasetEvents" % run["dag_run_id"])
    assert [e["timestamp"] for e in up["dataset_events"]] == [ev["timestamp"]], up


def test_the_python_client_announces_and_reads_datasets(make_dags):
    d = start_dags(make_dags)
    c = weir.Client(server=d.srv.url, token=d.srv.token)
    assert sorted(x["uri"] for x in c.datasets()) == [CUSTOMERS, ORDERS]
    assert c.dataset(ORDERS)["producing_tasks"][0]["task_id"] == "make"
    ev = c.announce_dataset(ORDERS, extra={"via": "python"})
    run = ev["created_dagruns"][0]
    assert run["dag_id"] == "consumer", ev
    got = c.upstream_dataset_events("consumer", run["run_id"])
    assert [e["extra"] for e in got] == [{"via": "python"}], got
    assert [e["dataset_uri"] for e in c.dataset_events(dataset_id=ev["dataset_id"])] == [ORDERS]
    with pytest.raises(weir.ApiError) as e:
        c.announce_dataset("s3://bucket/none")
    assert e.value.status == 404


EITHER = """\
dag_id: either
schedule:
  datasets:
    any: ["%s", {all: ["%s", "s3://bucket/extra"]}]
tasks:
  - task_id: use
    command: "true"
""" % (ORDERS, CUSTOMERS)

BAD_CONDITION = """\
dag_id: bad_condition
schedule:
  datasets:
    any: ["%s", {either: ["%s"]}]
tasks:
  - task_id: use
    command: "true"
""" % (ORDERS, CUSTOMERS)


def test_a_condition_of_any_and_all_runs_when_it_is_true(make_dags):
    d = make_dags()
    d.write("either.yaml", EITHER)
    d.write("bad.yaml", BAD_CONDITION)
    d.wait_dag("either")
    # the schedule as written, and a bad condition an import error naming where
    assert d.get("/dags/either/details")["dataset_expression"] == {
        "any": [ORDERS, {"all": [CUSTOMERS, "s3://bucket/extra"]}]}
    errs = wait_for(lambda: d.get("/importErrors")["import_errors"], 30, "an import error")
    assert "schedule.datasets.any[1].either: expected any:, all: or alias:" in \
        errs[0]["stack_trace"], errs
    # one of all: no run; the other: ORDERS | (CUSTOMERS & extra) is true
    status, ev = d.srv.api("POST", "/api/v1/datasets/events", {"dataset_uri": CUSTOMERS})
    assert status == 200 and ev["created_dagruns"] == [], ev
    status, ev = d.srv.api("POST", "/api/v1/datasets/events",
                           {"dataset_uri": "s3://bucket/extra"})
    assert [r["dag_id"] for r in ev["created_dagruns"]] == ["either"], ev
    # ORDERS alone is enough
    status, ev = d.srv.api("POST", "/api/v1/datasets/events", {"dataset_uri": ORDERS})
    assert [r["dag_id"] for r in ev["created_dagruns"]] == ["either"], ev


PART = "s3://bucket/parts/1"

TAGGER = """\
dag_id: tagger
tasks:
  - task_id: tag
    command: >-
      printf '{"weir_alias_events": [{"uri": "%s", "extra": {"n": 1}, "alias": "parts"}]}'
      > "$WEIR_OUTPUT"
""" % PART

ON_PARTS = """\
dag_id: on_parts
schedule: [{alias: parts}]
tasks:
  - task_id: use
    command: cp "$WEIR_INLET_EVENTS" @SIDE@/inlets-$WEIR_RUN_ID
    inlets: [{alias: parts}, "%s"]
""" % ORDERS


def test_a_dag_on_an_alias_and_a_task_s_inlet_events(make_dags):
    d = make_dags()
    d.write("tagger.yaml", TAGGER)
    d.write("on_parts.yaml", ON_PARTS.replace("@SIDE@", str(d.side)))
    d.wait_dag("tagger")
    d.wait_dag("on_parts")
    assert d.get("/dags/on_parts/details")["dataset_expression"] == {
        "all": [{"alias": "parts"}]}
    # the inlet's URI is a dataset from the file on; no link yet: its event runs nothing
    status, ev = d.srv.api("POST", "/api/v1/datasets/events", {"dataset_uri": ORDERS})
    assert status == 200 and ev["created_dagruns"] == [], ev
    # an event added through the alias: the DAG on it runs, its task sees the inlets' events
    status, run = d.srv.api("POST", "/api/v1/dags/tagger/dagRuns", {"dag_run_id": "t1"})
    assert status == 200, run
    (run,) = wait_runs(d, "on_parts", 1)
    rid = run["dag_run_id"]
    got = json.loads(wait_for(lambda: (lambda p: p.exists() and p.read_text())(
        d.side / ("inlets-" + rid)), 60, "the inlets file"))
    assert sorted(got) == ["aliases", "datasets"], got
    (part,) = got["aliases"]["parts"]
    assert (part["dataset_uri"], part["extra"], part["source_dag_id"]) == (
        PART, {"n": 1}, "tagger"), part
    (orders,) = got["datasets"][ORDERS]
    assert orders["source_dag_id"] is None and orders["extra"] == {}, orders
    # the DAG on the alias consumes the dataset the alias got, in Airflow's dataset route
    ds = d.get("/datasets/%s" % q(PART))
    assert [c["dag_id"] for c in ds["consuming_dags"]] == ["on_parts"], ds
    assert d.get("/datasets/%s" % q(ORDERS))["consuming_dags"] == []
