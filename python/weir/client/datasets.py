"""weir.Client's dataset routes (Airflow's): the datasets, their events, announcing one."""

from typing import Any, Dict, List, Mapping, Optional

from ._http import HttpClient, _q


class DatasetRoutes(HttpClient):
    """The dataset routes (docs/api.md); weir.Client has them all."""

    def datasets(self, **params: Any) -> List[Dict[str, Any]]:
        """The datasets the DAG files name (`uri_pattern`, `dag_ids`, `limit`, ...), each with
        its `consuming_dags` and `producing_tasks`."""
        return self._list("datasets", "GET", "/datasets", params=params)

    def dataset(self, uri: str) -> Dict[str, Any]:
        return self._obj("GET", "/datasets/%s" % _q(uri))

    def dataset_events(self, **params: Any) -> List[Dict[str, Any]]:
        """Dataset events (`dataset_id`, `source_dag_id`, `source_run_id`, ... as the API)."""
        return self._list("dataset_events", "GET", "/datasets/events", params=params)

    def announce_dataset(self, uri: str,
                         extra: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
        """Tells the server the dataset was updated (Airflow's create_dataset_event): the
        DAGs scheduled on it that are now due start.  Returns the DatasetEvent, with the
        runs it started in `created_dagruns`."""
        body: Dict[str, Any] = {"dataset_uri": uri}
        if extra is not None:
            body["extra"] = dict(extra)
        return self._obj("POST", "/datasets/events", body)

    def upstream_dataset_events(self, dag_id: str, run_id: str) -> List[Dict[str, Any]]:
        """The dataset events a dataset-triggered run consumed."""
        return self._list("dataset_events", "GET", "/dags/%s/dagRuns/%s/upstreamDatasetEvents"
                          % (_q(dag_id), _q(run_id)))
