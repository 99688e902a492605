"""Dataset events in a task's context (docs/airflow.md, "Datasets"): the
`triggering_dataset_events` of a dataset-triggered run (the events the server consumed to
start it, which it hands the run as its conf's `triggering_dataset_events`), and the
`outlet_events` a task fills in (`outlet_events[dataset].extra`), which the task's output
carries to the server under `weir_outlet_events` ({uri: extra}): the server stores each
extra with the event of that outlet when the task succeeds; and the events a task adds
through a DatasetAlias among its outlets (`outlet_events[alias].add(dataset, extra)`), under
`weir_alias_events` ([{uri, extra, alias}]): each an event of that dataset.  A task
function that is a generator may `yield Metadata(dataset, extra)` instead (run_callable).
The context's `inlet_events` holds the latest events of each of the task's inlets, which
the server writes at the try's start in the file $WEIR_INLET_EVENTS (the task's `inlets`)."""

from __future__ import annotations

import datetime as _dt
import inspect
import json
import logging
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence

#: the output keys the server reads (src/server/dag_manager/datasets.c): the outlets' extras
#: ({uri: extra}) and the events added through a DatasetAlias ([{uri, extra, alias}])
OUTLET_EVENTS_KEY = "weir_outlet_events"
ALIAS_EVENTS_KEY = "weir_alias_events"


class DatasetEvent:
    """One update of a dataset, as Airflow's `airflow.models.dataset.DatasetEvent` shows it:
    `uri`, `dataset`, `extra`, `timestamp` (an aware datetime), `source_dag_id`,
    `source_task_id`, `source_run_id`, `source_map_index` (None for an update announced
    through the REST API), `id`, `dataset_id`."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        from airflow.datasets import Dataset

        self.id: Optional[int] = data.get("id")
        self.dataset_id: Optional[int] = data.get("dataset_id")
        self.uri: str = data.get("dataset_uri") or ""
        self.dataset = Dataset(self.uri) if self.uri else None
        extra = data.get("extra")
        self.extra: Dict[str, Any] = dict(extra) if isinstance(extra, dict) else {}
        ts = data.get("timestamp")
        self.timestamp: Optional[_dt.datetime] = (
            _dt.datetime.fromisoformat(ts.replace("Z", "+00:00")) if isinstance(ts, str)
            else None)
        self.source_dag_id: Optional[str] = data.get("source_dag_id")
        self.source_task_id: Optional[str] = data.get("source_task_id")
        self.source_run_id: Optional[str] = data.get("source_run_id")
        self.source_map_index: Optional[int] = data.get("source_map_index")

    def __repr__(self) -> str:
        return ("DatasetEvent(id=%r, uri=%r, extra=%r, source_dag_id=%r, source_task_id=%r, "
                "source_run_id=%r, timestamp=%r)"
                % (self.id, self.uri, self.extra, self.source_dag_id, self.source_task_id,
                   self.source_run_id, self.timestamp))


def triggering_events(value: Any) -> Dict[str, List[DatasetEvent]]:
    """The run conf's `triggering_dataset_events` ({uri: [event as JSON]}, a JSON text when it
    came through the environment) as {uri: [DatasetEvent]}, the events in their order."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    if not isinstance(value, dict):
        return {}
    return {uri: [DatasetEvent(e) for e in events if isinstance(e, dict)]
            for uri, events in value.items() if isinstance(events, list)}


def _key(key: Any) -> str:
    """A Dataset's URI (or the URI itself), or "alias:NAME" for a DatasetAlias."""
    from airflow.datasets import DatasetAlias

    if isinstance(key, DatasetAlias):
        return "alias:" + key.name
    uri = getattr(key, "uri", key)
    if not isinstance(uri, str) or not uri:
        raise KeyError("outlet_events[%r]: expected a Dataset, its URI or a DatasetAlias"
                       % (key,))
    return uri


