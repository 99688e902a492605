"""Dataset events in a task's context (docs/airflow.md, "Datasets"): the
`triggering_dataset_events` of a dataset-triggered run (the events the server consumed to
start it, which it hands the run as its conf's `triggering_dataset_events`), and the
`outlet_events` a task fills in (`outlet_events[dataset].extra`), which the task's output
carries to the server under `weir_outlet_events` ({uri: extra}): the server stores each
extra with the event of that outlet when the task succeeds; and the events a task adds
through a DatasetAlias among its outlets (`outlet_events[alias].add(dataset, extra)`), under
`weir_alias_events` ([{uri, extra, alias}]): each an event of that dataset."""

from __future__ import annotations

import datetime as _dt
from typing import Any, Dict, List, Mapping, Optional

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
    import json

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
        if not isinstance(dataset, Dataset):
            raise TypeError("outlet_events[%r].add(%r): expected a Dataset"
                            % (self.raw_key, dataset))
        self.dataset_alias_events.append({"uri": dataset.uri, "extra": dict(extra or {}),
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


def add_to_context(context: Dict[str, Any]) -> None:
    """The dataset keys of a task's context: `triggering_dataset_events` as DatasetEvents
    (from the run's conf, which then no longer holds it: a dataset-triggered run's
    `dag_run.conf` is empty in Airflow) and an empty `outlet_events`."""
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
