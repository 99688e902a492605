"""A task's dataset events in the Airflow layer, without a server (_weir_airflow/datasets.py):
`yield Metadata(...)` from a task's function into `outlet_events` (Airflow 2.10's
ExecutionCallableRunner), and `inlet_events` read from the file the server writes
($WEIR_INLET_EVENTS): keys, order, errors."""

import json
import sys

import pytest

from conftest import REPO

SITE = REPO / "python" / "weir" / "compat" / "airflow" / "site"
sys.path.insert(0, str(SITE))

from _weir_airflow import datasets  # noqa: E402
from airflow.datasets import Dataset, DatasetAlias  # noqa: E402
from airflow.datasets.metadata import Metadata  # noqa: E402

OUT, PART = Dataset("s3://b/out"), Dataset("s3://b/part/1")
PARTS = DatasetAlias("parts")


def test_yielded_metadata_fills_outlet_events_and_the_return_value_stays():
    events = datasets.OutletEventAccessors()

    def fn(n):
        yield Metadata(OUT, {"rows": n})
        yield "something else"  # logged, ignored
        yield Metadata(PART.uri, {"p": 1}, alias=PARTS)
        return n * 2

    assert datasets.run_callable(fn, events, [3], {}) == 6
    assert events.extras([OUT, PARTS]) == {"s3://b/out": {"rows": 3}}
    assert events.alias_events([OUT, PARTS]) == [
        {"uri": "s3://b/part/1", "extra": {"p": 1}, "alias": "parts"}]
    # an alias that is not among the outlets adds nothing, as in Airflow
    assert events.alias_events([OUT]) == []
    # a plain function is called as it is
    assert datasets.run_callable(lambda a, b=0: a + b, events, [1], {"b": 2}) == 3


def test_metadata_refuses_what_is_no_dataset_or_no_dict():
    with pytest.raises(TypeError, match="expected a Dataset or its URI"):
        Metadata(3, {})
    with pytest.raises(TypeError, match="expected the extra as a dict"):
        Metadata(OUT, [1])
    with pytest.raises(TypeError, match="expected a DatasetAlias or its name"):
        Metadata(OUT, {}, alias=7)


def event(i, uri, **extra):
    return {"id": i, "dataset_id": 1, "dataset_uri": uri, "extra": extra,
            "source_dag_id": "p", "source_task_id": "t", "source_run_id": "r",
            "source_map_index": -1, "timestamp": "2024-01-01T00:00:0%d+00:00" % i}


def test_inlet_events_from_the_server_s_file(tmp_path):
    path = tmp_path / "inlets.json"
    path.write_text(json.dumps({
        "datasets": {OUT.uri: [event(1, OUT.uri, n=1), event(2, OUT.uri, n=2)]},
        "aliases": {"parts": [event(3, PART.uri, p=1)]}}))

    class Task:
        inlets = [OUT, PARTS]

    acc = datasets.inlet_events(Task(), {"WEIR_INLET_EVENTS": str(path)})
    assert [e.extra for e in acc[OUT]] == [{"n": 1}, {"n": 2}]
    assert acc[OUT][-1].id == 2 and acc[OUT][-1].timestamp.tzinfo is not None
    assert acc[OUT.uri][-1].extra == {"n": 2} and acc[0][-1].extra == {"n": 2}
    assert [(e.uri, e.extra) for e in acc[PARTS]] == [(PART.uri, {"p": 1})]
    assert acc[1][0].source_dag_id == "p"
    assert list(acc) == [OUT, PARTS] and len(acc) == 2
    with pytest.raises(KeyError, match="not one of the task's inlets"):
        acc[Dataset("s3://elsewhere")]
    with pytest.raises(IndexError):
        acc[5]
    # no file (no inlets): an empty mapping
    assert len(datasets.inlet_events(object(), {})) == 0


def test_inlet_events_of_an_inlet_with_no_event_is_empty(tmp_path):
    path = tmp_path / "inlets.json"
    path.write_text(json.dumps({"datasets": {OUT.uri: []}, "aliases": {}}))

    class Task:
        inlets = [OUT, PARTS]

    acc = datasets.inlet_events(Task(), {"WEIR_INLET_EVENTS": str(path)})
    assert acc[OUT] == [] and acc[PARTS] == []