class OutletEventAccessor:
    """What `outlet_events[dataset]` is: its `extra`, a dict the task fills in; for a
    DatasetAlias, `add(dataset, extra)`: an event of that dataset when the task succeeds."""

    def __init__(self, raw_key: Any, extra: Optional[Dict[str, Any]] = None) -> None:
        self.raw_key = raw_key
        self.extra: Dict[str, Any] = dict(extra or {})
        self.dataset_alias_events: List[Dict[str, Any]] = []

    def add(self, dataset: Any, extra: Optional[Dict[str, Any]] = None) -> None:
        from airflow.datasets import Dataset, DatasetAlias

        if not isinstance(self.raw_key, DatasetAlias):
            raise TypeError("outlet_events[%r].add(): only a DatasetAlias's accessor adds "
                            "events" % (self.raw_key,))
        uri = dataset.uri if isinstance(dataset, Dataset) else dataset
        if not isinstance(uri, str) or not uri:
            raise TypeError("outlet_events[%r].add(%r): expected a Dataset or its URI"
                            % (self.raw_key, dataset))
        self.dataset_alias_events.append({"uri": uri, "extra": dict(extra or {}),
                                          "alias": self.raw_key.name})

    def __repr__(self) -> str:
        return "OutletEventAccessor(raw_key=%r, extra=%r)" % (self.raw_key, self.extra)


class OutletEventAccessors(Mapping[str, OutletEventAccessor]):
    """The context's `outlet_events`: an accessor per dataset, made when first asked for."""

    def __init__(self) -> None:
        self._by_uri: Dict[str, OutletEventAccessor] = {}

    def __getitem__(self, key: Any) -> OutletEventAccessor:
        k = _key(key)
        if k not in self._by_uri:
            self._by_uri[k] = OutletEventAccessor(key)
        return self._by_uri[k]

    def __iter__(self) -> Any:
        return iter(self._by_uri)

    def __len__(self) -> int:
        return len(self._by_uri)

    def extras(self, outlets: List[Any]) -> Dict[str, Dict[str, Any]]:
        """{uri: extra} of the task's Dataset outlets that were given an extra (an update of
        another dataset is no event of this task, in Airflow too)."""
        from airflow.datasets import Dataset

        out: Dict[str, Dict[str, Any]] = {}
        for item in outlets:
            if isinstance(item, Dataset) and item.uri in self._by_uri:
                extra = self._by_uri[item.uri].extra
                if extra:
                    out[item.uri] = dict(extra)
        return out

    def alias_events(self, outlets: List[Any]) -> List[Dict[str, Any]]:
        """The events added through the task's DatasetAlias outlets (through another alias:
        none, as in Airflow, which requires the alias among the outlets)."""
        from airflow.datasets import DatasetAlias

        out: List[Dict[str, Any]] = []
        for item in outlets:
            key = "alias:%s" % item.name if isinstance(item, DatasetAlias) else None
            if key in self._by_uri:
                out.extend(self._by_uri[key].dataset_alias_events)
        return out


#: how many of the latest events of each inlet the server gives a try (datasets.c's
#: INLET_EVENTS_MAX)
INLET_EVENTS_MAX = 100


class InletEventsAccessors(Mapping[Any, List[DatasetEvent]]):
    """The context's `inlet_events` (Airflow 2.10): for each of the task's inlets, a Dataset
    (or its URI) or a DatasetAlias, its events so far as a list, oldest first: `[-1]` is the
    latest.  A dataset's are its updates; an alias's the events added through it.  weir
    gives the latest INLET_EVENTS_MAX of each, as the try started.  An int is an index into
    the task's inlets; iterating gives the inlets, as Airflow's does."""

    def __init__(self, inlets: Sequence[Any], data: Mapping[str, Any]) -> None:
        from airflow.datasets import Dataset, DatasetAlias

        self._inlets = [i for i in inlets if isinstance(i, (Dataset, DatasetAlias))]
        got_uri, got_alias = data.get("datasets"), data.get("aliases")
        by_uri: Dict[str, Any] = got_uri if isinstance(got_uri, dict) else {}
        by_alias: Dict[str, Any] = got_alias if isinstance(got_alias, dict) else {}
        self._events: Dict[str, List[DatasetEvent]] = {}
        for item in self._inlets:
            key = _key(item)
            raw = (by_alias.get(item.name) if isinstance(item, DatasetAlias)
                   else by_uri.get(item.uri))
            self._events[key] = [DatasetEvent(e) for e in raw or [] if isinstance(e, dict)]

    def __getitem__(self, key: Any) -> List[DatasetEvent]:
        if isinstance(key, int) and not isinstance(key, bool):
            key = self._inlets[key]
        try:
            k = _key(key)
        except KeyError:
            raise KeyError("inlet_events[%r]: expected a Dataset, its URI, a DatasetAlias or "
                           "an index into the task's inlets" % (key,)) from None
        if k not in self._events:
            raise KeyError("inlet_events[%r]: not one of the task's inlets" % (key,))
        return list(self._events[k])

    def __iter__(self) -> Iterator[Any]:
        return iter(self._inlets)

    def __len__(self) -> int:
        return len(self._inlets)


