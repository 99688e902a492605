"""airflow.datasets: `Dataset` and the expressions of datasets a DAG's schedule may be
(weir's Airflow-compatible layer).

`Dataset(uri)`; `a & b` is DatasetAll, `a | b` DatasetAny, as in Airflow 2.9+, nested as
written: weir's server runs a DAG on datasets when its condition, over the datasets updated
since its last such run, is true (docs/dags.md, "Datasets"; _weir_airflow/spec.py writes it).
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, List, Optional


class BaseDataset:
    """What `&` and `|` combine."""

    def __and__(self, other: "BaseDataset") -> "DatasetAll":
        return DatasetAll(self, other)

    def __or__(self, other: "BaseDataset") -> "DatasetAny":
        return DatasetAny(self, other)

    def iter_datasets(self) -> Iterator["Dataset"]:
        """The datasets named, in order."""
        raise NotImplementedError


class Dataset(BaseDataset):
    """A dataset, named by its URI (`s3://bucket/key`, `file:///data/x`, ...)."""

    def __init__(self, uri: str, extra: Optional[Dict[str, Any]] = None) -> None:
        if not isinstance(uri, str) or not uri:
            raise ValueError("Dataset: expected a URI, got %r" % (uri,))
        self.uri = uri
        self.extra = dict(extra or {})

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Dataset) and other.uri == self.uri

    def __hash__(self) -> int:
        return hash(self.uri)

    def __repr__(self) -> str:
        return "Dataset(%r)" % self.uri

    def iter_datasets(self) -> Iterator["Dataset"]:
        yield self


class DatasetAlias(BaseDataset):
    """A name a task's outlets may hold (Airflow 2.10): the task adds events of datasets it
    learns while it runs through `outlet_events[DatasetAlias(name)].add(Dataset(uri),
    extra=...)`; each is an update of that dataset when the task succeeds.  A DAG scheduled on
    an alias runs on the datasets that had events added through it, from the first such event
    on; a task's `inlets` may name one (its `inlet_events[alias]`: the events added through
    it)."""

    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or not name.strip() or len(name) > 3000:
            raise ValueError("DatasetAlias: expected a name (a non-empty string of at most "
                             "3000 characters), got %r" % (name,))
        self.name = name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DatasetAlias) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("alias", self.name))

    def __repr__(self) -> str:
        return "DatasetAlias(%r)" % self.name

    def iter_datasets(self) -> Iterator["Dataset"]:
        return iter(())


class _DatasetBooleanCondition(BaseDataset):
    def __init__(self, *objects: BaseDataset) -> None:
        for o in objects:
            if not isinstance(o, BaseDataset):
                raise TypeError("expected datasets, got %r" % (o,))
        self.objects: List[BaseDataset] = list(objects)

    def iter_datasets(self) -> Iterator[Dataset]:
        for o in self.objects:
            yield from o.iter_datasets()


class DatasetAll(_DatasetBooleanCondition):
    """Every one of the datasets (`a & b`)."""

    def __repr__(self) -> str:
        return "DatasetAll(%s)" % ", ".join(map(repr, self.objects))


class DatasetAny(_DatasetBooleanCondition):
    """Any one of the datasets (`a | b`)."""

    def __repr__(self) -> str:
        return "DatasetAny(%s)" % ", ".join(map(repr, self.objects))


__all__ = ["BaseDataset", "Dataset", "DatasetAlias", "DatasetAll", "DatasetAny"]
