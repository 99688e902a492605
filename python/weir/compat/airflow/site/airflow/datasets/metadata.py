"""airflow.datasets.metadata: `Metadata`, what a task's function yields to give an outlet's
event its extra (Airflow 2.10): `yield Metadata(Dataset(uri), {"rows": 3})`, with
`alias=DatasetAlias(name)` an event of that dataset added through the alias.  weir's
PythonOperator and @task take them (_weir_airflow.datasets.run_callable); the extras go the
way `outlet_events[dataset].extra` goes."""

from __future__ import annotations

from typing import Any, Dict, Optional


class Metadata:
    """An extra for the event of `target` (a Dataset or its URI) this try records; `alias`
    (a DatasetAlias or its name): the event is added through that alias too."""

    def __init__(self, target: Any, extra: Dict[str, Any], alias: Any = None) -> None:
        from airflow.datasets import Dataset, DatasetAlias

        uri = target.uri if isinstance(target, Dataset) else target
        if not isinstance(uri, str) or not uri:
            raise TypeError("Metadata(%r): expected a Dataset or its URI" % (target,))
        if not isinstance(extra, dict):
            raise TypeError("Metadata(%r, %r): expected the extra as a dict" % (target, extra))
        self.uri = uri
        self.extra = extra
        self.alias_name: Optional[str] = alias.name if isinstance(alias, DatasetAlias) else alias
        if self.alias_name is not None and not isinstance(self.alias_name, str):
            raise TypeError("Metadata(%r, alias=%r): expected a DatasetAlias or its name"
                            % (target, alias))

    def __repr__(self) -> str:
        return "Metadata(uri=%r, extra=%r, alias_name=%r)" % (self.uri, self.extra,
                                                              self.alias_name)


__all__ = ["Metadata"]