def inlet_events(task: Any, env: Mapping[str, str]) -> InletEventsAccessors:
    """The try's `inlet_events` from $WEIR_INLET_EVENTS (none without it)."""
    path = env.get("WEIR_INLET_EVENTS")
    data: Any = {}
    if path:
        with open(path) as f:
            data = json.load(f)
    return InletEventsAccessors(list(getattr(task, "inlets", None) or []),
                                data if isinstance(data, dict) else {})


def run_callable(fn: Callable[..., Any], outlet_events: Any, args: Sequence[Any],
                 kwargs: Mapping[str, Any]) -> Any:
    """`fn(*args, **kwargs)`; when `fn` is a generator function (Airflow 2.10's way to
    give an outlet's event its extra), each `Metadata(dataset, extra, alias)` it yields
    updates `outlet_events[dataset].extra` (and adds the event through the alias), anything
    else it yields is logged and ignored, and what it returns is the return value."""
    from airflow.datasets import DatasetAlias
    from airflow.datasets.metadata import Metadata

    if not inspect.isgeneratorfunction(fn):
        return fn(*args, **kwargs)
    gen = fn(*args, **kwargs)
    while True:
        try:
            item = next(gen)
        except StopIteration as stop:
            return stop.value
        if not isinstance(item, Metadata):
            logging.getLogger("airflow.task").warning(
                "Ignoring unknown data of %r received from task", type(item))
            continue
        if outlet_events is None:
            continue
        outlet_events[item.uri].extra.update(item.extra)
        if item.alias_name:
            outlet_events[DatasetAlias(item.alias_name)].add(item.uri, extra=item.extra)


def add_to_context(context: Dict[str, Any], env: Optional[Mapping[str, str]] = None) -> None:
    """The dataset keys of a task's context: `triggering_dataset_events` as DatasetEvents
    (from the run's conf, which then no longer holds it: a dataset-triggered run's
    `dag_run.conf` is empty in Airflow), an empty `outlet_events`, and `inlet_events` (from
    `env`'s $WEIR_INLET_EVENTS)."""
    run = context.get("dag_run")
    conf = getattr(run, "conf", None)
    raw = conf.pop("triggering_dataset_events", None) if isinstance(conf, dict) else None
    params = context.get("params")
    if params is not None and hasattr(params, "pop"):
        from_params = params.pop("triggering_dataset_events", None)
        raw = raw if raw is not None else from_params
    if raw is not None:
        context["triggering_dataset_events"] = triggering_events(raw)
    context["outlet_events"] = OutletEventAccessors()
    context["inlet_events"] = inlet_events(context.get("task"), env or {})


def push_outlet_events(context: Mapping[str, Any], task: Any, ti: Any) -> None:
    """The extras the task set on its outlets, pushed under OUTLET_EVENTS_KEY for the
    server; nothing when it set none."""
    accessors = context.get("outlet_events")
    if not isinstance(accessors, OutletEventAccessors):
        return
    outlets = list(getattr(task, "outlets", None) or [])
    extras = accessors.extras(outlets)
    if extras:
        ti.xcom_push(OUTLET_EVENTS_KEY, extras)
    added = accessors.alias_events(outlets)
    if added:
        ti.xcom_push(ALIAS_EVENTS_KEY, added)
